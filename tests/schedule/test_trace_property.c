/*
 * test_trace_property.c - the trace property: a schedule built by any
 * sequence of sampling and primitives replays from its JSON onto a fresh
 * schedule (another seed) to a structurally equal program with the same
 * workload key, the Python form parses back to the same JSON, and the
 * scheduled program computes what the unscheduled workload computes.
 *
 * Schedules are built by random choices among the primitives, on small
 * built-in workloads (GMM, C2D, SFM); choices that fail are part of the
 * test too (a failed primitive must leave nothing behind that breaks the
 * replay). The test's own RNG is seeded, so a failure reproduces: the
 * message names the workload and the round.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "sched_testing.h"

/* Random schedules per workload: ROUNDS in ctest; MLC_PROPERTY_SCHEDULES=N
 * runs N (a long hunt outside ctest). */
#define ROUNDS 48
#define STEPS 10   /* choices per schedule */
#define MAX_BLOCKS 16

typedef struct {
  const char *name;
  int64_t shape[12];
  int nshape;
} workload_t;

static const workload_t WORKLOADS[] = {
    {"GMM", {16, 16, 16}, 3},
    {"C2D", {1, 6, 6, 4, 4, 3, 3, 1, 1}, 9},
    {"SFM", {8, 16}, 2},
};

static tir_func_t *build(const workload_t *w) {
  tir_func_t *f = NULL;
  int rc = tir_workload_build(&f, w->name, w->shape, w->nshape, tir_dtype(0, 0, 0), tir_dtype(0, 0, 0));
  if (rc != MLC_OK) fprintf(stderr, "%s: %s\n", w->name, mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  return f;
}

/* ------------------------------------------------------------------------ */
/* Random choices                                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
  sch_t *sch;
  mlc_rng_t *rng;
} gen_t;

static int pick(gen_t *g, int n) { return (int)mlc_rng_below(g->rng, (uint64_t)n); }

static bool collect_name(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  const char **names = v->payload;
  int n = 0;
  while (n < MAX_BLOCKS && names[n]) n++;
  if (n < MAX_BLOCKS - 1 && strcmp(b->name, "root") != 0) names[n] = b->name;
  return true;
}

/* A random block of the current program, by get_block; SCH_RV_NONE when
 * there is none. */
static sch_rv_t any_block(gen_t *g) {
  const char *names[MAX_BLOCKS] = {0};
  tir_visitor_t v = {0};
  v.block = collect_name;
  v.payload = names;
  tir_visit_stmt(&v, sch_func(g->sch)->body);
  int n = 0;
  while (n < MAX_BLOCKS && names[n]) n++;
  if (n == 0) return SCH_RV_NONE;
  sch_rv_t b;
  return sch_get_block(g->sch, &b, names[pick(g, n)]) == MLC_OK ? b : SCH_RV_NONE;
}

/* The loops of a random block; 0 when none. */
static int any_loops(gen_t *g, sch_rv_t *block, const sch_rv_t **loops) {
  *block = any_block(g);
  int n = 0;
  if (*block == SCH_RV_NONE || sch_get_loops(g->sch, loops, &n, *block) != MLC_OK) return 0;
  return n;
}

static void do_tile(gen_t *g) {
  sch_rv_t b;
  const sch_rv_t *loops, *tiles, *out;
  int n = any_loops(g, &b, &loops);
  if (!n) return;
  int parts = 2 + pick(g, 3);
  static const int maxes[] = {4, 16, 64};
  sch_rv_t loop = loops[pick(g, n)];
  if (sch_sample_perfect_tile(g->sch, &tiles, loop, parts, maxes[pick(g, 3)], NULL) != MLC_OK) return;
  sch_arg_t f[4];
  for (int i = 0; i < parts; i++) f[i] = sch_arg_rv(tiles[i]);
  sch_split(g->sch, &out, loop, f, parts, pick(g, 2));
}

static void do_split_literal(gen_t *g) {
  sch_rv_t b;
  const sch_rv_t *loops, *out;
  int n = any_loops(g, &b, &loops);
  if (!n) return;
  sch_arg_t f[2] = {sch_arg_none(), sch_arg_int(2 + pick(g, 4))};
  if (pick(g, 2)) {
    f[0] = f[1];
    f[1] = sch_arg_none();
  }
  sch_split(g->sch, &out, loops[pick(g, n)], f, 2, true);
}

static void do_reorder(gen_t *g) {
  sch_rv_t b;
  const sch_rv_t *loops;
  int n = any_loops(g, &b, &loops);
  if (n < 2) return;
  sch_rv_t order[64];
  int m = n < 64 ? n : 64;
  for (int i = 0; i < m; i++) order[i] = loops[i];
  for (int i = m - 1; i > 0; i--) {
    int j = pick(g, i + 1);
    sch_rv_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  int k = 2 + pick(g, m - 1);
  sch_reorder(g->sch, order, k);
}

static void do_fuse(gen_t *g) {
  sch_rv_t b, out;
  const sch_rv_t *loops;
  int n = any_loops(g, &b, &loops);
  if (n < 2) return;
  int i = pick(g, n - 1);
  sch_rv_t two[2] = {loops[i], loops[i + 1]};
  sch_fuse(g->sch, &out, two, 2, pick(g, 2));
}

static void do_annotate_loop(gen_t *g) {
  sch_rv_t b;
  const sch_rv_t *loops;
  int n = any_loops(g, &b, &loops);
  if (!n) return;
  sch_rv_t loop = loops[pick(g, n)];
  switch (pick(g, 4)) {
  case 0: sch_parallel(g->sch, loop); break;
  case 1: sch_vectorize(g->sch, loop); break;
  case 2: sch_unroll(g->sch, loop); break;
  default: sch_annotate(g->sch, loop, "pragma_auto_unroll_max_step", sch_arg_int(16)); break;
  }
}

static void do_unroll_explicit(gen_t *g) {
  sch_rv_t b = any_block(g), v;
  if (b == SCH_RV_NONE) return;
  static const int64_t cand[] = {0, 16, 64, 512};
  static const double probs[] = {0.25, 0.25, 0.25, 0.25};
  if (sch_sample_categorical(g->sch, &v, cand, probs, 4, NULL) == MLC_OK)
    sch_annotate(g->sch, b, "meta_schedule.unroll_explicit", sch_arg_rv(v));
}

/* RandomComputeLocation: sample a location and go there (the root and
 * inline locations included, as TVM's rule does). */
static void do_compute_location(gen_t *g) {
  sch_rv_t b = any_block(g), loc;
  if (b == SCH_RV_NONE || sch_sample_compute_location(g->sch, &loc, b, NULL) != MLC_OK) return;
  sch_compute_at(g->sch, b, loc, true, -1);
}

static void do_move(gen_t *g) {
  sch_rv_t b = any_block(g), other;
  const sch_rv_t *loops;
  if (b == SCH_RV_NONE) return;
  int n = any_loops(g, &other, &loops);
  switch (pick(g, 4)) {
  case 0: sch_compute_inline(g->sch, b); break;
  case 1: sch_reverse_compute_inline(g->sch, b); break;
  case 2:
    if (n) sch_compute_at(g->sch, b, loops[pick(g, n)], pick(g, 2), -1);
    break;
  default:
    if (n) sch_reverse_compute_at(g->sch, b, loops[pick(g, n)], pick(g, 2), -1);
    break;
  }
}

static void do_storage(gen_t *g) {
  sch_rv_t b = any_block(g), out;
  if (b == SCH_RV_NONE) return;
  static const char *scopes[] = {"global", "local", "shared"};
  if (pick(g, 2)) sch_cache_read(g->sch, &out, b, pick(g, 2), scopes[pick(g, 3)], NULL, 0);
  else sch_cache_write(g->sch, &out, b, 0, scopes[pick(g, 3)], NULL, 0);
}

static void do_reduction(gen_t *g) {
  sch_rv_t b, out;
  const sch_rv_t *loops;
  int n = any_loops(g, &b, &loops);
  if (!n) return;
  switch (pick(g, 3)) {
  case 0: sch_decompose_reduction(g->sch, &out, b, loops[pick(g, n)]); break;
  case 1: sch_rfactor(g->sch, &out, loops[pick(g, n)], 0); break;
  default: sch_add_unit_loop(g->sch, &out, pick(g, 2) ? b : loops[pick(g, n)]); break;
  }
}

typedef void (*action_t)(gen_t *g);

/* Tiling weighs most, as in the search's design spaces. */
static const action_t ACTIONS[] = {
    do_tile,       do_tile,          do_tile,      do_split_literal, do_reorder, do_reorder,  do_fuse,
    do_annotate_loop, do_unroll_explicit, do_compute_location, do_move, do_storage, do_reduction,
};

/* ------------------------------------------------------------------------ */
/* The property                                                              */
/* ------------------------------------------------------------------------ */

static char *trace_json(const sch_trace_t *t) {
  json_t *j;
  assert_int_equal(sch_trace_to_json(&j, t), MLC_OK);
  char *s = json_dumps(j, JSON_REAL_PRECISION(17));
  json_decref(j);
  assert_non_null(s);
  return s;
}

/* Replays `json` on a fresh schedule of f and compares with `built`. */
static void check_replay(const char *label, const tir_func_t *f, const sch_t *built, const char *json,
                         uint64_t seed) {
  json_t *j = mlc_json_loads(json, label);
  assert_non_null(j);
  sch_trace_t *t;
  int rc = sch_trace_from_json(&t, j);
  json_decref(j);
  if (rc != MLC_OK) fprintf(stderr, "%s: %s\n%s\n", label, mlc_error_last(), json);
  assert_int_equal(rc, MLC_OK);
  sch_t *fresh;
  assert_int_equal(sch_create(&fresh, f, seed, SCH_ERRORS_FAST), MLC_OK);
  rc = sch_trace_apply(fresh, t, true);
  if (rc != MLC_OK) fprintf(stderr, "%s: replay: %s\n%s\n", label, sch_error(fresh), json);
  assert_int_equal(rc, MLC_OK);
  char why[256] = "";
  bool equal = tir_func_equal(sch_func(built), sch_func(fresh), why, sizeof why);
  if (!equal) {
    char *a = tir_print_func(sch_func(built)), *b = tir_print_func(sch_func(fresh));
    fprintf(stderr, "%s: replay differs (%s)\n%s\n---- built ----\n%s---- replayed ----\n%s", label, why, json, a, b);
    mlc_free(a);
    mlc_free(b);
  }
  assert_true(equal);
  assert_true(tir_func_key(sch_func(built)) == tir_func_key(sch_func(fresh)));
  sch_free(fresh);
  sch_trace_free(t);
}

/* The Python form parses back to the same trace. */
static void check_python(const char *label, const sch_trace_t *t, const char *json) {
  char *py = sch_trace_to_python(t);
  assert_non_null(py);
  sch_trace_t *back;
  int rc = sch_trace_from_python(&back, py, strlen(py), label);
  if (rc != MLC_OK) fprintf(stderr, "%s: %s\n%s", label, mlc_error_last(), py);
  assert_int_equal(rc, MLC_OK);
  char *json2 = trace_json(back);
  if (strcmp(json, json2) != 0) fprintf(stderr, "%s: python round trip differs\n%s\n%s\n%s", label, json, json2, py);
  assert_string_equal(json, json2);
  free(json2);
  mlc_free(py);
  sch_trace_free(back);
}

static int rounds(void) {
  const char *env = getenv("MLC_PROPERTY_SCHEDULES");
  long n = env ? strtol(env, NULL, 10) : 0;
  return n > 0 && n < 100000000 ? (int)n : ROUNDS;
}

static void random_schedules_replay_exactly(const workload_t *w, uint64_t test_seed, int *ninsts) {
  tir_func_t *f = build(w);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, test_seed);
  int nrounds = rounds();
  for (int round = 0; round < nrounds; round++) {
    char label[64];
    snprintf(label, sizeof label, "%s round %d", w->name, round);
    sch_t *sch;
    assert_int_equal(sch_create(&sch, f, mlc_rng_next(&rng), SCH_ERRORS_FAST), MLC_OK);
    gen_t g = {sch, &rng};
    for (int step = 0; step < STEPS; step++) ACTIONS[pick(&g, (int)(sizeof ACTIONS / sizeof *ACTIONS))](&g);
    const sch_trace_t *t = sch_get_trace(sch);
    *ninsts += t->n;
    char *json = trace_json(t);
    check_replay(label, f, sch, json, mlc_rng_next(&rng));
    check_python(label, t, json);
    /* The interpreter's check fails by itself; say first what is checked. */
    if (getenv("MLC_TRACE_VERBOSE")) {
      char *py = sch_trace_to_python(t), *prog = tir_print_func(sch_func(sch));
      fprintf(stderr, "---- %s ----\n%s%s", label, py, prog);
      mlc_free(py);
      mlc_free(prog);
    }
    st_assert_same_outputs(f, sch_func(sch), (uint64_t)round, 1e-5);
    free(json);
    sch_free(sch);
  }
  tir_func_free(f);
}

static void gmm_random_schedules_replay_exactly(void **state) {
  int n = 0;
  random_schedules_replay_exactly(&WORKLOADS[0], 11, &n);
  assert_true(n > rounds() * 5); /* the schedules are not empty */
}

static void c2d_random_schedules_replay_exactly(void **state) {
  int n = 0;
  random_schedules_replay_exactly(&WORKLOADS[1], 22, &n);
  assert_true(n > rounds() * 5);
}

static void sfm_random_schedules_replay_exactly(void **state) {
  int n = 0;
  random_schedules_replay_exactly(&WORKLOADS[2], 33, &n);
  assert_true(n > rounds() * 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gmm_random_schedules_replay_exactly),
      cmocka_unit_test(c2d_random_schedules_replay_exactly),
      cmocka_unit_test(sfm_random_schedules_replay_exactly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
