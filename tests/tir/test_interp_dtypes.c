/*
 * test_interp_dtypes.c - the reference interpreter's arithmetic, dtype by
 * dtype: integer wrap-around, floor vs truncating division, float32 results
 * equal to IEEE float32, float16/bfloat16 rounding (ties to even, rounded
 * once), casts, reinterpret, math calls, int8 and float16 matmuls, and which
 * sides of Select and if_then_else are evaluated.
 *
 * Most programs are one element-wise block over 1-D buffers,
 *   for i in range(n): with T.block("B"): vi = T.axis.spatial(n, i); Out[vi] = f(X[vi], Y[vi])
 * built by make_map; expected values are written out by hand (as bit
 * patterns where rounding is the point) or computed by a C loop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "tir/tir.h"

static mlc_arena_t *A; /* arena of the function being built */

#define I(v) tir_i32(A, (v))

static tir_buffer_t *buffer_1d(const char *name, tir_dtype_t t, int64_t n) {
  tir_expr_t *shape[1] = {I(n)};
  return tir_buffer_new(A, name, t, shape, 1, "global");
}

static tir_buffer_t *buffer_2d(const char *name, tir_dtype_t t, int64_t n0, int64_t n1) {
  tir_expr_t *shape[2] = {I(n0), I(n1)};
  return tir_buffer_new(A, name, t, shape, 2, "global");
}

static void set_params(tir_func_t *f, tir_buffer_t **bufs, int n) {
  f->nparams = n;
  f->params = mlc_arena_alloc(A, sizeof(tir_var_t *) * (size_t)n);
  f->buffer_map = mlc_arena_memdup(A, bufs, sizeof(tir_buffer_t *) * (size_t)n);
  for (int k = 0; k < n; k++) f->params[k] = bufs[k]->data;
}

static void set_root(tir_func_t *f, tir_stmt_t *body) {
  tir_block_t *root = tir_block_new(A, "root");
  root->body = body;
  f->body = tir_block_realize(A, NULL, 0, NULL, root);
}

static tir_iter_var_t iter_var(tir_var_t *v, int64_t extent, tir_iter_type_t type) {
  tir_iter_var_t iv = {v, {I(0), I(extent)}, type};
  return iv;
}

/* ------------------------------------------------------------------------ */
/* Element-wise programs                                                     */
/* ------------------------------------------------------------------------ */

/* What Out[vi] is, given the loads X[vi] and Y[vi] (Y NULL for unary maps). */
typedef tir_expr_t *(*map_fn)(tir_expr_t *x, tir_expr_t *y);

static tir_func_t *make_map(tir_dtype_t xt, tir_dtype_t yt, tir_dtype_t ot, int64_t n, map_fn f) {
  tir_func_t *fn = tir_func_new("map");
  assert_non_null(fn);
  A = fn->arena;
  bool binary = yt.bits != 0;
  tir_buffer_t *x = buffer_1d("X", xt, n), *out = buffer_1d("Out", ot, n);
  tir_buffer_t *bufs[3] = {x, binary ? buffer_1d("Y", yt, n) : out, out}; /* X, [Y,] Out */
  set_params(fn, bufs, binary ? 3 : 2);
  tir_var_t *i = tir_var(A, "i", tir_dt_INT32()), *vi = tir_var(A, "vi", tir_dt_INT32());
  tir_expr_t *idx[1] = {vi};
  tir_expr_t *y = binary ? tir_load(A, bufs[1], idx, 1) : NULL;
  tir_block_t *b = tir_block_new(A, "B");
  b->niter_vars = 1;
  b->iter_vars = mlc_arena_alloc(A, sizeof(tir_iter_var_t));
  b->iter_vars[0] = iter_var(vi, n, TIR_ITER_SPATIAL);
  b->body = tir_store(A, out, f(tir_load(A, x, idx, 1), y), idx, 1);
  tir_expr_t *binds[1] = {i};
  set_root(fn, tir_for(A, i, I(0), I(n), TIR_FOR_SERIAL, tir_block_realize(A, binds, 1, NULL, b)));
  return fn;
}

static tir_arg_t arg_1d(void *data, tir_dtype_t t, int64_t n) {
  tir_arg_t a;
  memset(&a, 0, sizeof(a));
  a.data = data;
  a.dtype = t;
  a.ndim = 1;
  a.shape[0] = n;
  return a;
}

/* Runs a map built by make_map; y is NULL for unary maps. */
static int run_map(tir_func_t *f, void *x, void *y, void *out, int64_t n) {
  tir_arg_t args[3];
  int k = 0;
  args[k] = arg_1d(x, f->buffer_map[k]->dtype, n), k++;
  if (y) args[k] = arg_1d(y, f->buffer_map[k]->dtype, n), k++;
  args[k] = arg_1d(out, f->buffer_map[k]->dtype, n), k++;
  return tir_interp_run(f, args, k);
}

static const tir_dtype_t NO_Y = {0, 0, 0};

/* The operation under test, set before make_map. */
static tir_expr_kind_t g_kind;
static tir_op_t g_op;
static tir_dtype_t g_to;

static tir_expr_t *apply_binary(tir_expr_t *x, tir_expr_t *y) { return tir_binary(A, g_kind, x, y); }
static tir_expr_t *apply_cast(tir_expr_t *x, tir_expr_t *y) {
  (void)y;
  return tir_cast(A, g_to, x);
}
static tir_expr_t *apply_call(tir_expr_t *x, tir_expr_t *y) {
  tir_expr_t *args[2] = {x, y};
  return tir_call(A, g_to, g_op, args, y ? 2 : 1);
}

/* ------------------------------------------------------------------------ */
/* Integers                                                                  */
/* ------------------------------------------------------------------------ */

static void test_int8_and_uint8_arithmetic_wraps_around(void **state) {
  (void)state;
  g_kind = TIR_ADD;
  tir_func_t *f = make_map(tir_dt_INT8(), tir_dt_INT8(), tir_dt_INT8(), 4, apply_binary);
  int8_t x[4] = {127, -128, 100, -100}, y[4] = {1, -1, 100, -100}, out[4];
  assert_int_equal(run_map(f, x, y, out, 4), MLC_OK);
  const int8_t want_add[4] = {-128, 127, -56, 56};
  assert_memory_equal(out, want_add, sizeof(out));
  tir_func_free(f);

  g_kind = TIR_MUL;
  f = make_map(tir_dt_INT8(), tir_dt_INT8(), tir_dt_INT8(), 4, apply_binary);
  int8_t mx[4] = {100, -128, 16, 11}, my[4] = {3, -1, 16, -12};
  assert_int_equal(run_map(f, mx, my, out, 4), MLC_OK);
  const int8_t want_mul[4] = {44, -128, 0, 124}; /* 300, 128, 256, -132 mod 256 */
  assert_memory_equal(out, want_mul, sizeof(out));
  tir_func_free(f);

  g_kind = TIR_SUB;
  f = make_map(tir_dt_UINT8(), tir_dt_UINT8(), tir_dt_UINT8(), 2, apply_binary);
  uint8_t ux[2] = {0, 250}, uy[2] = {1, 251}, uout[2];
  assert_int_equal(run_map(f, ux, uy, uout, 2), MLC_OK);
  assert_int_equal(uout[0], 255);
  assert_int_equal(uout[1], 255);
  tir_func_free(f);
}

/* Unsigned comparisons see 4294967295 as large, not as -1. */
static void test_uint32_compares_unsigned(void **state) {
  (void)state;
  g_kind = TIR_GT;
  tir_func_t *f = make_map(tir_dt_UINT32(), tir_dt_UINT32(), tir_dt_BOOL(), 2, apply_binary);
  uint32_t x[2] = {4294967295u, 1}, y[2] = {1, 4294967295u};
  uint8_t out[2];
  assert_int_equal(run_map(f, x, y, out, 2), MLC_OK);
  assert_int_equal(out[0], 1);
  assert_int_equal(out[1], 0);
  tir_func_free(f);
}

static void check_division(tir_expr_kind_t kind, const int32_t want[4]) {
  int32_t x[4] = {7, -7, 7, -7}, y[4] = {2, 2, -2, -2}, out[4];
  g_kind = kind;
  tir_func_t *f = make_map(tir_dt_INT32(), tir_dt_INT32(), tir_dt_INT32(), 4, apply_binary);
  assert_int_equal(run_map(f, x, y, out, 4), MLC_OK);
  assert_memory_equal(out, want, 4 * sizeof(int32_t));
  tir_func_free(f);
}

static void test_floordiv_floormod_differ_from_truncdiv_truncmod_on_negatives(void **state) {
  (void)state;
  /* operands: 7/2, -7/2, 7/-2, -7/-2 */
  check_division(TIR_FLOOR_DIV, (const int32_t[]){3, -4, -4, 3});
  check_division(TIR_FLOOR_MOD, (const int32_t[]){1, 1, -1, -1});
  check_division(TIR_DIV, (const int32_t[]){3, -3, -3, 3});
  check_division(TIR_MOD, (const int32_t[]){1, -1, 1, -1});
}

/* INT64_MIN / -1 overflows: it wraps like the rest of the arithmetic. */
static void test_int64_division_overflow_wraps(void **state) {
  (void)state;
  g_kind = TIR_FLOOR_DIV;
  tir_func_t *f = make_map(tir_dt_INT64(), tir_dt_INT64(), tir_dt_INT64(), 1, apply_binary);
  int64_t x[1] = {INT64_MIN}, y[1] = {-1}, out[1];
  assert_int_equal(run_map(f, x, y, out, 1), MLC_OK);
  assert_true(out[0] == INT64_MIN);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* float32, float16, bfloat16                                                */
/* ------------------------------------------------------------------------ */

static void test_float32_results_equal_ieee_float32(void **state) {
  (void)state;
  enum { N = 6 };
  volatile float x[N] = {0.1f, 16777216.0f, 1.0f, 3.0f, 1e30f, 0.3f};
  volatile float y[N] = {0.2f, 1.0f, 3.0f, 7.0f, 1e10f, -0.1f};
  float xs[N], ys[N], out[N];
  for (int k = 0; k < N; k++) xs[k] = x[k], ys[k] = y[k];
  static const tir_expr_kind_t kinds[4] = {TIR_ADD, TIR_SUB, TIR_MUL, TIR_DIV};
  for (int op = 0; op < 4; op++) {
    g_kind = kinds[op];
    tir_func_t *f = make_map(tir_dt_FLOAT32(), tir_dt_FLOAT32(), tir_dt_FLOAT32(), N, apply_binary);
    assert_int_equal(run_map(f, xs, ys, out, N), MLC_OK);
    for (int k = 0; k < N; k++) {
      float want = op == 0 ? x[k] + y[k] : op == 1 ? x[k] - y[k] : op == 2 ? x[k] * y[k] : x[k] / y[k];
      assert_memory_equal(&out[k], &want, sizeof(float));
    }
    tir_func_free(f);
  }
}

/* Each float16 addition rounds to nearest, ties to even (bit patterns). */
static void test_float16_addition_rounds_ties_to_even(void **state) {
  (void)state;
  g_kind = TIR_ADD;
  tir_func_t *f = make_map(tir_dt_FLOAT16(), tir_dt_FLOAT16(), tir_dt_FLOAT16(), 5, apply_binary);
  /* 2048 + 1 (tie: 2048), 2048 + 3 (tie: 2052), 1 + 2^-11 (tie: 1),
   * 1 + 3*2^-11 (tie: 1 + 2^-9), 65504 + 16 (tie at the top: inf) */
  uint16_t x[5] = {0x6800, 0x6800, 0x3C00, 0x3C00, 0x7BFF};
  uint16_t y[5] = {0x3C00, 0x4200, 0x1000, 0x1600, 0x4C00};
  uint16_t out[5];
  assert_int_equal(run_map(f, x, y, out, 5), MLC_OK);
  const uint16_t want[5] = {0x6800, 0x6802, 0x3C00, 0x3C02, 0x7C00};
  assert_memory_equal(out, want, sizeof(want));
  tir_func_free(f);
}

static void test_float32_to_bfloat16_cast_rounds_ties_to_even(void **state) {
  (void)state;
  g_to = tir_dt_BFLOAT16();
  tir_func_t *f = make_map(tir_dt_FLOAT32(), NO_Y, tir_dt_BFLOAT16(), 6, apply_cast);
  const uint32_t bits[6] = {0x3F808000u, 0x3F818000u, 0x3F808001u, 0x3F80FFFFu, 0xBF818000u, 0x7F7FFFFFu};
  float x[6];
  memcpy(x, bits, sizeof(x));
  uint16_t out[6];
  assert_int_equal(run_map(f, x, NULL, out, 6), MLC_OK);
  /* tie down to even, tie up to even, above the tie, just below the next,
   * negative tie, FLT_MAX rounds to inf */
  const uint16_t want[6] = {0x3F80, 0x3F82, 0x3F81, 0x3F81, 0xBF82, 0x7F80};
  assert_memory_equal(out, want, sizeof(want));
  tir_func_free(f);
}

/* float64 -> 16-bit floats round once: 1 + 2^-8 + 2^-30 is above the bfloat16
 * tie at 1 + 2^-8, though rounding through float32 would land on the tie. */
static void test_float64_to_16_bit_floats_rounds_once(void **state) {
  (void)state;
  double x[2] = {1.0 + ldexp(1.0, -8) + ldexp(1.0, -30), 1.0 + ldexp(1.0, -11) + ldexp(1.0, -40)};
  uint16_t out[2];
  g_to = tir_dt_BFLOAT16();
  tir_func_t *f = make_map(tir_dt_FLOAT64(), NO_Y, tir_dt_BFLOAT16(), 2, apply_cast);
  assert_int_equal(run_map(f, x, NULL, out, 2), MLC_OK);
  assert_int_equal(out[0], 0x3F81);
  tir_func_free(f);
  g_to = tir_dt_FLOAT16();
  f = make_map(tir_dt_FLOAT64(), NO_Y, tir_dt_FLOAT16(), 2, apply_cast);
  assert_int_equal(run_map(f, x, NULL, out, 2), MLC_OK);
  assert_int_equal(out[1], 0x3C01);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Casts, reinterpret, math                                                  */
/* ------------------------------------------------------------------------ */

static void test_float_to_int_cast_truncates_toward_zero(void **state) {
  (void)state;
  g_to = tir_dt_INT32();
  tir_func_t *f = make_map(tir_dt_FLOAT32(), NO_Y, tir_dt_INT32(), 4, apply_cast);
  float x[4] = {2.7f, -2.7f, 0.5f, -2147483648.0f};
  int32_t out[4];
  assert_int_equal(run_map(f, x, NULL, out, 4), MLC_OK);
  const int32_t want[4] = {2, -2, 0, INT32_MIN};
  assert_memory_equal(out, want, sizeof(want));
  tir_func_free(f);
}

static void test_float_to_int_cast_out_of_range_is_an_error(void **state) {
  (void)state;
  g_to = tir_dt_INT8();
  tir_func_t *f = make_map(tir_dt_FLOAT32(), NO_Y, tir_dt_INT8(), 2, apply_cast);
  float x[2] = {127.9f, 300.0f};
  int8_t out[2];
  assert_int_equal(run_map(f, x, NULL, out, 2), MLC_ERUNTIME);
  assert_string_equal(mlc_error_last(), "block \"B\": cast of 300 to int8 is out of range");
  assert_int_equal(out[0], 127);
  x[1] = NAN;
  assert_int_equal(run_map(f, x, NULL, out, 2), MLC_ERUNTIME);
  assert_string_equal(mlc_error_last(), "block \"B\": cast of nan to int8 is out of range");
  tir_func_free(f);
}

static void test_int_to_narrow_int_and_bool_casts(void **state) {
  (void)state;
  int32_t x[3] = {300, -1, 0};
  uint8_t out[3];
  g_to = tir_dt_UINT8();
  tir_func_t *f = make_map(tir_dt_INT32(), NO_Y, tir_dt_UINT8(), 3, apply_cast);
  assert_int_equal(run_map(f, x, NULL, out, 3), MLC_OK);
  assert_memory_equal(out, ((const uint8_t[]){44, 255, 0}), 3);
  tir_func_free(f);
  g_to = tir_dt_BOOL();
  f = make_map(tir_dt_INT32(), NO_Y, tir_dt_BOOL(), 3, apply_cast);
  assert_int_equal(run_map(f, x, NULL, out, 3), MLC_OK);
  assert_memory_equal(out, ((const uint8_t[]){1, 1, 0}), 3);
  tir_func_free(f);
}

static void test_reinterpret_is_a_bit_cast(void **state) {
  (void)state;
  g_op = TIR_OP_REINTERPRET;
  g_to = tir_dt_INT32();
  tir_func_t *f = make_map(tir_dt_FLOAT32(), NO_Y, tir_dt_INT32(), 2, apply_call);
  float x[2] = {1.0f, -0.0f};
  int32_t bits[2];
  assert_int_equal(run_map(f, x, NULL, bits, 2), MLC_OK);
  assert_int_equal((uint32_t)bits[0], 0x3F800000u);
  assert_int_equal((uint32_t)bits[1], 0x80000000u);
  tir_func_free(f);
  g_to = tir_dt_FLOAT32();
  f = make_map(tir_dt_INT32(), NO_Y, tir_dt_FLOAT32(), 1, apply_call);
  int32_t pi_bits[1] = {0x40490FDB};
  float pi[1];
  assert_int_equal(run_map(f, pi_bits, NULL, pi, 1), MLC_OK);
  assert_true(pi[0] == 3.14159274f);
  tir_func_free(f);
}

static void check_unary_call(tir_op_t op, int n, const float *x, const float *want) {
  float out[8];
  g_op = op;
  g_to = tir_dt_FLOAT32();
  tir_func_t *f = make_map(tir_dt_FLOAT32(), NO_Y, tir_dt_FLOAT32(), n, apply_call);
  assert_int_equal(run_map(f, (void *)x, NULL, out, n), MLC_OK);
  for (int k = 0; k < n; k++) {
    if (isnan(want[k]))
      assert_true(isnan(out[k]));
    else
      assert_memory_equal(&out[k], &want[k], sizeof(float)); /* exact, sign of zero too */
  }
  tir_func_free(f);
}

static void test_round_is_half_to_even(void **state) {
  (void)state;
  const float x[6] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f};
  const float want[6] = {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 3.0f};
  check_unary_call(TIR_OP_ROUND, 6, x, want);
  check_unary_call(TIR_OP_NEARBYINT, 6, x, want);
}

static void test_math_calls_give_exact_values(void **state) {
  (void)state;
  check_unary_call(TIR_OP_SIGMOID, 2, (const float[]){0.0f, -INFINITY}, (const float[]){0.5f, 0.0f});
  check_unary_call(TIR_OP_RSQRT, 2, (const float[]){4.0f, 0.25f}, (const float[]){0.5f, 2.0f});
  check_unary_call(TIR_OP_EXP, 2, (const float[]){0.0f, -INFINITY}, (const float[]){1.0f, 0.0f});
  check_unary_call(TIR_OP_SQRT, 2, (const float[]){2.0f, -1.0f}, (const float[]){sqrtf(2.0f), NAN});
  check_unary_call(TIR_OP_FLOOR, 2, (const float[]){-1.5f, 1.5f}, (const float[]){-2.0f, 1.0f});
  check_unary_call(TIR_OP_CEIL, 2, (const float[]){-1.5f, 1.5f}, (const float[]){-1.0f, 2.0f});
  check_unary_call(TIR_OP_FABS, 2, (const float[]){-3.0f, -0.0f}, (const float[]){3.0f, 0.0f});
  check_unary_call(TIR_OP_TANH, 2, (const float[]){0.0f, INFINITY}, (const float[]){0.0f, 1.0f});
  check_unary_call(TIR_OP_ERF, 2, (const float[]){0.0f, INFINITY}, (const float[]){0.0f, 1.0f});
  /* exp is computed in double and rounded once: within an ulp of expf. */
  float one[1] = {1.0f}, out[1];
  g_op = TIR_OP_EXP;
  tir_func_t *f = make_map(tir_dt_FLOAT32(), NO_Y, tir_dt_FLOAT32(), 1, apply_call);
  assert_int_equal(run_map(f, one, NULL, out, 1), MLC_OK);
  assert_true(out[0] == (float)exp(1.0));
  tir_func_free(f);
  g_op = TIR_OP_POW;
  f = make_map(tir_dt_FLOAT32(), tir_dt_FLOAT32(), tir_dt_FLOAT32(), 1, apply_call);
  float base[1] = {2.0f}, ex[1] = {10.0f};
  assert_int_equal(run_map(f, base, ex, out, 1), MLC_OK);
  assert_true(out[0] == 1024.0f);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Select and if_then_else                                                   */
/* ------------------------------------------------------------------------ */

/* Out[vi] = sel(vi < 3, X[vi + 1], 0) over n = 4: at vi = 3 the false side is
 * taken and X[4] is out of bounds. */
static tir_var_t *g_vi;
static bool g_use_select;
static tir_expr_t *apply_guarded(tir_expr_t *x, tir_expr_t *y) {
  (void)y;
  tir_buffer_t *xb = x->u.load.buffer;
  g_vi = (tir_var_t *)x->u.load.indices[0];
  tir_expr_t *idx[1] = {tir_binary(A, TIR_ADD, g_vi, I(1))};
  tir_expr_t *cond = tir_binary(A, TIR_LT, g_vi, I(3));
  tir_expr_t *t = tir_load(A, xb, idx, 1), *zero = tir_float(A, tir_dt_FLOAT32(), 0);
  if (g_use_select) return tir_select(A, cond, t, zero);
  tir_expr_t *args[3] = {cond, t, zero};
  return tir_call(A, tir_dt_FLOAT32(), TIR_OP_IF_THEN_ELSE, args, 3);
}

static void test_if_then_else_evaluates_only_the_taken_side(void **state) {
  (void)state;
  g_use_select = false;
  tir_func_t *f = make_map(tir_dt_FLOAT32(), NO_Y, tir_dt_FLOAT32(), 4, apply_guarded);
  float x[4] = {1, 2, 3, 4}, out[4];
  assert_int_equal(run_map(f, x, NULL, out, 4), MLC_OK);
  const float want[4] = {2, 3, 4, 0};
  assert_memory_equal(out, want, sizeof(want));
  tir_func_free(f);
}

static void test_select_evaluates_both_sides(void **state) {
  (void)state;
  g_use_select = true;
  tir_func_t *f = make_map(tir_dt_FLOAT32(), NO_Y, tir_dt_FLOAT32(), 4, apply_guarded);
  float x[4] = {1, 2, 3, 4}, out[4];
  assert_int_equal(run_map(f, x, NULL, out, 4), MLC_ERUNTIME);
  assert_string_equal(mlc_error_last(), "block \"B\": buffer X: index [4] out of bounds for shape (4,)");
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Mixed-precision matmuls                                                   */
/* ------------------------------------------------------------------------ */

/* C[i, j] = sum_k Cast(acc, A[i, k]) * Cast(acc, B[k, j]), block "C" with init. */
static tir_func_t *make_cast_matmul(int64_t M, int64_t N, int64_t K, tir_dtype_t in, tir_dtype_t acc) {
  tir_func_t *f = tir_func_new("mm");
  assert_non_null(f);
  A = f->arena;
  tir_buffer_t *bufs[3] = {buffer_2d("A", in, M, K), buffer_2d("B", in, K, N), buffer_2d("C", acc, M, N)};
  set_params(f, bufs, 3);
  tir_var_t *lv[3], *iv[3];
  const char *ln[3] = {"i", "j", "k"}, *vn[3] = {"vi", "vj", "vk"};
  for (int d = 0; d < 3; d++) {
    lv[d] = tir_var(A, ln[d], tir_dt_INT32());
    iv[d] = tir_var(A, vn[d], tir_dt_INT32());
  }
  tir_expr_t *ij[2] = {iv[0], iv[1]}, *ik[2] = {iv[0], iv[2]}, *kj[2] = {iv[2], iv[1]};
  tir_expr_t *prod = tir_binary(A, TIR_MUL, tir_cast(A, acc, tir_load(A, bufs[0], ik, 2)),
                                tir_cast(A, acc, tir_load(A, bufs[1], kj, 2)));
  tir_block_t *b = tir_block_new(A, "C");
  b->niter_vars = 3;
  b->iter_vars = mlc_arena_alloc(A, 3 * sizeof(tir_iter_var_t));
  b->iter_vars[0] = iter_var(iv[0], M, TIR_ITER_SPATIAL);
  b->iter_vars[1] = iter_var(iv[1], N, TIR_ITER_SPATIAL);
  b->iter_vars[2] = iter_var(iv[2], K, TIR_ITER_REDUCE);
  tir_expr_t *zero = tir_dtype_is_float(acc) ? tir_float(A, acc, 0) : tir_int(A, acc, 0);
  b->init = tir_store(A, bufs[2], zero, ij, 2);
  b->body = tir_store(A, bufs[2], tir_binary(A, TIR_ADD, tir_load(A, bufs[2], ij, 2), prod), ij, 2);
  tir_expr_t *binds[3] = {lv[0], lv[1], lv[2]};
  tir_stmt_t *s = tir_block_realize(A, binds, 3, NULL, b);
  const int64_t ext[3] = {M, N, K};
  for (int d = 2; d >= 0; d--) s = tir_for(A, lv[d], I(0), I(ext[d]), TIR_FOR_SERIAL, s);
  set_root(f, s);
  return f;
}

static tir_arg_t arg_2d(void *data, tir_dtype_t t, int64_t n0, int64_t n1) {
  tir_arg_t a = arg_1d(data, t, n0);
  a.ndim = 2;
  a.shape[1] = n1;
  return a;
}

static void test_int8_matmul_accumulates_in_int32(void **state) {
  (void)state;
  enum { M = 4, N = 4, K = 8 };
  int8_t a[M][K], b[K][N];
  int32_t c[M][N], want[M][N];
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++) a[i][k] = (int8_t)(i == 0 ? -128 : (i * 37 + k * 53) % 256 - 128);
  for (int k = 0; k < K; k++)
    for (int j = 0; j < N; j++) b[k][j] = (int8_t)(j == 0 ? -128 : 127 - k * 19 - j * 7);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int32_t acc = 0;
      for (int k = 0; k < K; k++) acc += (int32_t)a[i][k] * (int32_t)b[k][j];
      want[i][j] = acc;
    }
  tir_func_t *f = make_cast_matmul(M, N, K, tir_dt_INT8(), tir_dt_INT32());
  tir_arg_t args[3] = {arg_2d(a, tir_dt_INT8(), M, K), arg_2d(b, tir_dt_INT8(), K, N),
                       arg_2d(c, tir_dt_INT32(), M, N)};
  assert_int_equal(tir_interp_run(f, args, 3), MLC_OK);
  assert_memory_equal(c, want, sizeof(want));
  assert_int_equal(c[0][0], 131072); /* 8 * (-128 * -128): far past int8 and int16 */
  tir_func_free(f);
}

static void test_float16_matmul_with_float32_accumulation_matches_c(void **state) {
  (void)state;
  enum { M = 5, N = 3, K = 16 };
  uint16_t a[M][K], b[K][N];
  float c[M][N], want[M][N];
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++) a[i][k] = tir_f32_to_f16((float)(i * K + k) * 0.0137f - 0.6f);
  for (int k = 0; k < K; k++)
    for (int j = 0; j < N; j++) b[k][j] = tir_f32_to_f16(1.0f / (float)(k + j + 1) - 0.25f);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float acc = 0.0f;
      for (int k = 0; k < K; k++) acc += tir_f16_to_f32(a[i][k]) * tir_f16_to_f32(b[k][j]);
      want[i][j] = acc;
    }
  tir_func_t *f = make_cast_matmul(M, N, K, tir_dt_FLOAT16(), tir_dt_FLOAT32());
  tir_arg_t args[3] = {arg_2d(a, tir_dt_FLOAT16(), M, K), arg_2d(b, tir_dt_FLOAT16(), K, N),
                       arg_2d(c, tir_dt_FLOAT32(), M, N)};
  assert_int_equal(tir_interp_run(f, args, 3), MLC_OK);
  assert_memory_equal(c, want, sizeof(want));
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int8_and_uint8_arithmetic_wraps_around),
      cmocka_unit_test(test_uint32_compares_unsigned),
      cmocka_unit_test(test_floordiv_floormod_differ_from_truncdiv_truncmod_on_negatives),
      cmocka_unit_test(test_int64_division_overflow_wraps),
      cmocka_unit_test(test_float32_results_equal_ieee_float32),
      cmocka_unit_test(test_float16_addition_rounds_ties_to_even),
      cmocka_unit_test(test_float32_to_bfloat16_cast_rounds_ties_to_even),
      cmocka_unit_test(test_float64_to_16_bit_floats_rounds_once),
      cmocka_unit_test(test_float_to_int_cast_truncates_toward_zero),
      cmocka_unit_test(test_float_to_int_cast_out_of_range_is_an_error),
      cmocka_unit_test(test_int_to_narrow_int_and_bool_casts),
      cmocka_unit_test(test_reinterpret_is_a_bit_cast),
      cmocka_unit_test(test_round_is_half_to_even),
      cmocka_unit_test(test_math_calls_give_exact_values),
      cmocka_unit_test(test_if_then_else_evaluates_only_the_taken_side),
      cmocka_unit_test(test_select_evaluates_both_sides),
      cmocka_unit_test(test_int8_matmul_accumulates_in_int32),
      cmocka_unit_test(test_float16_matmul_with_float32_accumulation_matches_c),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
