/*
 * bench_tune.c - what the tuner (search/, step 5) finds and how fast it
 * finds it (issue 6, "Benchmarks"; docs/search/benchmark.md has the method
 * and the figures).
 *
 * One run tunes GMM (fp32, C = A B) at one shape for the host with
 * -num-cores=threads: ms_tune with local measurement (one worker) into a
 * fresh file database (or --db), with the XGBoost model, the random model,
 * or both with the same seed and budget. Then, from the database's records
 * in time order:
 *  - the tuning curve: trials -> best median so far (GFLOP/s, as the tuner
 *    measured it), printed every few trials and at the checkpoints;
 *  - the best kernel at each checkpoint, re-measured in this process with
 *    the shared harness (bench/common: warm-up, number grown until a repeat
 *    lasts 200 ms, 7 interleaved repeats, the FMA peak as noise meter) next
 *    to OpenBLAS sgemm as detected and SkylakeX (forked children; the better
 *    is the peer) and next to the hand trace bench/traces/gmm_avx512_fma.py,
 *    each checked against a float64 reference;
 *  - the tuning wall time and its shares (search = candidate generation and
 *    the cost model; measurement);
 *  - the cost model's quality on held-out measurements: a fresh XGBoost
 *    model trained on the first 80% of the records (features from replaying
 *    each trace, mlc_lower, cm_extract), scored on the last 20% (pairwise
 *    ranking accuracy, top-5 recall), the random model beside it; and
 *    XGBoost on random 80/20 splits of the same records, which hold out
 *    the whole visited space rather than the newest, near-best records;
 *    and the held-out kernels timed again as the tuner timed them: the
 *    second timing ranked against the recorded one is the most a model
 *    scored on one timing can reach (the measurement's own noise), the
 *    model against the second timing and against both beside it.
 * Targets are printed beside the figures; the exit status does not depend
 * on them (benchmarks inform): 0 when the run completed, 1 when something
 * failed, 2 on bad usage.
 *
 *   bench_tune [--workload GMM] [--shape N | M,N,K] [--trials T]
 *              [--model xgb|random|both] [--checkpoints 64,128,256,500]
 *              [--threads 1|2] [--db DIR] [--seed S] [--traces DIR] [--quick]
 */
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/blas_peer.h"
#include "bench/common/kernel.h"
#include "bench/common/stop.h"
#include "bench/common/tune_records.h"
#include "compiler/compiler.h"
#include "search/search.h"

#define MAX_CHECKPOINTS 16
#define MAX_RUNS 2

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  bench_case_t gmm;      /* the problem (GMM only: the peers are GEMMs) */
  char case_name[64];
  int trials;
  int nmodels;
  cm_model_kind_t models[MAX_RUNS];
  int checkpoints[MAX_CHECKPOINTS];
  int ncheckpoints;
  int threads;
  const char *db_dir;    /* NULL: a temporary database, removed at exit */
  uint64_t seed;
  const char *traces_dir;
  bool quick;
  bench_plan_t plan;     /* the re-measurement's method */
} opts_t;

/* Prints the usage and exits: 0 for --help (why NULL), 2 with the reason
 * for bad usage. */
MLC_NORETURN static void usage(const char *why) {
  FILE *f = why ? stderr : stdout;
  if (why) fprintf(f, "bench_tune: %s\n", why);
  fprintf(f,
          "usage: bench_tune [--workload GMM] [--shape N | M,N,K] [--trials T]\n"
          "                  [--model xgb|random|both] [--checkpoints 64,128,256,500]\n"
          "                  [--threads 1|2] [--db DIR] [--seed S] [--traces DIR] [--quick]\n");
  exit(why ? 2 : 0);
}

/* A comma-separated list of positive ints into out (at most max). */
static int parse_ints(const char *s, int *out, int max, const char *what) {
  int n = 0;
  while (*s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1 || v > 1000000 || (*end && *end != ',') || n >= max) {
      char msg[128];
      snprintf(msg, sizeof msg, "bad %s list", what);
      usage(msg);
    }
    out[n++] = (int)v;
    s = *end ? end + 1 : end;
  }
  return n;
}

static uint64_t parse_seed(const char *s) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end) usage("--seed takes a number");
  return v;
}

static void parse_shape(opts_t *o, const char *s) {
  int v[3];
  int n = parse_ints(s, v, 3, "--shape");
  if (n != 1 && n != 3) usage("--shape takes N or M,N,K");
  for (int i = 0; i < 3; i++) o->gmm.shape[i] = n == 1 ? v[0] : v[i];
  if (n == 1) snprintf(o->case_name, sizeof o->case_name, "GMM-%d", v[0]);
  else snprintf(o->case_name, sizeof o->case_name, "GMM-%dx%dx%d", v[0], v[1], v[2]);
}

static void parse_model(opts_t *o, const char *s) {
  if (strcmp(s, "xgb") == 0) o->models[0] = CM_MODEL_XGB, o->nmodels = 1;
  else if (strcmp(s, "random") == 0) o->models[0] = CM_MODEL_RANDOM, o->nmodels = 1;
  else if (strcmp(s, "both") == 0) o->models[0] = CM_MODEL_XGB, o->models[1] = CM_MODEL_RANDOM, o->nmodels = 2;
  else usage("--model is xgb, random or both");
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Checkpoints past the budget go; the budget itself is always one. */
static void settle_checkpoints(opts_t *o) {
  int n = 0;
  for (int i = 0; i < o->ncheckpoints; i++)
    if (o->checkpoints[i] < o->trials) o->checkpoints[n++] = o->checkpoints[i];
  o->checkpoints[n++] = o->trials;
  qsort(o->checkpoints, (size_t)n, sizeof(int), cmp_int);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (m == 0 || o->checkpoints[m - 1] != o->checkpoints[i]) o->checkpoints[m++] = o->checkpoints[i];
  o->ncheckpoints = m;
}

static void parse_args(opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->gmm = (bench_case_t){o->case_name, "GMM", 3, {1024, 1024, 1024}};
  snprintf(o->case_name, sizeof o->case_name, "GMM-1024");
  o->threads = 2;
  o->seed = 1;
  o->traces_dir = bench_default_traces_dir();
  o->models[0] = CM_MODEL_XGB, o->nmodels = 1;
  bool trials_given = false, checkpoints_given = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--quick") == 0) {
      o->quick = true;
      continue;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) usage(NULL);
    char why[160];
    snprintf(why, sizeof why, "%s: unknown option, or its value is missing", a);
    if (!v) usage(why);
    i++;
    if (strcmp(a, "--workload") == 0) {
      if (strcmp(v, "GMM") != 0) usage("only GMM for now: its peers are OpenBLAS sgemm and the GMM hand trace");
    } else if (strcmp(a, "--shape") == 0) parse_shape(o, v);
    else if (strcmp(a, "--trials") == 0) parse_ints(v, &o->trials, 1, "--trials"), trials_given = true;
    else if (strcmp(a, "--model") == 0) parse_model(o, v);
    else if (strcmp(a, "--checkpoints") == 0)
      o->ncheckpoints = parse_ints(v, o->checkpoints, MAX_CHECKPOINTS - 1, "--checkpoints"), checkpoints_given = true;
    else if (strcmp(a, "--threads") == 0) parse_ints(v, &o->threads, 1, "--threads");
    else if (strcmp(a, "--db") == 0) o->db_dir = v;
    else if (strcmp(a, "--seed") == 0) o->seed = parse_seed(v);
    else if (strcmp(a, "--traces") == 0) o->traces_dir = v;
    else usage(why);
  }
  if (o->threads > BENCH_MAX_THREADS) usage("--threads is 1 or 2 (the harness's FMA peak runs on at most 2)");
  /* Defaults: the budgets (200 trials for the model comparison);
   * --quick is a smoke test of the whole program, not a figure. */
  if (!trials_given) o->trials = o->quick ? 64 : o->nmodels == 2 ? 200 : 500;
  if (!checkpoints_given) o->ncheckpoints = o->quick ? parse_ints("16,32,64", o->checkpoints, 3, "")
                                                     : parse_ints("64,128,256,500", o->checkpoints, 4, "");
  settle_checkpoints(o);
  bench_plan_t *p = &o->plan;
  p->cases[0] = true;
  p->case_of[0] = &o->gmm;
  p->threads[0] = o->threads, p->nthreads = 1;
  p->repeat = o->quick ? 3 : 7;
  p->min_secs = o->quick ? 0.05 : 0.2;
  p->retries = o->quick ? 0 : 2;
}

/* ------------------------------------------------------------------------ */
/* Tuning runs                                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
  cm_model_kind_t kind;
  const char *label;        /* "xgb", "random" */
  char db_dir[4096];
  ms_tune_result_t result;
  bool ran;                 /* ms_tune returned MLC_OK */
  bench_tune_records_t rec; /* this run's records, oldest first */
  int kernel_of[MAX_CHECKPOINTS]; /* contender index of each checkpoint's best, -1 none */
} run_t;

static int64_t unix_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* One ms_tune into the run's database, then its records. */
static int tune(run_t *r, const opts_t *o, tir_func_t *f, const mlc_target_t *target) {
  char uri[4200];
  snprintf(uri, sizeof uri, "file:%s", r->db_dir);
  db_t *db = NULL;
  ms_runner_t *runner = NULL;
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  ms_tune_options_t to;
  bench_tune_options(&to, o->trials, o->seed);
  to.model = r->kind;
  int64_t t0 = unix_us();
  int rc = db_open(&db, uri);
  /* As mlc-tune does by default: one builder per core, timed runs one at a time. */
  int builders = mlc_target_cores(target);
  if (rc == MLC_OK) rc = ms_runner_local(&runner, builders, &mo);
  tir_func_t *funcs[1] = {f};
  const char *names[1] = {f->name};
  if (rc == MLC_OK) rc = ms_tune(&r->result, funcs, names, 1, target, db, runner, &to);
  r->ran = rc == MLC_OK;
  if (rc == MLC_OK) rc = bench_tune_records_load(&r->rec, db, f, target, t0);
  ms_runner_free(runner);
  db_close(db);
  return rc;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* The run databases: under --db, or a temporary directory removed at exit. */
static char tmp_root[64];

static void prepare_dirs(run_t *runs, int n, const opts_t *o) {
  const char *root = o->db_dir;
  if (!root) {
    snprintf(tmp_root, sizeof tmp_root, "/tmp/bench_tune.XXXXXX");
    if (!mkdtemp(tmp_root)) bench_die("mkdtemp", "cannot create a temporary directory in /tmp");
    root = tmp_root;
  }
  for (int i = 0; i < n; i++) {
    /* Separate databases: neither run may seed from or skip the other's. */
    if (n == 1) snprintf(runs[i].db_dir, sizeof runs[i].db_dir, "%s", root);
    else snprintf(runs[i].db_dir, sizeof runs[i].db_dir, "%s/%s", root, runs[i].label);
  }
  printf("database: %s%s\n", root, o->db_dir ? "" : " (temporary, removed at exit; --db DIR keeps it)");
}

/* ------------------------------------------------------------------------ */
/* Curves                                                                    */
/* ------------------------------------------------------------------------ */

static bool is_checkpoint(const opts_t *o, int t) {
  for (int i = 0; i < o->ncheckpoints; i++)
    if (o->checkpoints[i] == t) return true;
  return false;
}

/* "   312.4 (trial  231)" for run r after t trials, or blanks. */
static void print_curve_cell(const run_t *r, int t, double flop) {
  int at = bench_tune_best_at(&r->rec, t);
  if (at < 0) printf("  %-21s", t <= r->rec.n ? "(none measured)" : "");
  else printf("  %8.1f (trial %4d)", flop * 1e-9 / r->rec.median[at], at + 1);
}

static void print_curves(const run_t *runs, int n, const opts_t *o, double flop) {
  int longest = 0;
  for (int i = 0; i < n; i++)
    if (runs[i].rec.n > longest) longest = runs[i].rec.n;
  int step = o->trials <= 128 ? 8 : o->trials <= 256 ? 16 : 32;
  printf("\nTuning curve: best kernel after t trials, GFLOP/s of the tuner's median (* = checkpoint)\n%7s",
         "trials");
  for (int i = 0; i < n; i++) printf("  %21s", runs[i].label);
  printf("\n");
  for (int t = 1; t <= longest; t++) {
    if (t % step != 0 && !is_checkpoint(o, t) && t != longest) continue;
    printf("%6d%c", t, is_checkpoint(o, t) ? '*' : ' ');
    for (int i = 0; i < n; i++) print_curve_cell(&runs[i], t, flop);
    printf("\n");
  }
  for (int i = 0; i < n; i++) {
    const ms_task_report_t *task = runs[i].result.ntasks > 0 ? &runs[i].result.tasks[0] : NULL;
    if (runs[i].rec.n < o->trials)
      printf("  (%s stopped at %d of %d trials%s%s)\n", runs[i].label, runs[i].rec.n, o->trials,
             task && task->status[0] ? ": " : bench_stop_requested ? ": " : "",
             task && task->status[0] ? task->status : bench_stop_requested ? "Ctrl-C" : "");
    printf("  %s: %d trials, %d failed", runs[i].label, runs[i].rec.n, runs[i].rec.nfailed);
    if (runs[i].rec.default_secs > 0)
      printf("; the default schedule (measured first, not a trial): %.1f GFLOP/s",
             flop * 1e-9 / runs[i].rec.default_secs);
    printf("\n");
  }
}

/* ------------------------------------------------------------------------ */
/* Re-measurement                                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
  bench_contender_t *cs;
  int n, cap;
  int hand;                 /* the hand trace's index, -1 when it is left out */
} field_t;

static bench_contender_t *field_add(field_t *fl) {
  if (fl->n == fl->cap) bench_die("contenders", "too many");
  return &fl->cs[fl->n++];
}

/* The hand trace of step 3 (tensorized FMA; exact semantics), built for
 * the tuning target. Left out with a note where it does not apply. */
static void add_hand(field_t *fl, const opts_t *o, const bench_inputs_t *in, const tir_func_t *f,
                     const mlc_target_t *target) {
  char path[4096];
  snprintf(path, sizeof path, "%s/gmm_avx512_fma.py", o->traces_dir);
  sch_t *sch = NULL;
  bench_kernel_t *k = NULL;
  int rc = bench_schedule_python_file(&sch, f, path);
  if (rc == MLC_OK) rc = bench_kernel_build(&k, sch, target, in, NULL);
  sch_free(sch);
  if (rc != MLC_OK) {
    const char *why = mlc_error_last();
    printf("note: the hand trace is left out: %.*s\n", (int)strcspn(why, "\n"), why);
    return;
  }
  fl->hand = fl->n;
  bench_contender_t *c = field_add(fl);
  bench_kernel_contender_init(c, "mlc hand trace (gmm_avx512_fma.py)");
  bench_kernel_contender_add(c, 0, k);
}

/* One contender per distinct best record over a run's checkpoints, named
 * after the checkpoints it stands for. */
static void add_checkpoint_kernels(field_t *fl, run_t *r, const opts_t *o, const bench_inputs_t *in,
                                   const tir_func_t *f, const mlc_target_t *target) {
  for (int i = 0; i < o->ncheckpoints; i++) {
    r->kernel_of[i] = -1;
    int at = bench_tune_best_at(&r->rec, o->checkpoints[i]);
    if (at < 0) continue;
    if (i > 0 && bench_tune_best_at(&r->rec, o->checkpoints[i - 1]) == at && r->kernel_of[i - 1] >= 0) {
      bench_contender_t *c = &fl->cs[r->kernel_of[i - 1]];
      size_t len = strlen(c->name);
      snprintf(c->name + len - 1, sizeof c->name - len + 1, ",%d)", o->checkpoints[i]);
      r->kernel_of[i] = r->kernel_of[i - 1];
      continue;
    }
    sch_t *sch = NULL;
    bench_kernel_t *k = NULL;
    int rc = bench_schedule_json(&sch, f, r->rec.rec[at]->trace_json);
    if (rc == MLC_OK) rc = bench_kernel_build(&k, sch, target, in, NULL);
    sch_free(sch);
    if (rc != MLC_OK) {
      const char *why = mlc_error_last();
      printf("note: %s's best after %d trials (trial %d) does not rebuild: %.*s\n", r->label, o->checkpoints[i],
             at + 1, (int)strcspn(why, "\n"), why);
      continue;
    }
    r->kernel_of[i] = fl->n;
    bench_contender_t *c = field_add(fl);
    char name[BENCH_NAME_LEN];
    snprintf(name, sizeof name, "mlc tuned %s, trial %d (@%d)", r->label, at + 1, o->checkpoints[i]);
    bench_kernel_contender_init(c, name);
    bench_kernel_contender_add(c, 0, k);
  }
}

static double rate(const field_t *fl, const opts_t *o, int i) {
  return i >= 0 ? bench_rate_of(&fl->cs[i], &o->plan, 0, 0).median : 0;
}

/* Per checkpoint: the re-measured best, over the peer and the hand trace. */
static void report_checkpoints(const field_t *fl, const run_t *runs, int nruns, const opts_t *o) {
  double blas = bench_blas_median(fl->cs, fl->n, &o->plan, 0, 0), hand = rate(fl, o, fl->hand);
  printf("\nBest kernel at each checkpoint, re-measured (GFLOP/s median; ratios of medians)\n");
  printf("%-8s %7s %10s %9s%s\n", "model", "trials", "GFLOP/s", "vs BLAS", hand > 0 ? "   vs hand" : "");
  for (int r = 0; r < nruns; r++)
    for (int i = 0; i < o->ncheckpoints; i++) {
      int k = runs[r].kernel_of[i];
      if (k < 0) continue;
      double g = rate(fl, o, k);
      printf("%-8s %7d %10.1f %8.2fx", runs[r].label, o->checkpoints[i], g, blas > 0 ? g / blas : 0);
      if (hand > 0) printf(" %8.2fx", g / hand);
      printf("\n");
    }
}

/* ------------------------------------------------------------------------ */
/* Summary against the targets                                       */
/* ------------------------------------------------------------------------ */

static void target_line(const char *what, double got, const char *unit, double target, bool at_least,
                        bool applies) {
  printf("  %-52s %9.2f%s", what, got, unit);
  if (applies) printf("   target %s %.2f%s: %s", at_least ? ">=" : "<=", target, unit,
                      (at_least ? got >= target : got <= target) ? "met" : "NOT met");
  printf("\n");
}

/* The first checkpoint whose re-measured best reaches the peer (0: none). */
static int first_passing(const field_t *fl, const run_t *r, const opts_t *o, double blas) {
  for (int i = 0; i < o->ncheckpoints; i++)
    if (r->kernel_of[i] >= 0 && blas > 0 && rate(fl, o, r->kernel_of[i]) >= blas) return o->checkpoints[i];
  return 0;
}

static void summary_run(const field_t *fl, const run_t *r, const opts_t *o) {
  int64_t n = o->gmm.shape[0];
  bool square = o->gmm.shape[1] == n && o->gmm.shape[2] == n, is1024 = square && n == 1024,
       is512 = square && n == 512;
  double blas = bench_blas_median(fl->cs, fl->n, &o->plan, 0, 0), hand = rate(fl, o, fl->hand);
  int last = r->kernel_of[o->ncheckpoints - 1];
  char what[96];
  printf("%s (%d trials):\n", r->label, r->rec.n);
  if (last >= 0 && blas > 0) {
    snprintf(what, sizeof what, "best / OpenBLAS (better of detected, SkylakeX)");
    target_line(what, rate(fl, o, last) / blas, "x", is1024 ? 1.05 : 1.12, true, (is1024 || is512) && o->trials >= 500);
  }
  if (last >= 0 && hand > 0) target_line("best / hand trace", rate(fl, o, last) / hand, "x", 1.2, true, o->trials >= 500);
  int pass = first_passing(fl, r, o, blas);
  if (pass) printf("  %-52s %9d   (target <= 200 on GMM-1024)\n", "first checkpoint at >= 1.0x OpenBLAS", pass);
  else printf("  %-52s %9s\n", "first checkpoint at >= 1.0x OpenBLAS", "none");
  const ms_tune_result_t *t = &r->result;
  target_line("tuning wall time", t->wall_secs, " s", 200, false, is1024 && o->trials == 500);
  double share = t->wall_secs > 0 ? t->search_secs / t->wall_secs : 0;
  target_line("search share (candidates + cost model) of wall time", 100 * share, "%", 10, false, o->trials >= 500);
  printf("  %-52s %9.2f%%\n", "measurement share of wall time",
         t->wall_secs > 0 ? 100 * t->measure_secs / t->wall_secs : 0.0);
}

static void summary(const field_t *fl, const run_t *runs, int nruns, const opts_t *o, double flop) {
  printf("\nSummary (targets from issue 6; they apply to 500 trials at 2 threads, GMM-1024 / GMM-512)\n");
  for (int r = 0; r < nruns; r++) summary_run(fl, &runs[r], o);
  if (nruns < 2) return;
  int lx = runs[0].kernel_of[o->ncheckpoints - 1], lr = runs[1].kernel_of[o->ncheckpoints - 1];
  printf("xgb vs random, same seed and budget (%d trials):\n", o->trials);
  if (lx >= 0 && lr >= 0)
    target_line("best xgb / best random, re-measured", rate(fl, o, lx) / rate(fl, o, lr), "x", 1.5, true,
                o->trials == 200);
  int bx = bench_tune_best_at(&runs[0].rec, o->trials), br = bench_tune_best_at(&runs[1].rec, o->trials);
  if (bx >= 0 && br >= 0)
    printf("  %-52s %9.2fx   (%.1f vs %.1f GFLOP/s)\n", "the same, as the tuner measured them",
           runs[1].rec.median[br] / runs[0].rec.median[bx], flop * 1e-9 / runs[0].rec.median[bx],
           flop * 1e-9 / runs[1].rec.median[br]);
}

/* The final best kernel of each run, as the trace TVM would print. */
static void print_best_traces(const run_t *runs, int nruns, const opts_t *o) {
  for (int r = 0; r < nruns; r++) {
    int at = bench_tune_best_at(&runs[r].rec, o->trials);
    if (at < 0) continue;
    sch_trace_t *t = NULL;
    char *py = sch_trace_from_json_text(&t, runs[r].rec.rec[at]->trace_json, "trace") == MLC_OK
                   ? sch_trace_to_python(t) : NULL;
    printf("\nBest trace of %s (trial %d of %d, %s):\n%s\n", runs[r].label, at + 1, runs[r].rec.n, o->case_name,
           py ? py : "(does not print)");
    mlc_free(py);
    sch_trace_free(t);
  }
}

/* ------------------------------------------------------------------------ */
/* Cost model quality                                                        */
/* ------------------------------------------------------------------------ */

/* Throughputs for cm_pairwise_accuracy: higher is faster, a failure (0 s)
 * the slowest. */
static void speeds(double *out, const double *secs, int n) {
  for (int k = 0; k < n; k++) out[k] = secs[k] > 0 ? 1 / secs[k] : 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The held-out kernels timed again as the tuner timed them: how well one
 * timing ranks them like the other is what a model scored on one timing can
 * reach on this machine; the model against the second timing and against
 * both (geometric mean) beside it. */
static void report_ceiling(const run_t *r, const bench_model_quality_t *q, const tir_func_t *f,
                           const mlc_target_t *target) {
  int n = q->ntest;
  double *recorded = calloc((size_t)n, sizeof *recorded), *again = calloc((size_t)n, sizeof *again);
  double *both = calloc((size_t)n, sizeof *both), *score = calloc((size_t)n, sizeof *score);
  double *ratio = calloc((size_t)n, sizeof *ratio);
  if (!recorded || !again || !both || !score || !ratio) bench_die("the ceiling", "out of memory");
  printf("  timing the %d held-out kernels again, as the tuner timed them...\n", n);
  fflush(stdout);
  int builders = mlc_target_cores(target), nratio = 0;
  if (bench_retime_records(again, &r->rec, q->test_rec, n, f, target, builders) != MLC_OK) {
    printf("  timing again failed: %s\n", mlc_error_last());
    goto done;
  }
  for (int k = 0; k < n; k++) {
    recorded[k] = r->rec.median[q->test_rec[k]];
    both[k] = recorded[k] > 0 && again[k] > 0 ? sqrt(recorded[k] * again[k]) : 0;
    if (recorded[k] > 0 && again[k] > 0) ratio[nratio++] = again[k] / recorded[k];
  }
  speeds(score, again, n);
  double self = cm_pairwise_accuracy(score, recorded, n);
  qsort(ratio, (size_t)nratio, sizeof *ratio, cmp_double);
  printf("  %-28s %9.3f %12s   (the second timing ranked against the recorded one: the most a model scored\n"
         "  %-28s %9s %12s    on one timing of these kernels can reach on this machine; the second timing's\n"
         "  %-28s %9s %12s    times are %.2fx the recorded ones, median)\n",
         "timing vs timing again", self, "", "", "", "", "", "", "", nratio ? ratio[nratio / 2] : 0.0);
  if (q->test_scores) {
    printf("  %-28s %9.3f %12.2f\n", "XGBoost vs the second timing", cm_pairwise_accuracy(q->test_scores, again, n),
           cm_top_k_recall(q->test_scores, again, n, n < 5 ? n : 5));
    printf("  %-28s %9.3f %12.2f   (the geometric mean of the two)\n", "XGBoost vs both timings",
           cm_pairwise_accuracy(q->test_scores, both, n), cm_top_k_recall(q->test_scores, both, n, n < 5 ? n : 5));
  }
done:
  free(recorded);
  free(again);
  free(both);
  free(score);
  free(ratio);
}

static void report_quality(const run_t *r, const tir_func_t *f, const mlc_target_t *target, const opts_t *o) {
  printf("\nCost model quality on %s's records (fresh models: train on the first 80%% in time order, score the "
         "last 20%%)\n", r->label);
  bench_model_quality_t q;
  if (bench_model_quality(&q, &r->rec, f, target, o->seed) != MLC_OK) {
    printf("  failed: %s\n", mlc_error_last());
    bench_model_quality_free(&q);
    return;
  }
  printf("  records used %d (train %d, held out %d); left out %d (trace does not replay or lower)\n", q.nused,
         q.ntrain, q.ntest, q.nskipped);
  if (q.ntrained == 0) {
    printf("  XGBoost did not train: it needs 100 samples in the training part (has %d); run more trials\n",
           q.ntrain);
    bench_model_quality_free(&q);
    return;
  }
  printf("  %-28s %9s %12s\n", "model", "pairwise", "top-5 recall");
  printf("  %-28s %9.3f %12.2f   (target pairwise >= 0.85: %s)\n", "XGBoost", q.pairwise, q.recall5,
         q.pairwise >= 0.85 ? "met" : "NOT met");
  printf("  %-28s %9.3f %12.2f\n", "random (baseline)", q.pairwise_random, q.recall5_random);
  printf("  %-28s %9.3f %12.2f   (mean of %d random 80/20 splits of the same records: the whole space the\n"
         "  %-28s %9s %12s    run visited, where the time split holds out its newest, mostly near-best ones)\n",
         "XGBoost, shuffled split", q.pairwise_shuffled, q.recall5_shuffled, BENCH_QUALITY_SHUFFLES, "", "", "");
  report_ceiling(r, &q, f, target);
  bench_model_quality_free(&q);
}

/* ------------------------------------------------------------------------ */
/* Main                                                                      */
/* ------------------------------------------------------------------------ */

static void print_setup(const opts_t *o, const mlc_target_t *target) {
  const char *ct = getenv("OPENBLAS_CORETYPE"), *nt = getenv("OPENBLAS_NUM_THREADS");
  printf("OpenBLAS: OPENBLAS_CORETYPE %s in the environment (the peers set it per child: unset, SkylakeX); "
         "OPENBLAS_NUM_THREADS %s; threads set per call\n", ct ? ct : "unset", nt ? nt : "unset");
  if (bench_blas_config()[0]) printf("peer:    %s\n", bench_blas_config());
  char tstr[512], what[256];
  bench_describe(&o->gmm, what, sizeof what);
  printf("tuning:  %s (%s, fp32) for %s, %d trials per run, seed %llu, model %s\n", o->case_name, what,
         mlc_target_str(target, tstr, sizeof tstr), o->trials, (unsigned long long)o->seed,
         o->nmodels == 2 ? "xgb and random" : o->models[0] == CM_MODEL_XGB ? "xgb" : "random");
  double load[1];
  if (getloadavg(load, 1) == 1 && load[0] > 1.0)
    printf("note:    load average %.2f before anything of ours runs: other work shares the CPUs, so the tuner's "
           "choices and every figure below carry its noise\n", load[0]);
  printf("timing:  median of %d repeats of >= %.0f ms after a warm-up, %d retries of a disturbed section%s\n",
         o->plan.repeat, o->plan.min_secs * 1e3, o->plan.retries, o->quick ? " (--quick: a smoke test, not a figure)" : "");
  fflush(stdout);
}

/* The measured field: OpenBLAS children first (forked before any thread
 * or LLVM exists), then the FMA peak. */
static void field_init(field_t *fl, const opts_t *o, int nruns, const bench_inputs_t *inputs) {
  fl->cap = 4 + nruns * o->ncheckpoints;
  fl->cs = calloc((size_t)fl->cap, sizeof *fl->cs);
  if (!fl->cs) bench_die("allocation", "out of memory");
  fl->hand = -1;
  static const char *const coretypes[] = {NULL, "SkylakeX"};
  for (int i = 0; i < 2; i++)
    if (bench_blas_init(&fl->cs[fl->n], coretypes[i], inputs)) fl->n++;
  bench_peak_init(field_add(fl));
}

static void measure_and_report(field_t *fl, run_t *runs, int nruns, const opts_t *o, const bench_inputs_t *in,
                               const tir_func_t *f, const mlc_target_t *target) {
  add_hand(fl, o, in, f, target);
  for (int r = 0; r < nruns; r++) add_checkpoint_kernels(fl, &runs[r], o, in, f, target);
  printf("\nRe-measuring %d contenders...\n", fl->n);
  fflush(stdout);
  bench_measure(fl->cs, fl->n, &o->plan);
  char what[256];
  bench_describe(&o->gmm, what, sizeof what);
  printf("\n%s: %s, fp32; GFLOP/s median of %d (best)\n", o->case_name, what, o->plan.repeat);
  bench_report_header(fl->hand >= 0 ? "vs hand" : NULL);
  bench_report_rows(fl->cs, fl->n, &o->plan, 0, 0, bench_single_thread_peak(fl->cs, fl->n, &o->plan), fl->hand);
  report_checkpoints(fl, runs, nruns, o);
}

int main(int argc, char **argv) {
  bench_set_program("bench_tune");
  ms_tune_keep_freed_memory(); /* as mlc-tune does */
  opts_t o;
  parse_args(&o, argc, argv);
  signal(SIGPIPE, SIG_IGN);
  bench_catch_sigint(); /* the first ^C ends tuning after its round; a second one kills */
  bench_print_machine();
  bench_inputs_t inputs[BENCH_MAX_CASES] = {0};
  bench_inputs_init(&inputs[0], &o.gmm);
  field_t field = {0};
  run_t runs[MAX_RUNS] = {0};
  field_init(&field, &o, o.nmodels, inputs);
  char tstr[64];
  snprintf(tstr, sizeof tstr, "llvm -num-cores=%d", o.threads);
  mlc_target_t target;
  tir_func_t *f = NULL;
  if (mlc_target_parse(&target, tstr) != MLC_OK) bench_die("the target", mlc_error_last());
  if (bench_case_workload(&f, &o.gmm) != MLC_OK) bench_die("building the workload", mlc_error_last());
  print_setup(&o, &target);
  for (int r = 0; r < o.nmodels; r++) {
    runs[r].kind = o.models[r];
    runs[r].label = o.models[r] == CM_MODEL_XGB ? "xgb" : "random";
  }
  prepare_dirs(runs, o.nmodels, &o);
  int status = 0;
  for (int r = 0; r < o.nmodels && !bench_stop_requested && status == 0; r++) {
    printf("tuning with the %s model...\n", runs[r].label);
    fflush(stdout);
    if (tune(&runs[r], &o, f, &target) != MLC_OK) {
      fprintf(stderr, "bench_tune: tuning (%s): %s\n", runs[r].label, mlc_error_last());
      status = 1;
    }
  }
  if (status == 0) {
    double flop = bench_case_flops(&o.gmm);
    print_curves(runs, o.nmodels, &o, flop);
    measure_and_report(&field, runs, o.nmodels, &o, &inputs[0], f, &target);
    summary(&field, runs, o.nmodels, &o, flop);
    report_quality(&runs[0], f, &target, &o);
    print_best_traces(runs, o.nmodels, &o);
  }
  bench_print_load_at_end();
  for (int i = 0; i < field.n; i++) bench_contender_free(&field.cs[i]);
  free(field.cs);
  for (int r = 0; r < o.nmodels; r++) {
    bench_tune_records_free(&runs[r].rec);
    if (runs[r].ran) ms_tune_result_free(&runs[r].result);
  }
  if (tmp_root[0]) nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  tir_func_free(f);
  bench_inputs_free(&inputs[0]);
  return status;
}
