/*
 * gpu.h - private to compiler/codegen: the GPU code generators
 * (docs/compiler/gpu.md).
 *
 * A GPU module is two LLVM modules in one context: the host module (the
 * exported DLPack functions, which check their arguments, allocate device
 * memory for intermediate buffers and launch kernels through the runtime)
 * and the device module (one kernel per thread-bound loop nest). What
 * differs between NVIDIA and AMD GPUs is one table, cg_gpu_target_t
 * (gpu_nvptx.c, gpu_amdgpu.c): the LLVM CPU name, thread indices, barriers,
 * how a function becomes a kernel, math functions, and how the optimised
 * device module becomes the image the runtime loads.
 *
 * Files: gpu_module.c (device module, finishing: optimisation, image,
 * embedding it in the host code; emission of the device side),
 * gpu_device.c (a kernel from a loop nest), gpu_reduce.c (cross-thread
 * reductions), gpu_wmma.c (WMMA tensor cores, NVPTX), gpu_warp.c ("warp"
 * buffers: per-lane registers), gpu_mma.c (mma.sync and ldmatrix, NVPTX),
 * gpu_host.c (the launch).
 */
#ifndef MLC_CODEGEN_GPU_H
#define MLC_CODEGEN_GPU_H

#include "compiler/codegen/llvm_gen.h"

struct cg_gpu_target {
  const char *name;         /* "NVPTX" */
  int dl_kind;              /* kDLCUDA / kDLROCM */
  unsigned private_as;      /* address space of allocas (AMDGPU: 5) */
  /* The LLVM CPU name for target t into out (e.g. "sm_86" for sm_90 on an
   * LLVM that does not know sm_90: PTX is forward compatible). MLC_OK or
   * MLC_EUNSUPPORTED naming the architecture. */
  int (*cpu)(const mlc_target_t *t, char *out, size_t len);
  /* blockIdx (block) / threadIdx of dimension dim (0..2), as i32. */
  LLVMValueRef (*index)(cg_t *cg, bool block, int dim);
  /* The i32 value v of the thread whose lane (in its warp) is this lane
   * xor `mask` (a butterfly shuffle; every lane of the warp takes part). */
  LLVMValueRef (*shuffle_xor)(cg_t *cg, LLVMValueRef v, int mask);
  /* A barrier of the thread block, with shared memory made visible. */
  void (*barrier)(cg_t *cg);
  /* Makes fn a kernel entry (calling convention, annotations) launched
   * with block[d] threads in dimension d (0: symbolic, at most 1024 in all). */
  void (*mark_kernel)(cg_t *cg, LLVMValueRef fn, const int64_t block[3]);
  /* Float math (cg_hooks_t.math). */
  LLVMValueRef (*math)(cg_t *cg, tir_op_t op, LLVMValueRef x, LLVMValueRef y);
  /* Before optimisation: link what the math functions call (libdevice). */
  int (*link)(mlc_module_t *m);
  /* WMMA tensor cores (gpu_wmma.c; NULL: the target has none that is
   * generated, and a tensorized program is MLC_EUNSUPPORTED): one call of
   * compiler/lower/tensor_core.h, and the ALLOCATE of a fragment buffer. */
  int (*tensor_core)(cg_t *cg, const tir_expr_t *call);
  int (*fragment_alloca)(cg_t *cg, const tir_stmt_t *s);
  /* The mma.sync calls of the warp-layout intrinsics (tir_ptx_op;
   * gpu_mma.c; NULL: the target has none, and such a call is
   * MLC_EUNSUPPORTED): the call's value, NULL with an error. */
  LLVMValueRef (*warp_mma)(cg_t *cg, const tir_expr_t *call);
  /* The device image of the optimised m->dev_mod (mlc_malloc'd, *len bytes;
   * PTX text includes its NUL). */
  int (*image)(mlc_module_t *m, char **out, size_t *len);
};

extern const cg_gpu_target_t cg_gpu_nvptx;
extern const cg_gpu_target_t cg_gpu_amdgpu;

/* tanh(x) = 1 - 2 / (e + 1) from e = exp(2x), for math hooks that build
 * tanh from their exp. */
static inline LLVMValueRef cg_gpu_tanh_of_exp(cg_t *cg, LLVMValueRef e) {
  LLVMValueRef one = cg_real_like(cg, e, 1.0);
  LLVMValueRef q = LLVMBuildFDiv(cg->b, cg_real_like(cg, e, 2.0), LLVMBuildFAdd(cg->b, e, one, ""), "");
  return LLVMBuildFSub(cg->b, one, q, "");
}

/* ---- gpu_module.c ---- */

/* Sets up a GPU module for target t (cuda/rocm): host module and target
 * machine for this CPU, device module and target machine for t. */
int cg_gpu_module_init(mlc_module_t *m, const mlc_target_t *t);
/* After every function was added: verifies, links and optimises the
 * device module, generates the image and embeds it in the host module. */
int cg_gpu_module_finish(mlc_module_t *m);
/* The device side as text (MLC_EMIT_LL: device IR, MLC_EMIT_ASM: PTX or
 * AMDGPU assembly); NULL with an error. */
char *cg_gpu_text(const mlc_module_t *m, mlc_emit_kind_t kind);
/* Writes the image alone (MLC_EMIT_DEVICE). */
int cg_gpu_write_image(const mlc_module_t *m, const char *path);
/* The host module's references to the image: i8* and its size (i64),
 * placeholders until cg_gpu_module_finish. */
LLVMValueRef cg_gpu_image_ref(cg_t *cg);
LLVMValueRef cg_gpu_image_size_ref(cg_t *cg);

/* ---- gpu_device.c ---- */

#define CG_MAX_FRAGMENT_BUFFERS 32
#define CG_MAX_WARP_BUFFERS 32

/* A "warp" buffer of the kernel and its width W: flat element
 * e0 + lane * W (0 <= e0 mod 32W < W) is register e0 of lane `lane`. */
typedef struct {
  const tir_var_t *data;
  int64_t width;
} cg_warp_buffer_t;

typedef struct {
  cg_warp_buffer_t buf[CG_MAX_WARP_BUFFERS];
  int n;
} cg_warp_table_t;

/* The state of generating one kernel (cg_t.gpu of device code). */
typedef struct {
  const cg_gpu_target_t *gt;
  int64_t block_const[3];     /* constant block size per dimension (0: symbolic) */
  int64_t shared_bytes;       /* static shared memory so far */
  int64_t dyn_shared_bytes;   /* dynamic ("shared.dyn") shared memory so far */
  int thread_depth;           /* threadIdx loops around the current statement */
  struct {                    /* WMMA operand fragments: the layout they were loaded with */
    const tir_var_t *data;
    bool col;
  } layouts[CG_MAX_FRAGMENT_BUFFERS];
  int nlayouts;
  cg_warp_table_t warps;      /* the kernel's warp buffers (gpu_warp.c) */
  tir_var_t *lane;            /* the innermost threadIdx.x loop's variable */
} cg_kernel_state_t;

/* A static shared-memory array of `bytes` (counted against the target's
 * limit), as a generic i8*. NULL with MLC_EUNSUPPORTED over the limit. */
LLVMValueRef cg_gpu_shared_array(cg_t *cg, const char *name, int64_t bytes);

/* A kernel: its entry's name and launch: extents of the blockIdx/threadIdx
 * loops (NULL for 1) and its parameters in order (buffer data handles and
 * scalars defined outside the kernel), all in the function's arena or the
 * host generator's. */
typedef struct {
  const char *name;
  tir_expr_t *grid[3], *block[3];
  int64_t dyn_shared_bytes;   /* dynamic shared memory the launch gives it */
  int nparams;
  tir_var_t **params;
} cg_launch_t;

/* Generates the kernel for the loop nest rooted at `root` (the outermost
 * thread-bound loop) into m->dev_mod, named "<func>_kernel<k>"; fills
 * *out. MLC_EUNSUPPORTED / MLC_EINVAL with the function and loop named. */
int cg_gpu_kernel(cg_t *host, const tir_stmt_t *root, int k, cg_launch_t *out);

/* ---- gpu_reduce.c ---- */

/* The allreduce of `with T.attr(red_buf.data, MLC_CROSS_THREAD_ATTR, op)`
 * (lower-cross-thread-reduction): warp shuffles, and a shared-memory stage
 * across warps; stores the result where the attribute's serial body does.
 * MLC_EUNSUPPORTED for shapes it does not generate. */
int cg_gpu_allreduce(cg_t *cg, const tir_stmt_t *attr);

/* ---- gpu_warp.c ---- */

/* Checks an access idx (lowered, flat) to warp buffer b made inside the
 * threadIdx.x loop `lane_loop` (NULL: outside every one) and records b's
 * width in t: idx must be lane * W + e0 with the lane loop's variable,
 * constant W > 0 (the same for every access to b) and the lanes of a vector
 * access within one lane's W registers, proven by the analyzer an (which
 * knows the enclosing loops). MLC_EUNSUPPORTED naming buffer and index
 * otherwise: another lane's registers cannot be read. */
int cg_warp_check(cg_warp_table_t *t, const tir_buffer_t *b, const tir_expr_t *idx,
                  const tir_stmt_t *lane_loop, tir_analyzer_t *an, mlc_arena_t *a);
/* The width recorded for the warp buffer of data variable `data`, or 0. */
int64_t cg_warp_width(const cg_warp_table_t *t, const tir_var_t *data);
/* cg_hooks_t.buffer_index of kernels: a warp buffer's flat index without
 * its lane (the register in the lane's private array); other buffers' idx
 * as is. */
const tir_expr_t *cg_warp_index(cg_t *cg, const tir_buffer_t *b, const tir_expr_t *idx);

/* ---- gpu_mma.c ---- */

/* tir_ptx_op calls as llvm.nvvm.ldmatrix.sync.aligned.m8n8.{x4,x2}.b16
 * and llvm.nvvm.mma.m16n8k16.row.col.f32.f32 (cg_gpu_target_t.warp_mma of
 * NVPTX). MLC_EUNSUPPORTED for an architecture without them (ldmatrix:
 * sm_75, mma.m16n8k16: sm_80), operand dtypes other than the intrinsics',
 * or an ldmatrix operand outside shared memory. */
LLVMValueRef cg_nvptx_mma(cg_t *cg, const tir_expr_t *call);

/* ---- gpu_wmma.c ---- */

/* A WMMA call (tvm_load_matrix_sync, tvm_mma_sync, tvm_store_matrix_sync,
 * tvm_fill_fragment) as llvm.nvvm.wmma.m16n16k16.* on this lane's
 * fragment registers. MLC_EUNSUPPORTED for dtypes other than float16
 * operands / float32 accumulators, or an mma whose operands were not
 * loaded before it. */
int cg_nvptx_wmma(cg_t *cg, const tir_expr_t *call);
/* A fragment buffer (scope wmma.*): 32 bytes of registers per 16x16 tile. */
int cg_nvptx_fragment_alloca(cg_t *cg, const tir_stmt_t *s);

#endif /* MLC_CODEGEN_GPU_H */
