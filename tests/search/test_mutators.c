/*
 * test_mutators.c - the CPU mutators (search/evolve/mutate_*.c): each
 * changes exactly one decision (MutateParallel: one annotation value) of a
 * design trace, the result replays and computes what the workload computes
 * (reference interpreter), MutateTileSize keeps each tile's product and the
 * innermost limit, MutateComputeLocation picks another valid location,
 * MutateParallel a value with another plan; a trace with nothing to change
 * gives MLC_ENOTFOUND; the same RNG state gives the same mutation; the
 * postprocessing part of a trace is left out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "tests/schedule/sched_testing.h"
#include "tests/search/evolve_testing.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static bool arg_equal(const sch_arg_t *a, const sch_arg_t *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case SCH_ARG_NONE: return true;
  case SCH_ARG_INT: return a->u.i == b->u.i;
  case SCH_ARG_LIST:
    if (a->u.list.n != b->u.list.n) return false;
    for (int i = 0; i < a->u.list.n; i++)
      if (!arg_equal(&a->u.list.items[i], &b->u.list.items[i])) return false;
    return true;
  default: return false;
  }
}

/* The one instruction whose decision differs between a and b (same
 * instructions otherwise: checked through JSON with the decision put
 * back); fails the test unless exactly one differs. */
static int changed_decision(const sch_trace_t *a, const sch_trace_t *b) {
  assert_int_equal(a->n, b->n);
  int changed = -1;
  for (int i = 0; i < a->n; i++) {
    if (arg_equal(&a->decisions[i], &b->decisions[i])) continue;
    assert_int_equal(changed, -1);
    changed = i;
  }
  assert_true(changed >= 0);
  sch_trace_t *restored = NULL;
  ET_OK(sch_trace_with_decision(&restored, b, changed, &a->decisions[changed]));
  char *ja = et_json(a), *jr = et_json(restored);
  assert_string_equal(ja, jr);
  mlc_free(ja);
  mlc_free(jr);
  sch_trace_free(restored);
  return changed;
}

/* t replays on f and computes what f computes. */
static void assert_valid(const tir_func_t *f, const sch_trace_t *t, bool check_outputs) {
  sch_t *sch = et_replay(f, t);
  if (check_outputs) st_assert_same_outputs(f, sch_func(sch), 11, 1e-5);
  sch_free(sch);
}

static int mutate(const ms_mutator_t *m, const ms_ctx_t *ctx, const sch_trace_t *t, uint64_t seed,
                  sch_trace_t **out) {
  mlc_rng_t rng;
  mlc_rng_seed(&rng, seed);
  return m->apply(m, ctx, t, &rng, out);
}

static int64_t product(const sch_arg_t *d) {
  int64_t p = 1;
  for (int i = 0; i < d->u.list.n; i++) p *= d->u.list.items[i].u.i;
  return p;
}

/* ------------------------------------------------------------------------ */
/* The table                                                                 */
/* ------------------------------------------------------------------------ */

static void test_cpu_defaults_and_lookup(void **state) {
  int n = 0;
  const ms_mutator_prob_t *m = ms_mutators_cpu_default(NULL, &n);
  assert_int_equal(n, 4);
  const char *names[] = {"MutateTileSize", "MutateComputeLocation", "MutateUnroll", "MutateParallel"};
  const double probs[] = {0.9, 0.05, 0.03, 0.02};
  double total = 0;
  for (int i = 0; i < n; i++) {
    assert_string_equal(m[i].mutator->name, names[i]);
    assert_true(m[i].prob == probs[i]);
    assert_ptr_equal(ms_mutator_find(names[i]), m[i].mutator);
    total += m[i].prob;
  }
  assert_true(total > 0.999999 && total < 1.000001);
  assert_non_null(ms_mutator_find("MutateThreadBinding")); /* the GPU one, by name */
  assert_null(ms_mutator_find("MutateNothing"));
  assert_null(ms_mutator_find(NULL));
}

/* ------------------------------------------------------------------------ */
/* MutateTileSize                                                            */
/* ------------------------------------------------------------------------ */

static void test_tile_size_moves_one_factor(void **state) {
  tir_func_t *f = et_gmm(64, 64, 64);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 4, 1);
  const ms_mutator_t *m = ms_mutator_find("MutateTileSize");
  bool hit[64] = {0};
  for (uint64_t seed = 1; seed <= 24; seed++) {
    sch_trace_t *t = et_gmm_sketch(f, 16, 64, seed), *out = NULL;
    ET_OK(mutate(m, &ctx, t, seed * 7, &out));
    int i = changed_decision(t, out);
    assert_string_equal(t->insts[i].kind->name, "SamplePerfectTile");
    const sch_arg_t *before = &t->decisions[i], *after = &out->decisions[i];
    assert_int_equal(product(before), product(after));
    int n = after->u.list.n;
    assert_true(after->u.list.items[n - 1].u.i <= 16 || after->u.list.items[n - 1].u.i <= before->u.list.items[n - 1].u.i);
    hit[i] = true;
    assert_valid(f, out, false);
    sch_trace_free(t);
    sch_trace_free(out);
  }
  int distinct = 0;
  for (int i = 0; i < 64; i++) distinct += hit[i];
  assert_true(distinct >= 2); /* the choice of instruction is random too */
  tir_func_free(f);
}

/* A 2-way tile of 8 with innermost limit 2 from [4, 2]: moving into the
 * innermost is never allowed past 2, so every mutation is [8, 1]. */
static void test_tile_size_respects_innermost_limit(void **state) {
  tir_func_t *f = et_gmm(8, 8, 8);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 1, 1);
  sch_t *sch = NULL;
  ET_OK(sch_create(&sch, f, 1, SCH_ERRORS_FAST));
  sch_rv_t c, tiles[2];
  const sch_rv_t *l;
  int n;
  ET_OK(sch_get_block(sch, &c, "C"));
  ET_OK(sch_get_loops(sch, &l, &n, c));
  const int64_t d[2] = {4, 2};
  et_tile(sch, l[0], 2, 2, d, tiles);
  sch_trace_t *t = sch_trace_copy(sch_get_trace(sch)), *out = NULL;
  sch_free(sch);
  for (uint64_t seed = 1; seed <= 16; seed++) {
    ET_OK(mutate(ms_mutator_find("MutateTileSize"), &ctx, t, seed, &out));
    int i = changed_decision(t, out);
    assert_int_equal(out->decisions[i].u.list.items[0].u.i, 8);
    assert_int_equal(out->decisions[i].u.list.items[1].u.i, 1);
    sch_trace_free(out);
  }
  sch_trace_free(t);
  tir_func_free(f);
}

static void test_tile_size_keeps_the_meaning(void **state) {
  tir_func_t *f = et_gmm(16, 16, 16);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, 1);
  sch_trace_t *t = et_gmm_sketch(f, 16, 32, 5), *out = NULL;
  ET_OK(mutate(ms_mutator_find("MutateTileSize"), &ctx, t, 3, &out));
  changed_decision(t, out);
  assert_valid(f, out, true);
  sch_trace_free(t);
  sch_trace_free(out);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* MutateUnroll                                                              */
/* ------------------------------------------------------------------------ */

static void test_unroll_redraws_the_unroll_step(void **state) {
  tir_func_t *f = et_gmm(32, 32, 32);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, 1);
  for (uint64_t seed = 1; seed <= 8; seed++) {
    sch_trace_t *t = et_gmm_sketch(f, 16, 32, seed), *out = NULL;
    ET_OK(mutate(ms_mutator_find("MutateUnroll"), &ctx, t, seed, &out));
    int i = changed_decision(t, out);
    assert_string_equal(t->insts[i].kind->name, "SampleCategorical");
    assert_true(out->decisions[i].u.i >= 0 && out->decisions[i].u.i < 4);
    assert_true(out->decisions[i].u.i != t->decisions[i].u.i);
    assert_valid(f, out, false);
    sch_trace_free(t);
    sch_trace_free(out);
  }
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* MutateParallel                                                            */
/* ------------------------------------------------------------------------ */

/* i = [4, 4, 2, 2] and j = [2, 4, 4, 2]: the outer spatial run is i0 j0 i1
 * j1 with prefix products 4, 8, 32, 128. With 4 cores the limit is 64; the
 * annotation says 64, which fuses all four loops' worth (plan [4]); the
 * other plans are those of 4, 8 and 32. */
static void test_parallel_picks_another_plan(void **state) {
  tir_func_t *f = et_gmm(64, 64, 64);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 4, 1);
  et_tiles_t tiles = {{4, 4, 2, 2}, {2, 4, 4, 2}, {8, 8}};
  sch_trace_t *t = et_gmm_sketch_tiles(f, 16, 64, 1, &tiles);
  bool seen[3] = {false};
  for (uint64_t seed = 1; seed <= 24; seed++) {
    sch_trace_t *out = NULL;
    ET_OK(mutate(ms_mutator_find("MutateParallel"), &ctx, t, seed, &out));
    assert_int_equal(out->n, t->n);
    int changed = -1;
    for (int i = 0; i < t->n; i++) {
      assert_true(arg_equal(&t->decisions[i], &out->decisions[i]));
      const char *key = strcmp(t->insts[i].kind->name, "Annotate") == 0 ? t->insts[i].attrs[0].u.s : "";
      if (strcmp(key, MS_ANN_PARALLEL) != 0) continue;
      changed = i;
    }
    assert_true(changed >= 0);
    int64_t v = out->insts[changed].inputs[1].u.i;
    assert_true(v == 4 || v == 8 || v == 32);
    seen[v == 4 ? 0 : v == 8 ? 1 : 2] = true;
    /* Nothing else changed: put the old value back and compare. */
    out->insts[changed].inputs[1] = sch_arg_int(64);
    char *a = et_json(t), *b = et_json(out);
    assert_string_equal(a, b);
    mlc_free(a);
    mlc_free(b);
    out->insts[changed].inputs[1] = sch_arg_int(v);
    assert_valid(f, out, false);
    sch_trace_free(out);
  }
  assert_true(seen[0] && seen[1] && seen[2]);
  sch_trace_free(t);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* MutateComputeLocation                                                     */
/* ------------------------------------------------------------------------ */

static void test_compute_location_moves_to_another_valid_location(void **state) {
  int64_t shape[3] = {16, 16, 16};
  tir_func_t *f = et_workload("D+B+R", shape, 3);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 2, 1);
  int distinct = 0;
  bool seen[8] = {false};
  for (uint64_t seed = 1; seed <= 12; seed++) {
    sch_trace_t *t = et_dbr_sketch(f, seed), *out = NULL;
    ET_OK(mutate(ms_mutator_find("MutateComputeLocation"), &ctx, t, seed, &out));
    int i = changed_decision(t, out);
    assert_string_equal(t->insts[i].kind->name, "SampleComputeLocation");
    int64_t d = out->decisions[i].u.i;
    assert_true(d >= -2 && d <= 2); /* inline, root, or one of relu's 3 loops */
    if (!seen[d + 2]) distinct++;
    seen[d + 2] = true;
    assert_valid(f, out, seed <= 3);
    sch_trace_free(t);
    sch_trace_free(out);
  }
  assert_true(distinct >= 3);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Nothing to change, determinism, postprocessing                            */
/* ------------------------------------------------------------------------ */

static void test_nothing_to_change_is_not_found(void **state) {
  int64_t shape[3] = {16, 16, 16};
  tir_func_t *gmm = et_gmm(16, 16, 16), *dbr = et_workload("D+B+R", shape, 3);
  ms_ctx_t cg, cd;
  et_ctx(&cg, gmm, 2, 1);
  et_ctx(&cd, dbr, 2, 1);
  sch_trace_t *tg = et_gmm_sketch(gmm, 16, 32, 1), *td = et_dbr_sketch(dbr, 1), *out = (sch_trace_t *)1;
  /* The GMM sketch samples no compute location; the D+B+R one has no
   * unroll or parallel annotation. */
  assert_int_equal(mutate(ms_mutator_find("MutateComputeLocation"), &cg, tg, 1, &out), MLC_ENOTFOUND);
  assert_null(out);
  assert_int_equal(mutate(ms_mutator_find("MutateUnroll"), &cd, td, 1, &out), MLC_ENOTFOUND);
  assert_int_equal(mutate(ms_mutator_find("MutateParallel"), &cd, td, 1, &out), MLC_ENOTFOUND);
  assert_non_null(strstr(mlc_error_last(), "MutateParallel"));
  /* A trace with no tile at all. */
  sch_trace_t empty = *td;
  empty.n = 2; /* the two GetBlocks */
  assert_int_equal(mutate(ms_mutator_find("MutateTileSize"), &cd, &empty, 1, &out), MLC_ENOTFOUND);
  assert_null(out);
  sch_trace_free(tg);
  sch_trace_free(td);
  tir_func_free(gmm);
  tir_func_free(dbr);
}

static void test_same_rng_same_mutation(void **state) {
  tir_func_t *f = et_gmm(64, 64, 64);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 4, 1);
  et_tiles_t tiles = {{4, 4, 2, 2}, {2, 4, 4, 2}, {8, 8}};
  sch_trace_t *t = et_gmm_sketch_tiles(f, 16, 64, 1, &tiles);
  const char *names[] = {"MutateTileSize", "MutateUnroll", "MutateParallel"};
  for (int k = 0; k < 3; k++) {
    sch_trace_t *a = NULL, *b = NULL;
    ET_OK(mutate(ms_mutator_find(names[k]), &ctx, t, 99, &a));
    ET_OK(mutate(ms_mutator_find(names[k]), &ctx, t, 99, &b));
    char *ja = et_json(a), *jb = et_json(b);
    assert_string_equal(ja, jb);
    mlc_free(ja);
    mlc_free(jb);
    sch_trace_free(a);
    sch_trace_free(b);
  }
  sch_trace_free(t);
  tir_func_free(f);
}

/* A full trace (design, EnterPostproc, postprocessing) mutates into a
 * design trace: the postprocessing part is dropped, as MetaSchedule's
 * remove_postproc. */
static void test_postprocessing_part_is_dropped(void **state) {
  tir_func_t *f = et_gmm(64, 64, 64);
  ms_ctx_t ctx;
  et_ctx(&ctx, f, 4, 1);
  et_tiles_t tiles = {{4, 4, 2, 2}, {2, 4, 4, 2}, {8, 8}};
  sch_trace_t *t = et_gmm_sketch_tiles(f, 16, 64, 1, &tiles);
  char *design = et_json(t);
  /* Append EnterPostproc to its JSON: [[insts...], [decisions...]]. */
  json_t *j;
  sch_trace_t *full = NULL, *part = NULL;
  j = mlc_json_loads(design, "sketch");
  assert_non_null(j);
  json_array_append_new(json_array_get(j, 0), json_pack("[s[][][]]", "EnterPostproc"));
  ET_OK(sch_trace_from_json(&full, j));
  json_decref(j);
  ET_OK(ms_trace_design_part(&part, full));
  char *jp = et_json(part);
  assert_string_equal(jp, design);
  for (int k = 0; k < 3; k++) {
    const char *names[] = {"MutateTileSize", "MutateUnroll", "MutateParallel"};
    sch_trace_t *out = NULL;
    ET_OK(mutate(ms_mutator_find(names[k]), &ctx, full, 5, &out));
    assert_int_equal(out->n, full->n - 1);
    for (int i = 0; i < out->n; i++) assert_string_not_equal(out->insts[i].kind->name, "EnterPostproc");
    sch_trace_free(out);
  }
  mlc_free(jp);
  mlc_free(design);
  sch_trace_free(part);
  sch_trace_free(full);
  sch_trace_free(t);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cpu_defaults_and_lookup),
      cmocka_unit_test(test_tile_size_moves_one_factor),
      cmocka_unit_test(test_tile_size_respects_innermost_limit),
      cmocka_unit_test(test_tile_size_keeps_the_meaning),
      cmocka_unit_test(test_unroll_redraws_the_unroll_step),
      cmocka_unit_test(test_parallel_picks_another_plan),
      cmocka_unit_test(test_compute_location_moves_to_another_valid_location),
      cmocka_unit_test(test_nothing_to_change_is_not_found),
      cmocka_unit_test(test_same_rng_same_mutation),
      cmocka_unit_test(test_postprocessing_part_is_dropped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
