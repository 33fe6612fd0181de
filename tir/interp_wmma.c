/*
 * interp_wmma.c - the WMMA tensor-core calls in the reference interpreter:
 * `T.call_extern("handle", "tvm_fill_fragment" | "tvm_load_matrix_sync" |
 * "tvm_mma_sync" | "tvm_store_matrix_sync", ...)`, as the CUDA tensor
 * intrinsics of schedule/intrin/builtin_cuda.c write them (TVM's
 * signatures, docs/schedule/reduction_tensorize.md):
 *
 *   tvm_fill_fragment(X, m, n, k, value)
 *   tvm_load_matrix_sync(X, m, n, k, ptr, stride, "row_major"|"col_major")
 *   tvm_mma_sync(D, A, B, C)                      D = C + A * B
 *   tvm_store_matrix_sync(X, m, n, k, ptr, stride, "row_major"|"col_major")
 *
 * Every operand is a BufferLoad standing for a tile, not a value. A
 * fragment operand (a buffer of scope wmma.matrix_a, wmma.matrix_b or
 * wmma.accumulator) is the rows x cols tile (m x k, k x n, m x n by scope)
 * whose first element it names: element (i, j) is the load with the last
 * two indices moved by i and j (a 1-D, flattened fragment buffer: i * cols
 * + j elements on, the layout lower-tensor-core gives fragment buffers
 * before flattening). A memory operand `ptr` is the address of element
 * (0, 0); element (i, j) is i * stride + j elements after it (row_major) or
 * i + j * stride (col_major). So the scheduled program (fragments as match
 * buffers of a tile) and the lowered one (flat fragment buffers) mean the
 * same. A fragment here is plain memory of the buffer's dtype: the warp's
 * distribution of it over registers is code generation's business.
 *
 * Only 16x16x16 tiles and float dtypes are interpreted; mma accumulates in
 * D's dtype over k in order, rounding the product and each sum (what the
 * intrinsic's description computes).
 */
#include "tir/interp_internal.h"

#include <string.h>

#define WMMA_DIM 16

/* Where a tile's elements are: element (i, j) is at flat + i * row_step +
 * j * col_step elements of the view's storage. */
typedef struct {
  const tir_buffer_t *buf;
  const interp_view_t *view;
  int64_t flat, row_step, col_step;
} tile_t;

/* The element the operand names: its buffer, view and flat offset. */
static int locate(interp_t *it, const tir_expr_t *arg, const char *what, tile_t *t) {
  if (arg->kind != TIR_BUFFER_LOAD || arg->dtype.lanes != 1)
    return interp_fail(it, "%s: a tile operand must be a scalar buffer element (a load)", what);
  const tir_buffer_t *b = arg->u.load.buffer;
  int n = arg->u.load.nindices;
  int64_t at[TIR_MAX_DIMS];
  const interp_view_t *view;
  int rc = interp_buffer_view_checked(it, b, n, &view);
  for (int k = 0; k < n && rc == MLC_OK; k++) rc = interp_eval_int(it, arg->u.load.indices[k], &at[k]);
  if (rc != MLC_OK) return rc;
  unsigned char *p = NULL;
  if ((rc = interp_locate(it, b, view, at, &p)) != MLC_OK) return rc;
  t->buf = b;
  t->view = view;
  t->flat = (int64_t)(p - view->base) / interp_elem_bytes(view->dtype);
  return MLC_OK;
}

/* A fragment operand: rows x cols from its scope (m x k, k x n, m x n). */
static int fragment_tile(interp_t *it, const tir_expr_t *arg, const char *what, const char *scope, tile_t *t) {
  int rc = locate(it, arg, what, t);
  if (rc != MLC_OK) return rc;
  if (!tir_wmma_is_fragment(t->buf) || (scope && strcmp(t->buf->scope, scope) != 0))
    return interp_fail(it, "%s: buffer %s (scope %s) is not a %s fragment", what, t->buf->name, t->buf->scope,
                       scope ? scope : "wmma.*");
  const interp_view_t *v = t->view;
  t->col_step = v->strides[v->ndim - 1];
  t->row_step = v->ndim >= 2 ? v->strides[v->ndim - 2] : WMMA_DIM * t->col_step;
  return MLC_OK;
}

/* A memory operand with its stride and layout arguments. */
static int memory_tile(interp_t *it, const tir_expr_t *const *args, const char *what, tile_t *t) {
  int64_t stride;
  int rc = locate(it, args[0], what, t);
  if (rc == MLC_OK) rc = interp_eval_int(it, args[1], &stride);
  if (rc != MLC_OK) return rc;
  if (tir_wmma_is_fragment(t->buf)) return interp_fail(it, "%s: buffer %s is a fragment, not memory", what, t->buf->name);
  const tir_expr_t *layout = args[2];
  bool row = layout->kind == TIR_STRING_IMM && strcmp(layout->u.str_value, "row_major") == 0;
  bool col = layout->kind == TIR_STRING_IMM && strcmp(layout->u.str_value, "col_major") == 0;
  if (!row && !col) return interp_fail(it, "%s: the layout must be \"row_major\" or \"col_major\"", what);
  t->row_step = row ? stride : 1;
  t->col_step = row ? 1 : stride;
  return MLC_OK;
}

/* Element (i, j) of a tile, bounds-checked against its storage. */
static int element(interp_t *it, const tile_t *t, int i, int j, unsigned char **p) {
  int64_t flat = t->flat + i * t->row_step + j * t->col_step;
  if (flat < 0 || flat >= t->view->limit)
    return interp_fail(it, "buffer %s: tile element (%d, %d) is element %lld, outside its storage of %lld",
                       t->buf->name, i, j, (long long)flat, (long long)t->view->limit);
  *p = t->view->base + flat * interp_elem_bytes(t->view->dtype);
  return MLC_OK;
}

/* m, n, k must be 16 (args[1..3]). */
static int check_shape(interp_t *it, const tir_expr_t *const *args, const char *what) {
  for (int d = 0; d < 3; d++) {
    int64_t v;
    int rc = interp_eval_int(it, args[d], &v);
    if (rc != MLC_OK) return rc;
    if (v != WMMA_DIM) return interp_fail(it, "%s: only 16x16x16 tiles are interpreted", what);
  }
  return MLC_OK;
}

/* dst(i, j) = cast(src(i, j)) over the 16x16 tile. */
static int copy_tile(interp_t *it, const tile_t *dst, const tile_t *src) {
  tir_dtype_t dt = tir_dtype_scalar(dst->view->dtype), st = tir_dtype_scalar(src->view->dtype);
  for (int i = 0; i < WMMA_DIM; i++)
    for (int j = 0; j < WMMA_DIM; j++) {
      unsigned char *d = NULL, *s = NULL;
      interp_scalar_t v;
      int rc = element(it, src, i, j, &s);
      if (rc == MLC_OK) rc = element(it, dst, i, j, &d);
      if (rc == MLC_OK) rc = interp_cast(it, dt, st, interp_read(st, s), &v);
      if (rc != MLC_OK) return rc;
      interp_write(dt, d, v);
    }
  return MLC_OK;
}

static int run_fill(interp_t *it, const tir_expr_t *const *args) {
  tile_t x;
  interp_value_t v;
  interp_scalar_t s;
  int rc = check_shape(it, args + 1, tir_wmma_name(TIR_WMMA_FILL));
  if (rc == MLC_OK) rc = fragment_tile(it, args[0], tir_wmma_name(TIR_WMMA_FILL), NULL, &x);
  if (rc == MLC_OK) rc = interp_eval(it, args[4], &v);
  if (rc != MLC_OK) return rc;
  tir_dtype_t dt = tir_dtype_scalar(x.view->dtype);
  if (v.t.lanes != 1 || (rc = interp_cast(it, dt, v.t, v.s, &s)) != MLC_OK)
    return rc != MLC_OK ? rc : interp_fail(it, "%s: the value must be a scalar", tir_wmma_name(TIR_WMMA_FILL));
  for (int i = 0; i < WMMA_DIM; i++)
    for (int j = 0; j < WMMA_DIM; j++) {
      unsigned char *p = NULL;
      if ((rc = element(it, &x, i, j, &p)) != MLC_OK) return rc;
      interp_write(dt, p, s);
    }
  return MLC_OK;
}

/* load: fragment <- memory; store: memory <- accumulator fragment. */
static int run_transfer(interp_t *it, const tir_expr_t *const *args, tir_wmma_op_t op) {
  tile_t frag, mem;
  int rc = check_shape(it, args + 1, tir_wmma_name(op));
  if (rc == MLC_OK) rc = fragment_tile(it, args[0], tir_wmma_name(op), op == TIR_WMMA_STORE ? "wmma.accumulator" : NULL, &frag);
  if (rc == MLC_OK) rc = memory_tile(it, args + 4, tir_wmma_name(op), &mem);
  if (rc != MLC_OK) return rc;
  return op == TIR_WMMA_LOAD ? copy_tile(it, &frag, &mem) : copy_tile(it, &mem, &frag);
}

static int read_f(interp_t *it, const tile_t *t, int i, int j, double *out) {
  unsigned char *p = NULL;
  int rc = element(it, t, i, j, &p);
  if (rc == MLC_OK) *out = interp_read(tir_dtype_scalar(t->view->dtype), p).f;
  return rc;
}

/* D = C + A * B; C may be D (the result goes through a scratch tile). */
static int run_mma(interp_t *it, const tir_expr_t *const *args) {
  static const char *const scopes[4] = {"wmma.accumulator", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"};
  tile_t t[4];
  int rc = MLC_OK;
  for (int k = 0; k < 4 && rc == MLC_OK; k++) rc = fragment_tile(it, args[k], tir_wmma_name(TIR_WMMA_MMA), scopes[k], &t[k]);
  if (rc != MLC_OK) return rc;
  tir_dtype_t dt = tir_dtype_scalar(t[0].view->dtype);
  for (int k = 0; k < 4; k++)
    if (interp_class(t[k].view->dtype) != INTERP_FLOAT)
      return interp_fail(it, "%s: buffer %s: only float fragments are interpreted", tir_wmma_name(TIR_WMMA_MMA), t[k].buf->name);
  double acc[WMMA_DIM][WMMA_DIM];
  for (int i = 0; i < WMMA_DIM; i++)
    for (int j = 0; j < WMMA_DIM; j++) {
      double sum, a, b;
      if ((rc = read_f(it, &t[3], i, j, &sum)) != MLC_OK) return rc;
      for (int k = 0; k < WMMA_DIM; k++) {
        if ((rc = read_f(it, &t[1], i, k, &a)) != MLC_OK || (rc = read_f(it, &t[2], k, j, &b)) != MLC_OK) return rc;
        sum = interp_round(dt, sum + interp_round(dt, a * b));
      }
      acc[i][j] = sum;
    }
  for (int i = 0; i < WMMA_DIM; i++)
    for (int j = 0; j < WMMA_DIM; j++) {
      unsigned char *p = NULL;
      if ((rc = element(it, &t[0], i, j, &p)) != MLC_OK) return rc;
      interp_write(dt, p, (interp_scalar_t){.f = acc[i][j]});
    }
  return MLC_OK;
}

int interp_eval_wmma(interp_t *it, const tir_expr_t *e, interp_value_t *out) {
  static const int nargs[4] = {6, 8, 5, 8}; /* with the name */
  tir_wmma_op_t op = tir_wmma_op(e);
  if (op == TIR_WMMA_NONE) return interp_fail(it, "not a WMMA call");
  if (e->u.call.nargs != nargs[op])
    return interp_fail(it, "%s takes %d arguments, got %d", tir_wmma_name(op), nargs[op] - 1, e->u.call.nargs - 1);
  const tir_expr_t *const *args = (const tir_expr_t *const *)e->u.call.args + 1;
  int rc;
  switch (op) {
  case TIR_WMMA_FILL: rc = run_fill(it, args); break;
  case TIR_WMMA_MMA: rc = run_mma(it, args); break;
  default: rc = run_transfer(it, args, op); break;
  }
  out->t = tir_dt_INT32();
  out->s.i = 0;
  return rc;
}
