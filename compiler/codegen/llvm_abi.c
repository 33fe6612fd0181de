/*
 * llvm_abi.c - the exported function of the C ABI (compiler.h, "The C ABI"):
 *
 *     int32_t <name>(DLTensor *args, int32_t num_args)
 *
 * one DLTensor per parameter. It checks num_args, then each scalar
 * parameter (a 0-d tensor whose data points at the value: ndim, dtype,
 * data), then each buffer parameter: ndim, dtype (code, bits, lanes),
 * device (kDLCPU), data not NULL, shape, strides (NULL or compact
 * row-major where the buffer declares none; bound or checked where it
 * declares them), byte_offset (folded into the pointer, or bound to a
 * symbolic elem_offset), and the alignment the buffer declares. A shape,
 * stride or offset that is a plain variable binds it from the first tensor
 * that has it; later uses, and dimensions that are expressions, must agree.
 * Then it calls the kernel with the data pointers, scalars and bound
 * dimensions and returns its result.
 *
 * Each failed check calls mlc_rt_error with a message naming the function,
 * the argument (0-based) and what differs, and returns -1:
 *     gmm: argument 1 (B): shape[0] is 512, expected 1024
 *
 * DLTensor (dlpack.h, x86-64): {i8* data, {i32, i32} device, i32 ndim,
 * {i8, i8, i16} dtype, i64* shape, i64* strides, i64 byte_offset}; the
 * static asserts below pin the C layout the LLVM struct reproduces.
 */
#include "compiler/codegen/llvm_gen.h"
#include "compiler/codegen/gpu.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum { DL_DATA, DL_DEVICE, DL_NDIM, DL_DTYPE, DL_SHAPE, DL_STRIDES, DL_BYTE_OFFSET, DL_NFIELDS };
/* kDLBool of DLPack >= 0.8 (this header may predate it). */
enum { DL_BOOL_CODE = 6 };

_Static_assert(offsetof(DLTensor, data) == 0 && offsetof(DLTensor, device) == 8 &&
                   offsetof(DLTensor, ndim) == 16 && offsetof(DLTensor, dtype) == 20 &&
                   offsetof(DLTensor, shape) == 24 && offsetof(DLTensor, strides) == 32 &&
                   offsetof(DLTensor, byte_offset) == 40 && sizeof(DLTensor) == 48,
               "the DLTensor layout the generated code assumes");
_Static_assert(sizeof(DLDataType) == 4 && offsetof(DLDataType, lanes) == 2, "DLDataType layout");

typedef struct {
  const char *prefix;        /* "<func>: argument <i> (<name>): ", escaped for printf */
  const char *what;          /* "shape[0]" */
  const tir_expr_t *expr;    /* the expected value */
  LLVMValueRef actual;       /* i64 */
} deferred_t;

typedef struct {
  cg_t *cg;
  const cg_sig_t *sig;
  LLVMTypeRef t_tensor, t_device, t_dtype;
  LLVMValueRef args;         /* DLTensor* */
  const char *fname;         /* escaped function name */
  deferred_t *deferred;
  int ndeferred;
  LLVMValueRef *ptrs;        /* per parameter: the data pointer passed to the kernel */
  LLVMValueRef device;       /* GPU: the first buffer's device_id (i32) */
} abi_t;

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static LLVMValueRef field(abi_t *abi, LLVMValueRef tensor, int k, LLVMTypeRef t) {
  LLVMValueRef p = LLVMBuildStructGEP2(abi->cg->b, abi->t_tensor, tensor, (unsigned)k, "");
  return LLVMBuildLoad2(abi->cg->b, t, p, "");
}

static LLVMValueRef eq(cg_t *cg, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildICmp(cg->b, LLVMIntEQ, a, b, "");
}

static const char *fmt(abi_t *abi, const char *prefix, const char *rest) {
  return mlc_arena_printf(abi->cg->arena, "%s%s", prefix, rest);
}

/* The known scalar dtypes by name: i8* mlc_cg_dtype_name(i8 code, i8
 * bits, i16 lanes), NULL for others. One per module. */
static LLVMValueRef dtype_name_fn(abi_t *abi) {
  cg_t *cg = abi->cg;
  LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, "mlc_cg_dtype_name");
  if (fn) return fn;
  LLVMTypeRef params[3] = {cg->t_i8, cg->t_i8, cg->t_i16};
  fn = cg_add_function(cg, "mlc_cg_dtype_name", LLVMFunctionType(cg->t_ptr, params, 3, false), false);
  LLVMBasicBlockRef saved = LLVMGetInsertBlock(cg->b);
  LLVMPositionBuilderAtEnd(cg->b, LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry"));
  LLVMValueRef key = LLVMBuildZExt(cg->b, LLVMGetParam(fn, 0), cg->t_i32, "");
  LLVMValueRef bits = LLVMBuildShl(cg->b, LLVMBuildZExt(cg->b, LLVMGetParam(fn, 1), cg->t_i32, ""), cg_i32(cg, 8), "");
  LLVMValueRef lanes = LLVMBuildShl(cg->b, LLVMBuildZExt(cg->b, LLVMGetParam(fn, 2), cg->t_i32, ""), cg_i32(cg, 16), "");
  key = LLVMBuildOr(cg->b, LLVMBuildOr(cg->b, key, bits, ""), lanes, "");
  LLVMValueRef r = LLVMConstNull(cg->t_ptr);
#define CG_DTYPE_CASE_(e, name, code, nbits)                                                  \
  if ((int)(code) != (int)TIR_CODE_HANDLE)                                                    \
    r = LLVMBuildSelect(cg->b, eq(cg, key, cg_i32(cg, (code) | ((nbits) << 8) | (1 << 16))), \
                        cg_cstr(cg, name), r, "");
  TIR_DTYPE_MAP(CG_DTYPE_CASE_)
  CG_DTYPE_CASE_(BOOL8, "bool", DL_BOOL_CODE, 8)
#undef CG_DTYPE_CASE_
  LLVMBuildRet(cg->b, r);
  LLVMPositionBuilderAtEnd(cg->b, saved);
  return fn;
}

/* ------------------------------------------------------------------------ */
/* Dimensions: constants, bound variables, expressions                       */
/* ------------------------------------------------------------------------ */

/* Binds var from actual (i64) after checking that it fits var's dtype. */
static int bind_dim(abi_t *abi, const char *prefix, const char *what, const tir_var_t *var,
                    LLVMValueRef actual, bool nonnegative) {
  cg_t *cg = abi->cg;
  tir_dtype_t t = var->dtype;
  if (!tir_dtype_is_integer(t) || tir_dtype_is_bool(t) || t.lanes != 1)
    return mlc_error_set(MLC_EUNSUPPORTED, "codegen: %s binds %s, which is not an integer", what, var->u.var.name);
  if (t.bits < 64 || t.code == TIR_CODE_UINT) {
    int64_t lo = t.code == TIR_CODE_UINT || nonnegative ? 0 : -(INT64_C(1) << (t.bits - 1));
    int64_t hi = t.bits >= 64 ? INT64_MAX : t.code == TIR_CODE_UINT && t.bits < 63 ? (INT64_C(1) << t.bits) - 1
                                                                               : (INT64_C(1) << (t.bits - 1)) - 1;
    LLVMValueRef ok = LLVMBuildAnd(cg->b, LLVMBuildICmp(cg->b, LLVMIntSGE, actual, cg_i64(cg, lo), ""),
                                   LLVMBuildICmp(cg->b, LLVMIntSLE, actual, cg_i64(cg, hi), ""), "");
    char buf[24];
    const char *rest = mlc_arena_printf(cg->arena, "%s is %%lld, out of range for %s (%s)", what,
                                        cg_fmt_escape(cg, var->u.var.name), tir_dtype_str(t, buf));
    cg_check(cg, ok, fmt(abi, prefix, rest), &actual, 1);
  }
  LLVMValueRef v = LLVMBuildTrunc(cg->b, actual, cg_type(cg, t), var->u.var.name);
  return cg_bind(cg, var, v, 0);
}

/* actual (i64) against the expected expression e. */
static int match_dim(abi_t *abi, const char *prefix, const char *what, const tir_expr_t *e,
                     LLVMValueRef actual, bool nonnegative) {
  cg_t *cg = abi->cg;
  int64_t c;
  if (tir_as_int(e, &c)) {
    const char *rest = mlc_arena_printf(cg->arena, "%s is %%lld, expected %lld", what, (long long)c);
    cg_check(cg, eq(cg, actual, cg_i64(cg, c)), fmt(abi, prefix, rest), &actual, 1);
    return MLC_OK;
  }
  if (e->kind == TIR_VAR && !cg_lookup(cg, e)) return bind_dim(abi, prefix, what, e, actual, nonnegative);
  deferred_t *d = &abi->deferred[abi->ndeferred++];
  *d = (deferred_t){prefix, mlc_arena_strdup(cg->arena, what), e, actual};
  return MLC_OK;
}

/* After every argument: dimensions that are expressions or reuse a bound
 * variable. */
static int check_deferred(abi_t *abi) {
  cg_t *cg = abi->cg;
  for (int i = 0; i < abi->ndeferred; i++) {
    const deferred_t *d = &abi->deferred[i];
    LLVMValueRef expected = cg_expr(cg, d->expr);
    if (!expected) {
      mlc_error_prefix("%s of a parameter", d->what);
      return mlc_error_last_code();
    }
    expected = cg_index64(cg, expected, d->expr->dtype);
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    tir_print_expr(&sb, d->expr);
    const char *rest = mlc_arena_printf(cg->arena, "%s is %%lld, expected %%lld (%s)", d->what,
                                        cg_fmt_escape(cg, mlc_sb_str(&sb)));
    mlc_sb_free(&sb);
    LLVMValueRef args[2] = {d->actual, expected};
    cg_check(cg, eq(cg, d->actual, expected), fmt(abi, d->prefix, rest), args, 2);
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Per-argument checks                                                       */
/* ------------------------------------------------------------------------ */

static void check_ndim(abi_t *abi, const char *prefix, LLVMValueRef tensor, int ndim, const char *note) {
  cg_t *cg = abi->cg;
  LLVMValueRef v = field(abi, tensor, DL_NDIM, cg->t_i32);
  const char *rest = mlc_arena_printf(cg->arena, "ndim is %%d, expected %d%s", ndim, note);
  cg_check(cg, eq(cg, v, cg_i32(cg, ndim)), fmt(abi, prefix, rest), &v, 1);
}

/* dtype: "dtype is int32, expected float32", or the numbers for dtypes
 * without a name. */
static void check_dtype(abi_t *abi, const char *prefix, LLVMValueRef tensor, tir_dtype_t t) {
  cg_t *cg = abi->cg;
  LLVMValueRef p = LLVMBuildStructGEP2(cg->b, abi->t_tensor, tensor, DL_DTYPE, "");
  LLVMValueRef code = LLVMBuildLoad2(cg->b, cg->t_i8, LLVMBuildStructGEP2(cg->b, abi->t_dtype, p, 0, ""), "");
  LLVMValueRef bits = LLVMBuildLoad2(cg->b, cg->t_i8, LLVMBuildStructGEP2(cg->b, abi->t_dtype, p, 1, ""), "");
  LLVMValueRef lanes = LLVMBuildLoad2(cg->b, cg->t_i16, LLVMBuildStructGEP2(cg->b, abi->t_dtype, p, 2, ""), "");
  LLVMValueRef ok = LLVMBuildAnd(cg->b, eq(cg, code, LLVMConstInt(cg->t_i8, t.code, 0)),
                                 eq(cg, bits, LLVMConstInt(cg->t_i8, t.bits, 0)), "");
  ok = LLVMBuildAnd(cg->b, ok, eq(cg, lanes, LLVMConstInt(cg->t_i16, t.lanes, 0)), "");
  if (tir_dtype_is_bool(t)) { /* also DLPack >= 0.8's kDLBool: code 6, 8 bits */
    LLVMValueRef b8 = LLVMBuildAnd(cg->b, eq(cg, code, LLVMConstInt(cg->t_i8, DL_BOOL_CODE, 0)),
                                   eq(cg, bits, LLVMConstInt(cg->t_i8, 8, 0)), "");
    ok = LLVMBuildOr(cg->b, ok, LLVMBuildAnd(cg->b, b8, eq(cg, lanes, LLVMConstInt(cg->t_i16, t.lanes, 0)), ""), "");
  }
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "bad_dtype");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "ok");
  LLVMBuildCondBr(cg->b, ok, cont, fail);
  LLVMPositionBuilderAtEnd(cg->b, fail);
  LLVMValueRef dargs[3] = {code, bits, lanes};
  LLVMValueRef name = cg_call(cg, dtype_name_fn(abi), dargs, 3, "");
  char buf[24];
  tir_dtype_str(t, buf);
  /* No name: the numbers (and return); a name: the readable message. */
  const char *rest = mlc_arena_printf(cg->arena, "dtype is (code %%u, bits %%u, lanes %%u), expected %s", buf);
  LLVMValueRef wide[3] = {LLVMBuildZExt(cg->b, code, cg->t_i32, ""), LLVMBuildZExt(cg->b, bits, cg->t_i32, ""),
                          LLVMBuildZExt(cg->b, lanes, cg->t_i32, "")};
  cg_check(cg, LLVMBuildIsNotNull(cg->b, name, ""), fmt(abi, prefix, rest), wide, 3);
  rest = mlc_arena_printf(cg->arena, "dtype is %%s, expected %s", buf);
  LLVMValueRef eargs[2] = {cg_cstr(cg, fmt(abi, prefix, rest)), name};
  cg_call(cg, cg_rt_error_fn(cg), eargs, 2, "");
  LLVMBuildRet(cg->b, cg_i32(cg, -1));
  LLVMPositionBuilderAtEnd(cg->b, cont);
}

static LLVMValueRef check_data(abi_t *abi, const char *prefix, LLVMValueRef tensor) {
  cg_t *cg = abi->cg;
  LLVMValueRef data = field(abi, tensor, DL_DATA, cg->t_ptr);
  cg_check(cg, LLVMBuildIsNotNull(cg->b, data, ""), fmt(abi, prefix, "data is NULL"), NULL, 0);
  return data;
}

/* CPU modules: kDLCPU. GPU modules: the GPU's device type, and every
 * buffer on the first one's device_id (abi->device, passed to the host
 * code that launches the kernels). */
static void check_device(abi_t *abi, const char *prefix, LLVMValueRef tensor) {
  cg_t *cg = abi->cg;
  LLVMValueRef p = LLVMBuildStructGEP2(cg->b, abi->t_tensor, tensor, DL_DEVICE, "");
  LLVMValueRef type = LLVMBuildLoad2(cg->b, cg->t_i32, LLVMBuildStructGEP2(cg->b, abi->t_device, p, 0, ""), "");
  if (!cg->m->gpu) {
    cg_check(cg, eq(cg, type, cg_i32(cg, kDLCPU)), fmt(abi, prefix, "device_type is %d, expected 1 (CPU)"), &type, 1);
    return;
  }
  int kind = cg->m->gpu->dl_kind;
  const char *rest = mlc_arena_printf(cg->arena, "device_type is %%d, expected %d (%s)", kind,
                                      kind == kDLCUDA ? "CUDA" : "ROCm");
  cg_check(cg, eq(cg, type, cg_i32(cg, kind)), fmt(abi, prefix, rest), &type, 1);
  LLVMValueRef id = LLVMBuildLoad2(cg->b, cg->t_i32, LLVMBuildStructGEP2(cg->b, abi->t_device, p, 1, ""), "");
  if (!abi->device) {
    abi->device = id;
    return;
  }
  LLVMValueRef both[2] = {id, abi->device};
  cg_check(cg, eq(cg, id, abi->device), fmt(abi, prefix, "device_id is %d, the first buffer's is %d"), both, 2);
}

/* data + byte_offset as i8*. */
static LLVMValueRef offset_data(abi_t *abi, LLVMValueRef tensor, LLVMValueRef data) {
  cg_t *cg = abi->cg;
  LLVMValueRef off = field(abi, tensor, DL_BYTE_OFFSET, cg->t_i64);
  return LLVMBuildGEP2(cg->b, cg->t_i8, data, &off, 1, "");
}

/* ------------------------------------------------------------------------ */
/* Buffers and scalars                                                       */
/* ------------------------------------------------------------------------ */

static const char *arg_prefix(abi_t *abi, int i, const char *name) {
  return mlc_arena_printf(abi->cg->arena, "%s: argument %d (%s): ", abi->fname, i, cg_fmt_escape(abi->cg, name));
}

static LLVMValueRef tensor_at(abi_t *abi, int i) {
  LLVMValueRef idx = cg_i64(abi->cg, i);
  return LLVMBuildGEP2(abi->cg->b, abi->t_tensor, abi->args, &idx, 1, "");
}

/* Where the buffer declares no strides: NULL, or compact (dimensions of
 * extent 1 may have any stride). */
static void check_compact(abi_t *abi, const char *prefix, LLVMValueRef strides, LLVMValueRef *shape, int ndim) {
  cg_t *cg = abi->cg;
  LLVMBasicBlockRef check = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "strides");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "strides.done");
  LLVMBuildCondBr(cg->b, LLVMBuildIsNull(cg->b, strides, ""), done, check);
  LLVMPositionBuilderAtEnd(cg->b, check);
  LLVMValueRef expected = cg_i64(cg, 1);
  for (int d = ndim - 1; d >= 0; d--) {
    LLVMValueRef idx = cg_i64(cg, d);
    LLVMValueRef s = LLVMBuildLoad2(cg->b, cg->t_i64, LLVMBuildGEP2(cg->b, cg->t_i64, strides, &idx, 1, ""), "");
    LLVMValueRef ok = LLVMBuildOr(cg->b, eq(cg, shape[d], cg_i64(cg, 1)), eq(cg, s, expected), "");
    const char *rest = mlc_arena_printf(cg->arena, "strides[%d] is %%lld, expected %%lld (compact row-major)", d);
    LLVMValueRef args[2] = {s, expected};
    cg_check(cg, ok, fmt(abi, prefix, rest), args, 2);
    expected = LLVMBuildMul(cg->b, expected, shape[d], "");
  }
  LLVMBuildBr(cg->b, done);
  LLVMPositionBuilderAtEnd(cg->b, done);
}

/* strides[d] when given, else the compact stride (declared strides). */
static LLVMValueRef stride_or_compact(abi_t *abi, LLVMValueRef strides, int d, LLVMValueRef compact) {
  cg_t *cg = abi->cg;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
  LLVMBasicBlockRef load = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "stride");
  LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, "stride.done");
  LLVMBuildCondBr(cg->b, LLVMBuildIsNull(cg->b, strides, ""), merge, load);
  LLVMPositionBuilderAtEnd(cg->b, load);
  LLVMValueRef idx = cg_i64(cg, d);
  LLVMValueRef s = LLVMBuildLoad2(cg->b, cg->t_i64, LLVMBuildGEP2(cg->b, cg->t_i64, strides, &idx, 1, ""), "");
  LLVMBuildBr(cg->b, merge);
  LLVMPositionBuilderAtEnd(cg->b, merge);
  LLVMValueRef phi = LLVMBuildPhi(cg->b, cg->t_i64, "");
  LLVMValueRef vals[2] = {compact, s};
  LLVMBasicBlockRef blocks[2] = {pre, load};
  LLVMAddIncoming(phi, vals, blocks, 2);
  return phi;
}

static int buffer_strides(abi_t *abi, const char *prefix, LLVMValueRef tensor, const tir_buffer_t *b,
                          LLVMValueRef *shape) {
  cg_t *cg = abi->cg;
  LLVMValueRef strides = field(abi, tensor, DL_STRIDES, LLVMPointerType(cg->t_i64, 0));
  if (!b->strides) {
    check_compact(abi, prefix, strides, shape, b->ndim);
    return MLC_OK;
  }
  LLVMValueRef compact = cg_i64(cg, 1);
  for (int d = b->ndim - 1; d >= 0; d--) {
    char what[32];
    snprintf(what, sizeof(what), "strides[%d]", d);
    int rc = match_dim(abi, prefix, what, b->strides[d], stride_or_compact(abi, strides, d, compact), false);
    if (rc != MLC_OK) return rc;
    compact = LLVMBuildMul(cg->b, compact, shape[d], "");
  }
  return MLC_OK;
}

/* The pointer the kernel gets: data + byte_offset, or data itself when the
 * buffer has an elem_offset, which is then byte_offset / element size. */
static int buffer_pointer(abi_t *abi, const char *prefix, LLVMValueRef tensor, const tir_buffer_t *b,
                          LLVMValueRef data, LLVMValueRef *out) {
  cg_t *cg = abi->cg;
  if (!b->elem_offset || tir_is_const_int(b->elem_offset, 0)) {
    *out = offset_data(abi, tensor, data);
    return MLC_OK;
  }
  int eb = cg_elem_bytes(b->dtype) * b->dtype.lanes;
  LLVMValueRef off = field(abi, tensor, DL_BYTE_OFFSET, cg->t_i64);
  LLVMValueRef rem = LLVMBuildURem(cg->b, off, cg_i64(cg, eb), "");
  const char *rest = mlc_arena_printf(cg->arena, "byte_offset is %%llu, not a multiple of the element size %d", eb);
  cg_check(cg, eq(cg, rem, cg_i64(cg, 0)), fmt(abi, prefix, rest), &off, 1);
  *out = data;
  return match_dim(abi, prefix, "elem_offset", b->elem_offset, LLVMBuildUDiv(cg->b, off, cg_i64(cg, eb), ""), true);
}

static int buffer_arg(abi_t *abi, int i) {
  cg_t *cg = abi->cg;
  const tir_buffer_t *b = cg->f->buffer_map[i];
  const char *prefix = arg_prefix(abi, i, b->name);
  LLVMValueRef t = tensor_at(abi, i);
  check_ndim(abi, prefix, t, b->ndim, "");
  check_dtype(abi, prefix, t, b->dtype);
  check_device(abi, prefix, t);
  LLVMValueRef data = check_data(abi, prefix, t);
  LLVMValueRef shape_ptr = field(abi, t, DL_SHAPE, LLVMPointerType(cg->t_i64, 0));
  if (b->ndim > 0) cg_check(cg, LLVMBuildIsNotNull(cg->b, shape_ptr, ""), fmt(abi, prefix, "shape is NULL"), NULL, 0);
  LLVMValueRef shape[TIR_MAX_DIMS];
  int rc = MLC_OK;
  for (int d = 0; d < b->ndim && rc == MLC_OK; d++) {
    LLVMValueRef idx = cg_i64(cg, d);
    shape[d] = LLVMBuildLoad2(cg->b, cg->t_i64, LLVMBuildGEP2(cg->b, cg->t_i64, shape_ptr, &idx, 1, ""), "");
    char what[32];
    snprintf(what, sizeof(what), "shape[%d]", d);
    rc = match_dim(abi, prefix, what, b->shape[d], shape[d], true);
  }
  if (rc == MLC_OK) rc = buffer_strides(abi, prefix, t, b, shape);
  if (rc == MLC_OK) rc = buffer_pointer(abi, prefix, t, b, data, &abi->ptrs[i]);
  if (rc == MLC_OK && b->align > 0) {
    LLVMValueRef addr = LLVMBuildPtrToInt(cg->b, abi->ptrs[i], cg->t_i64, "");
    LLVMValueRef low = LLVMBuildAnd(cg->b, addr, cg_i64(cg, b->align - 1), "");
    const char *rest = mlc_arena_printf(cg->arena, "data (%%p) is not %d-byte aligned", b->align);
    cg_check(cg, eq(cg, low, cg_i64(cg, 0)), fmt(abi, prefix, rest), &abi->ptrs[i], 1);
  }
  return rc;
}

/* A scalar: a 0-d tensor whose data points at the value. A handle
 * parameter without a buffer gets the tensor's data pointer. */
static int scalar_arg(abi_t *abi, int i) {
  cg_t *cg = abi->cg;
  const tir_var_t *v = cg->f->params[i];
  const char *prefix = arg_prefix(abi, i, v->u.var.name);
  LLVMValueRef t = tensor_at(abi, i);
  if (tir_dtype_is_handle(v->dtype)) {
    LLVMValueRef data = check_data(abi, prefix, t);
    return cg_bind(cg, v, offset_data(abi, t, data), 0);
  }
  LLVMTypeRef mt = cg_mem_type(cg, v->dtype);
  if (!mt) return mlc_error_last_code();
  check_ndim(abi, prefix, t, 0, " (a scalar)");
  check_dtype(abi, prefix, t, v->dtype);
  LLVMValueRef data = check_data(abi, prefix, t);
  LLVMValueRef p = LLVMBuildBitCast(cg->b, offset_data(abi, t, data), LLVMPointerType(mt, 0), "");
  LLVMValueRef x = LLVMBuildLoad2(cg->b, mt, p, v->u.var.name);
  LLVMSetAlignment(x, 1);
  if (tir_dtype_is_bool(v->dtype)) x = LLVMBuildICmp(cg->b, LLVMIntNE, x, LLVMConstNull(mt), "");
  return cg_bind(cg, v, x, 0);
}

/* ------------------------------------------------------------------------ */
/* The wrapper                                                               */
/* ------------------------------------------------------------------------ */

static void abi_types(abi_t *abi) {
  cg_t *cg = abi->cg;
  LLVMTypeRef dev[2] = {cg->t_i32, cg->t_i32};
  LLVMTypeRef dt[3] = {cg->t_i8, cg->t_i8, cg->t_i16};
  abi->t_device = LLVMStructTypeInContext(cg->ctx, dev, 2, false);
  abi->t_dtype = LLVMStructTypeInContext(cg->ctx, dt, 3, false);
  LLVMTypeRef i64p = LLVMPointerType(cg->t_i64, 0);
  LLVMTypeRef fields[DL_NFIELDS] = {cg->t_ptr, abi->t_device, cg->t_i32, abi->t_dtype, i64p, i64p, cg->t_i64};
  abi->t_tensor = LLVMStructTypeInContext(cg->ctx, fields, DL_NFIELDS, false);
}

static int check_args(abi_t *abi) {
  cg_t *cg = abi->cg;
  const tir_func_t *f = cg->f;
  LLVMValueRef num = LLVMGetParam(cg->fn, 1);
  const char *m = mlc_arena_printf(cg->arena, "%s: num_args is %%d, expected %d", abi->fname, f->nparams);
  cg_check(cg, eq(cg, num, cg_i32(cg, f->nparams)), m, &num, 1);
  if (f->nparams > 0) {
    m = mlc_arena_printf(cg->arena, "%s: args is NULL", abi->fname);
    cg_check(cg, LLVMBuildIsNotNull(cg->b, abi->args, ""), m, NULL, 0);
  }
  int rc = MLC_OK;
  for (int i = 0; i < f->nparams && rc == MLC_OK; i++)
    if (!f->buffer_map[i]) rc = scalar_arg(abi, i);
  for (int i = 0; i < f->nparams && rc == MLC_OK; i++)
    if (f->buffer_map[i]) rc = buffer_arg(abi, i);
  if (rc == MLC_OK) rc = check_deferred(abi);
  if (mlc_arena_failed(cg->arena)) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  return rc;
}

static LLVMValueRef call_kernel(abi_t *abi, LLVMValueRef kernel) {
  cg_t *cg = abi->cg;
  const cg_sig_t *sig = abi->sig;
  int n = sig->nptrs + sig->nscalars + sig->ndims, k = 0;
  LLVMValueRef *args = mlc_arena_alloc(cg->arena, sizeof(LLVMValueRef) * (size_t)(n + 2));
  if (!args) return NULL;
  for (int i = 0; i < sig->nptrs; i++) args[k++] = abi->ptrs[sig->ptr_params[i]];
  for (int i = 0; i < sig->nscalars; i++) args[k++] = cg_lookup(cg, cg->f->params[sig->scalar_params[i]])->value;
  for (int i = 0; i < sig->ndims; i++) args[k++] = cg_lookup(cg, sig->dims[i])->value;
  if (cg->m->gpu) args[n++] = abi->device ? abi->device : cg_i32(cg, 0);
  return cg_call(cg, kernel, args, n, "");
}

int cg_abi_wrapper(cg_t *cg, const cg_sig_t *sig, LLVMValueRef kernel) {
  const tir_func_t *f = cg->f;
  abi_t abi = {.cg = cg, .sig = sig, .fname = cg_fmt_escape(cg, f->name)};
  abi_types(&abi);
  size_t maxdef = (size_t)f->nparams * (2 * TIR_MAX_DIMS + 1) + 1;
  abi.deferred = mlc_arena_alloc(cg->arena, sizeof(deferred_t) * maxdef);
  abi.ptrs = mlc_arena_alloc(cg->arena, sizeof(LLVMValueRef) * (size_t)(f->nparams + 1));
  if (!abi.deferred || !abi.ptrs) return mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
  LLVMTypeRef params[2] = {LLVMPointerType(abi.t_tensor, 0), cg->t_i32};
  LLVMValueRef fn = cg_add_function(cg, f->name, LLVMFunctionType(cg->t_i32, params, 2, false), true);
  cg_fn_begin(cg, fn);
  abi.args = LLVMGetParam(fn, 0);
  LLVMSetValueName2(abi.args, "args", 4);
  LLVMSetValueName2(LLVMGetParam(fn, 1), "num_args", 8);
  int rc = check_args(&abi);
  if (rc == MLC_OK) {
    LLVMValueRef r = call_kernel(&abi, kernel);
    if (!r) rc = mlc_error_set(MLC_ENOMEM, "codegen: out of memory");
    else LLVMBuildRet(cg->b, r);
  }
  cg_fn_finish(cg);
  cg->vars.len = 0;
  return rc;
}
