/*
 * test_lower_random.c - lowering keeps the results of random schedules.
 *
 * Schedules are built by random choices among the primitives (tiling,
 * reorder, fuse, parallel / vectorize / unroll / auto-unroll annotations and
 * MetaSchedule's unroll decision,
 * compute_at and inlining, cache_read / cache_write in every scope,
 * decompose_reduction, rfactor, storage_align) on small built-in workloads;
 * choices that fail are skipped. Each scheduled program is lowered and the
 * interpreter must give the scheduled program's outputs. The test's RNG is
 * seeded, so a failure reproduces; the message names the workload and the
 * round (MLC_LOWER_VERBOSE=1 prints the trace and both programs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "test_lower_helpers.h"

#define ROUNDS 10 /* random schedules per workload */
#define STEPS 10  /* choices per schedule */
#define MAX_BLOCKS 16

typedef struct {
  const char *name;
  int64_t shape[12];
  int nshape;
} workload_t;

static const workload_t WORKLOADS[] = {
    {"GMM", {16, 16, 16}, 3},
    {"C2D", {1, 5, 5, 4, 4, 3, 3, 1, 1}, 9},
    {"SFM", {8, 16}, 2},
    {"LN", {4, 16}, 2},
};

typedef struct {
  sch_t *sch;
  mlc_rng_t *rng;
} gen_t;

static int pick(gen_t *g, int n) { return (int)mlc_rng_below(g->rng, (uint64_t)n); }

typedef struct {
  tir_visitor_t base;
  int n;
  const char *names[MAX_BLOCKS];
} names_t;

static bool collect_name(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  names_t *nm = (names_t *)v;
  if (strcmp(b->name, "root") != 0 && nm->n < MAX_BLOCKS) nm->names[nm->n++] = b->name;
  return true;
}

/* A random block of the current program; SCH_RV_NONE when there is none. */
static sch_rv_t any_block(gen_t *g) {
  names_t nm = {{.block = collect_name}, 0, {0}};
  tir_visit_stmt(&nm.base, sch_func(g->sch)->body);
  sch_rv_t b;
  if (nm.n == 0 || sch_get_block(g->sch, &b, nm.names[pick(g, nm.n)]) != MLC_OK) return SCH_RV_NONE;
  return b;
}

static int any_loops(gen_t *g, sch_rv_t *block, const sch_rv_t **loops) {
  int n = 0;
  *block = any_block(g);
  if (*block == SCH_RV_NONE || sch_get_loops(g->sch, loops, &n, *block) != MLC_OK) return 0;
  return n;
}

static void do_tile(gen_t *g) {
  sch_rv_t b;
  const sch_rv_t *loops, *tiles, *out;
  int n = any_loops(g, &b, &loops);
  if (!n) return;
  sch_rv_t loop = loops[pick(g, n)];
  int parts = 2 + pick(g, 2);
  if (sch_sample_perfect_tile(g->sch, &tiles, loop, parts, 8, NULL) != MLC_OK) return;
  sch_arg_t f[3];
  for (int i = 0; i < parts; i++) f[i] = sch_arg_rv(tiles[i]);
  sch_split(g->sch, &out, loop, f, parts, true);
}

static void do_split_uneven(gen_t *g) {
  sch_rv_t b;
  const sch_rv_t *loops, *out;
  int n = any_loops(g, &b, &loops);
  if (!n) return;
  sch_arg_t f[2] = {sch_arg_none(), sch_arg_int(3 + pick(g, 3))}; /* predicates */
  sch_split(g->sch, &out, loops[pick(g, n)], f, 2, true);
}

static void do_reorder(gen_t *g) {
  sch_rv_t b;
  const sch_rv_t *loops;
  int n = any_loops(g, &b, &loops);
  if (n < 2) return;
  int i = pick(g, n - 1), j = i + 1 + pick(g, n - i - 1);
  sch_rv_t two[2] = {loops[j], loops[i]};
  sch_reorder(g->sch, two, 2);
}

static void do_fuse(gen_t *g) {
  sch_rv_t b, out;
  const sch_rv_t *loops;
  int n = any_loops(g, &b, &loops);
  if (n < 2) return;
  int i = pick(g, n - 1);
  sch_rv_t two[2] = {loops[i], loops[i + 1]};
  sch_fuse(g->sch, &out, two, 2, true);
}

static void do_annotate_loop(gen_t *g) {
  sch_rv_t b;
  const sch_rv_t *loops;
  int n = any_loops(g, &b, &loops);
  if (!n) return;
  /* The innermost loops most often, as schedules do. */
  sch_rv_t loop = loops[pick(g, 2) ? n - 1 : pick(g, n)];
  switch (pick(g, 5)) {
  case 0: sch_parallel(g->sch, loop); break;
  case 1:
  case 2: sch_vectorize(g->sch, loop); break;
  case 3: sch_unroll(g->sch, loop); break;
  default:
    sch_annotate(g->sch, loop, "pragma_auto_unroll_max_step", sch_arg_int(16 << pick(g, 3)));
    sch_annotate(g->sch, loop, "pragma_unroll_explicit", sch_arg_int(pick(g, 2)));
  }
}

/* MetaSchedule's unroll decision on a block (the root, usually). */
static void do_unroll_decision(gen_t *g) {
  sch_rv_t b = any_block(g);
  static const char *const keys[] = {"meta_schedule.unroll_explicit", "meta_schedule.unroll_implicit"};
  if (b != SCH_RV_NONE) sch_annotate(g->sch, b, keys[pick(g, 2)], sch_arg_int(16 << pick(g, 3)));
}

static void do_move(gen_t *g) {
  sch_rv_t b = any_block(g), other;
  const sch_rv_t *loops;
  if (b == SCH_RV_NONE) return;
  int n = any_loops(g, &other, &loops);
  switch (pick(g, 4)) {
  case 0: sch_compute_inline(g->sch, b); break;
  case 1:
    if (n) sch_reverse_compute_at(g->sch, b, loops[pick(g, n)], true, -1);
    break;
  default:
    if (n) sch_compute_at(g->sch, b, loops[pick(g, n)], true, -1);
    break;
  }
}

static void do_storage(gen_t *g) {
  sch_rv_t b = any_block(g), out;
  if (b == SCH_RV_NONE) return;
  static const char *const scopes[] = {"global", "local", "shared"};
  switch (pick(g, 3)) {
  case 0: sch_cache_read(g->sch, &out, b, pick(g, 2), scopes[pick(g, 3)], NULL, 0); break;
  case 1: sch_cache_write(g->sch, &out, b, 0, scopes[pick(g, 3)], NULL, 0); break;
  default: sch_storage_align(g->sch, b, 0, 0, 8, 1 + pick(g, 3)); break;
  }
}

static void do_reduction(gen_t *g) {
  sch_rv_t b, out;
  const sch_rv_t *loops;
  int n = any_loops(g, &b, &loops);
  if (!n) return;
  if (pick(g, 2)) sch_decompose_reduction(g->sch, &out, b, loops[pick(g, n)]);
  else sch_rfactor(g->sch, &out, loops[pick(g, n)], 0);
}

typedef void (*action_t)(gen_t *g);

static const action_t ACTIONS[] = {
    do_tile, do_tile, do_split_uneven, do_reorder, do_fuse, do_annotate_loop, do_annotate_loop,
    do_annotate_loop, do_unroll_decision, do_move, do_move, do_storage, do_reduction,
};

static tir_func_t *build(const workload_t *w) {
  tir_func_t *f = NULL;
  int rc = tir_workload_build(&f, w->name, w->shape, w->nshape, tir_dtype(0, 0, 0), tir_dtype(0, 0, 0));
  if (rc != MLC_OK) fprintf(stderr, "%s: %s\n", w->name, mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  return f;
}

static void show(const char *label, const sch_t *sch, const tir_func_t *lowered) {
  char *py = sch_trace_to_python(sch_get_trace(sch)), *a = tir_print_func(sch_func(sch)), *b = tir_print_func(lowered);
  fprintf(stderr, "---- %s ----\n%s%s%s", label, py, a, b);
  mlc_free(py);
  mlc_free(a);
  mlc_free(b);
}

/* Returns how many instructions the schedules held, and counts vector
 * stores seen in the lowered programs. */
static int random_schedules_lower_faithfully(const workload_t *w, uint64_t seed, int *skipped) {
  tir_func_t *f = build(w);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, seed);
  mlc_target_t t = lt_target();
  int ninsts = 0;
  for (int round = 0; round < ROUNDS; round++) {
    char label[64];
    snprintf(label, sizeof label, "%s round %d", w->name, round);
    sch_t *sch;
    assert_int_equal(sch_create(&sch, f, mlc_rng_next(&rng), SCH_ERRORS_FAST), MLC_OK);
    gen_t g = {sch, &rng};
    for (int step = 0; step < STEPS; step++) ACTIONS[pick(&g, (int)(sizeof ACTIONS / sizeof *ACTIONS))](&g);
    ninsts += sch_get_trace(sch)->n;
    char why[512];
    if (!lt_same_outputs(f, sch_func(sch), (uint64_t)round, 1e-5, why, sizeof why)) {
      /* Not lowering's business: the schedule itself broke the program. */
      char *py = sch_trace_to_python(sch_get_trace(sch));
      fprintf(stderr, "%s: the scheduled program is wrong (%s):\n%s", label, why, py);
      mlc_free(py);
      (*skipped)++;
      sch_free(sch);
      continue;
    }
    tir_func_t *out = NULL;
    int rc = mlc_lower(&out, sch_func(sch), &t, NULL);
    if (rc != MLC_OK) fprintf(stderr, "%s: %s\n", label, mlc_error_last());
    assert_int_equal(rc, MLC_OK);
    if (getenv("MLC_LOWER_VERBOSE")) show(label, sch, out);
    if (!lt_same_outputs(f, out, (uint64_t)round, 1e-5, why, sizeof why)) {
      show(label, sch, out);
      fprintf(stderr, "%s: lowering changed the results: %s\n", label, why);
      fail();
    }
    tir_func_free(out);
    sch_free(sch);
  }
  tir_func_free(f);
  return ninsts;
}

static void gmm_random_schedules_lower_faithfully(void **state) {
  int skipped = 0;
  assert_true(random_schedules_lower_faithfully(&WORKLOADS[0], 101, &skipped) > ROUNDS * 5);
  assert_true(skipped <= ROUNDS / 4);
}

static void c2d_random_schedules_lower_faithfully(void **state) {
  int skipped = 0;
  assert_true(random_schedules_lower_faithfully(&WORKLOADS[1], 202, &skipped) > ROUNDS * 5);
  assert_true(skipped <= ROUNDS / 4);
}

static void sfm_random_schedules_lower_faithfully(void **state) {
  int skipped = 0;
  assert_true(random_schedules_lower_faithfully(&WORKLOADS[2], 303, &skipped) > ROUNDS * 5);
  assert_true(skipped <= ROUNDS / 4);
}

static void ln_random_schedules_lower_faithfully(void **state) {
  int skipped = 0;
  assert_true(random_schedules_lower_faithfully(&WORKLOADS[3], 404, &skipped) > ROUNDS * 5);
  assert_true(skipped <= ROUNDS / 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gmm_random_schedules_lower_faithfully),
      cmocka_unit_test(c2d_random_schedules_lower_faithfully),
      cmocka_unit_test(sfm_random_schedules_lower_faithfully),
      cmocka_unit_test(ln_random_schedules_lower_faithfully),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
