/*
 * gpu_amdgpu.c - AMD GPUs through LLVM's AMDGPU backend: the image is an
 * HSACO code object for the target's -mcpu (cg_gpu_target_t of gpu.h).
 *
 * Code objects are not forward compatible, so the processor must be one
 * this LLVM knows (gfx90a since LLVM 13, gfx940 since 15, gfx942 since 17):
 * otherwise MLC_EUNSUPPORTED says which LLVM is needed. The object LLVM
 * writes is linked into the HSACO with `ld.lld -shared` (MLC_LD_LLD, else
 * ld.lld, ld.lld-<LLVM major> on PATH); without it, MLC_EUNSUPPORTED.
 *
 * Kernels use the amdgpu_kernel calling convention with
 * "amdgpu-flat-work-group-size"="1,<threads>"; allocas live in the private
 * address space (5), shared memory in LDS (3). Barriers are a sequentially
 * consistent fence around s_barrier (LLVM's C API cannot ask for the
 * cheaper workgroup-scope fence). Math: float32 exp, exp2, log, log2, log10,
 * sin, cos, sqrt and rounding are instructions; tanh, exp10, pow and log1p
 * are computed from them (pow as exp2(y * log2(x)), so only for x > 0);
 * other math, and transcendental float64, is MLC_EUNSUPPORTED. No tensor
 * cores: MFMA is not generated, so WMMA calls and fragment buffers are
 * refused (tensor_core and fragment_alloca stay NULL; gpu_device.c says so).
 */
#include "compiler/codegen/gpu.h"
#include "compiler/codegen/module_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct { const char *cpu; int llvm; } amdgpu_archs[] = {
    {"gfx900", 5}, {"gfx906", 7}, {"gfx908", 10}, {"gfx90a", 13}, {"gfx940", 15},
    {"gfx941", 17}, {"gfx942", 17}, {"gfx1030", 12}, {"gfx1100", 15},
};

static int amdgpu_cpu(const mlc_target_t *t, char *out, size_t len) {
  for (size_t i = 0; i < sizeof amdgpu_archs / sizeof amdgpu_archs[0]; i++) {
    if (strcmp(amdgpu_archs[i].cpu, t->mcpu) != 0) continue;
    if (amdgpu_archs[i].llvm > LLVM_VERSION_MAJOR)
      return mlc_error_set(MLC_EUNSUPPORTED, "rocm target: LLVM %s has no AMDGPU processor %s (it needs LLVM %d "
                           "or newer; AMDGPU code objects are not forward compatible)", LLVM_VERSION_STRING,
                           t->mcpu, amdgpu_archs[i].llvm);
    snprintf(out, len, "%s", t->mcpu);
    return MLC_OK;
  }
  return mlc_error_set(MLC_EUNSUPPORTED, "rocm target: unknown AMDGPU processor %s", t->mcpu);
}

static LLVMValueRef amdgpu_index(cg_t *cg, bool block, int dim) {
  char name[64];
  snprintf(name, sizeof name, "llvm.amdgcn.%s.id.%c", block ? "workgroup" : "workitem", 'x' + dim);
  return cg_call_intrinsic(cg, name, NULL, 0, NULL, 0);
}

/* ds_bpermute: lane l reads lane (l ^ mask) of its wavefront; the lane id
 * is mbcnt(-1) (bits set below this lane). */
static LLVMValueRef amdgpu_shuffle_xor(cg_t *cg, LLVMValueRef v, int mask) {
  LLVMValueRef lo_args[2] = {cg_i32(cg, -1), cg_i32(cg, 0)};
  LLVMValueRef lo = cg_call_intrinsic(cg, "llvm.amdgcn.mbcnt.lo", NULL, 0, lo_args, 2);
  if (!lo) return NULL;
  LLVMValueRef hi_args[2] = {cg_i32(cg, -1), lo};
  LLVMValueRef lane = cg_call_intrinsic(cg, "llvm.amdgcn.mbcnt.hi", NULL, 0, hi_args, 2);
  if (!lane) return NULL;
  LLVMValueRef src = LLVMBuildXor(cg->b, lane, cg_i32(cg, mask), "");
  LLVMValueRef args[2] = {LLVMBuildShl(cg->b, src, cg_i32(cg, 2), ""), v};
  return cg_call_intrinsic(cg, "llvm.amdgcn.ds.bpermute", NULL, 0, args, 2);
}

static void amdgpu_barrier(cg_t *cg) {
  LLVMBuildFence(cg->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
  cg_call_intrinsic(cg, "llvm.amdgcn.s.barrier", NULL, 0, NULL, 0);
  LLVMBuildFence(cg->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
}

static void amdgpu_mark_kernel(cg_t *cg, LLVMValueRef fn, const int64_t block[3]) {
  int64_t nthreads = 1;
  for (int d = 0; d < 3; d++) nthreads *= block[d] > 0 ? block[d] : 1024;
  LLVMSetFunctionCallConv(fn, LLVMAMDGPUKERNELCallConv);
  char v[32];
  snprintf(v, sizeof v, "1,%lld", (long long)(nthreads > 0 && nthreads <= 1024 ? nthreads : 1024));
  static const char key[] = "amdgpu-flat-work-group-size";
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(cg->ctx, key, sizeof key - 1, v, (unsigned)strlen(v)));
}

static LLVMValueRef amdgpu_math(cg_t *cg, tir_op_t op, LLVMValueRef x, LLVMValueRef y) {
  bool f32 = scalar_type_of(x) == cg->t_f32;
  LLVMBuilderRef b = cg->b;
  switch (op) {
  case TIR_OP_FABS: case TIR_OP_ABS: case TIR_OP_SQRT: case TIR_OP_RSQRT: case TIR_OP_FLOOR:
  case TIR_OP_CEIL: case TIR_OP_TRUNC: case TIR_OP_ROUND: case TIR_OP_NEARBYINT:
    return cg_float_math_default(cg, op, x, y);
  default: break;
  }
  if (!f32) return fail_null(MLC_EUNSUPPORTED, "codegen: %s of float64 is not generated for AMDGPU", tir_op_name(op));
  switch (op) {
  case TIR_OP_EXP: case TIR_OP_EXP2: case TIR_OP_LOG: case TIR_OP_LOG2: case TIR_OP_LOG10:
  case TIR_OP_SIN: case TIR_OP_COS: case TIR_OP_SIGMOID:
    return cg_float_math_default(cg, op, x, y);
  case TIR_OP_EXP10: return amdgpu_math(cg, TIR_OP_EXP2, LLVMBuildFMul(b, x, cg_real_like(cg, x, 3.321928094887362), ""), NULL);
  case TIR_OP_LOG1P: return amdgpu_math(cg, TIR_OP_LOG, LLVMBuildFAdd(b, x, cg_real_like(cg, x, 1.0), ""), NULL);
  case TIR_OP_POW: {
    LLVMValueRef l = amdgpu_math(cg, TIR_OP_LOG2, x, NULL);
    return l ? amdgpu_math(cg, TIR_OP_EXP2, LLVMBuildFMul(b, y, l, ""), NULL) : NULL;
  }
  case TIR_OP_TANH: {
    LLVMValueRef e = amdgpu_math(cg, TIR_OP_EXP, LLVMBuildFMul(b, x, cg_real_like(cg, x, 2.0), ""), NULL);
    return e ? cg_gpu_tanh_of_exp(cg, e) : NULL;
  }
  default: return fail_null(MLC_EUNSUPPORTED, "codegen: %s is not generated for AMDGPU", tir_op_name(op));
  }
}

static int amdgpu_link(mlc_module_t *m) {
  (void)m;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* The HSACO                                                                 */
/* ------------------------------------------------------------------------ */

static int temp_path(char *path, size_t len, const char *suffix) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, len, "%s/mlc-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  if (fd < 0) return mlc_error_set(MLC_EIO, "cannot create a temporary file %s", path);
  close(fd);
  return MLC_OK;
}

/* ld.lld -shared obj -o out, with the first linker that runs. */
static int link_hsaco(const char *obj, const char *out) {
  char versioned[32];
  snprintf(versioned, sizeof versioned, "ld.lld-%d", LLVM_VERSION_MAJOR);
  const char *env = getenv("MLC_LD_LLD");
  const char *cands[3] = {env && *env ? env : "ld.lld", env && *env ? NULL : versioned, NULL};
  mlc_strbuf_t output;
  mlc_sb_init(&output);
  int status = -1;
  for (int i = 0; cands[i] && status < 0; i++) {
    char *argv[] = {(char *)cands[i], "-shared", (char *)obj, "-o", (char *)out, NULL};
    output.len = 0;
    status = cg_run_capture(argv, &output);
  }
  int rc = MLC_OK;
  if (status < 0)
    rc = mlc_error_set(MLC_EUNSUPPORTED, "an AMDGPU code object (HSACO) is linked with ld.lld, and none runs "
                       "here (install lld or set MLC_LD_LLD)");
  else if (status != 0)
    rc = mlc_error_set(MLC_EIO, "ld.lld failed linking the HSACO: %s", mlc_sb_str(&output));
  mlc_sb_free(&output);
  return rc;
}

static int amdgpu_image(mlc_module_t *m, char **out, size_t *len) {
  LLVMMemoryBufferRef buf = NULL;
  int rc = cg_emit_clone_to_memory(&buf, m->dev_tm, m->dev_mod, LLVMObjectFile);
  if (rc != MLC_OK) return rc;
  char obj[4096], so[4096];
  rc = temp_path(obj, sizeof obj, ".o");
  if (rc == MLC_OK && (rc = temp_path(so, sizeof so, ".hsaco")) != MLC_OK) unlink(obj);
  if (rc == MLC_OK) {
    rc = mlc_write_file(obj, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
    if (rc == MLC_OK) rc = link_hsaco(obj, so);
    if (rc == MLC_OK) rc = mlc_read_file(out, len, so);
    unlink(obj);
    unlink(so);
  }
  LLVMDisposeMemoryBuffer(buf);
  return rc;
}

const cg_gpu_target_t cg_gpu_amdgpu = {
    .name = "AMDGPU",
    .dl_kind = kDLROCM,
    .private_as = 5,
    .cpu = amdgpu_cpu,
    .index = amdgpu_index,
    .shuffle_xor = amdgpu_shuffle_xor,
    .barrier = amdgpu_barrier,
    .mark_kernel = amdgpu_mark_kernel,
    .math = amdgpu_math,
    .link = amdgpu_link,
    .image = amdgpu_image,
};
