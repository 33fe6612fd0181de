/*
 * bench_workloads.c - the tuner against the libraries people would use
 * instead, on five workloads (issue 6, "Benchmarks": "GMM 16x4096x4096,
 * BMM 16x128x128x128, C2D ResNet 3x3, softmax and layernorm 4096x1024:
 * tuned against the better of OpenBLAS and oneDNN - target >= 1.0x").
 *
 * Per workload (built-in, fp32; bench/common/workload.c has the inputs and
 * the float64 references):
 *   GMM  C[16, 4096] = A[16, 4096] B[4096, 4096]  (skinny: B's 64 MB is
 *        read once, so memory bandwidth bounds it)
 *   BMM  Z[b] = X[b] Y[b], 16 batches of 128 x 128 x 128
 *   C2D  ResNet-50 conv2_x's 3x3 convolution (also ResNet-18's conv2_x):
 *        N=1, 56x56, 64 -> 64 channels, 3x3, stride 1, pad 1, NHWC / HWIO
 *   SFM  softmax over the rows of A[4096, 1024]
 *   LN   layer normalisation over the rows of A[4096, 1024] (gamma, beta,
 *        epsilon 1e-5)
 * the program tunes it with ms_tune (XGBoost model, local measurement, the
 * host target `llvm -num-cores=T`, --trials each, into a temporary file
 * database), rebuilds the best record's kernel, and times it next to:
 *   - OpenBLAS, as detected and with OPENBLAS_CORETYPE=SkylakeX (forked
 *     children; the better counts): sgemm for GMM, one sgemm per batch for
 *     BMM (16 calls), im2col on one thread + sgemm for C2D as bench_gemm
 *     does; OpenBLAS has no softmax or layer norm;
 *   - oneDNN (bench/common/dnnl_peer.h): matmul, convolution forward with
 *     the layouts it picks (inputs reordered outside the timed part),
 *     softmax forward, layer normalisation forward;
 *   - the FMA peak, the harness's noise meter (bench/common/harness.h:
 *     warm-up, runs grown to --min-ms, --repeat interleaved rounds, the
 *     median, disturbed sections measured again).
 * After the summary, each workload's best trace in TVM's Python form.
 * Every contender's output is checked against the float64 reference
 * first; one whose error passes BENCH_WL_TOLERANCE is marked WRONG and gets
 * no ratio. The ratio is the tuned kernel's median time over the better
 * peer's (GEMM-like workloads in GFLOP/s, SFM and LN in GB/s of the bytes
 * they must move). A workload that does not tune (an error, or no trial
 * that measured) is reported with the reason and the others go on.
 * Exit status: 0 when the run completed (targets inform, they do not fail
 * it), 1 when something failed, 2 on bad usage.
 *
 *   bench_workloads [--trials N] [--only GMM,BMM,C2D,SFM,LN] [--threads 1|2]
 *                   [--repeat R] [--min-ms MS] [--retries N] [--db DIR]
 *                   [--seed S] [--trace FILE] [--quick]
 *
 * --trace FILE adds a schedule of your own (TVM's Python trace form, as
 * `mlc-sched apply --script` takes it) as one more contender of the one
 * workload --only names; --trials 0 then skips tuning, to time a hand
 * schedule against the peers alone.
 */
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/blas_batch.h"
#include "bench/common/blas_peer.h"
#include "bench/common/dnnl_peer.h"
#include "bench/common/kernel.h"
#include "bench/common/stop.h"
#include "bench/common/tune_records.h"
#include "bench/common/workload.h"
#include "search/search.h"

enum { NWL = 5, MAX_FIELD = 8 };

/* The problems. The harness case index: OpenBLAS's GEMM child serves
 * GMM as case 0 and C2D as case 1; the others use case 2. */
static const bench_case_t all_cases[NWL] = {
    {"GMM-16x4096x4096", "GMM", 3, {16, 4096, 4096}},
    {"BMM-16x128x128x128", "BMM", 4, {16, 128, 128, 128}},
    {"C2D-ResNet-3x3", "C2D", 9, {1, 56, 56, 64, 64, 3, 3, 1, 1}},
    {"SFM-4096x1024", "SFM", 2, {4096, 1024}},
    {"LN-4096x1024", "LN", 2, {4096, 1024}},
};
static const int case_index[NWL] = {0, 2, 1, 2, 2};

typedef struct {
  bool only[NWL];
  int trials, threads, repeat, retries;
  double min_secs;
  const char *db_dir; /* NULL: a temporary database removed at exit */
  uint64_t seed;
  const char *trace; /* --trace FILE, NULL: none */
  bool quick;
} opts_t;

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

MLC_NORETURN static void usage(const char *why) {
  FILE *f = why ? stderr : stdout;
  if (why) fprintf(f, "bench_workloads: %s\n", why);
  fprintf(f, "usage: bench_workloads [--trials N] [--only GMM,BMM,C2D,SFM,LN] [--threads 1|2]\n"
             "                       [--repeat R] [--min-ms MS] [--retries N] [--db DIR] [--seed S]\n"
             "                       [--trace FILE] [--quick]\n"
             "  --trace FILE  time this schedule (TVM's Python trace form) too; needs --only with one workload\n"
             "  --trials 0    do not tune (with --trace: the trace against the peers)\n");
  exit(why ? 2 : 0);
}

static int parse_int(const char *s, int lo, int hi, const char *what) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < lo || v > hi) {
    char msg[128];
    snprintf(msg, sizeof msg, "%s takes a number from %d to %d", what, lo, hi);
    usage(msg);
  }
  return (int)v;
}

static void parse_only(opts_t *o, const char *s) {
  while (*s) {
    size_t n = strcspn(s, ",");
    int w = 0;
    while (w < NWL && !(strlen(all_cases[w].workload) == n && strncmp(all_cases[w].workload, s, n) == 0)) w++;
    if (w == NWL) usage("--only takes names from GMM,BMM,C2D,SFM,LN");
    o->only[w] = true;
    s += n + (s[n] == ',');
  }
}

static void parse_args(opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->threads = 2, o->seed = 1, o->trials = -1, o->repeat = -1, o->retries = -1, o->min_secs = -1;
  bool any = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) usage(NULL);
    if (strcmp(a, "--quick") == 0) {
      o->quick = true;
      continue;
    }
    char why[160];
    snprintf(why, sizeof why, "%s: unknown option, or its value is missing", a);
    if (!v) usage(why);
    i++;
    if (strcmp(a, "--trials") == 0) o->trials = parse_int(v, 0, 100000, "--trials");
    else if (strcmp(a, "--only") == 0) parse_only(o, v), any = true;
    else if (strcmp(a, "--threads") == 0) o->threads = parse_int(v, 1, BENCH_MAX_THREADS, "--threads");
    else if (strcmp(a, "--repeat") == 0) o->repeat = parse_int(v, 1, BENCH_MAX_REPEAT, "--repeat");
    else if (strcmp(a, "--retries") == 0) o->retries = parse_int(v, 0, 10, "--retries");
    else if (strcmp(a, "--min-ms") == 0) o->min_secs = parse_int(v, 1, 10000, "--min-ms") * 1e-3;
    else if (strcmp(a, "--db") == 0) o->db_dir = v;
    else if (strcmp(a, "--seed") == 0) o->seed = (uint64_t)parse_int(v, 0, 1 << 30, "--seed");
    else if (strcmp(a, "--trace") == 0) o->trace = v;
    else usage(why);
  }
  int nonly = 0;
  for (int w = 0; w < NWL; w++) nonly += o->only[w];
  if (o->trace && nonly != 1) usage("--trace needs --only with exactly one workload (the one the trace schedules)");
  for (int w = 0; !any && w < NWL; w++) o->only[w] = true;
  /* --quick is a smoke test of the whole program, not a figure. */
  if (o->trials < 0) o->trials = o->quick ? 32 : 200;
  if (o->repeat < 0) o->repeat = o->quick ? 3 : 7;
  if (o->retries < 0) o->retries = o->quick ? 0 : 2;
  if (o->min_secs < 0) o->min_secs = o->quick ? 0.05 : 0.2;
}

/* ------------------------------------------------------------------------ */
/* The peers forked at the start                                             */
/* ------------------------------------------------------------------------ */

typedef struct {
  bench_contender_t peak;
  bench_contender_t gemm[2]; /* OpenBLAS for GMM (case 0) and C2D (case 1) */
  int ngemm;
  bench_contender_t batch[2]; /* OpenBLAS for BMM */
  int nbatch;
} peers_t;

static const char *const coretypes[2] = {NULL, "SkylakeX"};

/* Before any thread or LLVM exists: the OpenBLAS children inherit the
 * problems' inputs. */
static void peers_init(peers_t *pe, const opts_t *o, const bench_wl_problem_t *p) {
  bench_inputs_t gemm_in[BENCH_MAX_CASES] = {0};
  if (o->only[0]) gemm_in[0] = p[0].gemm;
  if (o->only[2]) gemm_in[1] = p[2].gemm;
  for (int i = 0; (o->only[0] || o->only[2]) && i < 2; i++)
    if (bench_blas_init(&pe->gemm[pe->ngemm], coretypes[i], gemm_in)) pe->ngemm++;
  for (int i = 0; o->only[1] && i < 2; i++)
    if (bench_blas_batch_init(&pe->batch[pe->nbatch], coretypes[i], &p[1], case_index[1])) pe->nbatch++;
  bench_peak_init(&pe->peak);
}

/* Ends the children, the last forked first. */
static void peers_free(peers_t *pe) {
  for (int i = pe->nbatch - 1; i >= 0; i--) bench_contender_free(&pe->batch[i]);
  for (int i = pe->ngemm - 1; i >= 0; i--) bench_contender_free(&pe->gemm[i]);
}

/* ------------------------------------------------------------------------ */
/* Tuning                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  bool tuned;               /* ms_tune returned MLC_OK */
  ms_tune_result_t result;
  bench_tune_records_t rec;
  int best;                 /* index into rec of the fastest trial, -1 none */
  char error[512];          /* why there is no tuned kernel, "" when there is one */
} tuning_t;

static int64_t unix_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int tune_into(tuning_t *t, const opts_t *o, const bench_wl_problem_t *p, const mlc_target_t *target,
                     const char *db_dir) {
  char uri[4200];
  snprintf(uri, sizeof uri, "file:%s", db_dir);
  db_t *db = NULL;
  ms_runner_t *runner = NULL;
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  ms_tune_options_t to;
  bench_tune_options(&to, o->trials, o->seed);
  int64_t t0 = unix_us();
  int rc = db_open(&db, uri);
  /* As mlc-tune does by default: one builder per core, timed runs one at a time. */
  if (rc == MLC_OK) rc = ms_runner_local(&runner, target->num_cores > 0 ? target->num_cores : 1, &mo);
  tir_func_t *funcs[1] = {p->func};
  const char *names[1] = {p->func->name};
  if (rc == MLC_OK) rc = ms_tune(&t->result, funcs, names, 1, target, db, runner, &to);
  t->tuned = rc == MLC_OK;
  if (rc == MLC_OK) rc = bench_tune_records_load(&t->rec, db, p->func, target, t0);
  ms_runner_free(runner);
  db_close(db);
  return rc;
}

static void tune(tuning_t *t, const opts_t *o, const bench_wl_problem_t *p, const mlc_target_t *target,
                 const char *db_dir) {
  t->best = -1;
  if (o->trials == 0) {
    snprintf(t->error, sizeof t->error, "not tuned (--trials 0)");
    return;
  }
  printf("\ntuning %s (%d trials)...\n", p->c.name, o->trials);
  fflush(stdout);
  if (tune_into(t, o, p, target, db_dir) != MLC_OK) {
    snprintf(t->error, sizeof t->error, "tuning failed: %s", mlc_error_last());
    return;
  }
  t->best = bench_tune_best_at(&t->rec, t->rec.n);
  const char *status = t->result.ntasks > 0 ? t->result.tasks[0].status : "";
  if (t->best < 0)
    snprintf(t->error, sizeof t->error, "no trial measured (%d trials, %d failed)%s%s", t->rec.n, t->rec.nfailed,
             status[0] ? ": " : "", status);
  else if (status[0]) printf("note: %s stopped early: %s\n", p->c.name, status);
}

static void print_tuning(const tuning_t *t, const bench_wl_problem_t *p) {
  if (!t->tuned) return;
  const ms_tune_result_t *r = &t->result;
  printf("tuning:  %d trials (%d failed) in %.1f s (search %.1f s, measuring %.1f s)", t->rec.n, t->rec.nfailed,
         r->wall_secs, r->search_secs, r->measure_secs);
  if (t->best >= 0) printf("; the tuner's best: trial %d, %.3f ms (%.1f GFLOP/s)", t->best + 1,
                           t->rec.median[t->best] * 1e3, p->flop * 1e-9 / t->rec.median[t->best]);
  if (t->rec.default_secs > 0) printf("; untuned default %.3f ms", t->rec.default_secs * 1e3);
  printf("\n");
}

/* ------------------------------------------------------------------------ */
/* Measurement of one workload                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
  bench_contender_t cs[MAX_FIELD];
  bool owned[MAX_FIELD];   /* freed with the field (the peers' copies are not) */
  int n;
  int mine, dnnl, trace;   /* indices, -1 when absent */
  bench_plan_t plan;
  int ci;
} field_t;

static int field_add(field_t *f, const bench_contender_t *c, bool owned) {
  if (f->n == MAX_FIELD) bench_die("contenders", "too many");
  f->cs[f->n] = *c;
  f->owned[f->n] = owned;
  return f->n++;
}

static void field_free(field_t *f) {
  for (int i = 0; i < f->n; i++)
    if (f->owned[i]) bench_contender_free(&f->cs[i]);
}

static void field_plan(field_t *f, const opts_t *o, const bench_wl_problem_t *p, int ci) {
  bench_plan_t *pl = &f->plan;
  memset(pl, 0, sizeof *pl);
  pl->cases[ci] = true;
  pl->case_of[ci] = &p->c; /* GMM, C2D: their flops; the others' rates are computed here */
  pl->threads[0] = o->threads, pl->nthreads = 1;
  pl->repeat = o->repeat, pl->min_secs = o->min_secs, pl->retries = o->retries;
  f->ci = ci;
}

/* One of our kernels as a contender named `name`: sch (owned here; NULL
 * when scheduling failed with rc) built for target. Its index, or -1 with
 * the reason in mlc_error_last(). */
static int add_kernel(field_t *f, sch_t *sch, int rc, const bench_wl_problem_t *p, const mlc_target_t *target,
                      const char *name) {
  bench_kernel_t *k = NULL;
  if (rc == MLC_OK) rc = bench_wl_kernel_build(&k, sch, target, p);
  sch_free(sch);
  if (rc != MLC_OK) return -1;
  bench_contender_t c;
  bench_kernel_contender_init(&c, name);
  bench_kernel_contender_add(&c, f->ci, k);
  return field_add(f, &c, true);
}

/* The tuned kernel from the best record's trace. */
static void add_mine(field_t *f, tuning_t *t, const bench_wl_problem_t *p, const mlc_target_t *target) {
  if (t->best < 0) return;
  sch_t *sch = NULL;
  int rc = bench_schedule_json(&sch, p->func, t->rec.rec[t->best]->trace_json);
  char name[BENCH_NAME_LEN];
  snprintf(name, sizeof name, "mlc tuned (trial %d of %d)", t->best + 1, t->rec.n);
  f->mine = add_kernel(f, sch, rc, p, target, name);
  if (f->mine < 0)
    snprintf(t->error, sizeof t->error, "the best trial (%d) does not rebuild: %s", t->best + 1, mlc_error_last());
}

/* --trace FILE: the workload scheduled by a trace of the user's. */
static void add_trace(field_t *f, const opts_t *o, const bench_wl_problem_t *p, const mlc_target_t *target) {
  if (!o->trace) return;
  sch_t *sch = NULL;
  int rc = bench_schedule_python_file(&sch, p->func, o->trace);
  const char *base = strrchr(o->trace, '/');
  char name[BENCH_NAME_LEN];
  snprintf(name, sizeof name, "mlc trace %s", base ? base + 1 : o->trace);
  f->trace = add_kernel(f, sch, rc, p, target, name);
  if (f->trace < 0) bench_die(o->trace, mlc_error_last());
}

static void add_dnnl(field_t *f, const opts_t *o, const bench_wl_problem_t *p) {
#ifdef MLC_HAVE_DNNL
  bench_contender_t c;
  char why[256];
  if (bench_dnnl_init(&c, p, f->ci, o->threads, why, sizeof why)) f->dnnl = field_add(f, &c, true);
  else printf("note: oneDNN is left out of %s: %s\n", p->c.name, why);
#else
  (void)f, (void)o, (void)p;
#endif
}

static void field_init(field_t *f, const opts_t *o, const peers_t *pe, const bench_wl_problem_t *p, int w) {
  memset(f, 0, sizeof *f);
  f->mine = f->dnnl = f->trace = -1;
  field_plan(f, o, p, case_index[w]);
  if (p->kind == BENCH_WL_GMM || p->kind == BENCH_WL_C2D)
    for (int i = 0; i < pe->ngemm; i++) field_add(f, &pe->gemm[i], false);
  for (int i = 0; p->kind == BENCH_WL_BMM && i < pe->nbatch; i++) field_add(f, &pe->batch[i], false);
  add_dnnl(f, o, p);
}

/* ------------------------------------------------------------------------ */
/* Report                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  int npeers;              /* OpenBLAS and oneDNN contenders that took part */
  double mine, blas, dnnl; /* median seconds; 0 when absent or wrong */
  char blas_name[BENCH_NAME_LEN], dnnl_name[BENCH_NAME_LEN];
} outcome_t;

static double median_secs(const bench_contender_t *c, const field_t *f) {
  double s[BENCH_MAX_REPEAT];
  int n = f->plan.repeat;
  memcpy(s, c->secs[f->ci][0], sizeof(double) * (size_t)n);
  for (int i = 1; i < n; i++) /* insertion sort: n <= 64 */
    for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
      double x = s[j];
      s[j] = s[j - 1], s[j - 1] = x;
    }
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static bool is_wrong(const bench_contender_t *c, const field_t *f) {
  double e = c->error[f->ci];
  return !c->is_peak && !(e <= BENCH_WL_TOLERANCE);
}

/* The faster of the correct peers (OpenBLAS or oneDNN) in the outcome. */
static void collect(outcome_t *out, const field_t *f) {
  memset(out, 0, sizeof *out);
  for (int i = 0; i < f->n; i++) {
    const bench_contender_t *c = &f->cs[i];
    if (c->is_peak || i == f->trace) continue; /* --trace's is no peer */
    out->npeers += i != f->mine;
    if (is_wrong(c, f)) continue;
    double m = median_secs(c, f);
    if (i == f->mine) out->mine = m;
    else if (i == f->dnnl) out->dnnl = m, snprintf(out->dnnl_name, sizeof out->dnnl_name, "%s", c->name);
    else if (out->blas == 0 || m < out->blas) out->blas = m, snprintf(out->blas_name, sizeof out->blas_name, "%s", c->name);
  }
}

static double best_peer(const outcome_t *r) {
  if (r->blas > 0 && r->dnnl > 0) return fmin(r->blas, r->dnnl);
  return r->blas > 0 ? r->blas : r->dnnl;
}

/* The best trace of each workload, in the Python form TVM prints, so a
 * figure can be looked into after the (temporary) database is gone. */
static void print_best_traces(const tuning_t *t, const bench_wl_problem_t *p, const opts_t *o) {
  for (int w = 0; w < NWL; w++) {
    if (!o->only[w] || t[w].best < 0) continue;
    sch_trace_t *tr = NULL;
    char *py = sch_trace_from_json_text(&tr, t[w].rec.rec[t[w].best]->trace_json, "trace") == MLC_OK
                   ? sch_trace_to_python(tr) : NULL;
    printf("\nBest trace of %s (trial %d of %d):\n%s", p[w].c.name, t[w].best + 1, t[w].rec.n,
           py ? py : "(does not print)\n");
    mlc_free(py);
    sch_trace_free(tr);
  }
}

static void print_rows(const field_t *f, const bench_wl_problem_t *p, const outcome_t *r) {
  bool gbs = bench_wl_memory_bound(p);
  double peer = best_peer(r);
  printf("%-52s %19s %9s %9s %11s\n", "contender", gbs ? "GB/s median (best)" : "GFLOP/s median (best)",
         gbs ? "GFLOP/s" : "GB/s", "vs peer", "max error");
  for (int i = 0; i < f->n; i++) {
    const bench_contender_t *c = &f->cs[i];
    double m = median_secs(c, f), best = c->secs[f->ci][0][0];
    for (int k = 1; k < f->plan.repeat; k++) best = fmin(best, c->secs[f->ci][0][k]);
    if (c->is_peak) {
      bench_rate_t pk = bench_rate_of(c, &f->plan, f->ci, 0);
      printf("%-52.52s %9.1f (%7.1f)   (GFLOP/s; the noise meter)\n", c->name, pk.median, pk.best);
      continue;
    }
    double work = gbs ? bench_wl_bytes(p) : p->flop, other = gbs ? p->flop : bench_wl_bytes(p);
    printf("%-52.52s %9.1f (%7.1f) %9.1f", c->name, work * 1e-9 / m, work * 1e-9 / best, other * 1e-9 / m);
    if (is_wrong(c, f)) printf(" %9s %11.2e  WRONG: no ratio\n", "-", c->error[f->ci]);
    else if (peer > 0) printf(" %8.2fx %11.2e\n", peer / m, c->error[f->ci]);
    else printf(" %9s %11.2e\n", "-", c->error[f->ci]);
  }
}

static void print_verdict(const outcome_t *r, const tuning_t *t) {
  double peer = best_peer(r);
  if (r->mine > 0 && peer > 0)
    printf("=> mlc tuned / better peer (%s): %.2fx   target >= 1.00x: %s\n",
           peer == r->dnnl ? r->dnnl_name : r->blas_name, peer / r->mine, peer / r->mine >= 1.0 ? "met" : "NOT met");
  else if (t->error[0]) printf("=> no ratio: %s\n", t->error);
  else if (r->mine == 0) printf("=> no ratio: the tuned kernel's output is wrong\n");
  else if (r->npeers == 0) printf("=> no ratio: no peer (OpenBLAS has no such routine; oneDNN is not built in)\n");
  else printf("=> no ratio: no peer with a correct output\n");
}

static void measure_workload(outcome_t *out, field_t *f, tuning_t *t, const bench_wl_problem_t *p,
                             const peers_t *pe, const mlc_target_t *target, const opts_t *o) {
  add_mine(f, t, p, target);
  add_trace(f, o, p, target);
  field_add(f, &pe->peak, false);
  printf("timing %d contenders...\n", f->n);
  fflush(stdout);
  bench_measure(f->cs, f->n, &f->plan);
  collect(out, f);
  print_rows(f, p, out);
  print_verdict(out, t);
}

/* One line per workload: the tuned kernel, each peer, the ratio. */
static void print_summary(const outcome_t *r, const tuning_t *t, const bench_wl_problem_t *p, const opts_t *o) {
  printf("\nSummary (%d threads, %d trials each; target: mlc tuned >= 1.00x the better of OpenBLAS and oneDNN)\n",
         o->threads, o->trials);
  printf("%-20s %-8s %10s %10s %10s %9s %8s %8s %8s %9s\n", "workload", "unit", "mlc tuned", "OpenBLAS", "oneDNN",
         "vs peer", "target", "vs BLAS", "trials", "tuning s");
  for (int w = 0; w < NWL; w++) {
    if (!o->only[w]) continue;
    bool gbs = bench_wl_memory_bound(&p[w]);
    double work = (gbs ? bench_wl_bytes(&p[w]) : p[w].flop) * 1e-9, peer = best_peer(&r[w]);
    printf("%-20s %-8s", p[w].c.name, gbs ? "GB/s" : "GFLOP/s");
    const double v[3] = {r[w].mine, r[w].blas, r[w].dnnl};
    for (int i = 0; i < 3; i++)
      if (v[i] > 0) printf(" %10.1f", work / v[i]);
      else printf(" %10s", "-");
    if (r[w].mine > 0 && peer > 0) printf(" %8.2fx %8s", peer / r[w].mine, peer / r[w].mine >= 1.0 ? "met" : "NOT met");
    else printf(" %9s %8s", "-", "-");
    if (r[w].mine > 0 && r[w].blas > 0) printf(" %7.2fx", r[w].blas / r[w].mine);
    else printf(" %8s", "-");
    printf(" %8d %9.1f\n", t[w].rec.n, t[w].tuned ? t[w].result.wall_secs : 0.0);
    if (t[w].error[0]) printf("    %s: %s\n", p[w].c.name, t[w].error);
  }
}

/* ------------------------------------------------------------------------ */
/* Main                                                                      */
/* ------------------------------------------------------------------------ */

/* libgomp, oneDNN's threading, reads its settings when it is loaded,
 * before main. Its idle workers spin 300,000 pauses (milliseconds) before
 * they sleep, so after oneDNN's repeat the contender timed next lost a core
 * (the FMA peak measured about half of itself on this 2-core machine).
 * As blas_peer.c tells OpenBLAS's workers to sleep after 2^20 cycles, the
 * program sets GOMP_SPINCOUNT=10000 (about as long) and runs itself again,
 * unless the environment already says how OpenMP should wait. */
static void settle_openmp(char **argv) {
#ifdef MLC_HAVE_DNNL
  if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
  setenv("GOMP_SPINCOUNT", "10000", 1);
  execv("/proc/self/exe", argv);
  unsetenv("GOMP_SPINCOUNT"); /* exec failed: go on with libgomp's defaults, printed as they are */
#else
  (void)argv;
#endif
}

static char tmp_root[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static const char *db_root(const opts_t *o) {
  if (o->db_dir) return o->db_dir;
  snprintf(tmp_root, sizeof tmp_root, "/tmp/bench_workloads.XXXXXX");
  if (!mkdtemp(tmp_root)) bench_die("mkdtemp", "cannot create a temporary directory in /tmp");
  return tmp_root;
}

static void print_setup(const opts_t *o, const mlc_target_t *target, const char *db) {
  const char *ct = getenv("OPENBLAS_CORETYPE");
  char tstr[512], dnnl[512];
  printf("OpenBLAS: OPENBLAS_CORETYPE %s in the environment; the peers run with it unset (detected) and SkylakeX\n",
         ct ? ct : "unset");
  if (bench_blas_config()[0]) printf("peer:    %s\n", bench_blas_config());
#ifdef MLC_HAVE_DNNL
  bench_dnnl_describe(dnnl, sizeof dnnl);
#else
  snprintf(dnnl, sizeof dnnl, "oneDNN: not built in (CMake did not find it): OpenBLAS is the only peer");
#endif
  printf("peer:    %s\n", dnnl);
#ifdef MLC_HAVE_DNNL
  const char *wp = getenv("OMP_WAIT_POLICY"), *sc = getenv("GOMP_SPINCOUNT");
  printf("OpenMP:  OMP_WAIT_POLICY %s, GOMP_SPINCOUNT %s (libgomp's workers spin that many pauses, then sleep)\n",
         wp ? wp : "unset", sc ? sc : "unset (libgomp's default)");
#endif
  printf("tuning:  %s, %d trials per workload, seed %llu, XGBoost model, database %s%s\n",
         mlc_target_str(target, tstr, sizeof tstr), o->trials, (unsigned long long)o->seed, db,
         o->db_dir ? "" : " (temporary)");
  printf("timing:  %d threads, median of %d repeats of >= %.0f ms after a warm-up, %d retries of a disturbed "
         "section; outputs checked against float64 (max error %.0e)%s\n",
         o->threads, o->repeat, o->min_secs * 1e3, o->retries, BENCH_WL_TOLERANCE,
         o->quick ? " (--quick: a smoke test, not a figure)" : "");
  fflush(stdout);
}

int main(int argc, char **argv) {
  bench_set_program("bench_workloads");
  ms_tune_keep_freed_memory(); /* as mlc-tune does */
  opts_t o;
  parse_args(&o, argc, argv);
  settle_openmp(argv);
  signal(SIGPIPE, SIG_IGN);
  bench_catch_sigint(); /* the first ^C ends tuning after its round; a second one kills */
  double t0 = bench_now();
  bench_print_machine();
  static bench_wl_problem_t p[NWL];
  for (int w = 0; w < NWL; w++)
    if (o.only[w]) bench_wl_problem_init(&p[w], &all_cases[w]);
  peers_t pe = {0};
  peers_init(&pe, &o, p);
  char tstr[64];
  snprintf(tstr, sizeof tstr, "llvm -num-cores=%d", o.threads);
  mlc_target_t target;
  if (mlc_target_parse(&target, tstr) != MLC_OK) bench_die("the target", mlc_error_last());
  const char *db = db_root(&o);
  print_setup(&o, &target, db);
  static tuning_t t[NWL];
  static outcome_t r[NWL];
  int status = 0;
  for (int w = 0; w < NWL; w++) {
    if (!o.only[w]) continue;
    if (bench_stop_requested) snprintf(t[w].error, sizeof t[w].error, "not tuned: interrupted"), t[w].best = -1;
    else tune(&t[w], &o, &p[w], &target, db);
    if (t[w].error[0] && o.trials > 0) fprintf(stderr, "bench_workloads: %s: %s\n", p[w].c.name, t[w].error);
  }
  double tuned_at = bench_now();
  for (int w = 0; w < NWL; w++) {
    if (!o.only[w]) continue;
    char what[256];
    bench_wl_describe(&p[w], what, sizeof what);
    printf("\n== %s: %s, fp32, %d threads\n", p[w].c.name, what, o.threads);
    print_tuning(&t[w], &p[w]);
    field_t f;
    field_init(&f, &o, &pe, &p[w], w);
    measure_workload(&r[w], &f, &t[w], &p[w], &pe, &target, &o);
    field_free(&f);
    if (t[w].error[0] && o.trials > 0) status = 1;
  }
  print_summary(r, t, p, &o);
  print_best_traces(t, p, &o);
  printf("\nwall time: %.0f s (tuning %.0f s, timing %.0f s)\n", bench_now() - t0, tuned_at - t0,
         bench_now() - tuned_at);
  bench_print_load_at_end();
  peers_free(&pe);
  for (int w = 0; w < NWL; w++) {
    if (t[w].tuned) ms_tune_result_free(&t[w].result);
    bench_tune_records_free(&t[w].rec);
    bench_wl_problem_free(&p[w]);
  }
  if (tmp_root[0]) nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  return status;
}
