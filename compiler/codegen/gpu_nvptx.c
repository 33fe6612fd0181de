/*
 * gpu_nvptx.c - NVIDIA GPUs through LLVM's NVPTX backend: the image is PTX
 * text for the target's -arch (cg_gpu_target_t of gpu.h).
 *
 * Architectures: the newest sm_XX this LLVM knows that is not newer than
 * the target's (PTX is forward compatible: the driver and ptxas compile PTX
 * for an older sm_XX to a newer GPU; LLVM 14 knows up to sm_86, so
 * `cuda -arch=sm_90` gets `.target sm_86` PTX, which ptxas -arch=sm_90
 * assembles and the driver loads on an H100).
 *
 * Math: NVPTX selects no instruction for llvm.exp, llvm.log, llvm.sin, ...;
 * when CUDA's libdevice is installed (MLC_LIBDEVICE, $CUDA_HOME/nvvm/
 * libdevice/libdevice.10.bc or /usr/local/cuda/nvvm/libdevice/...) they
 * call its __nv_* functions (IEEE-accurate, the same code nvcc uses),
 * linked into the device module and internalised so only what is used
 * stays; without libdevice, float32 exp/exp2/log/log2/log10/sin/cos use the
 * hardware approximations (llvm.nvvm.ex2.approx.f and friends, about 2 ulp)
 * and tanh is computed from exp; the rest is MLC_EUNSUPPORTED. sqrt, fabs,
 * floor, ceil, trunc and round-to-even are instructions.
 *
 * Kernels are marked with !nvvm.annotations {fn, !"kernel", i32 1}.
 * Tensor cores: the WMMA calls are gpu_wmma.c's.
 */
#include "compiler/codegen/gpu.h"
#include "compiler/codegen/module_priv.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>

/* Architectures LLVM's NVPTX backend knows, with the first LLVM that does. */
static const struct { int sm, llvm; } nvptx_archs[] = {
    {35, 3}, {50, 3}, {52, 3}, {53, 3}, {60, 3}, {61, 3}, {62, 3}, {70, 6}, {72, 6},
    {75, 8}, {80, 11}, {86, 12}, {87, 16}, {89, 16}, {90, 16},
};

static int nvptx_cpu(const mlc_target_t *t, char *out, size_t len) {
  int sm = 0;
  if (sscanf(t->arch, "sm_%d", &sm) != 1)
    return mlc_error_set(MLC_EINVAL, "cuda target: -arch=%s is not sm_XX", t->arch);
  int best = 0;
  for (size_t i = 0; i < sizeof nvptx_archs / sizeof nvptx_archs[0]; i++)
    if (nvptx_archs[i].sm <= sm && nvptx_archs[i].llvm <= LLVM_VERSION_MAJOR) best = nvptx_archs[i].sm;
  if (best == 0)
    return mlc_error_set(MLC_EUNSUPPORTED, "cuda target: LLVM %s has no NVPTX architecture at or below %s",
                         LLVM_VERSION_STRING, t->arch);
  snprintf(out, len, "sm_%d", best);
  return MLC_OK;
}

static LLVMValueRef nvptx_index(cg_t *cg, bool block, int dim) {
  char name[64];
  snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", block ? "ctaid" : "tid", 'x' + dim);
  return cg_call_intrinsic(cg, name, NULL, 0, NULL, 0);
}

/* shfl.sync.bfly.b32 over the whole warp (member mask 0xffffffff; the
 * clamp 0x1f keeps every lane in its warp: butterfly offsets below a group
 * width stay in the group). */
static LLVMValueRef nvptx_shuffle_xor(cg_t *cg, LLVMValueRef v, int mask) {
  LLVMValueRef args[4] = {cg_i32(cg, -1), v, cg_i32(cg, mask), cg_i32(cg, 0x1f)};
  return cg_call_intrinsic(cg, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
}

static void nvptx_barrier(cg_t *cg) { cg_call_intrinsic(cg, "llvm.nvvm.barrier0", NULL, 0, NULL, 0); }

static void nvvm_annotate(cg_t *cg, LLVMValueRef fn, const char *key, int64_t value) {
  LLVMMetadataRef md[3] = {LLVMValueAsMetadata(fn), LLVMMDStringInContext2(cg->ctx, key, strlen(key)),
                           LLVMValueAsMetadata(cg_i32(cg, value))};
  LLVMAddNamedMetadataOperand(cg->mod, "nvvm.annotations", LLVMMetadataAsValue(cg->ctx, LLVMMDNodeInContext2(cg->ctx, md, 3)));
}

/* A kernel; with a constant block shape also `.maxntid x, y, z`, so that
 * ptxas allocates registers for that many threads (spilling rather than
 * leaving a launch without enough registers). */
static void nvptx_mark_kernel(cg_t *cg, LLVMValueRef fn, const int64_t block[3]) {
  nvvm_annotate(cg, fn, "kernel", 1);
  if (block[0] <= 0 || block[1] <= 0 || block[2] <= 0) return;
  static const char *const keys[3] = {"maxntidx", "maxntidy", "maxntidz"};
  for (int d = 0; d < 3; d++) nvvm_annotate(cg, fn, keys[d], block[d]);
}

/* ------------------------------------------------------------------------ */
/* Math                                                                      */
/* ------------------------------------------------------------------------ */

/* libdevice, looked for and read once per process (every module parses it
 * into its own context from these bytes). */
static struct {
  pthread_once_t once;
  const char *path;   /* NULL: not found */
  char *bytes;        /* mlc_malloc'd, kept for the process; NULL: unreadable */
  size_t len;
  char path_buf[1024];
  char error[512];    /* why it could not be read */
} libdevice = {.once = PTHREAD_ONCE_INIT};

static const char *find_libdevice(void) {
  const char *env = getenv("MLC_LIBDEVICE"), *home = getenv("CUDA_HOME");
  if (env && *env) return access(env, R_OK) == 0 ? env : NULL;
  if (home && *home) {
    snprintf(libdevice.path_buf, sizeof libdevice.path_buf, "%s/nvvm/libdevice/libdevice.10.bc", home);
    if (access(libdevice.path_buf, R_OK) == 0) return libdevice.path_buf;
  }
  return access("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc", R_OK) == 0
             ? "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc" : NULL;
}

static void load_libdevice(void) {
  libdevice.path = find_libdevice();
  if (libdevice.path && mlc_read_file(&libdevice.bytes, &libdevice.len, libdevice.path) != MLC_OK)
    snprintf(libdevice.error, sizeof libdevice.error, "%s", mlc_error_last());
}

static const char *libdevice_path(void) {
  pthread_once(&libdevice.once, load_libdevice);
  return libdevice.path;
}

/*      op      libdevice (float name; the double one drops the f) */
static const struct { tir_op_t op; const char *name; } nv_funcs[] = {
    {TIR_OP_EXP, "__nv_expf"},     {TIR_OP_EXP2, "__nv_exp2f"},   {TIR_OP_EXP10, "__nv_exp10f"},
    {TIR_OP_LOG, "__nv_logf"},     {TIR_OP_LOG2, "__nv_log2f"},   {TIR_OP_LOG10, "__nv_log10f"},
    {TIR_OP_LOG1P, "__nv_log1pf"}, {TIR_OP_TANH, "__nv_tanhf"},   {TIR_OP_ERF, "__nv_erff"},
    {TIR_OP_SIN, "__nv_sinf"},     {TIR_OP_COS, "__nv_cosf"},     {TIR_OP_POW, "__nv_powf"},
};

static const char *nv_func(tir_op_t op) {
  for (size_t i = 0; i < sizeof nv_funcs / sizeof nv_funcs[0]; i++)
    if (nv_funcs[i].op == op) return nv_funcs[i].name;
  return NULL;
}

/* f(x[, y]) lane by lane through a device function `name` of the scalar type. */
static LLVMValueRef call_lanes(cg_t *cg, const char *name, LLVMValueRef x, LLVMValueRef y) {
  LLVMTypeRef t = LLVMTypeOf(x), s = scalar_type_of(x);
  int lanes = lanes_of(x);
  LLVMTypeRef ps[2] = {s, s};
  LLVMValueRef fn = cg_extern_fn(cg, name, s, ps, y ? 2 : 1, false);
  if (lanes == 1) {
    LLVMValueRef args[2] = {x, y};
    return cg_call(cg, fn, args, y ? 2 : 1, "");
  }
  LLVMValueRef out = LLVMGetUndef(t);
  for (int l = 0; l < lanes; l++) {
    LLVMValueRef args[2] = {LLVMBuildExtractElement(cg->b, x, cg_i32(cg, l), ""),
                            y ? LLVMBuildExtractElement(cg->b, y, cg_i32(cg, l), "") : NULL};
    out = LLVMBuildInsertElement(cg->b, out, cg_call(cg, fn, args, y ? 2 : 1, ""), cg_i32(cg, l), "");
  }
  return out;
}

/* Without libdevice: float32 hardware approximations. */
static LLVMValueRef approx_math(cg_t *cg, tir_op_t op, LLVMValueRef x) {
  bool f32 = scalar_type_of(x) == cg->t_f32;
  LLVMBuilderRef b = cg->b;
  if (f32) switch (op) {
    case TIR_OP_EXP: return call_lanes(cg, "llvm.nvvm.ex2.approx.f", LLVMBuildFMul(b, x, cg_real_like(cg, x, 1.4426950408889634), ""), NULL);
    case TIR_OP_EXP2: return call_lanes(cg, "llvm.nvvm.ex2.approx.f", x, NULL);
    case TIR_OP_LOG2: return call_lanes(cg, "llvm.nvvm.lg2.approx.f", x, NULL);
    case TIR_OP_LOG: return LLVMBuildFMul(b, call_lanes(cg, "llvm.nvvm.lg2.approx.f", x, NULL), cg_real_like(cg, x, 0.6931471805599453), "");
    case TIR_OP_LOG10: return LLVMBuildFMul(b, call_lanes(cg, "llvm.nvvm.lg2.approx.f", x, NULL), cg_real_like(cg, x, 0.30102999566398120), "");
    case TIR_OP_SIN: return call_lanes(cg, "llvm.nvvm.sin.approx.f", x, NULL);
    case TIR_OP_COS: return call_lanes(cg, "llvm.nvvm.cos.approx.f", x, NULL);
    case TIR_OP_TANH: {
      LLVMValueRef e = approx_math(cg, TIR_OP_EXP, LLVMBuildFMul(b, x, cg_real_like(cg, x, 2.0), ""));
      return e ? cg_gpu_tanh_of_exp(cg, e) : NULL;
    }
    default: break;
    }
  return fail_null(MLC_EUNSUPPORTED, "codegen: %s on NVPTX needs CUDA's libdevice (set MLC_LIBDEVICE to libdevice.10.bc)",
                   tir_op_name(op));
}

static LLVMValueRef nvptx_math(cg_t *cg, tir_op_t op, LLVMValueRef x, LLVMValueRef y) {
  const char *nv = nv_func(op);
  if (!nv) return cg_float_math_default(cg, op, x, y); /* instructions */
  if (!libdevice_path()) return approx_math(cg, op, x);
  bool f64 = scalar_type_of(x) == cg->t_f64;
  char name[32];
  snprintf(name, sizeof name, "%.*s", (int)strlen(nv) - (f64 ? 1 : 0), nv);
  return call_lanes(cg, name, x, y);
}

/* ------------------------------------------------------------------------ */
/* Linking libdevice, the PTX                                                */
/* ------------------------------------------------------------------------ */

static bool calls_libdevice(LLVMModuleRef mod) {
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    size_t len;
    if (LLVMIsDeclaration(fn) && strncmp(LLVMGetValueName2(fn, &len), "__nv_", 5) == 0) return true;
  }
  return false;
}

/* Functions defined before the link are the kernels; everything libdevice
 * brought becomes internal so the optimiser drops what is unused. */
static int nvptx_link(mlc_module_t *m) {
  if (!calls_libdevice(m->dev_mod)) return MLC_OK;
  const char *path = libdevice_path();
  if (!path) return mlc_error_set(MLC_EUNSUPPORTED, "NVPTX: libdevice not found");
  if (!libdevice.bytes) return mlc_error_set(MLC_EIO, "cannot read libdevice %s: %s", path, libdevice.error);
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(libdevice.bytes, libdevice.len, "libdevice", 0);
  LLVMModuleRef lib = NULL;
  int bad = LLVMParseBitcodeInContext2(m->ctx, buf, &lib);
  LLVMDisposeMemoryBuffer(buf);
  if (bad) return mlc_error_set(MLC_EIO, "libdevice %s is not LLVM bitcode this LLVM reads", path);
  LLVMSetTarget(lib, LLVMGetTarget(m->dev_mod));
  LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(m->dev_mod));
  MLC_VEC(LLVMValueRef) kernels = {0};
  for (LLVMValueRef fn = LLVMGetFirstFunction(m->dev_mod); fn; fn = LLVMGetNextFunction(fn))
    if (!LLVMIsDeclaration(fn) && mlc_vec_push(&kernels, fn) != MLC_OK) {
      mlc_vec_free(&kernels);
      LLVMDisposeModule(lib);
      return mlc_error_set(MLC_ENOMEM, "out of memory");
    }
  if (LLVMLinkModules2(m->dev_mod, lib)) {
    mlc_vec_free(&kernels);
    return mlc_error_set(MLC_EINTERNAL, "linking libdevice %s failed", path);
  }
  for (LLVMValueRef fn = LLVMGetFirstFunction(m->dev_mod); fn; fn = LLVMGetNextFunction(fn)) {
    bool kernel = false;
    for (size_t i = 0; i < kernels.len && !kernel; i++) kernel = kernels.data[i] == fn;
    if (!kernel && !LLVMIsDeclaration(fn)) LLVMSetLinkage(fn, LLVMInternalLinkage);
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(m->dev_mod); g; g = LLVMGetNextGlobal(g))
    if (!LLVMIsDeclaration(g)) LLVMSetLinkage(g, LLVMInternalLinkage);
  mlc_vec_free(&kernels);
  return MLC_OK;
}

static int nvptx_image(mlc_module_t *m, char **out, size_t *len) {
  LLVMMemoryBufferRef buf = NULL;
  int rc = cg_emit_clone_to_memory(&buf, m->dev_tm, m->dev_mod, LLVMAssemblyFile);
  if (rc != MLC_OK) return rc;
  size_t n = LLVMGetBufferSize(buf);
  *out = mlc_malloc(n + 1);
  if (*out) {
    memcpy(*out, LLVMGetBufferStart(buf), n);
    (*out)[n] = '\0';
    *len = n + 1;
  }
  LLVMDisposeMemoryBuffer(buf);
  return *out ? MLC_OK : mlc_error_set(MLC_ENOMEM, "out of memory");
}

const cg_gpu_target_t cg_gpu_nvptx = {
    .name = "NVPTX",
    .dl_kind = kDLCUDA,
    .private_as = 0,
    .cpu = nvptx_cpu,
    .index = nvptx_index,
    .shuffle_xor = nvptx_shuffle_xor,
    .barrier = nvptx_barrier,
    .mark_kernel = nvptx_mark_kernel,
    .math = nvptx_math,
    .link = nvptx_link,
    .tensor_core = cg_nvptx_wmma,
    .warp_mma = cg_nvptx_mma,
    .fragment_alloca = cg_nvptx_fragment_alloca,
    .image = nvptx_image,
};
