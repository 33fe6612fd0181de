/*
 * module.c - the compiled module: LLVM context, module and target machine
 * for a target (cg_module_init), verification and the O3 pipeline
 * (cg_module_optimize), and the entry points that fill a module from lowered
 * or scheduled functions (mlc_codegen, mlc_build).
 *
 * IR generation for one function is cg_llvm_add_func (llvm_*.c); files and
 * text are in emit.c, the in-process JIT in jit.c. A module owns its context,
 * so modules built on different threads never share LLVM state.
 */
#include "compiler/codegen/module_priv.h"
#include "compiler/codegen/gpu.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <llvm/Config/llvm-config.h>

/* ------------------------------------------------------------------------ */
/* LLVM start-up: backends and the fatal error handler                       */
/* ------------------------------------------------------------------------ */

/* The backends this LLVM was built with (Targets.def, AsmPrinters.def), so
 * NVPTX and AMDGPU are used when present and reported as unsupported when
 * not. */
typedef struct {
  const char *name;
  void (*info)(void), (*target)(void), (*mc)(void);
} cg_backend_t;

static const cg_backend_t cg_backends[] = {
#define LLVM_TARGET(T) \
  {#T, LLVMInitialize##T##TargetInfo, LLVMInitialize##T##Target, LLVMInitialize##T##TargetMC},
#include <llvm/Config/Targets.def>
#undef LLVM_TARGET
};

static const struct {
  const char *name;
  void (*init)(void);
} cg_printers[] = {
#define LLVM_ASM_PRINTER(T) {#T, LLVMInitialize##T##AsmPrinter},
#include <llvm/Config/AsmPrinters.def>
#undef LLVM_ASM_PRINTER
};

/* The backend for a triple's architecture (the part before the first '-'). */
static const char *backend_name(const char *triple) {
  static const struct { const char *arch, *backend; } arch_backends[] = {
      {"x86_64", "X86"}, {"i386", "X86"}, {"i686", "X86"},
      {"nvptx64", "NVPTX"}, {"nvptx", "NVPTX"}, {"amdgcn", "AMDGPU"},
      {"aarch64", "AArch64"}, {"riscv64", "RISCV"},
  };
  size_t n = strcspn(triple, "-");
  for (size_t i = 0; i < sizeof arch_backends / sizeof arch_backends[0]; i++)
    if (strlen(arch_backends[i].arch) == n && strncmp(arch_backends[i].arch, triple, n) == 0)
      return arch_backends[i].backend;
  return NULL;
}

static pthread_mutex_t cg_init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool cg_backend_ready[sizeof cg_backends / sizeof cg_backends[0]];
static bool cg_handler_installed;

/* LLVM calls this instead of aborting silently (e.g. a backend that cannot
 * select an instruction); it must not return. */
static void cg_fatal_error(const char *reason) {
  fprintf(stderr, "mlc: fatal LLVM error: %s\n", reason);
  fflush(stderr);
  _exit(70); /* EX_SOFTWARE: LLVM's state is unusable, skip exit handlers */
}

static void init_backend_at(size_t i) {
  cg_backends[i].info();
  cg_backends[i].target();
  cg_backends[i].mc();
  for (size_t k = 0; k < sizeof cg_printers / sizeof cg_printers[0]; k++)
    if (strcmp(cg_printers[k].name, cg_backends[i].name) == 0) cg_printers[k].init();
}

/* Initialises the backend for triple once per process (and installs the
 * fatal error handler). */
static int init_backend(const char *triple) {
  const char *name = backend_name(triple);
  if (!name) return mlc_error_set(MLC_EUNSUPPORTED, "no LLVM backend known for triple '%s'", triple);
  size_t i = 0, n = sizeof cg_backends / sizeof cg_backends[0];
  while (i < n && strcmp(cg_backends[i].name, name) != 0) i++;
  if (i == n)
    return mlc_error_set(MLC_EUNSUPPORTED, "this LLVM (%s) was built without the %s backend",
                         LLVM_VERSION_STRING, name);
  pthread_mutex_lock(&cg_init_lock);
  if (!cg_handler_installed) { /* LLVM allows one handler per process */
    LLVMInstallFatalErrorHandler(cg_fatal_error);
    cg_handler_installed = true;
  }
  if (!cg_backend_ready[i]) init_backend_at(i);
  cg_backend_ready[i] = true;
  pthread_mutex_unlock(&cg_init_lock);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Context, module and target machine                                        */
/* ------------------------------------------------------------------------ */

/* LLVM's normal form of the target's triple, with the vendor clang uses on
 * x86 ("x86_64-linux-gnu" -> "x86_64-pc-linux-gnu"). mlc_malloc'd. */
static char *normal_triple(const char *mtriple) {
  char *norm = LLVMNormalizeTargetTriple(mtriple);
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  const char *unknown = strstr(norm, "-unknown-");
  if (unknown && backend_name(norm) && strcmp(backend_name(norm), "X86") == 0) {
    mlc_sb_appendn(&sb, norm, (size_t)(unknown - norm));
    mlc_sb_printf(&sb, "-pc-%s", unknown + strlen("-unknown-"));
  } else {
    mlc_sb_append(&sb, norm);
  }
  LLVMDisposeMessage(norm);
  return mlc_sb_take(&sb);
}

int cg_target_machine(LLVMTargetMachineRef *out, const char *triple, const char *cpu, const char *features) {
  *out = NULL;
  int rc = init_backend(triple);
  if (rc != MLC_OK) return rc;
  LLVMTargetRef target = NULL;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
    rc = mlc_error_set(MLC_EUNSUPPORTED, "no LLVM target for '%s': %s", triple, msg);
    LLVMDisposeMessage(msg);
    return rc;
  }
  *out = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                 LLVMCodeModelDefault);
  if (!*out) return mlc_error_set(MLC_EUNSUPPORTED, "LLVM cannot create a target machine for '%s' -mcpu=%s", triple, cpu);
  return MLC_OK;
}

static int create_target_machine(mlc_module_t *m, const char *triple) {
  LLVMTargetRef target = NULL;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
    int rc = mlc_error_set(MLC_EUNSUPPORTED, "no LLVM target for '%s': %s", triple, msg);
    LLVMDisposeMessage(msg);
    return rc;
  }
  /* PIC: the same code goes into shared libraries and the JIT. A CPU newer
   * than this LLVM is named by an older one with its features spelled out. */
  char cpu[sizeof m->target.mcpu], mattr[sizeof m->target.mattr * 2];
  mlc_target_llvm_cpu(&m->target, LLVM_VERSION_MAJOR, cpu, sizeof cpu, mattr, sizeof mattr);
  m->tm = LLVMCreateTargetMachine(target, triple, cpu, mattr, LLVMCodeGenLevelAggressive, LLVMRelocPIC,
                                  LLVMCodeModelDefault);
  if (!m->tm)
    return mlc_error_set(MLC_EUNSUPPORTED, "LLVM cannot create a target machine for '%s' -mcpu=%s",
                         triple, m->target.mcpu);
  return MLC_OK;
}

int cg_module_init(mlc_module_t *m, const mlc_target_t *target) {
  if (target->kind != MLC_TARGET_LLVM) return cg_gpu_module_init(m, target);
  m->target = *target;
  char *triple = normal_triple(target->mtriple);
  if (!triple) return mlc_error_set(MLC_ENOMEM, "out of memory");
  int rc = init_backend(triple);
  if (rc == MLC_OK) rc = create_target_machine(m, triple);
  if (rc == MLC_OK) {
    m->ctx = LLVMContextCreate();
    m->mod = LLVMModuleCreateWithNameInContext("mlc", m->ctx);
    LLVMSetTarget(m->mod, triple);
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(m->tm);
    LLVMSetModuleDataLayout(m->mod, layout);
    LLVMDisposeTargetData(layout);
  }
  mlc_free(triple);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Verification and optimisation                                             */
/* ------------------------------------------------------------------------ */

/* The first defined function that fails verification (for the message). */
static const char *broken_function(LLVMModuleRef mod) {
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    if (LLVMVerifyFunction(fn, LLVMReturnStatusAction)) {
      size_t len;
      return LLVMGetValueName2(fn, &len);
    }
  }
  return NULL;
}

int cg_module_verify(LLVMModuleRef mod) {
  char *msg = NULL;
  int rc = MLC_OK;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
    const char *fn = broken_function(mod);
    rc = mlc_error_set(MLC_EINTERNAL, "generated LLVM IR does not verify (a code generator bug)%s%s%s: %s",
                       fn ? " in function '" : "", fn ? fn : "", fn ? "'" : "", msg ? msg : "");
  }
  LLVMDisposeMessage(msg);
  return rc;
}

/* LLVM's x86 CPU models prefer 256-bit vectors for auto-vectorised loops even
 * on AVX-512 CPUs; generated kernels are long-running loop nests where the
 * full width pays, so each function prefers the target's widest vector
 * (unless its generator chose otherwise). */
static void prefer_full_vectors(mlc_module_t *m) {
  if (m->target.vector_width < 512) return;
  static const char key[] = "prefer-vector-width";
  for (LLVMValueRef fn = LLVMGetFirstFunction(m->mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    if (LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, key, sizeof key - 1)) continue;
    LLVMAttributeRef a = LLVMCreateStringAttribute(m->ctx, key, sizeof key - 1, "512", 3);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, a);
  }
}

/* O3, then a second chance for LICM to keep accumulators in registers.
 * LLVM fully unrolls small inner loops late (after O3's LICM), leaving
 * loops like `for k: C[x] += ..; C[x + 512] += ..` whose accesses are
 * loop-invariant but whose indices instcombine has rewritten to
 * `(x | 512) + y`, which BasicAA cannot tell apart from `x + y`: the
 * accesses fall into one may-alias set and LICM promotes none of them, so
 * every reduction step loads and stores its accumulator. Splitting the
 * constant offsets out of the GEPs (separate-const-offset-from-gep) makes
 * them `gep(gep(C, x + y), 512)`, which BasicAA resolves; LICM then keeps
 * the accumulators in registers (bench_gemm's "tiled" GMM-512 on one
 * thread: 39 -> 84 GFLOP/s). */
#define CG_PIPELINE                                                                    \
  "default<O3>,function(separate-const-offset-from-gep,early-cse<memssa>,"             \
  "loop-mssa(licm),instcombine,simplifycfg)"

int cg_module_optimize(mlc_module_t *m) {
  int rc = cg_module_verify(m->mod);
  if (rc != MLC_OK) return rc;
  prefer_full_vectors(m);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
  LLVMPassBuilderOptionsSetLoopInterleaving(opts, 1);
  LLVMErrorRef err = LLVMRunPasses(m->mod, CG_PIPELINE, m->tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    rc = mlc_error_set(MLC_EINTERNAL, "LLVM O3 pipeline failed: %s", msg);
    LLVMDisposeErrorMessage(msg);
  }
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Modules from functions                                                    */
/* ------------------------------------------------------------------------ */

static bool is_c_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

/* Function names become exported C symbols: they must be identifiers, unique
 * in the module, and not collide with the runtime's. */
static int check_names(tir_func_t *const *funcs, int n) {
  for (int i = 0; i < n; i++) {
    const char *name = funcs[i]->name;
    if (!is_c_identifier(name))
      return mlc_error_set(MLC_EINVAL, "function name '%s' is not a C identifier", name ? name : "");
    if (strncmp(name, "mlc_", 4) == 0)
      return mlc_error_set(MLC_EINVAL, "function name '%s' uses the runtime's prefix mlc_", name);
    for (int j = 0; j < i; j++)
      if (strcmp(funcs[j]->name, name) == 0)
        return mlc_error_set(MLC_EINVAL, "two functions are named '%s'", name);
  }
  return MLC_OK;
}

char *cg_func_proto(const tir_func_t *f) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_printf(&sb, "/* %s: %d argument%s (DLTensor each, in this order)\n", f->name, f->nparams,
                f->nparams == 1 ? "" : "s");
  char dt[32];
  for (int i = 0; i < f->nparams; i++) {
    const tir_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    if (!b) {
      mlc_sb_printf(&sb, " *   args[%d] %s: %s scalar (0-d tensor)\n", i, f->params[i]->u.var.name,
                    tir_dtype_str(f->params[i]->dtype, dt));
      continue;
    }
    mlc_sb_printf(&sb, " *   args[%d] %s: %s[", i, b->name, tir_dtype_str(b->dtype, dt));
    for (int d = 0; d < b->ndim; d++) {
      if (d) mlc_sb_append(&sb, ", ");
      tir_print_expr(&sb, b->shape[d]);
    }
    mlc_sb_putc(&sb, ']');
    if (b->align > 0) mlc_sb_printf(&sb, ", data aligned to %d bytes", b->align);
    mlc_sb_putc(&sb, '\n');
  }
  mlc_sb_printf(&sb, " * Returns 0, or nonzero with the reason in mlc_last_error(). */\n"
                     "int32_t %s(DLTensor *args, int32_t num_args);\n", f->name);
  return mlc_sb_take(&sb);
}

static int add_funcs(mlc_module_t *m, tir_func_t *const *lowered, int n) {
  m->func_names = mlc_calloc((size_t)(n ? n : 1), sizeof *m->func_names);
  m->func_protos = mlc_calloc((size_t)(n ? n : 1), sizeof *m->func_protos);
  if (!m->func_names || !m->func_protos) return mlc_error_set(MLC_ENOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    m->func_names[i] = mlc_strdup(lowered[i]->name);
    m->func_protos[i] = cg_func_proto(lowered[i]);
    m->nfuncs = i + 1;
    if (!m->func_names[i] || !m->func_protos[i]) return mlc_error_set(MLC_ENOMEM, "out of memory");
    int rc = cg_llvm_add_func(m, lowered[i]);
    if (rc != MLC_OK) {
      mlc_error_prefix("%s", lowered[i]->name);
      return rc;
    }
  }
  return MLC_OK;
}

int mlc_codegen(mlc_module_t **out, tir_func_t *const *lowered, int n, const mlc_target_t *target) {
  *out = NULL;
  if (n < 0 || (n > 0 && !lowered) || !target)
    return mlc_error_set(MLC_EINVAL, "mlc_codegen: bad arguments");
  int rc = check_names(lowered, n);
  if (rc != MLC_OK) return rc;
  mlc_module_t *m = mlc_calloc(1, sizeof *m);
  if (!m) return mlc_error_set(MLC_ENOMEM, "out of memory");
  rc = cg_module_init(m, target);
  if (rc == MLC_OK) rc = add_funcs(m, lowered, n);
  if (rc == MLC_OK && m->gpu) rc = cg_gpu_module_finish(m);
  if (rc == MLC_OK) rc = cg_module_optimize(m);
  if (rc != MLC_OK) {
    mlc_module_free(m);
    return rc;
  }
  *out = m;
  return MLC_OK;
}

int mlc_build(mlc_module_t **out, tir_func_t *const *scheduled, int n, const mlc_target_t *target,
              const mlc_lower_options_t *opts) {
  *out = NULL;
  if (n < 0 || (n > 0 && !scheduled) || !target)
    return mlc_error_set(MLC_EINVAL, "mlc_build: bad arguments");
  tir_func_t **lowered = mlc_calloc((size_t)(n ? n : 1), sizeof *lowered);
  if (!lowered) return mlc_error_set(MLC_ENOMEM, "out of memory");
  int rc = MLC_OK;
  for (int i = 0; i < n && rc == MLC_OK; i++) {
    rc = mlc_lower(&lowered[i], scheduled[i], target, opts);
    if (rc != MLC_OK) mlc_error_prefix("lowering %s", scheduled[i]->name);
  }
  if (rc == MLC_OK) rc = mlc_codegen(out, lowered, n, target);
  for (int i = 0; i < n; i++) tir_func_free(lowered[i]);
  mlc_free(lowered);
  return rc;
}

void mlc_module_free(mlc_module_t *m) {
  if (!m) return;
  if (m->mod) LLVMDisposeModule(m->mod);
  if (m->tm) LLVMDisposeTargetMachine(m->tm);
  if (m->dev_mod) LLVMDisposeModule(m->dev_mod);
  if (m->dev_tm) LLVMDisposeTargetMachine(m->dev_tm);
  mlc_free(m->image);
  if (m->ctx) LLVMContextDispose(m->ctx);
  for (int i = 0; i < m->nfuncs; i++) {
    mlc_free(m->func_names[i]);
    mlc_free(m->func_protos[i]);
  }
  mlc_free(m->func_names);
  mlc_free(m->func_protos);
  mlc_free(m);
}
