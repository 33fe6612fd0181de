/*
 * jit.c - the in-process JIT used for measurement (ORC LLJIT).
 *
 * The module is already optimised for its target by mlc_codegen, and its
 * target machine carries the exact CPU and features of the target string,
 * so the JIT does not compile IR itself: the module's own target machine
 * generates the object in memory, and LLJIT links and loads it. Machine
 * code is thus the same bytes an emitted object file would hold, and the
 * module's LLVM context never has to become an ORC ThreadSafeContext.
 *
 * Symbols the generated code calls resolve, in this order, to:
 *  - the runtime linked into this program (mlc_rt_parallel_for,
 *    mlc_rt_error, mlc_last_error, the GPU launch and device memory calls of
 *    GPU host code, half-precision helpers) and the libc and
 *    libm functions LLVM may call, defined as absolute addresses so JIT code
 *    calls exactly the runtime this program uses;
 *  - anything else the process exports (dlsym), as a fallback.
 * Every exported function is looked up when the module is loaded, so an
 * unresolved symbol is an error of mlc_jit_load, not a NULL later.
 *
 * mlc_jit_load_object links an object file written earlier (MLC_EMIT_OBJ,
 * perhaps by another process: the tuner builds candidates in parallel and
 * times them one at a time) through the same LLJIT, the same symbols and the
 * same eager resolution. The exported names come from the object's ELF
 * symbol table: codegen gives every function but the exported ones internal
 * linkage, so the defined global functions are exactly the module's exports.
 *
 * GPU modules: the runtime caches the modules it loads from a device image
 * by the image's address (runtime/runtime.h), and the image lives in JIT
 * memory, which mlc_jit_free releases; a later JIT could place another image
 * at the same address and be served the old code. So the JIT looks up the
 * image (the hidden global CG_GPU_IMAGE_SYM of GPU host code) when it loads
 * and calls mlc_rt_gpu_unload_image on it before freeing the memory.
 */
#include "compiler/codegen/module_priv.h"

#include <elf.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm/Config/llvm-config.h>

#include "runtime/runtime.h"

/* Half-precision conversions LLVM calls on x86 CPUs without F16C: LLVM 14
 * uses the GNU names (runtime/half.c, libgcc has none on x86), later
 * versions libgcc's __extendhfsf2 / __truncsfhf2 (declared only to take
 * their addresses). */
extern float __gnu_h2f_ieee(uint16_t h);
extern uint16_t __gnu_f2h_ieee(float f);
#if LLVM_VERSION_MAJOR >= 15
extern void __extendhfsf2(void);
extern void __truncsfhf2(void);
#define MLC_JIT_HALF_LIBGCC(X) X(__extendhfsf2) X(__truncsfhf2)
#else
#define MLC_JIT_HALF_LIBGCC(X)
#endif
/* Integer powers (llvm.powi) from libgcc. */
extern float __powisf2(float x, int n);
extern double __powidf2(double x, int n);

/* The symbols defined in every JIT, by name and address. */
#define MLC_JIT_RUNTIME(X)                                                        \
  X(mlc_rt_parallel_for) X(mlc_rt_error) X(mlc_last_error) X(mlc_rt_num_threads)  \
  X(mlc_rt_gpu_launch) X(mlc_rt_gpu_alloc) X(mlc_rt_gpu_free)                     \
  X(mlc_rt_set_num_threads) X(mlc_rt_workspace_alloc) X(mlc_rt_workspace_free)     \
  X(__gnu_h2f_ieee) X(__gnu_f2h_ieee)                                              \
  MLC_JIT_HALF_LIBGCC(X) X(__powisf2) X(__powidf2)
#define MLC_JIT_LIBC(X) \
  X(malloc) X(calloc) X(free) X(aligned_alloc) X(memcpy) X(memmove) X(memset)
/* libm, double and float forms. */
#define MLC_JIT_LIBM_PAIR(X, fn) X(fn) X(fn##f)
#define MLC_JIT_LIBM(X)                                                                         \
  MLC_JIT_LIBM_PAIR(X, exp) MLC_JIT_LIBM_PAIR(X, exp2) MLC_JIT_LIBM_PAIR(X, expm1)              \
  MLC_JIT_LIBM_PAIR(X, log) MLC_JIT_LIBM_PAIR(X, log2) MLC_JIT_LIBM_PAIR(X, log10)              \
  MLC_JIT_LIBM_PAIR(X, log1p) MLC_JIT_LIBM_PAIR(X, pow) MLC_JIT_LIBM_PAIR(X, sqrt)              \
  MLC_JIT_LIBM_PAIR(X, cbrt) MLC_JIT_LIBM_PAIR(X, sin) MLC_JIT_LIBM_PAIR(X, cos)                \
  MLC_JIT_LIBM_PAIR(X, tan) MLC_JIT_LIBM_PAIR(X, asin) MLC_JIT_LIBM_PAIR(X, acos)               \
  MLC_JIT_LIBM_PAIR(X, atan) MLC_JIT_LIBM_PAIR(X, atan2) MLC_JIT_LIBM_PAIR(X, sinh)             \
  MLC_JIT_LIBM_PAIR(X, cosh) MLC_JIT_LIBM_PAIR(X, tanh) MLC_JIT_LIBM_PAIR(X, asinh)             \
  MLC_JIT_LIBM_PAIR(X, acosh) MLC_JIT_LIBM_PAIR(X, atanh) MLC_JIT_LIBM_PAIR(X, erf)             \
  MLC_JIT_LIBM_PAIR(X, erfc) MLC_JIT_LIBM_PAIR(X, fabs) MLC_JIT_LIBM_PAIR(X, floor)             \
  MLC_JIT_LIBM_PAIR(X, ceil) MLC_JIT_LIBM_PAIR(X, trunc) MLC_JIT_LIBM_PAIR(X, round)             \
  MLC_JIT_LIBM_PAIR(X, rint) MLC_JIT_LIBM_PAIR(X, nearbyint) MLC_JIT_LIBM_PAIR(X, fmod)         \
  MLC_JIT_LIBM_PAIR(X, fma) MLC_JIT_LIBM_PAIR(X, fmin) MLC_JIT_LIBM_PAIR(X, fmax)               \
  MLC_JIT_LIBM_PAIR(X, hypot) MLC_JIT_LIBM_PAIR(X, copysign) MLC_JIT_LIBM_PAIR(X, ldexp)

typedef struct {
  const char *name;
  uint64_t addr;
} jit_symbol_t;

static const jit_symbol_t jit_symbols[] = {
#define MLC_JIT_SYMBOL_(name) {#name, (uint64_t)(uintptr_t)&name},
    MLC_JIT_RUNTIME(MLC_JIT_SYMBOL_) MLC_JIT_LIBC(MLC_JIT_SYMBOL_) MLC_JIT_LIBM(MLC_JIT_SYMBOL_)
#undef MLC_JIT_SYMBOL_
};

enum { N_JIT_SYMBOLS = sizeof jit_symbols / sizeof jit_symbols[0] };

struct mlc_jit {
  LLVMOrcLLJITRef lljit;
  int nfuncs;
  char **names;
  void **addrs;
  bool has_image;              /* the object defines CG_GPU_IMAGE_SYM */
  const void *image;           /* its address once linked (GPU host code) */
  mlc_strbuf_t session_errors; /* what ORC reported while linking */
};

/* MLC_EINTERNAL with `what` and LLVM's message; consumes err. */
static int llvm_error(LLVMErrorRef err, const char *what, mlc_jit_t *jit) {
  char *msg = LLVMGetErrorMessage(err);
  int rc = mlc_error_set(MLC_EINTERNAL, "%s: %s%s%s", what, msg,
                         jit && jit->session_errors.len ? "; " : "",
                         jit ? mlc_sb_str(&jit->session_errors) : "");
  LLVMDisposeErrorMessage(msg);
  return rc;
}

/* ORC reports link failures (e.g. "Symbols not found: [ foo ]") here rather
 * than in the lookup's own error; keep them for the message. */
static void report_session_error(void *ctx, LLVMErrorRef err) {
  mlc_jit_t *jit = ctx;
  char *msg = LLVMGetErrorMessage(err);
  if (jit->session_errors.len) mlc_sb_append(&jit->session_errors, "; ");
  mlc_sb_append(&jit->session_errors, msg);
  LLVMDisposeErrorMessage(msg);
}

static int define_symbols(mlc_jit_t *jit) {
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
  LLVMJITCSymbolMapPair pairs[N_JIT_SYMBOLS];
  for (int i = 0; i < N_JIT_SYMBOLS; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit->lljit, jit_symbols[i].name);
    pairs[i].Sym.Address = jit_symbols[i].addr;
    pairs[i].Sym.Flags.GenericFlags =
        LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, N_JIT_SYMBOLS);
  LLVMErrorRef err = LLVMOrcJITDylibDefine(jd, mu);
  if (err) {
    LLVMOrcDisposeMaterializationUnit(mu);
    return llvm_error(err, "JIT: cannot define the runtime symbols", NULL);
  }
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
      &gen, LLVMOrcLLJITGetGlobalPrefix(jit->lljit), NULL, NULL);
  if (err) return llvm_error(err, "JIT: cannot search the process's symbols", NULL);
  LLVMOrcJITDylibAddGenerator(jd, gen);
  return MLC_OK;
}

static int create_lljit(mlc_jit_t *jit) {
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&jit->lljit, NULL); /* host target machine */
  if (err) {
    jit->lljit = NULL;
    return llvm_error(err, "JIT: cannot create LLJIT", NULL);
  }
  LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(jit->lljit),
                                          report_session_error, jit);
  return define_symbols(jit);
}

/* Links the object (ownership of obj passes to the JIT) and resolves every
 * exported function. */
static int add_and_resolve(mlc_jit_t *jit, LLVMMemoryBufferRef obj) {
  LLVMErrorRef err = LLVMOrcLLJITAddObjectFile(jit->lljit, LLVMOrcLLJITGetMainJITDylib(jit->lljit), obj);
  if (err) return llvm_error(err, "JIT: cannot add the object", jit);
  for (int i = 0; i < jit->nfuncs; i++) {
    LLVMOrcExecutorAddress addr = 0;
    err = LLVMOrcLLJITLookup(jit->lljit, &addr, jit->names[i]);
    if (err) return llvm_error(err, "JIT: cannot link the module", jit);
    jit->addrs[i] = (void *)(uintptr_t)addr;
  }
  if (jit->has_image) {
    LLVMOrcExecutorAddress addr = 0;
    err = LLVMOrcLLJITLookup(jit->lljit, &addr, CG_GPU_IMAGE_SYM);
    if (err) return llvm_error(err, "JIT: cannot find the GPU device image", jit);
    jit->image = (const void *)(uintptr_t)addr;
  }
  return MLC_OK;
}

/* Takes the exported names from m (m keeps nothing to free for them). */
static int take_names(mlc_jit_t *jit, mlc_module_t *m) {
  jit->addrs = mlc_calloc((size_t)(m->nfuncs ? m->nfuncs : 1), sizeof *jit->addrs);
  if (!jit->addrs) return mlc_error_set(MLC_ENOMEM, "out of memory");
  jit->names = m->func_names;
  jit->nfuncs = m->nfuncs;
  for (int i = 0; i < m->nfuncs; i++) mlc_free(m->func_protos[i]);
  mlc_free(m->func_protos);
  m->func_names = NULL;
  m->func_protos = NULL;
  m->nfuncs = 0;
  return MLC_OK;
}

/* Creates the LLJIT, links obj (always consumed) and resolves the exported
 * functions; on failure jit is freed. */
static int jit_finish(mlc_jit_t **out, mlc_jit_t *jit, LLVMMemoryBufferRef obj) {
  int rc = create_lljit(jit);
  if (rc == MLC_OK) {
    rc = add_and_resolve(jit, obj);
    obj = NULL;
  }
  if (obj) LLVMDisposeMemoryBuffer(obj);
  if (rc != MLC_OK) {
    mlc_jit_free(jit);
    return rc;
  }
  *out = jit;
  return MLC_OK;
}

int mlc_jit_load(mlc_jit_t **out, mlc_module_t *m) {
  *out = NULL;
  if (!m || !m->mod || !m->tm) {
    mlc_module_free(m);
    return mlc_error_set(MLC_EINVAL, "no compiled module to load");
  }
  mlc_jit_t *jit = mlc_calloc(1, sizeof *jit);
  LLVMMemoryBufferRef obj = NULL;
  int rc = jit ? cg_module_verify(m->mod) : mlc_error_set(MLC_ENOMEM, "out of memory");
  if (rc == MLC_OK) jit->has_image = LLVMGetNamedGlobal(m->mod, CG_GPU_IMAGE_SYM) != NULL;
  /* The module is consumed: no clone needed before code generation. */
  if (rc == MLC_OK) rc = cg_emit_to_memory(&obj, m->tm, m->mod, LLVMObjectFile);
  if (rc == MLC_OK) rc = take_names(jit, m);
  mlc_module_free(m);
  if (rc != MLC_OK) {
    if (obj) LLVMDisposeMemoryBuffer(obj);
    mlc_jit_free(jit);
    return rc;
  }
  return jit_finish(out, jit, obj);
}

/* ------------------------------------------------------------------------ */
/* Object files                                                              */
/* ------------------------------------------------------------------------ */

/* Whether [off, off + size) lies inside a buffer of len bytes. */
static bool in_bounds(uint64_t off, uint64_t size, size_t len) { return off <= len && size <= len - off; }

/* Appends a copy of name to the JIT's exported names. */
static int add_name(mlc_jit_t *jit, const char *name, int *cap) {
  if (jit->nfuncs == *cap) {
    int ncap = *cap ? 2 * *cap : 8;
    char **names = mlc_realloc(jit->names, (size_t)ncap * sizeof *names);
    if (!names) return mlc_error_set(MLC_ENOMEM, "out of memory");
    jit->names = names;
    *cap = ncap;
  }
  if (!(jit->names[jit->nfuncs] = mlc_strdup(name))) return mlc_error_set(MLC_ENOMEM, "out of memory");
  jit->nfuncs++;
  return MLC_OK;
}

/* The defined global functions of one symbol table (section sh, its string
 * table at sh.sh_link) into the JIT's names. */
static int symtab_exports(mlc_jit_t *jit, const char *data, size_t len, const Elf64_Shdr *shdrs,
                          int nsec, const Elf64_Shdr *sh, const char *path, int *cap) {
  if (sh->sh_entsize != sizeof(Elf64_Sym) || !in_bounds(sh->sh_offset, sh->sh_size, len) ||
      sh->sh_link >= (uint32_t)nsec)
    return mlc_error_set(MLC_EINVAL, "%s: malformed ELF symbol table", path);
  const Elf64_Shdr *str = &shdrs[sh->sh_link];
  if (str->sh_type != SHT_STRTAB || !in_bounds(str->sh_offset, str->sh_size, len) || str->sh_size == 0 ||
      data[str->sh_offset + str->sh_size - 1] != '\0')
    return mlc_error_set(MLC_EINVAL, "%s: malformed ELF string table", path);
  for (uint64_t k = 1; k < sh->sh_size / sizeof(Elf64_Sym); k++) { /* 0 is the null symbol */
    Elf64_Sym sym;
    memcpy(&sym, data + sh->sh_offset + k * sizeof sym, sizeof sym);
    if (ELF64_ST_BIND(sym.st_info) != STB_GLOBAL || sym.st_shndx == SHN_UNDEF) continue;
    if (sym.st_name >= str->sh_size)
      return mlc_error_set(MLC_EINVAL, "%s: ELF symbol %llu has a name outside its string table", path,
                           (unsigned long long)k);
    if (ELF64_ST_TYPE(sym.st_info) == STT_OBJECT && strcmp(data + str->sh_offset + sym.st_name, CG_GPU_IMAGE_SYM) == 0)
      jit->has_image = true;
    if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC) continue;
    int rc = add_name(jit, data + str->sh_offset + sym.st_name, cap);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}

/* Checks that data is an ELF64 relocatable object for this host's byte
 * order and takes the functions it exports. */
static int object_exports(mlc_jit_t *jit, const char *data, size_t len, const char *path) {
  Elf64_Ehdr eh;
  if (len < sizeof eh || memcmp(data, ELFMAG, SELFMAG) != 0)
    return mlc_error_set(MLC_EINVAL, "%s: not an ELF object file", path);
  memcpy(&eh, data, sizeof eh);
  const int host_data = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != host_data || eh.e_type != ET_REL)
    return mlc_error_set(MLC_EINVAL, "%s: not a 64-bit relocatable object of this host's byte order", path);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || !in_bounds(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), len))
    return mlc_error_set(MLC_EINVAL, "%s: malformed ELF section headers", path);
  Elf64_Shdr *shdrs = mlc_malloc((size_t)(eh.e_shnum ? eh.e_shnum : 1) * sizeof *shdrs);
  if (!shdrs) return mlc_error_set(MLC_ENOMEM, "out of memory");
  memcpy(shdrs, data + eh.e_shoff, (size_t)eh.e_shnum * sizeof *shdrs);
  int rc = MLC_OK, cap = 0;
  for (int i = 0; rc == MLC_OK && i < eh.e_shnum; i++)
    if (shdrs[i].sh_type == SHT_SYMTAB) rc = symtab_exports(jit, data, len, shdrs, eh.e_shnum, &shdrs[i], path, &cap);
  mlc_free(shdrs);
  return rc;
}

/* A process that loads objects may never have generated code (the tuner's
 * runner: the builds ran elsewhere), so LLJIT would find no target for the
 * host; mlc_codegen initialises the backends it uses, this the host's. */
static pthread_once_t native_once = PTHREAD_ONCE_INIT;
static bool native_ok;

static void init_native(void) { native_ok = !LLVMInitializeNativeTarget() && !LLVMInitializeNativeAsmPrinter(); }

int mlc_jit_load_object(mlc_jit_t **out, const char *path) {
  if (!out) return mlc_error_set(MLC_EINVAL, "mlc_jit_load_object: NULL out");
  *out = NULL;
  if (!path || !*path) return mlc_error_set(MLC_EINVAL, "mlc_jit_load_object: no path");
  pthread_once(&native_once, init_native);
  if (!native_ok) return mlc_error_set(MLC_EUNSUPPORTED, "this LLVM has no backend for the host");
  char *data = NULL;
  size_t len = 0;
  int rc = mlc_read_file(&data, &len, path);
  if (rc != MLC_OK) return rc;
  mlc_jit_t *jit = mlc_calloc(1, sizeof *jit);
  rc = jit ? object_exports(jit, data, len, path) : mlc_error_set(MLC_ENOMEM, "out of memory");
  if (rc == MLC_OK) {
    jit->addrs = mlc_calloc((size_t)(jit->nfuncs ? jit->nfuncs : 1), sizeof *jit->addrs);
    if (!jit->addrs) rc = mlc_error_set(MLC_ENOMEM, "out of memory");
  }
  /* The JIT keeps the buffer until it is freed: a copy, named after the file. */
  LLVMMemoryBufferRef obj = rc == MLC_OK ? LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len, path) : NULL;
  mlc_free(data);
  if (rc == MLC_OK && !obj) rc = mlc_error_set(MLC_ENOMEM, "out of memory");
  if (rc != MLC_OK) {
    mlc_jit_free(jit);
    return rc;
  }
  return jit_finish(out, jit, obj);
}

void *mlc_jit_lookup(mlc_jit_t *jit, const char *name) {
  if (!jit || !name) return NULL;
  for (int i = 0; i < jit->nfuncs; i++)
    if (strcmp(jit->names[i], name) == 0) return jit->addrs[i];
  return NULL;
}

void mlc_jit_free(mlc_jit_t *jit) {
  if (!jit) return;
  if (jit->image) mlc_rt_gpu_unload_image(jit->image); /* before its memory goes */
  if (jit->lljit) {
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(jit->lljit);
    if (err) LLVMConsumeError(err);
  }
  for (int i = 0; i < jit->nfuncs; i++) mlc_free(jit->names[i]);
  mlc_free(jit->names);
  mlc_free(jit->addrs);
  mlc_sb_free(&jit->session_errors);
  mlc_free(jit);
}
