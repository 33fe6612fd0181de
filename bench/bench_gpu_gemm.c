/*
 * bench_gpu_gemm.c - what the tuner reaches on a GPU against cuBLAS on the
 * same GPU in the same run (issue 9, "With a GPU"): GMM N^3 (default 4096)
 * in fp32 (C = A B) and with fp16 inputs and an fp32 result (tensor cores
 * when the search's space has them for the target, search/space/), for
 * `cuda -arch=<the GPU's arch>`.
 *
 * For each dtype: ms_tune with the local runner for the target
 * (ms_runner_local_target: builds in parallel, one GPU measurement at a time
 * in forked children) into a fresh file database, then the best record
 * re-measured with mlc_measure (7 repeats of >= 200 ms each, median) next to
 * cuBLAS (cublasSgemm; cublasGemmEx with CUBLAS_GEMM_DEFAULT_TENSOR_OP for
 * fp16) timed the same way in a forked child (bench/common/cublas_peer.c).
 * Prints TFLOP/s, the ratio to cuBLAS beside the targets (>= 0.8x
 * fp32, >= 0.5x fp16 tensor cores on an H100), the trials and the tuning
 * time.
 *
 * This process never loads CUDA itself (every GPU use is in a child: the
 * measurements fork from it). GPU 0 of the process is used: pick another
 * with CUDA_VISIBLE_DEVICES. Without a GPU it says why and exits 77 (skip);
 * 0 when the run completed (the exit status does not depend on the ratios),
 * 1 when something failed, 2 on bad usage.
 *
 *   bench_gpu_gemm [--shape N] [--trials T] [--dtype fp32|fp16|both]
 *                  [--db DIR] [--seed S] [--quick]
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/common/cublas_peer.h"
#include "bench/common/stop.h"
#include "search/search.h"
#include "workers/worker_gpu.h"

typedef struct {
  int64_t n;
  int trials;
  bool fp32, fp16;
  const char *db_dir; /* NULL: temporary, removed at exit */
  uint64_t seed;
} opts_t;

typedef struct {
  const char *label;
  bool fp16;
  double target_ratio;
  int trials;
  double tune_secs, best_secs, cublas_secs;
  char why[1200]; /* what failed, "" when all ran */
} row_t;

MLC_NORETURN static void usage(const char *why) {
  FILE *f = why ? stderr : stdout;
  if (why) fprintf(f, "bench_gpu_gemm: %s\n", why);
  fprintf(f, "usage: bench_gpu_gemm [--shape N] [--trials T] [--dtype fp32|fp16|both] [--db DIR] [--seed S] "
             "[--quick]\n  GPU 0 of the process (CUDA_VISIBLE_DEVICES picks it); exit 77 without a GPU\n");
  exit(why ? 2 : 0);
}

static long number_arg(const char *name, const char *v, long lo, long hi) {
  char *end;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || *end || x < lo || x > hi) {
    char msg[128];
    snprintf(msg, sizeof msg, "%s needs a number in [%ld, %ld]", name, lo, hi);
    usage(msg);
  }
  return x;
}

static opts_t parse(int argc, char **argv) {
  opts_t o = {.n = 4096, .trials = 1000, .fp32 = true, .fp16 = true, .seed = 1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0) usage(NULL);
    else if (strcmp(a, "--quick") == 0) o.n = 1024, o.trials = 64;
    else if (strcmp(a, "--shape") == 0) o.n = number_arg(a, v, 16, 16384), i++;
    else if (strcmp(a, "--trials") == 0) o.trials = (int)number_arg(a, v, 1, 100000), i++;
    else if (strcmp(a, "--seed") == 0) o.seed = (uint64_t)number_arg(a, v, 0, 1L << 40), i++;
    else if (strcmp(a, "--db") == 0 && v) o.db_dir = v, i++;
    else if (strcmp(a, "--dtype") == 0 && v) {
      o.fp32 = strcmp(v, "fp32") == 0 || strcmp(v, "both") == 0;
      o.fp16 = strcmp(v, "fp16") == 0 || strcmp(v, "both") == 0;
      if (!o.fp32 && !o.fp16) usage("--dtype is fp32, fp16 or both");
      i++;
    } else {
      char msg[160];
      snprintf(msg, sizeof msg, "unknown or incomplete option '%s'", a);
      usage(msg);
    }
  }
  return o;
}

/* ------------------------------------------------------------------------ */
/* Tuning and re-measuring                                                   */
/* ------------------------------------------------------------------------ */

static int fail(row_t *row, const char *what) {
  snprintf(row->why, sizeof row->why, "%s: %s", what, mlc_error_or("failed"));
  return -1;
}

/* The best record's trace, re-measured (median seconds). */
static int remeasure_best(row_t *row, db_t *db, uint64_t key, const tir_func_t *f, const mlc_target_t *target) {
  char ts[256];
  mlc_target_str(target, ts, sizeof ts);
  db_result_t *res = NULL;
  bool found = false;
  if (db_best(db, &res, &found, key, ts) != MLC_OK) return fail(row, "db_best");
  if (!found || res->nrecords < 1) {
    db_result_free(res);
    snprintf(row->why, sizeof row->why, "no candidate measured well");
    return -1;
  }
  sch_trace_t *trace = NULL;
  int rc = sch_trace_from_json_text(&trace, res->records[0].trace_json, "best record");
  db_result_free(res);
  if (rc != MLC_OK) return fail(row, "best record");
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  mo.number = 1;
  mo.repeat = 7;
  mo.min_repeat_ms = 200;
  mlc_measure_result_t m;
  rc = mlc_measure(&m, f, trace, target, &mo);
  sch_trace_free(trace);
  if (rc != MLC_OK) return fail(row, "re-measuring the best");
  if (m.error != MLC_ERROR_KIND_NONE) {
    snprintf(row->why, sizeof row->why, "re-measuring the best: %s error: %s", mlc_error_kind_name(m.error),
             m.message);
    return -1;
  }
  row->best_secs = mlc_measure_median(&m);
  return 0;
}

static int tune_one(row_t *row, const opts_t *o, const mlc_target_t *target, const char *db_root) {
  tir_func_t *f = NULL;
  int64_t shape[3] = {o->n, o->n, o->n};
  tir_dtype_t none = {0, 0, 0};
  if (tir_workload_build(&f, "GMM", shape, 3, row->fp16 ? tir_dt_FLOAT16() : tir_dt_FLOAT32(), none) != MLC_OK)
    return fail(row, "workload");
  char uri[4200];
  snprintf(uri, sizeof uri, "file:%s/%s", db_root, row->label);
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  ms_tune_options_t to;
  bench_tune_options(&to, o->trials, o->seed);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  db_t *db = NULL;
  ms_runner_t *runner = NULL;
  ms_tune_result_t res;
  memset(&res, 0, sizeof res);
  tir_func_t *funcs[1] = {f};
  const char *names[1] = {f->name};
  int rc = -1;
  if (db_open(&db, uri) != MLC_OK) fail(row, "database");
  else if (ms_runner_local_target(&runner, target, cores > 0 ? (int)cores : 1, &mo) != MLC_OK) fail(row, "runner");
  else if (ms_tune(&res, funcs, names, 1, target, db, runner, &to) != MLC_OK) fail(row, "tuning");
  else {
    row->trials = res.ntasks ? res.tasks[0].trials : 0;
    row->tune_secs = res.wall_secs;
    rc = res.ntasks ? remeasure_best(row, db, res.tasks[0].key, f, target) : -1;
  }
  ms_tune_result_free(&res);
  ms_runner_free(runner);
  db_close(db);
  tir_func_free(f);
  return rc;
}

static void run_row(row_t *row, const opts_t *o, const mlc_target_t *target, const char *db_root) {
  fprintf(stderr, "bench_gpu_gemm: tuning GMM %lld^3 %s, %d trials\n", (long long)o->n, row->label, o->trials);
  if (tune_one(row, o, target, db_root) != 0) return;
  bench_cublas_case_t c = {.device = 0, .m = o->n, .n = o->n, .k = o->n, .fp16 = row->fp16, .repeat = 7,
                           .min_repeat_ms = 200};
  char why[512];
  if (bench_cublas_gemm(&row->cublas_secs, why, sizeof why, &c) != 0)
    snprintf(row->why, sizeof row->why, "cuBLAS: %s", why);
}

/* ------------------------------------------------------------------------ */
/* Report                                                                    */
/* ------------------------------------------------------------------------ */

static double tflops(int64_t n, double secs) { return secs > 0 ? 2.0 * (double)n * n * n / secs * 1e-12 : 0; }

static void report(const row_t *rows, int nrows, const opts_t *o, const worker_gpu_probe_t *p) {
  printf("GPU: %s (%s, %d SMs, %.0f GiB, driver %s)\n", p->props.name, p->props.arch, (int)p->props.multiprocessors,
         (double)p->props.total_memory / (1 << 30), p->props.driver_version);
  printf("GMM %lld x %lld x %lld (C = A B, row-major); medians of 7 repeats of >= 200 ms\n\n", (long long)o->n,
         (long long)o->n, (long long)o->n);
  printf("%-6s %12s %12s %8s %8s %8s %12s\n", "dtype", "mlc TFLOP/s", "cuBLAS", "ratio", "target", "trials",
         "tuning (s)");
  for (int i = 0; i < nrows; i++) {
    const row_t *r = &rows[i];
    if (r->why[0]) {
      printf("%-6s failed: %s\n", r->label, r->why);
      continue;
    }
    double ratio = r->cublas_secs / r->best_secs;
    printf("%-6s %12.1f %12.1f %7.2fx %7.2fx %8d %12.0f%s\n", r->label, tflops(o->n, r->best_secs),
           tflops(o->n, r->cublas_secs), ratio, r->target_ratio, r->trials, r->tune_secs,
           ratio >= r->target_ratio ? "" : "  (below target)");
  }
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

int main(int argc, char **argv) {
  opts_t o = parse(argc, argv);
  worker_gpu_probe_t p;
  int probed = worker_gpu_probe(&p, MLC_TARGET_CUDA, 0);
  if (probed != MLC_OK || !p.ok) { /* a failed probe leaves p zeroed: its reason is the last error */
    printf("bench_gpu_gemm: no CUDA GPU to measure on: %s\n", probed != MLC_OK ? mlc_error_last() : p.why);
    return 77;
  }
  char text[96];
  snprintf(text, sizeof text, "cuda -arch=%s", p.props.arch);
  mlc_target_t target;
  if (mlc_target_parse(&target, text) != MLC_OK) {
    fprintf(stderr, "bench_gpu_gemm: %s: %s\n", text, mlc_error_last());
    return 1;
  }
  char tmp_root[] = "/tmp/bench-gpu-gemm-XXXXXX";
  const char *db_root = o.db_dir;
  if (!db_root && !(db_root = mkdtemp(tmp_root))) {
    fprintf(stderr, "bench_gpu_gemm: cannot create a temporary directory\n");
    return 1;
  }
  bench_catch_sigint(); /* the first ^C ends tuning after its round; a second one kills */
  row_t rows[2];
  int nrows = 0;
  if (o.fp32) rows[nrows++] = (row_t){.label = "fp32", .fp16 = false, .target_ratio = 0.8};
  if (o.fp16) rows[nrows++] = (row_t){.label = "fp16", .fp16 = true, .target_ratio = 0.5};
  for (int i = 0; i < nrows && !bench_stop_requested; i++) run_row(&rows[i], &o, &target, db_root);
  report(rows, nrows, &o, &p);
  if (!o.db_dir) nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  int failed = 0;
  for (int i = 0; i < nrows; i++) failed |= rows[i].why[0] != '\0';
  return failed ? 1 : 0;
}
