/*
 * test_iter_map.c - iteration-map detection (splits, fusions, nested splits,
 * padded splits under a predicate, rejections with their messages, the check
 * levels, round trips through tir_iter_sum_to_expr) and interval relaxation
 * (tir_relax_expr / tir_relax_range) used for region derivation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tir/tir.h"

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
static tir_expr_t *c32(int64_t v) { return tir_i32(A, v); }
static tir_expr_t *bin(tir_expr_kind_t k, tir_expr_t *a, tir_expr_t *b) { return tir_binary(A, k, a, b); }
static tir_expr_t *add(tir_expr_t *a, tir_expr_t *b) { return bin(TIR_ADD, a, b); }
static tir_expr_t *mul(tir_expr_t *a, tir_expr_t *b) { return bin(TIR_MUL, a, b); }
static tir_expr_t *fdiv(tir_expr_t *a, tir_expr_t *b) { return bin(TIR_FLOOR_DIV, a, b); }
static tir_expr_t *fmod_(tir_expr_t *a, tir_expr_t *b) { return bin(TIR_FLOOR_MOD, a, b); }
static tir_range_t rng(int64_t min, int64_t extent) { return (tir_range_t){c32(min), c32(extent)}; }

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

static bool is_const(const tir_expr_t *e, int64_t v) { return tir_is_const_int(e, v); }

/* Detects and expects success. */
static tir_iter_map_t detect_ok(tir_analyzer_t *an, tir_expr_t **b, int n, tir_var_t **vars,
                                const tir_range_t *doms, int nvars, tir_expr_t *pred,
                                tir_iter_check_t check) {
  tir_iter_map_t m;
  int rc = tir_detect_iter_map(&m, an, b, n, vars, doms, nvars, pred, check);
  if (rc != MLC_OK) fail_msg("unexpected failure: %s", mlc_error_last());
  return m;
}

/* Detects and expects failure with exactly `why`. */
static void detect_fails(tir_analyzer_t *an, tir_expr_t **b, int n, tir_var_t **vars,
                         const tir_range_t *doms, int nvars, tir_expr_t *pred,
                         tir_iter_check_t check, const char *why) {
  tir_iter_map_t m;
  assert_int_equal(tir_detect_iter_map(&m, an, b, n, vars, doms, nvars, pred, check), MLC_EINVAL);
  assert_string_equal(mlc_error_last(), why);
}

/* The binding comes back from its iter sum (after simplification). */
static void assert_round_trip(tir_analyzer_t *an, const tir_iter_sum_t *sum, tir_expr_t *binding) {
  tir_expr_t *back = tir_simplify(an, tir_iter_sum_to_expr(A, sum));
  assert_string_equal(str(back), str(tir_simplify(an, binding)));
}

/* ---- accepted maps ---------------------------------------------------------- */

static void test_split_binding_is_one_fused_mark(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *vars[2] = {var("i0"), var("i1")};
  tir_range_t doms[2] = {rng(0, 8), rng(0, 16)};
  tir_expr_t *b[1] = {add(mul(vars[0], c32(16)), vars[1])};
  tir_iter_map_t m = detect_ok(an, b, 1, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE);
  assert_int_equal(m.n, 1);
  assert_true(m.bijective);
  const tir_iter_sum_t *s = &m.sums[0];
  assert_int_equal(s->nargs, 1);
  assert_true(is_const(s->base, 0));
  const tir_iter_mark_t *mark = s->args[0].source;
  assert_true(is_const(mark->extent, 128));
  assert_true(is_const(s->args[0].scale, 1));
  assert_non_null(mark->sum);
  assert_int_equal(mark->sum->nargs, 2);
  assert_true(mark->sum->args[0].source->var == vars[0]); /* most significant first */
  assert_true(is_const(mark->sum->args[0].scale, 16));
  assert_true(mark->sum->args[1].source->var == vars[1]);
  assert_string_equal(str(tir_iter_sum_to_expr(A, s)), "i0 * 16 + i1");
}

static void test_identity_bindings_map_to_their_iterators(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *vars[2] = {var("i"), var("j")};
  tir_range_t doms[2] = {rng(0, 8), rng(0, 16)};
  tir_expr_t *b[2] = {vars[1], vars[0]};
  tir_iter_map_t m = detect_ok(an, b, 2, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE);
  assert_true(m.sums[0].args[0].source->var == vars[1]);
  assert_true(m.sums[1].args[0].source->var == vars[0]);
  assert_true(is_const(m.sums[1].args[0].extent, 8));
  assert_string_equal(str(tir_iter_sum_to_expr(A, &m.sums[0])), "j");
}

static void test_fused_loop_splits_back(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *f = var("f");
  tir_var_t *vars[1] = {f};
  tir_range_t doms[1] = {rng(0, 256)};
  tir_expr_t *b[2] = {fdiv(f, c32(16)), fmod_(f, c32(16))};
  tir_iter_map_t m = detect_ok(an, b, 2, vars, doms, 1, NULL, TIR_ITER_BIJECTIVE);
  const tir_iter_split_t *hi = &m.sums[0].args[0], *lo = &m.sums[1].args[0];
  assert_true(hi->source->var == f && lo->source->var == f);
  assert_true(is_const(hi->lower_factor, 16) && is_const(hi->extent, 16));
  assert_true(is_const(lo->lower_factor, 1) && is_const(lo->extent, 16));
  assert_string_equal(str(tir_iter_sum_to_expr(A, &m.sums[0])), "f // 16");
  assert_string_equal(str(tir_iter_sum_to_expr(A, &m.sums[1])), "f % 16");
  /* Three levels: f // 32, f // 4 % 8, f % 4 */
  tir_expr_t *b3[3] = {fdiv(f, c32(32)), fmod_(fdiv(f, c32(4)), c32(8)), fmod_(f, c32(4))};
  m = detect_ok(an, b3, 3, vars, doms, 1, NULL, TIR_ITER_BIJECTIVE);
  assert_true(is_const(m.sums[1].args[0].lower_factor, 4) && is_const(m.sums[1].args[0].extent, 8));
  for (int k = 0; k < 3; k++) assert_round_trip(an, &m.sums[k], b3[k]);
}

static void test_nested_split_fuses_three_levels(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *vars[3] = {var("i0"), var("i1"), var("i2")};
  tir_range_t doms[3] = {rng(0, 2), rng(0, 4), rng(0, 8)};
  tir_expr_t *b[1] = {add(mul(add(mul(vars[0], c32(4)), vars[1]), c32(8)), vars[2])};
  tir_iter_map_t m = detect_ok(an, b, 1, vars, doms, 3, NULL, TIR_ITER_BIJECTIVE);
  const tir_iter_mark_t *mark = m.sums[0].args[0].source;
  assert_true(is_const(mark->extent, 64));
  assert_int_equal(mark->sum->nargs, 3);
  assert_true(is_const(mark->sum->args[0].scale, 32));
  assert_round_trip(an, &m.sums[0], b[0]);
}

static void test_fused_sum_split_again(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *vars[2] = {var("i"), var("j")};
  tir_range_t doms[2] = {rng(0, 8), rng(0, 16)};
  tir_expr_t *ij = add(mul(vars[0], c32(16)), vars[1]);
  tir_expr_t *b[2] = {fdiv(ij, c32(32)), fmod_(ij, c32(32))};
  tir_iter_map_t m = detect_ok(an, b, 2, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE);
  assert_true(m.sums[0].args[0].source == m.sums[1].args[0].source); /* one shared mark */
  assert_true(is_const(m.sums[0].args[0].extent, 4));
  for (int k = 0; k < 2; k++) assert_round_trip(an, &m.sums[k], b[k]);
}

static void test_padded_split_with_predicate(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *vars[2] = {var("i0"), var("i1")};
  tir_range_t doms[2] = {rng(0, 32), rng(0, 32)};
  tir_expr_t *fused = add(mul(vars[0], c32(32)), vars[1]);
  tir_expr_t *b[1] = {fused};
  tir_expr_t *pred = bin(TIR_LT, fused, c32(1000));
  tir_iter_map_t m = detect_ok(an, b, 1, vars, doms, 2, pred, TIR_ITER_BIJECTIVE);
  assert_true(is_const(m.sums[0].args[0].source->extent, 1000));
  assert_true(is_const(m.sums[0].args[0].extent, 1000));
  assert_round_trip(an, &m.sums[0], fused);
  /* Without the predicate the fused extent is the full 1024. */
  m = detect_ok(an, b, 1, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE);
  assert_true(is_const(m.sums[0].args[0].source->extent, 1024));
}

static void test_predicate_on_one_iterator_narrows_it(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *i = var("i");
  tir_var_t *vars[1] = {i};
  tir_range_t doms[1] = {rng(0, 16)};
  tir_expr_t *b[1] = {i};
  tir_iter_map_t m = detect_ok(an, b, 1, vars, doms, 1, bin(TIR_LT, i, c32(10)), TIR_ITER_BIJECTIVE);
  assert_true(is_const(m.sums[0].args[0].source->extent, 10));
  /* c > i and i >= 2: [2, 12) */
  tir_expr_t *pred = bin(TIR_AND, bin(TIR_GT, c32(12), i), bin(TIR_GE, i, c32(2)));
  m = detect_ok(an, b, 1, vars, doms, 1, pred, TIR_ITER_BIJECTIVE);
  const tir_iter_mark_t *mark = m.sums[0].args[0].source;
  assert_true(is_const(mark->extent, 10));
  assert_true(is_const(mark->var_min, 2));
  assert_true(is_const(m.sums[0].base, 2));
  assert_round_trip(an, &m.sums[0], i);
}

static void test_iterators_with_offsets_and_unit_extents(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *vars[3] = {var("i"), var("j"), var("u")};
  tir_range_t doms[3] = {rng(4, 8), rng(0, 16), rng(3, 1)};
  /* u has extent 1: it is the constant 3. */
  tir_expr_t *b[2] = {add(vars[0], vars[2]), add(mul(vars[1], c32(2)), c32(5))};
  tir_iter_map_t m = detect_ok(an, b, 2, vars, doms, 3, NULL, TIR_ITER_BIJECTIVE);
  assert_true(is_const(m.sums[0].base, 7));
  assert_true(is_const(m.sums[1].base, 5));
  assert_true(is_const(m.sums[1].args[0].scale, 2));
  assert_round_trip(an, &m.sums[0], add(vars[0], c32(3)));
  assert_round_trip(an, &m.sums[1], b[1]);
}

/* ---- rejections ---------------------------------------------------------------- */

static void test_non_affine_bindings_are_rejected_with_a_reason(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *i = var("i"), *j = var("j"), *n = var("n");
  tir_var_t *vars[2] = {i, j};
  tir_range_t doms[2] = {rng(0, 8), rng(0, 16)};
  tir_expr_t *b1[1] = {mul(i, i)};
  detect_fails(an, b1, 1, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE,
               "binding 0 (i * i): product of two iterators");
  tir_expr_t *b2[2] = {i, fdiv(j, i)};
  detect_fails(an, b2, 2, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE,
               "binding 1 (j // i): floordiv by an iterator (i)");
  tir_expr_t *b3[2] = {i, fdiv(j, n)};
  detect_fails(an, b3, 2, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE,
               "binding 1 (j // n): floordiv by non-constant n");
  tir_expr_t *b4[1] = {bin(TIR_MAX, i, j)};
  detect_fails(an, b4, 1, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE,
               "binding 0 (T.max(i, j)): Max of iterators is not affine");
  tir_expr_t *b5[1] = {add(mul(i, c32(32)), j)}; /* j covers only 16 of the 32 */
  detect_fails(an, b5, 1, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE,
               "binding 0 (i * 32 + j): no iterator with scale 16 to fuse with");
}

static void test_iterator_used_twice(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *i = var("i"), *j = var("j");
  tir_var_t *vars[2] = {i, j};
  tir_range_t doms[2] = {rng(0, 8), rng(0, 16)};
  tir_expr_t *b[2] = {add(mul(i, c32(16)), j), i};
  detect_fails(an, b, 2, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE,
               "iterator i used twice (bindings 0 and 1)");
  tir_expr_t *twice[2] = {i, i};
  detect_fails(an, twice, 2, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE,
               "iterator i used twice (bindings 0 and 1)");
  /* Within one binding, i * 2 + i is i * 3 (as in TVM): one use. */
  tir_expr_t *b3[2] = {add(mul(i, c32(2)), i), j};
  tir_iter_map_t m = detect_ok(an, b3, 2, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE);
  assert_true(is_const(m.sums[0].args[0].scale, 3));
  /* i + j is no bijection (j spans 16, i's scale is 1), but it does cover
   * [0, 23) (TVM's surjective fusion with overlaps). */
  tir_expr_t *b4[1] = {add(i, j)};
  detect_fails(an, b4, 1, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE,
               "binding 0 (i + j): no iterator with scale 16 to fuse with");
  m = detect_ok(an, b4, 1, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE);
  assert_true(is_const(m.sums[0].args[0].source->extent, 23));
  detect_fails(an, b, 2, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE,
               "iterator i used twice (bindings 0 and 1)");
  detect_fails(an, b, 2, vars, doms, 2, NULL, TIR_ITER_INJECTIVE,
               "iterator i used twice (bindings 0 and 1)");
}

static void test_surjective_allows_what_bijective_does_not(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *x = var("x"), *y = var("y");
  tir_var_t *vars[2] = {x, y};
  tir_range_t doms[2] = {rng(0, 24), rng(0, 6)};
  /* [x // 6, x % 2, y]: skips the middle digit (x // 2) % 3. */
  tir_expr_t *b[3] = {fdiv(x, c32(6)), fmod_(x, c32(2)), y};
  tir_iter_map_t m = detect_ok(an, b, 3, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE);
  assert_false(m.bijective);
  detect_fails(an, b, 3, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE,
               "extents do not match: the splits of iterator x leave a gap at 2 of its extent 24");
  /* An unused iterator. */
  tir_expr_t *b2[1] = {x};
  m = detect_ok(an, b2, 1, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE);
  assert_false(m.bijective);
  detect_fails(an, b2, 1, vars, doms, 2, NULL, TIR_ITER_BIJECTIVE,
               "iterator y is not used by any binding");
  /* x // 3 of x in [0, 8) is not a split of x: 3 does not divide 8 ... */
  tir_range_t doms8[2] = {rng(0, 8), rng(0, 6)};
  tir_expr_t *b3[2] = {fdiv(x, c32(3)), y};
  detect_fails(an, b3, 2, vars, doms8, 2, NULL, TIR_ITER_SURJECTIVE,
               "extents do not match: the splits of iterator x cover a non-divisor 9 of its extent 8");
  /* ... but reads no value of x twice. */
  m = detect_ok(an, b3, 2, vars, doms8, 2, NULL, TIR_ITER_INJECTIVE);
  assert_false(m.bijective);
  /* Surjective and in fact bijective. */
  tir_expr_t *b4[2] = {y, x};
  m = detect_ok(an, b4, 2, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE);
  assert_true(m.bijective);
}

static void test_offset_not_multiple_of_divisor_is_rejected(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *x = var("x");
  tir_var_t *vars[1] = {x};
  tir_range_t doms[1] = {rng(0, 16)};
  tir_expr_t *b[1] = {fdiv(add(x, c32(1)), c32(4))};
  detect_fails(an, b, 1, vars, doms, 1, NULL, TIR_ITER_SURJECTIVE,
               "binding 0 ((x + 1) // 4): the offset 1 is not a multiple of the divisor 4 "
               "(iterator padding is not supported)");
}

/* ---- interval relaxation -------------------------------------------------------- */

static void test_relax_tiled_index(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *vi = var("vi"), *vj = var("vj");
  tir_var_t *vars[1] = {vj};
  tir_range_t doms[1] = {rng(0, 16)};
  tir_interval_t r;
  assert_int_equal(tir_relax_expr(&r, an, add(mul(vi, c32(16)), vj), vars, doms, 1), MLC_OK);
  assert_string_equal(str(r.min), "vi * 16");
  assert_string_equal(str(r.max), "vi * 16 + 15");
  tir_range_t region = {add(mul(vi, c32(16)), vj), c32(1)}, out;
  assert_int_equal(tir_relax_range(&out, an, &region, vars, doms, 1), MLC_OK);
  assert_string_equal(str(out.min), "vi * 16");
  assert_string_equal(str(out.extent), "16");
  /* min(vi * 16 + vj, 100) */
  assert_int_equal(tir_relax_expr(&r, an, bin(TIR_MIN, add(mul(vi, c32(16)), vj), c32(100)), vars, doms, 1),
                   MLC_OK);
  assert_string_equal(str(r.min), "T.min(vi * 16, 100)");
  assert_string_equal(str(r.max), "T.min(vi * 16 + 15, 100)");
}

static void test_relax_div_mod_and_dependent_domains(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *i = var("i"), *j = var("j"), *k = var("k");
  /* j's domain depends on i: both relaxed gives [0, 15]. */
  tir_var_t *vars[3] = {i, j, k};
  tir_range_t doms[3] = {rng(0, 4), {mul(i, c32(4)), c32(4)}, rng(0, 64)};
  tir_interval_t r;
  assert_int_equal(tir_relax_expr(&r, an, j, vars, doms, 3), MLC_OK);
  assert_string_equal(str(r.min), "0");
  assert_string_equal(str(r.max), "15");
  /* Only j relaxed: i stays a symbol. */
  assert_int_equal(tir_relax_expr(&r, an, j, vars + 1, doms + 1, 1), MLC_OK);
  assert_string_equal(str(r.min), "i * 4");
  assert_string_equal(str(r.max), "i * 4 + 3");
  assert_int_equal(tir_relax_expr(&r, an, fdiv(k, c32(4)), vars, doms, 3), MLC_OK);
  assert_string_equal(str(r.max), "15");
  assert_int_equal(tir_relax_expr(&r, an, fmod_(add(k, c32(1)), c32(4)), vars, doms, 3), MLC_OK);
  assert_string_equal(str(r.min), "0");
  assert_string_equal(str(r.max), "3");
  assert_int_equal(tir_relax_expr(&r, an, mul(k, c32(-2)), vars, doms, 3), MLC_OK);
  assert_string_equal(str(r.min), "-126");
  assert_string_equal(str(r.max), "0");
  /* A point stays a point. */
  tir_var_t *n = var("n");
  assert_int_equal(tir_relax_expr(&r, an, add(n, c32(1)), vars, doms, 3), MLC_OK);
  assert_string_equal(str(r.min), "n + 1");
  assert_true(r.min == r.max || strcmp(str(r.min), str(r.max)) == 0);
}

static void test_relax_reports_what_it_cannot_bound(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *k = var("k");
  tir_expr_t *shape[1] = {c32(64)};
  tir_buffer_t *B = tir_buffer_new(A, "B", tir_dt_INT32(), shape, 1, NULL);
  tir_expr_t *idx[1] = {k};
  tir_var_t *vars[1] = {k};
  tir_range_t doms[1] = {rng(0, 64)};
  tir_interval_t r;
  assert_int_equal(tir_relax_expr(&r, an, tir_load(A, B, idx, 1), vars, doms, 1), MLC_EUNSUPPORTED);
  assert_string_equal(mlc_error_last(), "cannot bound the range of B[k]");
  /* Partly known: the load is unknown, but the floormod is not. */
  assert_int_equal(tir_relax_expr(&r, an, fmod_(tir_load(A, B, idx, 1), c32(8)), vars, doms, 1), MLC_OK);
  assert_string_equal(str(r.min), "0");
  assert_string_equal(str(r.max), "7");
}

/* ---- random bindings ------------------------------------------------------------ */

/* Evaluates +, -, *, floordiv, floormod over integers (vars from env). */
static int64_t eval(const tir_expr_t *e, tir_var_t **vars, const int64_t *vals) {
  if (e->kind == TIR_INT_IMM) return e->u.int_value;
  if (e->kind == TIR_VAR) {
    for (int i = 0; i < 3; i++)
      if (vars[i] == e) return vals[i];
    fail_msg("unknown variable");
  }
  int64_t a = eval(e->u.bin.a, vars, vals), b = eval(e->u.bin.b, vars, vals);
  int64_t q = b ? a / b - ((a % b != 0) && ((a < 0) != (b < 0))) : 0;
  switch (e->kind) {
  case TIR_ADD: return a + b;
  case TIR_SUB: return a - b;
  case TIR_MUL: return a * b;
  case TIR_FLOOR_DIV: return q;
  case TIR_FLOOR_MOD: return a - q * b;
  default: fail_msg("unexpected kind");
  }
  return 0;
}

static tir_expr_t *gen(mlc_rng_t *rng, tir_var_t **vars, tir_range_t *doms, int depth) {
  static const int64_t ks[] = {2, 3, 4, 8, 6};
  switch (mlc_rng_below(rng, depth > 0 ? 8 : 2)) {
  case 0:
  case 1: return vars[mlc_rng_below(rng, 3)];
  case 2: return add(mul(gen(rng, vars, doms, depth - 1), c32(mlc_rng_range(rng, 1, 9))), gen(rng, vars, doms, depth - 1));
  case 3: return fdiv(gen(rng, vars, doms, depth - 1), c32(ks[mlc_rng_below(rng, 5)]));
  case 4: return fmod_(gen(rng, vars, doms, depth - 1), c32(ks[mlc_rng_below(rng, 5)]));
  case 5: return add(gen(rng, vars, doms, depth - 1), c32(mlc_rng_range(rng, 0, 4)));
  case 6: { /* a well-formed fusion of two iterators */
    int a = (int)mlc_rng_below(rng, 3), b = (a + 1) % 3;
    return add(mul(vars[a], doms[b].extent), vars[b]);
  }
  default: return mul(gen(rng, vars, doms, depth - 1), c32(mlc_rng_range(rng, 1, 4)));
  }
}

/* Checks one detected map against brute force over the iteration space:
 * every sum rebuilds its binding, single splits of surjective maps reach
 * every value, and bijective maps are injective onto the splits' product. */
static void check_map(const tir_iter_map_t *m, tir_expr_t **b, int n, tir_var_t **vars,
                      const int64_t *ext, tir_iter_check_t level, int64_t pred_bound) {
  int64_t tuples[4096], ntuples = 0, vals[3];
  bool hit[3][512];
  memset(hit, 0, sizeof(hit));
  for (vals[0] = 0; vals[0] < ext[0]; vals[0]++)
    for (vals[1] = 0; vals[1] < ext[1]; vals[1]++)
      for (vals[2] = 0; vals[2] < ext[2]; vals[2]++) {
        if (pred_bound >= 0 && vals[0] * ext[1] + vals[1] >= pred_bound) continue;
        int64_t key = 0;
        for (int k = 0; k < n; k++) {
          int64_t want = eval(b[k], vars, vals);
          assert_int_equal(eval(tir_iter_sum_to_expr(A, &m->sums[k]), vars, vals), want);
          key = key * 100003 + want;
          int64_t e, sc, base;
          if (m->sums[k].nargs == 1 && tir_as_int(m->sums[k].args[0].extent, &e) && e < 512 &&
              tir_as_int(m->sums[k].args[0].scale, &sc) && tir_as_int(m->sums[k].base, &base)) {
            assert_true((want - base) % sc == 0 && (want - base) / sc >= 0 && (want - base) / sc < e);
            hit[k][(want - base) / sc] = true;
          }
        }
        tuples[ntuples++] = key;
      }
  for (int k = 0; k < n && level >= TIR_ITER_SURJECTIVE; k++) {
    int64_t e;
    if (m->sums[k].nargs != 1 || !tir_as_int(m->sums[k].args[0].extent, &e) || e >= 512) continue;
    for (int64_t t = 0; t < e; t++) assert_true(hit[k][t]);
  }
  if (!m->bijective) return;
  int64_t prod = 1;
  for (int k = 0; k < n; k++)
    for (int a = 0; a < m->sums[k].nargs; a++) {
      int64_t e;
      assert_true(tir_as_int(m->sums[k].args[a].extent, &e));
      prod *= e;
    }
  assert_int_equal(prod, ntuples);
  for (int64_t x = 0; x < ntuples; x++)
    for (int64_t y = x + 1; y < ntuples; y++) assert_true(tuples[x] != tuples[y]);
}

static void test_random_bindings_match_brute_force(void **state) {
  (void)state;
  mlc_rng_t r;
  mlc_rng_seed(&r, 2024);
  static const int64_t exts[] = {1, 2, 3, 4, 6, 8, 12, 16};
  int accepted = 0, bijective = 0;
  for (int it = 0; it < 3000; it++) {
    tir_analyzer_t *an = tir_analyzer_new(A);
    tir_var_t *vars[3] = {var("i"), var("j"), var("k")};
    tir_range_t doms[3];
    int64_t ext[3];
    for (int v = 0; v < 3; v++) {
      ext[v] = exts[mlc_rng_below(&r, 8)];
      doms[v] = rng(0, ext[v]);
    }
    int n = 1 + (int)mlc_rng_below(&r, 3);
    tir_expr_t *b[3];
    for (int k = 0; k < n; k++) b[k] = gen(&r, vars, doms, 3);
    int64_t bound = -1;
    tir_expr_t *pred = NULL;
    if (mlc_rng_below(&r, 4) == 0) {
      bound = mlc_rng_range(&r, 1, 40);
      pred = bin(TIR_LT, add(mul(vars[0], c32(ext[1])), vars[1]), c32(bound));
    }
    tir_iter_check_t level = (tir_iter_check_t)mlc_rng_below(&r, 3);
    tir_iter_map_t m;
    if (tir_detect_iter_map(&m, an, b, n, vars, doms, 3, pred, level) != MLC_OK) continue;
    accepted++;
    bijective += m.bijective;
    check_map(&m, b, n, vars, ext, level, bound);
  }
  assert_true(accepted > 300 && bijective > 30); /* the generator reaches both */
}

/* ---- out of memory ----------------------------------------------------------------- */

static void test_out_of_memory_is_reported_not_fatal(void **state) {
  (void)state;
  tir_analyzer_t *an = tir_analyzer_new(A);
  tir_var_t *vars[2] = {var("i"), var("j")};
  tir_range_t doms[2] = {rng(0, 8), rng(0, 16)};
  tir_expr_t *ij = add(mul(vars[0], c32(16)), vars[1]);
  tir_expr_t *b[2] = {fdiv(ij, c32(4)), fmod_(ij, c32(4))};
  tir_expr_t *e = add(fdiv(ij, c32(16)), bin(TIR_MIN, ij, c32(7)));
  tir_var_t *relaxed[1] = {vars[1]};
  int oom = 0;
  mlc_alloc_fail_after(0); /* the arena cannot take another chunk */
  for (int k = 0; k < 2000; k++) {
    tir_iter_map_t m;
    int rc = tir_detect_iter_map(&m, an, b, 2, vars, doms, 2, NULL, TIR_ITER_SURJECTIVE);
    assert_true(rc == MLC_OK || rc == MLC_ENOMEM);
    oom += rc == MLC_ENOMEM;
    assert_non_null(tir_simplify(an, e)); /* the input itself at worst */
    tir_interval_t r;
    rc = tir_relax_expr(&r, an, ij, relaxed, doms + 1, 1);
    assert_true(rc == MLC_OK || rc == MLC_ENOMEM);
  }
  mlc_alloc_fail_after(-1);
  assert_true(oom > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_split_binding_is_one_fused_mark, setup, teardown),
      cmocka_unit_test_setup_teardown(test_identity_bindings_map_to_their_iterators, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fused_loop_splits_back, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nested_split_fuses_three_levels, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fused_sum_split_again, setup, teardown),
      cmocka_unit_test_setup_teardown(test_padded_split_with_predicate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_predicate_on_one_iterator_narrows_it, setup, teardown),
      cmocka_unit_test_setup_teardown(test_iterators_with_offsets_and_unit_extents, setup, teardown),
      cmocka_unit_test_setup_teardown(test_non_affine_bindings_are_rejected_with_a_reason, setup, teardown),
      cmocka_unit_test_setup_teardown(test_iterator_used_twice, setup, teardown),
      cmocka_unit_test_setup_teardown(test_surjective_allows_what_bijective_does_not, setup, teardown),
      cmocka_unit_test_setup_teardown(test_offset_not_multiple_of_divisor_is_rejected, setup, teardown),
      cmocka_unit_test_setup_teardown(test_random_bindings_match_brute_force, setup, teardown),
      cmocka_unit_test_setup_teardown(test_relax_tiled_index, setup, teardown),
      cmocka_unit_test_setup_teardown(test_relax_div_mod_and_dependent_domains, setup, teardown),
      cmocka_unit_test_setup_teardown(test_relax_reports_what_it_cannot_bound, setup, teardown),
      cmocka_unit_test_setup_teardown(test_out_of_memory_is_reported_not_fatal, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
