/*
 * test_simplify.c - the arithmetic simplifier: constant folding of every
 * operator and dtype, canonical linear forms and their deterministic order,
 * cancellation, floordiv/floormod/min/max/comparisons decided from bounds,
 * tir_prove, tir_const_bound, constraint scopes and tir_simplify_stmt.
 * Results are compared as printed TVMScript text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tir/tir.h"

/* ---- helpers: a tiny expression vocabulary ------------------------------ */

static mlc_arena_t *A;

static int setup(void **state) {
  (void)state;
  A = mlc_arena_new();
  return A ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  mlc_arena_free(A);
  A = NULL;
  return 0;
}

static tir_var_t *var(const char *name) { return tir_var(A, name, tir_dt_INT32()); }
static tir_var_t *var_t(const char *name, tir_dtype_t t) { return tir_var(A, name, t); }
static tir_expr_t *c32(int64_t v) { return tir_i32(A, v); }
static tir_expr_t *ci(tir_dtype_t t, int64_t v) { return tir_int(A, t, v); }
static tir_expr_t *cf(tir_dtype_t t, double v) { return tir_float(A, t, v); }
static tir_expr_t *bin(tir_expr_kind_t k, tir_expr_t *a, tir_expr_t *b) { return tir_binary(A, k, a, b); }
static tir_expr_t *add(tir_expr_t *a, tir_expr_t *b) { return bin(TIR_ADD, a, b); }
static tir_expr_t *sub(tir_expr_t *a, tir_expr_t *b) { return bin(TIR_SUB, a, b); }
static tir_expr_t *mul(tir_expr_t *a, tir_expr_t *b) { return bin(TIR_MUL, a, b); }
static tir_expr_t *fdiv(tir_expr_t *a, tir_expr_t *b) { return bin(TIR_FLOOR_DIV, a, b); }
static tir_expr_t *fmod_(tir_expr_t *a, tir_expr_t *b) { return bin(TIR_FLOOR_MOD, a, b); }

/* The printed form of e. */
static const char *str(const tir_expr_t *e) {
  static char buf[8][512];
  static int k;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_print_expr(&sb, e);
  char *out = buf[k++ % 8];
  snprintf(out, 512, "%s", mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return out;
}

/* Simplifies e and compares its text with want. */
#define expect_simplify(an, e, want) assert_string_equal(str(tir_simplify((an), (e))), (want))

/* An analyzer with i in [0, 8) and j in [0, 16) bound in that order. */
static tir_analyzer_t *tiled(tir_var_t **i, tir_var_t **j) {
  tir_analyzer_t *an = tir_analyzer_new(A);
  *i = var("i");
  *j = var("j");
  tir_analyzer_bind_const(an, *i, 0, 8);
  tir_analyzer_bind_const(an, *j, 0, 16);
  return an;
}

/* ---- constant folding ---------------------------------------------------- */

static void test_fold_int32_every_operator(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  expect_simplify(an, add(c32(3), c32(4)), "7");
  expect_simplify(an, sub(c32(7), c32(10)), "-3");
  expect_simplify(an, mul(c32(6), c32(7)), "42");
  expect_simplify(an, fdiv(c32(-7), c32(2)), "-4");
  expect_simplify(an, fmod_(c32(-7), c32(2)), "1");
  expect_simplify(an, bin(TIR_DIV, c32(-7), c32(2)), "-3");
  expect_simplify(an, bin(TIR_MOD, c32(-7), c32(2)), "-1");
  expect_simplify(an, bin(TIR_MIN, c32(-7), c32(2)), "-7");
  expect_simplify(an, bin(TIR_MAX, c32(-7), c32(2)), "2");
  expect_simplify(an, bin(TIR_LT, c32(-7), c32(2)), "T.bool(True)");
  expect_simplify(an, bin(TIR_GE, c32(-7), c32(2)), "T.bool(False)");
  expect_simplify(an, bin(TIR_EQ, c32(2), c32(2)), "T.bool(True)");
  expect_simplify(an, bin(TIR_NE, c32(2), c32(2)), "T.bool(False)");
  expect_simplify(an, bin(TIR_AND, tir_bool(A, true), tir_bool(A, false)), "T.bool(False)");
  expect_simplify(an, bin(TIR_OR, tir_bool(A, true), tir_bool(A, false)), "T.bool(True)");
  expect_simplify(an, tir_not(A, tir_bool(A, true)), "T.bool(False)");
}

static void test_fold_division_by_zero_is_left_alone(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  expect_simplify(an, fdiv(c32(7), c32(0)), "7 // 0");
  expect_simplify(an, bin(TIR_DIV, cf(tir_dt_FLOAT32(), 1), cf(tir_dt_FLOAT32(), 0)),
                  "T.float32(1) / T.float32(0)");
}

static void test_fold_narrow_integers_wrap(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_dtype_t i8 = tir_dt_INT8(), u8 = tir_dt_UINT8(), i64 = tir_dt_INT64();
  expect_simplify(an, add(ci(i8, 127), ci(i8, 1)), "T.int8(-128)");
  expect_simplify(an, mul(ci(i8, -128), ci(i8, -1)), "T.int8(-128)");
  expect_simplify(an, add(ci(u8, 200), ci(u8, 100)), "T.uint8(44)");
  expect_simplify(an, fdiv(ci(u8, 250), ci(u8, 3)), "T.uint8(83)");
  expect_simplify(an, bin(TIR_LT, ci(u8, 250), ci(u8, 3)), "T.bool(False)");
  expect_simplify(an, add(ci(i64, INT64_MAX), ci(i64, 1)), "T.int64(-9223372036854775808)");
  expect_simplify(an, mul(ci(i64, 1 << 20), ci(i64, 1 << 20)), "T.int64(1099511627776)");
}

static void test_fold_floats_round_to_their_dtype(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_dtype_t f32 = tir_dt_FLOAT32(), f16 = tir_dt_FLOAT16();
  tir_expr_t *r = tir_simplify(an, add(cf(f32, 0.1), cf(f32, 0.2)));
  assert_int_equal(r->kind, TIR_FLOAT_IMM);
  assert_true(r->u.float_value == (double)(float)((double)(float)0.1 + (double)(float)0.2));
  r = tir_simplify(an, add(cf(f16, 1.0), cf(f16, 0.0001)));
  assert_true(r->u.float_value == 1.0); /* below half an ulp of float16 at 1 */
  expect_simplify(an, mul(cf(f32, 1.5), cf(f32, 4)), "T.float32(6)");
  expect_simplify(an, bin(TIR_MAX, cf(f32, 1.5), cf(f32, 4)), "T.float32(4)");
  expect_simplify(an, bin(TIR_LE, cf(f32, 1.5), cf(f32, 4)), "T.bool(True)");
}

static void test_fold_casts_of_constants(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  expect_simplify(an, tir_cast(A, tir_dt_INT8(), c32(300)), "T.int8(44)");
  expect_simplify(an, tir_cast(A, tir_dt_FLOAT32(), c32(16777217)), "T.float32(16777216)");
  expect_simplify(an, tir_cast(A, tir_dt_INT32(), cf(tir_dt_FLOAT32(), 3.75)), "3");
  expect_simplify(an, tir_cast(A, tir_dt_INT32(), cf(tir_dt_FLOAT32(), -3.75)), "-3");
  expect_simplify(an, tir_cast(A, tir_dt_BOOL(), c32(5)), "T.bool(True)");
  /* Out of range: C leaves it undefined, so it stays a cast. */
  expect_simplify(an, tir_cast(A, tir_dt_UINT8(), cf(tir_dt_FLOAT32(), -1)), "T.Cast(\"uint8\", T.float32(-1))");
  tir_var_t *x = var("x");
  expect_simplify(an, tir_cast(A, tir_dt_INT32(), x), "x"); /* to its own dtype */
}

static void test_select_and_if_then_else_with_constant_conditions(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *x = var("x"), *y = var("y");
  expect_simplify(an, tir_select(A, tir_bool(A, true), x, y), "x");
  expect_simplify(an, tir_select(A, bin(TIR_LT, c32(3), c32(2)), x, y), "y");
  expect_simplify(an, tir_select(A, bin(TIR_LT, x, y), add(x, c32(0)), x), "x");
  tir_expr_t *args[3] = {bin(TIR_EQ, c32(1), c32(1)), x, y};
  expect_simplify(an, tir_call(A, tir_dt_INT32(), TIR_OP_IF_THEN_ELSE, args, 3), "x");
}

/* ---- linear forms ---------------------------------------------------------- */

static void test_cancellation(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  expect_simplify(an, sub(add(i, j), i), "j");
  expect_simplify(an, sub(mul(add(i, c32(1)), c32(4)), c32(4)), "i * 4");
  expect_simplify(an, sub(add(mul(i, c32(2)), mul(i, c32(3))), i), "i * 4");
  expect_simplify(an, sub(i, i), "0");
  tir_var_t *n = var("n"), *m = var("m");
  expect_simplify(an, sub(mul(n, m), mul(m, n)), "0");
  expect_simplify(an, sub(mul(mul(n, c32(4)), m), mul(m, mul(n, c32(3)))), "m * n");
}

static void test_canonical_order_is_deterministic(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  /* Larger coefficients first, then bind order (outer loop first). */
  expect_simplify(an, add(j, mul(i, c32(16))), "i * 16 + j");
  expect_simplify(an, add(j, i), "i + j");
  expect_simplify(an, add(i, j), "i + j");
  expect_simplify(an, add(add(c32(3), j), mul(i, c32(2))), "i * 2 + j + 3");
  /* Subtracted terms after the positive ones, constants last. */
  expect_simplify(an, sub(sub(c32(0), j), c32(2)), "j * -1 - 2");
  expect_simplify(an, sub(sub(i, c32(2)), j), "i - j - 2");
  /* Unbound variables order by name, whatever order they were made in. */
  tir_var_t *b = var("b"), *a = var("a");
  expect_simplify(an, add(b, a), "a + b");
  expect_simplify(an, add(a, b), "a + b");
  /* Idempotent. */
  tir_expr_t *once = tir_simplify(an, add(add(b, mul(j, c32(3))), sub(i, a)));
  assert_string_equal(str(tir_simplify(an, once)), str(once));
  assert_true(tir_simplify(an, once) == once); /* unchanged input comes back as is */
}

/* ---- division and modulo ---------------------------------------------------- */

static void test_floordiv_floormod_with_bounds(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  tir_expr_t *ij = add(mul(i, c32(16)), j);
  expect_simplify(an, fdiv(ij, c32(16)), "i");
  expect_simplify(an, fmod_(ij, c32(16)), "j");
  expect_simplify(an, fdiv(add(ij, c32(16)), c32(16)), "i + 1");
  expect_simplify(an, fmod_(add(ij, c32(17)), c32(16)), "(j + 1) % 16");
  expect_simplify(an, fdiv(j, c32(16)), "0");
  expect_simplify(an, fmod_(j, c32(32)), "j");
  expect_simplify(an, fdiv(ij, c32(4)), "i * 4 + j // 4");
  expect_simplify(an, fmod_(ij, c32(4)), "j % 4");
  tir_var_t *x = var("x");
  expect_simplify(an, fdiv(x, c32(1)), "x");
  expect_simplify(an, fmod_(x, c32(1)), "0");
  expect_simplify(an, fdiv(fdiv(x, c32(4)), c32(8)), "x // 32");
  expect_simplify(an, fmod_(fmod_(x, c32(32)), c32(8)), "x % 8");
  expect_simplify(an, fdiv(mul(x, c32(8)), c32(4)), "x * 2");
  expect_simplify(an, fmod_(mul(x, c32(8)), c32(4)), "0");
  expect_simplify(an, fdiv(mul(x, c32(2)), c32(4)), "x // 2");
  expect_simplify(an, fmod_(mul(x, c32(6)), c32(4)), "x * 3 % 2 * 2");
  /* floordiv(x, 16) * 16 + floormod(x, 16) == x */
  expect_simplify(an, add(mul(fdiv(x, c32(16)), c32(16)), fmod_(x, c32(16))), "x");
}

static void test_truncdiv_becomes_floordiv_only_when_nonnegative(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  tir_expr_t *ij = add(mul(i, c32(16)), j);
  expect_simplify(an, bin(TIR_DIV, ij, c32(16)), "i");
  expect_simplify(an, bin(TIR_MOD, ij, c32(16)), "j");
  tir_var_t *x = var("x");
  expect_simplify(an, bin(TIR_DIV, x, c32(4)), "T.truncdiv(x, 4)");
  expect_simplify(an, bin(TIR_DIV, x, c32(1)), "x");
  /* A divisor known to exceed a non-negative dividend. */
  tir_var_t *n = var("n");
  tir_analyzer_bind_const(an, n, 16, 100);
  expect_simplify(an, fdiv(j, n), "0");
  expect_simplify(an, fmod_(j, n), "j");
}

/* ---- min / max / comparisons ---------------------------------------------- */

static void test_min_max_from_bounds(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  expect_simplify(an, bin(TIR_MIN, i, c32(8)), "i");
  expect_simplify(an, bin(TIR_MAX, i, c32(8)), "8");
  expect_simplify(an, bin(TIR_MAX, c32(-1), i), "i");
  expect_simplify(an, bin(TIR_MIN, i, add(i, c32(1))), "i");
  tir_var_t *x = var("x");
  expect_simplify(an, bin(TIR_MAX, x, sub(x, c32(1))), "x");
  expect_simplify(an, bin(TIR_MIN, bin(TIR_MIN, x, c32(3)), c32(5)), "T.min(x, 3)");
  expect_simplify(an, bin(TIR_MIN, c32(3), x), "T.min(x, 3)");
  expect_simplify(an, bin(TIR_MIN, j, i), "T.min(i, j)");
  expect_simplify(an, bin(TIR_MAX, x, x), "x");
}

static void test_comparisons_from_bounds(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  tir_expr_t *ij = add(mul(i, c32(16)), j);
  expect_simplify(an, bin(TIR_LT, i, c32(8)), "T.bool(True)");
  expect_simplify(an, bin(TIR_LT, ij, c32(128)), "T.bool(True)");
  expect_simplify(an, bin(TIR_LT, ij, c32(127)), "i * 16 + j < 127");
  expect_simplify(an, bin(TIR_GE, i, c32(0)), "T.bool(True)");
  expect_simplify(an, bin(TIR_EQ, i, c32(8)), "T.bool(False)");
  expect_simplify(an, bin(TIR_NE, j, c32(-1)), "T.bool(True)");
  expect_simplify(an, bin(TIR_LT, add(ij, c32(1)), c32(100)), "i * 16 + j < 99");
  tir_var_t *x = var("x");
  expect_simplify(an, bin(TIR_GT, add(x, c32(1)), x), "T.bool(True)"); /* int32: no overflow assumed */
  expect_simplify(an, bin(TIR_LE, x, x), "T.bool(True)");
}

static void test_narrow_comparisons_respect_wraparound(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *x8 = var_t("x", tir_dt_INT8());
  /* x + 1 wraps at 127: not provable. */
  assert_false(tir_prove(an, bin(TIR_GT, add(x8, ci(tir_dt_INT8(), 1)), x8)));
  tir_var_t *u = var_t("u", tir_dt_UINT8());
  tir_analyzer_bind_const(an, u, 0, 10);
  assert_false(tir_prove(an, bin(TIR_LT, sub(u, ci(tir_dt_UINT8(), 1)), u))); /* u = 0 wraps */
  assert_true(tir_prove(an, bin(TIR_LT, u, add(u, ci(tir_dt_UINT8(), 1)))));  /* u + 1 <= 10 */
  tir_var_t *y8 = var_t("y", tir_dt_INT8());
  tir_analyzer_bind_const(an, y8, 0, 100);
  /* y*2 may wrap: floordiv(y*2, 2) must not become y. */
  expect_simplify(an, fdiv(mul(y8, ci(tir_dt_INT8(), 2)), ci(tir_dt_INT8(), 2)), "y * T.int8(2) // T.int8(2)");
}

static void test_logic(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  tir_var_t *x = var("x"), *y = var("y");
  tir_expr_t *xy = bin(TIR_LT, x, y);
  expect_simplify(an, bin(TIR_AND, bin(TIR_LT, i, c32(8)), xy), "x < y");
  expect_simplify(an, bin(TIR_AND, xy, bin(TIR_GE, i, c32(8))), "T.bool(False)");
  expect_simplify(an, bin(TIR_OR, xy, bin(TIR_LT, j, c32(16))), "T.bool(True)");
  expect_simplify(an, bin(TIR_OR, bin(TIR_LT, j, c32(0)), xy), "x < y");
  expect_simplify(an, tir_not(A, tir_not(A, xy)), "x < y");
  expect_simplify(an, tir_not(A, xy), "x >= y");
  expect_simplify(an, bin(TIR_AND, xy, xy), "x < y");
}

static void test_prove(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  tir_expr_t *ij = add(mul(i, c32(16)), j);
  assert_true(tir_prove(an, bin(TIR_LT, ij, c32(128))));
  assert_false(tir_prove(an, bin(TIR_LT, ij, c32(127))));
  assert_true(tir_prove(an, bin(TIR_AND, bin(TIR_GE, ij, c32(0)), bin(TIR_LE, ij, c32(127)))));
  assert_true(tir_prove(an, bin(TIR_EQ, fdiv(ij, c32(16)), i)));
  assert_false(tir_prove(an, bin(TIR_EQ, fdiv(ij, c32(8)), i)));
}

/* ---- constant bounds ----------------------------------------------------------- */

static void assert_bound(tir_bound_t b, int64_t lo, int64_t hi) {
  assert_true(b.min == lo);
  assert_true(b.max == hi);
}

static void test_const_bound(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  tir_var_t *x = var("x"), *y = var("y");
  tir_analyzer_bind_const(an, x, -5, 10); /* [-5, 4] */
  tir_analyzer_bind_const(an, y, 0, 10);
  assert_bound(tir_const_bound(an, add(mul(i, c32(16)), j)), 0, 127);
  assert_bound(tir_const_bound(an, sub(x, y)), -14, 4);
  assert_bound(tir_const_bound(an, mul(x, y)), -45, 36);
  assert_bound(tir_const_bound(an, fdiv(x, c32(2))), -3, 2);
  assert_bound(tir_const_bound(an, bin(TIR_DIV, x, c32(2))), -2, 2);
  assert_bound(tir_const_bound(an, fmod_(x, c32(3))), 0, 2);
  assert_bound(tir_const_bound(an, fmod_(add(j, c32(16)), c32(64))), 16, 31);
  assert_bound(tir_const_bound(an, bin(TIR_MOD, x, c32(3))), -2, 2);
  assert_bound(tir_const_bound(an, bin(TIR_MIN, x, y)), -5, 4);
  assert_bound(tir_const_bound(an, bin(TIR_MAX, x, y)), 0, 9);
  assert_bound(tir_const_bound(an, tir_select(A, bin(TIR_LT, x, y), x, add(y, c32(20)))), -5, 29);
  assert_bound(tir_const_bound(an, tir_cast(A, tir_dt_INT64(), x)), -5, 4);
  assert_bound(tir_const_bound(an, bin(TIR_LT, x, y)), 0, 1);
  /* Expression ranges: v in [i * 16, i * 16 + 16). */
  tir_var_t *v = var("v");
  tir_analyzer_bind(an, v, mul(i, c32(16)), c32(16));
  assert_bound(tir_const_bound(an, v), 0, 127);
}

static void test_const_bound_saturates(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *x = var("x");
  tir_analyzer_bind_const(an, x, 0, 10);
  /* 9 * 2^31 overflows int32: the whole int32 range. */
  assert_bound(tir_const_bound(an, mul(x, c32(1 << 30))), INT32_MIN, INT32_MAX);
  tir_var_t *w = var_t("w", tir_dt_INT64()), *z = var_t("z", tir_dt_INT64());
  assert_bound(tir_const_bound(an, w), INT64_MIN, INT64_MAX); /* unbound int64: unknown */
  tir_analyzer_bind_const(an, z, 0, INT64_C(1) << 62);
  assert_bound(tir_const_bound(an, mul(z, ci(tir_dt_INT64(), 4))), INT64_MIN, INT64_MAX);
  tir_expr_t *nonneg = tir_cast(A, tir_dt_INT64(), x);
  assert_bound(tir_const_bound(an, mul(nonneg, nonneg)), 0, 81);
  /* Casts to narrower types wrap: the target's range. */
  tir_analyzer_bind_const(an, x, 0, 300);
  assert_bound(tir_const_bound(an, tir_cast(A, tir_dt_INT8(), x)), -128, 127);
  /* Unbound int32 variables range over int32. */
  assert_bound(tir_const_bound(an, var("q")), INT32_MIN, INT32_MAX);
}

/* ---- constraints and statements ------------------------------------------------ */

static void test_constraint_scope_tightens_and_restores(void **state) {
  (void)state;
  tir_var_t *i, *j;
  tir_analyzer_t *an = tiled(&i, &j);
  int mark = tir_analyzer_push_constraint(an, bin(TIR_AND, bin(TIR_LT, i, c32(4)), bin(TIR_LE, c32(2), j)));
  assert_bound(tir_const_bound(an, i), 0, 3);
  assert_bound(tir_const_bound(an, j), 2, 15);
  expect_simplify(an, fdiv(i, c32(4)), "0");
  tir_analyzer_pop_constraint(an, mark);
  assert_bound(tir_const_bound(an, i), 0, 7);
  assert_bound(tir_const_bound(an, j), 0, 15);
}

static void test_simplify_stmt_binds_loops_and_collapses_ifs(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *i = var("i"), *j = var("j");
  tir_expr_t *shape[1] = {c32(128)};
  tir_buffer_t *B = tir_buffer_new(A, "B", tir_dt_FLOAT32(), shape, 1, NULL);
  tir_expr_t *ij = add(mul(i, c32(16)), j);
  /* for i, j: if i*16 + j < 128: B[(i*16 + j) // 16 * 16 + j] = 1 else B[0] = 2 */
  tir_expr_t *idx1[1] = {add(mul(fdiv(ij, c32(16)), c32(16)), fmod_(ij, c32(16)))};
  tir_expr_t *idx0[1] = {c32(0)};
  tir_stmt_t *body = tir_if(A, bin(TIR_LT, ij, c32(128)),
                            tir_store(A, B, cf(tir_dt_FLOAT32(), 1), idx1, 1),
                            tir_store(A, B, cf(tir_dt_FLOAT32(), 2), idx0, 1));
  tir_stmt_t *loops = tir_for(A, i, c32(0), c32(8), TIR_FOR_SERIAL,
                              tir_for(A, j, c32(0), c32(16), TIR_FOR_SERIAL, body));
  tir_stmt_t *s = tir_simplify_stmt(an, loops);
  assert_int_equal(s->kind, TIR_FOR);
  tir_stmt_t *inner = s->u.loop.body;
  assert_int_equal(inner->kind, TIR_FOR);
  tir_stmt_t *store = inner->u.loop.body;
  assert_int_equal(store->kind, TIR_BUFFER_STORE); /* the if collapsed */
  assert_string_equal(str(store->u.store.indices[0]), "i * 16 + j");
  /* Already simple: the very same statement comes back. */
  assert_true(tir_simplify_stmt(an, s) == s);
}

static void test_simplify_stmt_assumes_if_conditions(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *i = var("i");
  tir_expr_t *shape[1] = {c32(8)};
  tir_buffer_t *B = tir_buffer_new(A, "B", tir_dt_INT32(), shape, 1, NULL);
  tir_expr_t *idx[1] = {i};
  /* if i < 4: B[i] = i // 4 else: B[i] = i // 4 */
  tir_stmt_t *body = tir_if(A, bin(TIR_LT, i, c32(4)), tir_store(A, B, fdiv(i, c32(4)), idx, 1),
                            tir_store(A, B, fdiv(i, c32(4)), idx, 1));
  tir_stmt_t *s = tir_simplify_stmt(an, tir_for(A, i, c32(0), c32(8), TIR_FOR_SERIAL, body));
  tir_stmt_t *ifs = s->u.loop.body;
  assert_int_equal(ifs->kind, TIR_IF);
  assert_string_equal(str(ifs->u.if_.then_case->u.store.value), "0");
  assert_string_equal(str(ifs->u.if_.else_case->u.store.value), "1");
  /* A false condition without else becomes a no-op evaluate. */
  tir_stmt_t *dead = tir_if(A, bin(TIR_GE, i, c32(8)), tir_store(A, B, c32(1), idx, 1), NULL);
  tir_stmt_t *d = tir_simplify_stmt(an, tir_for(A, i, c32(0), c32(8), TIR_FOR_SERIAL, dead));
  assert_int_equal(d->u.loop.body->kind, TIR_EVALUATE);
}

/* ---- random expressions keep their value ---------------------------------- */

/* A reference evaluator: integers computed exactly in int64 and then wrapped
 * to the dtype (int8) or checked not to overflow (int32, where the
 * simplifier assumes no overflow, as TVM does). */
typedef struct {
  tir_var_t **vars;
  int64_t *vals;
  int n;
  bool overflow;
} env_t;

static int64_t wrap_to(tir_dtype_t t, int64_t v, env_t *env) {
  if (t.bits == 1) return v != 0;
  if (t.bits == 8 && t.code == TIR_CODE_UINT) return v & 0xff;
  if (t.bits == 8) return (int8_t)(uint8_t)(v & 0xff);
  if (v < INT32_MIN || v > INT32_MAX) env->overflow = true;
  return v;
}

static int64_t floordiv64(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

static int64_t eval(const tir_expr_t *e, env_t *env) {
  switch (e->kind) {
  case TIR_INT_IMM: return e->u.int_value;
  case TIR_VAR:
    for (int i = 0; i < env->n; i++)
      if (env->vars[i] == e) return env->vals[i];
    fail_msg("unknown variable");
    return 0;
  case TIR_SELECT:
    return eval(e->u.select.cond, env) ? eval(e->u.select.t, env) : eval(e->u.select.f, env);
  case TIR_NOT: return !eval(e->u.un.a, env);
  default: break;
  }
  int64_t a = eval(e->u.bin.a, env), b = eval(e->u.bin.b, env), r = 0;
  switch (e->kind) {
  case TIR_ADD: r = a + b; break;
  case TIR_SUB: r = a - b; break;
  case TIR_MUL: r = a * b; break;
  case TIR_FLOOR_DIV: r = b == -1 ? -a : floordiv64(a, b); break;
  case TIR_FLOOR_MOD: r = b == -1 ? 0 : a - floordiv64(a, b) * b; break;
  case TIR_DIV: r = b == -1 ? -a : a / b; break;
  case TIR_MOD: r = b == -1 ? 0 : a % b; break;
  case TIR_MIN: r = a < b ? a : b; break;
  case TIR_MAX: r = a > b ? a : b; break;
  case TIR_EQ: r = a == b; break;
  case TIR_NE: r = a != b; break;
  case TIR_LT: r = a < b; break;
  case TIR_LE: r = a <= b; break;
  case TIR_GT: r = a > b; break;
  case TIR_GE: r = a >= b; break;
  case TIR_AND: r = a && b; break;
  case TIR_OR: r = a || b; break;
  default: fail_msg("unexpected kind %d", e->kind);
  }
  return wrap_to(e->dtype, r, env);
}

static tir_expr_t *gen(mlc_rng_t *rng, tir_dtype_t t, tir_var_t **vars, int nvars, int depth) {
  if (depth == 0 || mlc_rng_below(rng, 4) == 0) {
    if (mlc_rng_below(rng, 3)) return vars[mlc_rng_below(rng, (uint64_t)nvars)];
    return ci(t, mlc_rng_range(rng, -9, 9));
  }
  static const tir_expr_kind_t ops[] = {TIR_ADD, TIR_ADD, TIR_SUB, TIR_SUB, TIR_MUL, TIR_FLOOR_DIV,
                                        TIR_FLOOR_MOD, TIR_DIV, TIR_MOD, TIR_MIN, TIR_MAX, TIR_SELECT};
  tir_expr_kind_t k = ops[mlc_rng_below(rng, sizeof(ops) / sizeof(ops[0]))];
  tir_expr_t *a = gen(rng, t, vars, nvars, depth - 1);
  if (k == TIR_SELECT) {
    static const tir_expr_kind_t cmps[] = {TIR_EQ, TIR_NE, TIR_LT, TIR_LE, TIR_GT, TIR_GE};
    tir_expr_t *c = bin(cmps[mlc_rng_below(rng, 6)], a, gen(rng, t, vars, nvars, depth - 1));
    if (mlc_rng_below(rng, 3) == 0) c = bin(TIR_AND, c, bin(TIR_LT, a, ci(t, 3)));
    return tir_select(A, c, gen(rng, t, vars, nvars, depth - 1), gen(rng, t, vars, nvars, depth - 1));
  }
  if (k == TIR_FLOOR_DIV || k == TIR_FLOOR_MOD || k == TIR_DIV || k == TIR_MOD) {
    static const int64_t divisors[] = {1, 2, 3, 4, 8, 16, -3};
    return bin(k, a, ci(t, divisors[mlc_rng_below(rng, 7)]));
  }
  return bin(k, a, gen(rng, t, vars, nvars, depth - 1));
}

/* Simplifies many random expressions and checks each against the original
 * at random points of the bound ranges. */
static void check_random(tir_dtype_t t, uint64_t seed, bool bind) {
  mlc_rng_t rng;
  mlc_rng_seed(&rng, seed);
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *vars[3] = {var_t("x", t), var_t("y", t), var_t("z", t)};
  int64_t lo[3] = {0, tir_dtype_is_uint(t) ? 250 : -4, 0}, ext[3] = {8, 6, 16};
  for (int v = 0; v < 3 && bind; v++) tir_analyzer_bind_const(an, vars[v], lo[v], ext[v]);
  for (int v = 0; v < 3 && !bind; v++) { /* unknown to the analyzer: any values */
    lo[v] = -60;
    ext[v] = 121;
  }
  int checked = 0;
  for (int iter = 0; iter < 1500; iter++) {
    tir_expr_t *e = gen(&rng, t, vars, 3, 4);
    tir_expr_t *s = tir_simplify(an, e);
    for (int p = 0; p < 12; p++) {
      int64_t vals[3];
      for (int v = 0; v < 3; v++) vals[v] = lo[v] + (int64_t)mlc_rng_below(&rng, (uint64_t)ext[v]);
      env_t env = {vars, vals, 3, false};
      int64_t want = eval(e, &env);
      if (env.overflow) continue;
      int64_t got = eval(s, &env);
      if (env.overflow) continue;
      if (got != want) {
        fail_msg("%s\n  simplified to %s\n  at x=%lld y=%lld z=%lld: %lld != %lld", str(e), str(s),
                 (long long)vals[0], (long long)vals[1], (long long)vals[2], (long long)got,
                 (long long)want);
      }
      checked++;
    }
  }
  assert_true(checked > 1000);
}

static void test_random_int32_expressions_keep_their_value(void **state) {
  (void)state;
  check_random(tir_dt_INT32(), 42, true);
  check_random(tir_dt_INT32(), 43, false);
}

static void test_random_int8_expressions_keep_their_wrapped_value(void **state) {
  (void)state;
  check_random(tir_dt_INT8(), 7, true);
  check_random(tir_dt_INT8(), 8, false);
  check_random(tir_dt_UINT8(), 11, true); /* y in [250, 256): sums wrap */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fold_int32_every_operator, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fold_division_by_zero_is_left_alone, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fold_narrow_integers_wrap, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fold_floats_round_to_their_dtype, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fold_casts_of_constants, setup, teardown),
      cmocka_unit_test_setup_teardown(test_select_and_if_then_else_with_constant_conditions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cancellation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_canonical_order_is_deterministic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_floordiv_floormod_with_bounds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_truncdiv_becomes_floordiv_only_when_nonnegative, setup, teardown),
      cmocka_unit_test_setup_teardown(test_min_max_from_bounds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_comparisons_from_bounds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_narrow_comparisons_respect_wraparound, setup, teardown),
      cmocka_unit_test_setup_teardown(test_logic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prove, setup, teardown),
      cmocka_unit_test_setup_teardown(test_const_bound, setup, teardown),
      cmocka_unit_test_setup_teardown(test_const_bound_saturates, setup, teardown),
      cmocka_unit_test_setup_teardown(test_constraint_scope_tightens_and_restores, setup, teardown),
      cmocka_unit_test_setup_teardown(test_simplify_stmt_binds_loops_and_collapses_ifs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_simplify_stmt_assumes_if_conditions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_random_int32_expressions_keep_their_value, setup, teardown),
      cmocka_unit_test_setup_teardown(test_random_int8_expressions_keep_their_wrapped_value, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
