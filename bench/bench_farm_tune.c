/*
 * bench_farm_tune.c - what measuring through the farm costs (issue 7,
 * "Benchmarks"; docs/farm.md, "Tuning through a farm").
 *
 * Tunes GMM (fp32) for a target (the host by default; --target takes any,
 * a GPU's included: the design space, postprocessors and mutators are the
 * target's defaults, ms_rules_default and its siblings) twice with the same seed, budget, model and
 * measure options, each into a fresh file database:
 *   local  ms_runner_local_target with one worker: mlc_measure in this process
 *          (a forked child per candidate), no sockets;
 *   farm   ms_runner_farm through a local farm: a broker thread on an
 *          ipc:// endpoint and one mlc-worker process (the same code paths
 *          as a fleet: job encoding, SUBMIT, routing, the worker's measuring
 *          process, RESULT back).
 * and prints each run's wall time, its search and measurement shares, the
 * measurement time per trial, and the farm's overhead over local (target:
 * wall time <= 10% more). The candidates of the two runs are the same until
 * the cost model starts learning from the measured times, which differ a
 * little between runs; the per-trial measurement time is the fairer figure.
 *
 * Because the two runs' searches differ once the model learns, and a loaded
 * machine moves wall times by more than the effect, a second figure isolates
 * the transport: one fixed batch of candidates (sampled from the design
 * space with fixed seeds, postprocessed) measured through both runners in
 * turn, --rounds times, interleaved so a change of load hits both alike; the
 * median batch time of each and their difference per job.
 *
 * The exit status does not depend on the target: 0 when both runs
 * completed, 1 when one failed, 2 on bad usage.
 *
 *   bench_farm_tune [--target TARGET] [--shape N] [--trials T] [--per-round N] [--seed S]
 *                   [--model xgb|random] [--min-repeat-ms MS] [--worker PATH]
 *                   [--order local-first|farm-first] [--batch N] [--rounds R]
 */
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpc/rpc.h"
#include "search/search.h"
#include "search/tune/runner_farm.h"
#include "workers/measure_wire.h"

typedef struct {
  int shape, trials, per_round, min_repeat_ms, batch, rounds;
  uint64_t seed;
  cm_model_kind_t model;
  const char *worker;
  const char *target;         /* NULL: the host */
  bool farm_first;
} opts_t;

typedef struct {
  const char *name;
  bool ok;
  int trials;
  double wall, search, measure, best_secs;
} run_t;

MLC_NORETURN static void usage(const char *why) {
  FILE *f = why ? stderr : stdout;
  if (why) fprintf(f, "bench_farm_tune: %s\n", why);
  fprintf(f, "usage: bench_farm_tune [--target TARGET] [--shape N] [--trials T] [--per-round N] [--seed S]\n"
             "                       [--model xgb|random] [--min-repeat-ms MS] [--worker PATH]\n"
             "                       [--order local-first|farm-first] [--batch N] [--rounds R]\n");
  exit(why ? 2 : 0);
}

static int int_arg(const char *v, int lo, int hi, const char *name) {
  char *end;
  long x = strtol(v, &end, 10);
  if (end == v || *end || x < lo || x > hi) {
    char why[128];
    snprintf(why, sizeof why, "%s takes an integer in [%d, %d]", name, lo, hi);
    usage(why);
  }
  return (int)x;
}

static void parse_args(opts_t *o, int argc, char **argv) {
  *o = (opts_t){.shape = 512, .trials = 200, .per_round = 64, .min_repeat_ms = 100, .batch = 16, .rounds = 3,
               .seed = 1, .model = CM_MODEL_XGB};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) usage(NULL);
    if (!v) usage("unknown option, or its value is missing");
    i++;
    if (strcmp(a, "--shape") == 0) o->shape = int_arg(v, 1, 8192, a);
    else if (strcmp(a, "--trials") == 0) o->trials = int_arg(v, 1, 100000, a);
    else if (strcmp(a, "--per-round") == 0) o->per_round = int_arg(v, 1, 10000, a);
    else if (strcmp(a, "--seed") == 0) o->seed = (uint64_t)int_arg(v, 0, INT_MAX, a);
    else if (strcmp(a, "--min-repeat-ms") == 0) o->min_repeat_ms = int_arg(v, 0, 100000, a);
    else if (strcmp(a, "--worker") == 0) o->worker = v;
    else if (strcmp(a, "--target") == 0) o->target = v;
    else if (strcmp(a, "--batch") == 0) o->batch = int_arg(v, 1, 1024, a);
    else if (strcmp(a, "--rounds") == 0) o->rounds = int_arg(v, 1, 100, a);
    else if (strcmp(a, "--model") == 0 && strcmp(v, "xgb") == 0) o->model = CM_MODEL_XGB;
    else if (strcmp(a, "--model") == 0 && strcmp(v, "random") == 0) o->model = CM_MODEL_RANDOM;
    else if (strcmp(a, "--order") == 0 && strcmp(v, "local-first") == 0) o->farm_first = false;
    else if (strcmp(a, "--order") == 0 && strcmp(v, "farm-first") == 0) o->farm_first = true;
    else usage("unknown option or value");
  }
}

/* mlc-worker of this build tree: bench programs live in BUILD/bench/. */
static const char *default_worker(char *buf, size_t len) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return NULL;
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (!slash) return NULL;
  *slash = '\0';
  int n_out = snprintf(buf, len, "%s/../mlc-worker", self);
  return n_out > 0 && (size_t)n_out < len && access(buf, X_OK) == 0 ? buf : NULL;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* One tuning run into a fresh database through runner. */
static void tune_once(run_t *run, const opts_t *o, tir_func_t *f, const mlc_target_t *target, ms_runner_t *runner) {
  char dir[] = "/tmp/bench-farm-tune-XXXXXX", uri[64];
  if (!mkdtemp(dir)) return;
  snprintf(uri, sizeof uri, "file:%s", dir);
  db_t *db = NULL;
  if (db_open(&db, uri) != MLC_OK) {
    fprintf(stderr, "bench_farm_tune: %s\n", mlc_error_last());
    return;
  }
  ms_tune_options_t to;
  ms_tune_options_default(&to);
  to.trials = o->trials;
  to.per_round = o->per_round;
  to.seed = o->seed;
  to.model = o->model;
  ms_tune_result_t res;
  const char *names[] = {"gmm"};
  int st = ms_tune(&res, &f, names, 1, target, db, runner, &to);
  if (st != MLC_OK) fprintf(stderr, "bench_farm_tune: %s: %s\n", run->name, mlc_error_last());
  run->ok = st == MLC_OK;
  if (res.ntasks == 1) {
    run->trials = res.tasks[0].trials;
    run->best_secs = res.tasks[0].best_secs;
  }
  run->wall = res.wall_secs, run->search = res.search_secs, run->measure = res.measure_secs;
  ms_tune_result_free(&res);
  db_close(db);
  nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* The protocol alone: an echo worker                                        */
/* ------------------------------------------------------------------------ */

#define ECHO_KEY "echo-bench"

/* rpc_run_job_fn answering at once with a made-up time. */
static int echo_job(void *payload, const rpc_job_t *job, rpc_result_t *out) {
  (void)payload;
  memset(out, 0, sizeof *out);
  snprintf(out->id, sizeof out->id, "%s", job->id);
  snprintf(out->worker_id, sizeof out->worker_id, "echo");
  snprintf(out->device_key, sizeof out->device_key, "%s", job->device_key);
  out->nrun_secs = 1;
  out->run_secs[0] = 1e-3;
  return MLC_OK;
}

typedef struct {
  const char *endpoint;
  volatile int stop;
} echo_t;

static void *echo_main(void *p) {
  echo_t *e = p;
  rpc_worker_options_t o = {.broker = e->endpoint, .device_key = ECHO_KEY, .device_json = "{}", .worker_id = "echo",
                            .capacity = 1, .heartbeat_ms = MLC_RPC_HEARTBEAT_MS, .liveness = MLC_RPC_LIVENESS,
                            .run = echo_job};
  if (rpc_worker_run(&o, &e->stop) != MLC_OK) fprintf(stderr, "bench_farm_tune: echo worker: %s\n", mlc_error_last());
  return NULL;
}

static void count_result(void *payload, int index, const rpc_result_t *r) {
  (void)index, (void)r;
  (*(int *)payload)++;
}

/* n jobs the size of a real one (the workload's TVMScript, a candidate's
 * trace) through the broker to an echo worker on a thread: the protocol's
 * round trip per job, measurement left out. */
static void echo_round_trip(const char *endpoint, const tir_func_t *f, const sch_trace_t *trace,
                            const mlc_target_t *t, const mlc_measure_options_t *mo, int n) {
  echo_t e = {.endpoint = endpoint};
  pthread_t th;
  if (pthread_create(&th, NULL, echo_main, &e) != 0) return;
  rpc_client_t *c = NULL;
  rpc_job_t *jobs = mlc_calloc((size_t)n, sizeof *jobs);
  char *workload = tir_print_func(f), target[512];
  json_t *tj = NULL, *opts = NULL;
  char *trace_json = NULL;
  if (sch_trace_to_json(&tj, trace) == MLC_OK) trace_json = mlc_json_dumps(tj);
  mlc_measure_options_to_json(&opts, mo);
  mlc_target_str(t, target, sizeof target);
  int got = 0, warm = 0;
  if (jobs && workload && trace_json && opts && rpc_client_open(&c, endpoint, NULL, NULL) == MLC_OK) {
    for (int i = 0; i < n; i++)
      jobs[i] = (rpc_job_t){.workload = workload, .trace_json = trace_json, .target = target, .options = opts};
    for (int i = 0; i < n; i++) snprintf(jobs[i].device_key, sizeof jobs[i].device_key, ECHO_KEY);
    rpc_client_run(c, jobs, 1, count_result, &warm, 10000, NULL); /* the worker is up and connected */
    double t0 = now_s();
    int st = rpc_client_run(c, jobs, n, count_result, &got, 10000, NULL);
    double secs = now_s() - t0;
    if (st == MLC_OK && got == n)
      printf("protocol round trip (echo worker, jobs of %zu bytes of TVMScript and %zu of trace): %.3f ms per job\n",
             strlen(workload), strlen(trace_json), secs / n * 1e3);
    else
      fprintf(stderr, "bench_farm_tune: echo: %d of %d results: %s\n", got, n, mlc_error_last());
  }
  rpc_client_close(c);
  e.stop = 1;
  pthread_join(th, NULL);
  mlc_free(jobs), mlc_free(workload), free(trace_json), json_decref(tj), json_decref(opts);
}

/* ------------------------------------------------------------------------ */
/* The transport alone: one fixed batch through both runners                 */
/* ------------------------------------------------------------------------ */

/* Up to n candidates sampled from GMM's design space with seeds 1, 2, ...
 * and postprocessed; *made says how many. */
static void make_batch(ms_candidate_t *cands, int n, int *made, const tir_func_t *f, const mlc_target_t *t) {
  ms_ctx_t ctx;
  ms_ctx_init(&ctx, f, "gmm", t, 1);
  int nrules = 0, npp = 0; /* the target's sets: CPU or GPU */
  const ms_rule_t *const *rules = ms_rules_default(&ctx, &nrules);
  const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
  ms_space_t space = {0};
  *made = 0;
  if (ms_space_generate(&space, &ctx, rules, nrules) != MLC_OK || space.n == 0) {
    fprintf(stderr, "bench_farm_tune: design space: %s\n", mlc_error_last());
    return;
  }
  for (uint64_t seed = 1; *made < n && seed < 50 * (uint64_t)n; seed++)
    if (ms_candidate_make(&cands[*made], &ctx, space.traces[seed % (uint64_t)space.n], false, seed, pp, npp) ==
        MLC_OK)
      (*made)++;
  ms_space_free(&space);
}

/* Seconds to measure the batch through r (*build: the results' build_secs
 * summed); -1 when the transport failed. */
static double time_batch(ms_runner_t *r, const ms_job_t *jobs, int n, mlc_measure_result_t *res, double *build) {
  double t0 = now_s();
  if (r->run(r, jobs, n, res) != MLC_OK) {
    fprintf(stderr, "bench_farm_tune: %s runner: %s\n", r->name, mlc_error_last());
    return -1;
  }
  double secs = now_s() - t0;
  *build = 0;
  for (int i = 0; i < n; i++) *build += res[i].build_secs;
  return secs;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The batch through both runners, interleaved; prints the medians. */
static bool compare_transport(const opts_t *o, const tir_func_t *f, const mlc_target_t *t, ms_runner_t *local,
                              ms_runner_t *farm, const char *echo_endpoint, const mlc_measure_options_t *mo) {
  mlc_measure_options_t mo_copy = *mo;
  ms_candidate_t *cands = mlc_calloc((size_t)o->batch, sizeof *cands);
  ms_job_t *jobs = mlc_calloc((size_t)o->batch, sizeof *jobs);
  mlc_measure_result_t *res = mlc_calloc((size_t)o->batch, sizeof *res);
  double *tl = mlc_calloc((size_t)o->rounds * 2, sizeof *tl), *tf = mlc_calloc((size_t)o->rounds * 2, sizeof *tf);
  double *bl = tl ? tl + o->rounds : NULL, *bf = tf ? tf + o->rounds : NULL; /* build seconds */
  int n = 0;
  bool ok = cands && jobs && res && tl && tf;
  if (ok) make_batch(cands, o->batch, &n, f, t);
  for (int i = 0; i < n; i++) jobs[i] = (ms_job_t){.workload = f, .trace = cands[i].trace, .target = t};
  for (int r = 0; ok && n > 0 && r < o->rounds; r++) {
    bool farm_first = r % 2 == 1;
    double ba, bb;
    double a = time_batch(farm_first ? farm : local, jobs, n, res, &ba);
    double b = time_batch(farm_first ? local : farm, jobs, n, res, &bb);
    tl[r] = farm_first ? b : a, bl[r] = farm_first ? bb : ba;
    tf[r] = farm_first ? a : b, bf[r] = farm_first ? ba : bb;
    ok = a >= 0 && b >= 0;
  }
  if (ok && n > 0) echo_round_trip(echo_endpoint, f, cands[0].trace, t, &mo_copy, 200);
  if (ok && n > 0) {
    double ml = median_of(tl, o->rounds), mf = median_of(tf, o->rounds);
    double mbl = median_of(bl, o->rounds), mbf = median_of(bf, o->rounds);
    printf("one batch of %d candidates, %d rounds interleaved: local %.2f s (build %.2f), farm %.2f s (build %.2f) "
           "(medians): %+.1f ms per job (%+.1f%%)\n\n",
           n, o->rounds, ml, mbl, mf, mbf, (mf - ml) / n * 1e3, (mf / ml - 1) * 100);
  }
  for (int i = 0; i < n; i++) ms_candidate_free(&cands[i]);
  mlc_free(cands), mlc_free(jobs), mlc_free(res), mlc_free(tl), mlc_free(tf);
  return ok && n > 0;
}

static void print_run(const run_t *r, double flop) {
  double per = r->trials ? r->measure / r->trials * 1e3 : 0;
  printf("%-7s %6d %9.1f %9.1f %10.1f %16.1f %13.1f\n", r->name, r->trials, r->wall, r->search, r->measure, per,
         r->best_secs > 0 ? flop / r->best_secs * 1e-9 : 0);
}

int main(int argc, char **argv) {
  opts_t o;
  parse_args(&o, argc, argv);
  mlc_log_set_program("bench_farm_tune");
  if (!getenv("MLC_LOG")) mlc_log_set_level(MLC_LOG_WARN);
  mlc_target_t target;
  if (!o.target) {
    mlc_target_host(&target);
  } else if (mlc_target_parse(&target, o.target) != MLC_OK) {
    fprintf(stderr, "bench_farm_tune: --target '%s': %s\n", o.target, mlc_error_last());
    return 2;
  }
  char target_str[512], buf[PATH_MAX + 16];
  mlc_target_str(&target, target_str, sizeof target_str);
  tir_func_t *f = NULL;
  int64_t shape[3] = {o.shape, o.shape, o.shape};
  tir_dtype_t none = {0, 0, 0};
  if (tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), none) != MLC_OK) {
    fprintf(stderr, "bench_farm_tune: %s\n", mlc_error_last());
    return 1;
  }
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  mo.min_repeat_ms = o.min_repeat_ms;
  double load[3] = {0};
  getloadavg(load, 3);
  printf("bench_farm_tune: GMM-%d, %d trials (%d per round), seed %llu, model %s, min_repeat_ms %d\n", o.shape,
         o.trials, o.per_round, (unsigned long long)o.seed, o.model == CM_MODEL_XGB ? "xgb" : "random",
         o.min_repeat_ms);
  printf("target %s; load average %.2f at the start\n\n", target_str, load[0]);
  /* The runners, the farm's with one worker on ipc://, live for both parts. */
  ms_runner_t *local = NULL, *farm = NULL;
  ms_local_farm_t *lf = NULL;
  const char *exe = o.worker ? o.worker : default_worker(buf, sizeof buf);
  bool ok = ms_runner_local_target(&local, &target, 1, &mo) == MLC_OK &&
            ms_local_farm_start(&lf, 1, &target, exe) == MLC_OK &&
            ms_runner_farm(&farm, ms_local_farm_endpoint(lf), NULL, NULL, &target, &mo) == MLC_OK;
  if (!ok) fprintf(stderr, "bench_farm_tune: %s\n", mlc_error_last());
  if (ok) ok = compare_transport(&o, f, &target, local, farm, ms_local_farm_endpoint(lf), &mo);
  run_t lr = {.name = "local"}, fr = {.name = "farm"};
  if (ok && o.farm_first) tune_once(&fr, &o, f, &target, farm);
  if (ok) tune_once(&lr, &o, f, &target, local);
  if (ok && !o.farm_first) tune_once(&fr, &o, f, &target, farm);
  getloadavg(load, 3);
  double flop = ms_func_flop(f);
  printf("%-7s %6s %9s %9s %10s %16s %13s\n", "runner", "trials", "wall_s", "search_s", "measure_s",
         "measure_ms/trial", "best_GFLOP/s");
  print_run(&lr, flop);
  print_run(&fr, flop);
  if (lr.ok && fr.ok && lr.wall > 0 && lr.trials > 0 && fr.trials > 0) {
    double wall = (fr.wall / lr.wall - 1) * 100;
    double per = (fr.measure / fr.trials - lr.measure / lr.trials) * 1e3;
    printf("\nfarm overhead in tuning: %+.1f%% wall time (target <= 10%%), %+.1f ms of measurement per trial\n", wall,
           per);
  }
  printf("load average %.2f at the end\n", load[0]);
  ms_runner_free(farm);
  ms_local_farm_stop(lf);
  ms_runner_free(local);
  tir_func_free(f);
  return ok && lr.ok && fr.ok ? 0 : 1;
}
