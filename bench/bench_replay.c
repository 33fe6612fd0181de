/*
 * bench_replay.c - how fast a trace replays: the search (step 5) turns
 * every candidate into a program by replaying its trace on a fresh
 * schedule, so replays per second bound candidates per second. The target
 * is 10,000 replays/s on one core for GMM's multi-level tiling.
 *
 * For each workload (GMM 1024^3, C2D at its default shape) the program
 * records a ~30-instruction MetaSchedule-style trace (SSRSRS multi-level
 * tiling with sampled tile sizes, a write cache computed at the tile, an
 * explicit-unroll annotation from sample_categorical, a fused parallel outer
 * loop, vectorized and unrolled inner loops, the reduction decomposed),
 * round-trips it through TVM's JSON, then replays it with its decisions on
 * fresh schedules (create + apply + free, as the search does) for a fixed
 * CPU time and prints replays per CPU second. The first replay is checked to give
 * the recorded program exactly.
 *
 * With --breakdown it also times every prefix of the trace and prints what
 * each instruction adds (where a replay's time goes, by primitive).
 *
 *   bench_replay [--seconds S] [--workload GMM|C2D] [--breakdown]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule/schedule.h"

#define CHECK(call)                                                               \
  do {                                                                            \
    if ((call) != MLC_OK) {                                                       \
      fprintf(stderr, "bench_replay: %s failed: %s\n", #call, mlc_error_last()); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

/* CPU time of this thread: replays per CPU second is the one-core figure,
 * and it holds up on a machine other work shares (wall time would not). */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* The traces                                                                */
/* ------------------------------------------------------------------------ */

/* Samples a perfect tile of `loop` into n parts and splits by it. */
static const sch_rv_t *tile(sch_t *sch, sch_rv_t loop, int n) {
  const sch_rv_t *factors, *loops;
  CHECK(sch_sample_perfect_tile(sch, &factors, loop, n, 64, NULL));
  sch_arg_t f[8];
  for (int i = 0; i < n; i++) f[i] = sch_arg_rv(factors[i]);
  CHECK(sch_split(sch, &loops, loop, f, n, true));
  return loops;
}

/* SSRSRS over a block whose loops are `kinds` ('S' spatial, 'R' reduce):
 * spatial loops into 4 tiles, reduction loops into 2, ordered
 * S0 S1 R0 S2 R1 S3, written to `order`. Returns the spatial loop count. */
static int tile_ssrsrs(sch_t *sch, sch_rv_t block, const char *kinds, sch_rv_t *order) {
  const sch_rv_t *loops;
  int n;
  CHECK(sch_get_loops(sch, &loops, &n, block));
  sch_rv_t copy[16];
  memcpy(copy, loops, sizeof(sch_rv_t) * (size_t)n);
  sch_rv_t s[4][8], r[2][8];
  int ns = 0, nr = 0;
  for (int i = 0; i < n; i++) {
    if (kinds[i] == 'S') {
      const sch_rv_t *t = tile(sch, copy[i], 4);
      for (int l = 0; l < 4; l++) s[l][ns] = t[l];
      ns++;
    } else {
      const sch_rv_t *t = tile(sch, copy[i], 2);
      for (int l = 0; l < 2; l++) r[l][nr] = t[l];
      nr++;
    }
  }
  int k = 0;
  for (int i = 0; i < ns; i++) order[k++] = s[0][i];
  for (int i = 0; i < ns; i++) order[k++] = s[1][i];
  for (int i = 0; i < nr; i++) order[k++] = r[0][i];
  for (int i = 0; i < ns; i++) order[k++] = s[2][i];
  for (int i = 0; i < nr; i++) order[k++] = r[1][i];
  for (int i = 0; i < ns; i++) order[k++] = s[3][i];
  CHECK(sch_reorder(sch, order, k));
  return ns;
}

/* The CPU design-space steps after tiling (ParallelizeVectorizeUnroll's
 * annotations, a write cache at the second spatial level, the unroll
 * choice, parallel fused outer tile, vectorized innermost loops) and the
 * postprocessing a search applies before measuring (decomposed reduction,
 * tiling annotation dropped). `order` is S0 S1 R0 S2 R1 S3 (ns spatial and
 * nr reduction loops per level). */
static void finish_schedule(sch_t *sch, sch_rv_t block, const char *name, const sch_rv_t *order, int ns, int nr) {
  sch_rv_t cache, fused, v, init, inner, b;
  const sch_rv_t *loops;
  int n;
  CHECK(sch_annotate(sch, block, "meta_schedule.parallel", sch_arg_int(512)));
  CHECK(sch_annotate(sch, block, "meta_schedule.vectorize", sch_arg_int(64)));
  CHECK(sch_cache_write(sch, &cache, block, 0, "global", NULL, 0));
  CHECK(sch_reverse_compute_at(sch, cache, order[2 * ns - 1], true, -1));
  static const int64_t cand[] = {0, 16, 64, 512};
  static const double probs[] = {0.25, 0.25, 0.25, 0.25};
  CHECK(sch_sample_categorical(sch, &v, cand, probs, 4, NULL));
  CHECK(sch_annotate(sch, block, "meta_schedule.unroll_explicit", sch_arg_rv(v)));
  CHECK(sch_fuse(sch, &fused, order, ns, true));
  CHECK(sch_parallel(sch, fused));
  CHECK(sch_vectorize(sch, order[4 * ns + 2 * nr - 1]));
  CHECK(sch_unroll(sch, order[3 * ns + 2 * nr - 1]));
  CHECK(sch_get_loops(sch, &loops, &n, cache));
  sch_rv_t last2[2] = {loops[n - 2], loops[n - 1]};
  CHECK(sch_fuse(sch, &inner, last2, 2, true));
  CHECK(sch_vectorize(sch, inner));
  /* Postprocessing. */
  CHECK(sch_get_block(sch, &b, name));
  CHECK(sch_unannotate(sch, b, "meta_schedule.tiling_structure"));
  CHECK(sch_get_loops(sch, &loops, &n, b));
  CHECK(sch_decompose_reduction(sch, &init, b, order[2 * ns]));
}

static void gmm_trace(sch_t *sch) {
  sch_rv_t b, order[16];
  CHECK(sch_get_block(sch, &b, "C"));
  CHECK(sch_annotate(sch, b, "meta_schedule.tiling_structure", sch_arg_str("SSRSRS")));
  int ns = tile_ssrsrs(sch, b, "SSR", order);
  finish_schedule(sch, b, "C", order, ns, 1);
}

static void c2d_trace(sch_t *sch) {
  sch_rv_t b, pad, order[32];
  CHECK(sch_get_block(sch, &pad, "PadInput"));
  CHECK(sch_compute_inline(sch, pad));
  CHECK(sch_get_block(sch, &b, "conv2d_nhwc"));
  CHECK(sch_annotate(sch, b, "meta_schedule.tiling_structure", sch_arg_str("SSRSRS")));
  /* n, h, w, co spatial; rh, rw, rc reduction. */
  int ns = tile_ssrsrs(sch, b, "SSSSRRR", order);
  finish_schedule(sch, b, "conv2d_nhwc", order, ns, 3);
}

/* ------------------------------------------------------------------------ */
/* Timing                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *name;
  int64_t shape[12];
  int nshape;
  void (*build)(sch_t *sch);
} workload_t;

static const workload_t WORKLOADS[] = {
    {"GMM", {1024, 1024, 1024}, 3, gmm_trace},
    {"C2D", {0}, 0, c2d_trace},
};

/* The recorded trace, through its JSON (as the database hands it over). */
static sch_trace_t *recorded_trace(const workload_t *w, const tir_func_t *f, char **program) {
  sch_t *sch;
  CHECK(sch_create(&sch, f, 2024, SCH_ERRORS_FAST));
  w->build(sch);
  json_t *json;
  CHECK(sch_trace_to_json(&json, sch_get_trace(sch)));
  char *text = json_dumps(json, 0);
  json_decref(json);
  json = mlc_json_loads(text, "trace");
  free(text);
  sch_trace_t *t;
  CHECK(sch_trace_from_json(&t, json));
  json_decref(json);
  *program = tir_print_func(sch_func(sch));
  sch_free(sch);
  return t;
}

/* Replays per second of t on fresh schedules of f, over `seconds`. */
static double replay_rate(const tir_func_t *f, const sch_trace_t *t, double seconds, long *reps_out) {
  long reps = 0;
  double start = now(), elapsed = 0;
  while (elapsed < seconds) {
    for (int i = 0; i < 50; i++) {
      sch_t *sch;
      CHECK(sch_create(&sch, f, (uint64_t)reps, SCH_ERRORS_FAST));
      CHECK(sch_trace_apply(sch, t, true));
      sch_free(sch);
      reps++;
    }
    elapsed = now() - start;
  }
  if (reps_out) *reps_out = reps;
  return (double)reps / elapsed;
}

/* The best of a few short measurements (the least disturbed by others). */
static double best_us(const tir_func_t *f, const sch_trace_t *t) {
  double best = 0;
  for (int i = 0; i < 5; i++) {
    double rate = replay_rate(f, t, 0.1, NULL);
    if (rate > best) best = rate;
  }
  return 1e6 / best;
}

/* The time each instruction adds: replays of every prefix, differenced. */
static void breakdown(const tir_func_t *f, const sch_trace_t *t) {
  sch_trace_t *prefix = sch_trace_copy(t);
  if (!prefix) exit(1);
  prefix->n = 0;
  double prev = best_us(f, prefix);
  printf("  %-3s %-22s %9s\n", "#", "instruction", "us");
  printf("  %-3s %-22s %9.1f\n", "", "(create + free)", prev);
  for (int k = 1; k <= t->n; k++) {
    prefix->n = k;
    double us = best_us(f, prefix);
    printf("  %-3d %-22s %9.1f\n", k - 1, t->insts[k - 1].kind->name, us - prev);
    prev = us;
  }
  prefix->n = t->n;
  sch_trace_free(prefix);
}

static void bench(const workload_t *w, double seconds, bool with_breakdown) {
  tir_func_t *f;
  CHECK(tir_workload_build(&f, w->name, w->nshape ? w->shape : NULL, w->nshape, tir_dtype(0, 0, 0),
                           tir_dtype(0, 0, 0)));
  char *program;
  sch_trace_t *t = recorded_trace(w, f, &program);
  /* The replay gives the recorded program exactly. */
  sch_t *sch;
  CHECK(sch_create(&sch, f, 1, SCH_ERRORS_FAST));
  CHECK(sch_trace_apply(sch, t, true));
  char *again = tir_print_func(sch_func(sch));
  if (strcmp(program, again) != 0) {
    fprintf(stderr, "bench_replay: %s: the replay differs from the recorded program\n", w->name);
    exit(1);
  }
  sch_free(sch);
  mlc_free(again);
  long reps;
  double rate = replay_rate(f, t, seconds, &reps);
  char key[17];
  printf("%s (key %s): %d instructions, %ld replays: %.0f replays per CPU second (%.1f us each)\n", w->name,
         tir_func_key_hex(f, key), t->n, reps, rate, 1e6 / rate);
  if (with_breakdown) breakdown(f, t);
  fflush(stdout);
  mlc_free(program);
  sch_trace_free(t);
  tir_func_free(f);
}

int main(int argc, char **argv) {
  double seconds = 3.0;
  const char *only = NULL;
  bool with_breakdown = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = atof(argv[++i]);
    else if (strcmp(argv[i], "--workload") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--breakdown") == 0) with_breakdown = true;
    else {
      fprintf(stderr, "usage: bench_replay [--seconds S] [--workload GMM|C2D] [--breakdown]\n");
      return 2;
    }
  }
  for (size_t i = 0; i < sizeof WORKLOADS / sizeof *WORKLOADS; i++)
    if (!only || strcmp(only, WORKLOADS[i].name) == 0) bench(&WORKLOADS[i], seconds, with_breakdown);
  return 0;
}
