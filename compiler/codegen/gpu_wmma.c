/*
 * gpu_wmma.c - WMMA tensor cores on NVPTX: the calls of the CUDA tensor
 * intrinsics (tvm_fill_fragment, tvm_load_matrix_sync, tvm_mma_sync,
 * tvm_store_matrix_sync; compiler/lower/tensor_core.h) as LLVM's
 * llvm.nvvm.wmma.m16n16k16.* intrinsics (docs/compiler/gpu.md#tensor-cores).
 *
 * A fragment is what one lane of a warp holds of a 16x16 tile: 8 registers
 * of 32 bits (matrix_a / matrix_b: 8 x <2 x half>; accumulator: 8 x
 * float), in a distribution over the lanes only the hardware knows. A
 * fragment buffer (scope wmma.*) is an array of fragments per thread: after
 * lower-tensor-core, tile t is elements [256 t, 256 t + 256) of the flat
 * buffer, so an operand X[i] names fragment i / 256, 32 bytes at offset
 * (i / 256) * 32 of a private array (registers once LLVM promotes it; loops
 * over tiles are unrolled by the optimiser when their extents are small).
 *
 *   tvm_load_matrix_sync(X, ..., p, s, layout) -> load.{a,b,c}.<layout>.stride
 *   tvm_mma_sync(D, A, B, C)                   -> mma.<la>.<lb>.f32.f32
 *   tvm_store_matrix_sync(X, ..., p, s, layout)-> store.d.<layout>.stride.f32
 *   tvm_fill_fragment(X, ..., v)               -> 8 registers = v
 *
 * The layout an operand fragment was loaded with is part of its contents,
 * so mma takes the layouts recorded by the loads of its A and B buffers.
 * Memory operands in shared memory are passed as addrspace(3) pointers
 * (wmma.load.*.shared). Only float16 A/B with float32 accumulators are
 * generated (the registered intrinsics); anything else is MLC_EUNSUPPORTED.
 */
#include "compiler/codegen/gpu.h"
#include "compiler/lower/tensor_core.h"

#include <stdio.h>
#include <string.h>

enum { FRAG_REGS = 8, FRAG_BYTES = 32, TILE_ELEMS = LOWER_TC_DIM * LOWER_TC_DIM };

static int unsupported(const tir_expr_t *call, const char *what, const char *name) {
  return mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s: %s%s", tir_wmma_name(tir_wmma_op(call)), what, name ? name : "");
}

/* The flat index of a lowered access (1-D, no strides or offset). */
static LLVMValueRef flat_index(cg_t *cg, const tir_expr_t *call, const tir_expr_t *x) {
  const tir_buffer_t *b = x->u.load.buffer;
  if (x->u.load.nindices != 1 || b->strides || (b->elem_offset && !tir_is_const_int(b->elem_offset, 0)))
    return unsupported(call, "operands must be lowered (flat) buffer accesses: ", b->name), NULL;
  LLVMValueRef i = cg_expr(cg, x->u.load.indices[0]);
  return i ? cg_index64(cg, i, x->u.load.indices[0]->dtype) : NULL;
}

static LLVMValueRef data_ptr(cg_t *cg, const tir_buffer_t *b) {
  const cg_binding_t *bnd = cg_lookup(cg, b->data);
  if (!bnd) mlc_error_set(MLC_EINVAL, "codegen: buffer %s: its data variable is not defined", b->name);
  return bnd ? bnd->value : NULL;
}

/* Register k (0..7) of the fragment operand x, as a pointer to `t`. */
static LLVMValueRef frag_reg(cg_t *cg, const tir_expr_t *call, const tir_expr_t *x, int k, LLVMTypeRef t) {
  LLVMValueRef base = data_ptr(cg, x->u.load.buffer), i = base ? flat_index(cg, call, x) : NULL;
  if (!i) return NULL;
  LLVMValueRef off = LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, LLVMBuildUDiv(cg->b, i, cg_i64(cg, TILE_ELEMS), ""),
                                                      cg_i64(cg, FRAG_BYTES), ""), cg_i64(cg, 4 * k), "");
  LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, cg->t_i8, LLVMBuildBitCast(cg->b, base, cg->t_ptr, ""), &off, 1, "");
  return LLVMBuildBitCast(cg->b, p, LLVMPointerType(t, 0), "");
}

/* The register type of a fragment buffer; NULL (error set) for dtypes
 * other than float16 operands and float32 accumulators. */
static LLVMTypeRef reg_type(cg_t *cg, const tir_expr_t *call, const tir_buffer_t *b) {
  bool acc = strcmp(b->scope, "wmma.accumulator") == 0;
  tir_dtype_t want = acc ? tir_dt_FLOAT32() : tir_dt_FLOAT16();
  if (!tir_dtype_eq(b->dtype, want))
    return unsupported(call, acc ? "only float32 accumulators are generated: " : "only float16 operands are generated: ",
                       b->name), NULL;
  return acc ? cg->t_f32 : LLVMVectorType(cg->t_f16, 2);
}

/* The 8 registers of fragment x into r[] / from v[]. */
static int frag_read(cg_t *cg, const tir_expr_t *call, const tir_expr_t *x, LLVMValueRef *r) {
  LLVMTypeRef t = reg_type(cg, call, x->u.load.buffer);
  for (int k = 0; t && k < FRAG_REGS; k++) {
    LLVMValueRef p = frag_reg(cg, call, x, k, t);
    if (!p) return mlc_error_last_code();
    r[k] = LLVMBuildLoad2(cg->b, t, p, "");
    LLVMSetAlignment(r[k], 4);
  }
  return t ? MLC_OK : mlc_error_last_code();
}

static int frag_write(cg_t *cg, const tir_expr_t *call, const tir_expr_t *x, LLVMValueRef *v) {
  LLVMTypeRef t = reg_type(cg, call, x->u.load.buffer);
  for (int k = 0; t && k < FRAG_REGS; k++) {
    LLVMValueRef p = frag_reg(cg, call, x, k, t);
    if (!p) return mlc_error_last_code();
    LLVMSetAlignment(LLVMBuildStore(cg->b, v[k], p), 4);
  }
  return t ? MLC_OK : mlc_error_last_code();
}

/* The memory operand's address: i8* in addrspace(3) for shared memory. */
static LLVMValueRef mem_ptr(cg_t *cg, const tir_expr_t *call, LLVMTypeRef *ptr_type) {
  const tir_expr_t *x = call->u.call.args[LOWER_TC_MEM_ARG];
  const tir_buffer_t *b = x->u.load.buffer;
  LLVMValueRef base = data_ptr(cg, b), i = base ? flat_index(cg, call, x) : NULL;
  LLVMTypeRef et = i ? cg_mem_type(cg, b->dtype) : NULL;
  if (!et) return NULL;
  LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, et, LLVMBuildBitCast(cg->b, base, LLVMPointerType(et, 0), ""), &i, 1, "");
  bool shared = strncmp(b->scope, "shared", 6) == 0;
  *ptr_type = LLVMPointerType(cg->t_i8, shared ? 3 : 0);
  p = LLVMBuildBitCast(cg->b, p, cg->t_ptr, "");
  return shared ? LLVMBuildAddrSpaceCast(cg->b, p, *ptr_type, "") : p;
}

static bool col_major(const tir_expr_t *call) {
  return strcmp(call->u.call.args[LOWER_TC_LAYOUT_ARG]->u.str_value, "col_major") == 0;
}

static LLVMValueRef stride_arg(cg_t *cg, const tir_expr_t *call) {
  const tir_expr_t *s = call->u.call.args[LOWER_TC_STRIDE_ARG];
  LLVMValueRef v = cg_expr(cg, s);
  return v ? cg_cast(cg, v, s->dtype, tir_dt_INT32()) : NULL;
}

/* The kernel remembers each operand buffer's layout (by data variable). */
static int record_layout(cg_t *cg, const tir_buffer_t *b, bool col) {
  cg_kernel_state_t *k = cg->gpu;
  for (int i = 0; i < k->nlayouts; i++)
    if (k->layouts[i].data == b->data) {
      if (k->layouts[i].col != col)
        return mlc_error_set(MLC_EUNSUPPORTED, "codegen: fragment %s is loaded both row- and column-major", b->name);
      return MLC_OK;
    }
  if (k->nlayouts == CG_MAX_FRAGMENT_BUFFERS)
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: more than %d fragment buffers in one kernel", CG_MAX_FRAGMENT_BUFFERS);
  k->layouts[k->nlayouts].data = b->data;
  k->layouts[k->nlayouts++].col = col;
  return MLC_OK;
}

static int layout_of(cg_t *cg, const tir_expr_t *call, const tir_buffer_t *b, bool *col) {
  cg_kernel_state_t *k = cg->gpu;
  for (int i = 0; i < k->nlayouts; i++)
    if (k->layouts[i].data == b->data) return *col = k->layouts[i].col, MLC_OK;
  return unsupported(call, "its operand is not loaded (tvm_load_matrix_sync) before it: ", b->name);
}

/* The intrinsic's struct result into 8 values. */
static void unpack(cg_t *cg, LLVMValueRef s, LLVMValueRef *v) {
  for (int k = 0; k < FRAG_REGS; k++) v[k] = LLVMBuildExtractValue(cg->b, s, (unsigned)k, "");
}

static int gen_load(cg_t *cg, const tir_expr_t *call) {
  const tir_expr_t *x = call->u.call.args[LOWER_TC_FRAG_ARG];
  const tir_buffer_t *fb = x->u.load.buffer, *mb = call->u.call.args[LOWER_TC_MEM_ARG]->u.load.buffer;
  if (!tir_dtype_eq(fb->dtype, mb->dtype)) return unsupported(call, "fragment and memory of different dtypes: ", mb->name);
  const char *which = strcmp(fb->scope, "wmma.matrix_a") == 0 ? "a" : strcmp(fb->scope, "wmma.matrix_b") == 0 ? "b" : "c";
  bool col = col_major(call);
  int rc = which[0] == 'c' ? MLC_OK : record_layout(cg, fb, col);
  if (rc != MLC_OK || !reg_type(cg, call, fb)) return rc != MLC_OK ? rc : mlc_error_last_code();
  char name[96];
  snprintf(name, sizeof name, "llvm.nvvm.wmma.m16n16k16.load.%s.%s.stride.%s", which, col ? "col" : "row",
           which[0] == 'c' ? "f32" : "f16");
  LLVMTypeRef pt;
  LLVMValueRef args[2] = {mem_ptr(cg, call, &pt), NULL};
  if (!args[0] || !(args[1] = stride_arg(cg, call))) return mlc_error_last_code();
  LLVMValueRef r = cg_call_intrinsic(cg, name, &pt, 1, args, 2), v[FRAG_REGS];
  if (!r) return mlc_error_last_code();
  unpack(cg, r, v);
  return frag_write(cg, call, x, v);
}

static int gen_store(cg_t *cg, const tir_expr_t *call) {
  const tir_expr_t *x = call->u.call.args[LOWER_TC_FRAG_ARG];
  const tir_buffer_t *mb = call->u.call.args[LOWER_TC_MEM_ARG]->u.load.buffer;
  if (!tir_dtype_eq(x->u.load.buffer->dtype, mb->dtype))
    return unsupported(call, "fragment and memory of different dtypes: ", mb->name);
  LLVMValueRef args[FRAG_REGS + 2];
  LLVMTypeRef pt;
  int rc = frag_read(cg, call, x, args + 1);
  if (rc != MLC_OK) return rc;
  if (!(args[0] = mem_ptr(cg, call, &pt)) || !(args[FRAG_REGS + 1] = stride_arg(cg, call))) return mlc_error_last_code();
  char name[96];
  snprintf(name, sizeof name, "llvm.nvvm.wmma.m16n16k16.store.d.%s.stride.f32", col_major(call) ? "col" : "row");
  return cg_call_intrinsic(cg, name, &pt, 1, args, FRAG_REGS + 2) ? MLC_OK : mlc_error_last_code();
}

static int gen_mma(cg_t *cg, const tir_expr_t *call) {
  LLVMValueRef in[3 * FRAG_REGS], out[FRAG_REGS];
  bool acol = false, bcol = false;
  int rc = layout_of(cg, call, call->u.call.args[2]->u.load.buffer, &acol);
  if (rc == MLC_OK) rc = layout_of(cg, call, call->u.call.args[3]->u.load.buffer, &bcol);
  for (int k = 0; k < 3 && rc == MLC_OK; k++) rc = frag_read(cg, call, call->u.call.args[2 + k], in + k * FRAG_REGS);
  if (rc != MLC_OK) return rc;
  char name[96];
  snprintf(name, sizeof name, "llvm.nvvm.wmma.m16n16k16.mma.%s.%s.f32.f32", acol ? "col" : "row", bcol ? "col" : "row");
  LLVMValueRef r = cg_call_intrinsic(cg, name, NULL, 0, in, 3 * FRAG_REGS);
  if (!r) return mlc_error_last_code();
  unpack(cg, r, out);
  return frag_write(cg, call, call->u.call.args[1], out);
}

/* Every element of the tile is v: every register of every lane. */
static int gen_fill(cg_t *cg, const tir_expr_t *call) {
  const tir_expr_t *x = call->u.call.args[LOWER_TC_FRAG_ARG], *val = call->u.call.args[5];
  LLVMValueRef v = cg_expr(cg, val), regs[FRAG_REGS];
  if (!v) return mlc_error_last_code();
  if (val->dtype.lanes != 1) return unsupported(call, "the value must be a scalar", NULL);
  v = cg_cast(cg, v, val->dtype, x->u.load.buffer->dtype);
  for (int k = 0; k < FRAG_REGS; k++) regs[k] = v;
  return frag_write(cg, call, x, regs);
}

int cg_nvptx_wmma(cg_t *cg, const tir_expr_t *call) {
  switch (tir_wmma_op(call)) {
  case TIR_WMMA_LOAD: return gen_load(cg, call);
  case TIR_WMMA_STORE: return gen_store(cg, call);
  case TIR_WMMA_MMA: return gen_mma(cg, call);
  case TIR_WMMA_FILL: return gen_fill(cg, call);
  default: return mlc_error_set(MLC_EINTERNAL, "codegen: not a WMMA call");
  }
}

int cg_nvptx_fragment_alloca(cg_t *cg, const tir_stmt_t *s) {
  const tir_buffer_t *b = s->u.allocate.buffer;
  int64_t n = 1, d;
  for (int k = 0; k < b->ndim; k++)
    if (!tir_as_int(b->shape[k], &d) || d <= 0 || __builtin_mul_overflow(n, d, &n)) n = -1;
  if (n <= 0 || n % TILE_ELEMS)
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: fragment buffer %s (scope %s) is not a constant number of "
                         "16x16 tiles", b->name, b->scope);
  LLVMValueRef a = cg_entry_alloca(cg, LLVMArrayType(cg->t_i8, (unsigned)(n / TILE_ELEMS * FRAG_BYTES)), 16, b->name);
  return cg_with_buffer(cg, s, LLVMBuildBitCast(cg->b, a, cg->t_ptr, ""), 16);
}
