/*
 * bench_compile.c - does the compiler produce what was measured? (issue 8,
 * "Benchmark"; bench/README.md has the figures.)
 *
 * One run takes the example module (examples/mlp.py: dense+bias+relu twice,
 * softmax; or --module FILE, at most 3 functions of float32 buffers):
 *  1. tunes it with ms_tune (local measurement, the measurement's defaults
 *     as mlc-tune has them) into a fresh file database (or --db DIR, which
 *     may hold records already; --trials 0 tunes nothing);
 *  2. compiles it twice with mlc_compile_module, as mlc-compile does: with
 *     the database (each function from its best record for the target) and
 *     with no database (every function on the default schedule), and emits
 *     both as shared libraries;
 *  3. dlopens both and times every function through the DLPack ABI with the
 *     shared harness (bench/common: warm-up, `number` grown until a repeat
 *     lasts --min-repeat-ms, --repeat repeats interleaved between the two
 *     libraries, median; the FMA peak beside them as a noise meter),
 *     on arguments in [1, 10) as the measurement fills them, each library's
 *     result checked against the reference interpreter;
 *  4. measures each record's trace again with mlc_measure (the tuner's own
 *     measurement: forked child, JIT) with the same repeats, so that a
 *     change of the machine's load since tuning can be told apart from a
 *     compiler that builds something else;
 *  5. prints per function: the compiled function's median next to the
 *     median the database record holds (target: within 10%: the compiler
 *     produces exactly what was measured) and next to the record measured
 *     again, and the tuned library's speedup over the default-schedule
 *     library.
 * Exit status: 0 when the run completed (the figures do not decide it), 1
 * when something failed, 2 on bad usage.
 *
 *   bench_compile [--module FILE] [--trials T] [--per-round N] [--threads 1|2]
 *                 [--db DIR] [--seed S] [--repeat R] [--min-repeat-ms MS] [--tune-repeat R]
 *                 [--retries N] [--quick]
 */
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/compile_lib.h"
#include "compiler/compiler.h"
#include "search/search.h"

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  char module[4096];
  int trials, per_round, threads, repeat, min_repeat_ms, retries, tune_repeat;
  const char *db_dir; /* NULL: a temporary database */
  uint64_t seed;
  bool quick;
} opts_t;

/* Prints the usage and exits: 0 for --help (why NULL), 2 with the reason. */
MLC_NORETURN static void usage(const char *why) {
  FILE *f = why ? stderr : stdout;
  if (why) fprintf(f, "bench_compile: %s\n", why);
  fprintf(f, "usage: bench_compile [--module FILE] [--trials T] [--per-round N] [--threads 1|2]\n"
             "                     [--db DIR] [--seed S] [--repeat R] [--min-repeat-ms MS]\n"
             "                     [--retries N] [--tune-repeat R] [--quick]\n"
             "  --tune-repeat R  timed repeats per candidate while tuning (mlc-tune --repeat;\n"
             "                   default 1): the records' medians, which the compiled\n"
             "                   functions are compared with, get steadier with more\n");
  exit(why ? 2 : 0);
}

/* examples/mlp.py beside the sources (__FILE__ is the absolute path CMake
 * compiles), or "examples/mlp.py" when that is unknown. */
static void default_module(char *buf, size_t len) {
  snprintf(buf, len, "%s", __FILE__); /* .../bench/bench_compile.c */
  char *slash = strrchr(buf, '/');
  if (slash) *slash = '\0';
  slash = strrchr(buf, '/');
  if (!slash) {
    snprintf(buf, len, "examples/mlp.py");
    return;
  }
  snprintf(slash, len - (size_t)(slash - buf), "/examples/mlp.py");
}

static int int_arg(const char *opt, const char *v, int lo, int hi) {
  char *end;
  long x = strtol(v, &end, 10);
  if (end == v || *end || x < lo || x > hi) {
    char why[160];
    snprintf(why, sizeof why, "%s takes an integer in [%d, %d], not '%s'", opt, lo, hi, v);
    usage(why);
  }
  return (int)x;
}

static void parse_args(opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  default_module(o->module, sizeof o->module);
  o->trials = -1, o->per_round = -1, o->threads = 2, o->seed = 1;
  o->repeat = -1, o->min_repeat_ms = -1, o->retries = -1, o->tune_repeat = 1;
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
    if (strcmp(a, "--module") == 0) snprintf(o->module, sizeof o->module, "%s", v);
    else if (strcmp(a, "--trials") == 0) o->trials = int_arg(a, v, 0, 100000);
    else if (strcmp(a, "--per-round") == 0) o->per_round = int_arg(a, v, 1, 4096);
    else if (strcmp(a, "--threads") == 0) o->threads = int_arg(a, v, 1, BENCH_MAX_THREADS);
    else if (strcmp(a, "--db") == 0) o->db_dir = v;
    else if (strcmp(a, "--seed") == 0) o->seed = (uint64_t)int_arg(a, v, 0, 1 << 30);
    else if (strcmp(a, "--repeat") == 0) o->repeat = int_arg(a, v, 1, BENCH_MAX_REPEAT);
    else if (strcmp(a, "--min-repeat-ms") == 0) o->min_repeat_ms = int_arg(a, v, 1, 10000);
    else if (strcmp(a, "--retries") == 0) o->retries = int_arg(a, v, 0, 10);
    else if (strcmp(a, "--tune-repeat") == 0) o->tune_repeat = int_arg(a, v, 1, MLC_MEASURE_MAX_REPEAT);
    else usage(why);
  }
  /* Defaults: 64 trials, and the measurement's 100 ms repeats, 7 of them;
   * --quick is a smoke test of the whole program, not a figure. */
  if (o->trials < 0) o->trials = o->quick ? 12 : 64;
  if (o->per_round < 0) o->per_round = o->quick ? 4 : 16; /* every function gets rounds */
  if (o->repeat < 0) o->repeat = o->quick ? 3 : 7;
  if (o->min_repeat_ms < 0) o->min_repeat_ms = o->quick ? 10 : 100;
  if (o->retries < 0) o->retries = o->quick ? 0 : 2;
}

/* ------------------------------------------------------------------------ */
/* Work directory                                                            */
/* ------------------------------------------------------------------------ */

static char tmp_root[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void remove_tmp(void) {
  if (tmp_root[0]) nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void tmp_path(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", tmp_root, name); }

/* ------------------------------------------------------------------------ */
/* Tuning and compiling                                                      */
/* ------------------------------------------------------------------------ */

static int tune(db_t *db, const opts_t *o, const tir_module_t *m, const mlc_target_t *target) {
  if (o->trials == 0) {
    printf("tuning: none (--trials 0): the database's records as they are\n");
    return MLC_OK;
  }
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo); /* what mlc-tune measures with */
  mo.repeat = o->tune_repeat;      /* mlc-tune --repeat (default 1) */
  ms_tune_options_t to;
  ms_tune_options_default(&to);
  to.trials = o->trials;
  to.per_round = o->per_round;
  to.seed = o->seed;
  to.progress_tty = isatty(STDERR_FILENO);
  const char *names[BENCH_MAX_CASES];
  for (int i = 0; i < m->nfuncs; i++) names[i] = m->funcs[i]->name;
  ms_runner_t *runner = NULL;
  ms_tune_result_t r = {0};
  int rc = ms_runner_local(&runner, target->num_cores > 0 ? target->num_cores : 1, &mo);
  printf("tuning: %d trials, %d per round, seed %llu, measurement: number %d, repeat %d, min_repeat_ms %d...\n",
         o->trials, o->per_round, (unsigned long long)o->seed, mo.number, mo.repeat, mo.min_repeat_ms);
  fflush(stdout);
  if (rc == MLC_OK) rc = ms_tune(&r, m->funcs, names, m->nfuncs, target, db, runner, &to);
  if (rc == MLC_OK) {
    printf("tuned in %.1f s (search %.1f s, measuring %.1f s)\n", r.wall_secs, r.search_secs, r.measure_secs);
    printf("  %-14s %7s %12s %18s\n", "task", "trials", "best_ms", "default_ms");
    for (int i = 0; i < r.ntasks; i++)
      printf("  %-14s %7d %12.4f %18.4f%s%s\n", r.tasks[i].name, r.tasks[i].trials, r.tasks[i].best_secs * 1e3,
             r.tasks[i].default_secs * 1e3, r.tasks[i].status[0] ? "  " : "", r.tasks[i].status);
    ms_tune_result_free(&r);
  }
  ms_runner_free(runner);
  return rc;
}

/* Compiles m (with db, or default schedules when db is NULL) and writes the
 * shared library at path. */
static int compile(mlc_compile_result_t *res, const tir_module_t *m, const mlc_target_t *target, db_t *db,
                   const char *path) {
  mlc_compile_options_t co = {.db = db, .require_tuned = false, .lower = NULL};
  int rc = mlc_compile_module(res, m, target, &co);
  if (rc == MLC_OK) rc = mlc_module_emit(res->module, MLC_EMIT_SO, path);
  return rc;
}

static void print_compiled(const mlc_compile_result_t *res) {
  printf("compiled with the database:\n");
  for (int i = 0; i < res->nfuncs; i++) {
    const mlc_compile_func_t *f = &res->funcs[i];
    if (f->how == MLC_COMPILE_TUNED)
      printf("  %-14s %s  record %s: %.4f ms median, trace of %d instructions%s, measured on %s\n", f->name,
             f->key, f->record_id, f->median_secs * 1e3, f->trace_len,
             f->trace_len == 0 ? " (the program as written)" : "",
             f->device_key ? f->device_key : "?");
    else
      printf("  %-14s %s  default schedule (%s)\n", f->name, f->key, f->why_default);
  }
}

/* ------------------------------------------------------------------------ */
/* The record measured again                                                 */
/* ------------------------------------------------------------------------ */

/* The stored workload of key and the trace of record `id`, as the compiler
 * and the worker that measured it see them. */
static int record_inputs(db_t *db, const mlc_compile_func_t *f, tir_func_t **w, sch_trace_t **trace) {
  db_result_t *rec = NULL, *wl = NULL;
  db_filter_t filter = {.id = f->record_id};
  int rc = db_records(db, &rec, &filter);
  if (rc == MLC_OK && rec->nrecords != 1) rc = mlc_error_set(MLC_ENOTFOUND, "record %s is not in the database", f->record_id);
  if (rc == MLC_OK) rc = db_workload(db, &wl, strtoull(f->key, NULL, 16));
  if (rc == MLC_OK && wl->nworkloads != 1) rc = mlc_error_set(MLC_ENOTFOUND, "workload %s is not in the database", f->key);
  if (rc == MLC_OK) {
    const char *text = wl->workloads[0].tvmscript;
    rc = tir_parse_func(w, text, strlen(text), "the stored workload", NULL);
  }
  if (rc == MLC_OK) rc = sch_trace_from_json_text(trace, rec->records[0].trace_json, "trace");
  db_result_free(rec);
  db_result_free(wl);
  return rc;
}

/* The record's trace measured again now by the measurement itself
 * (mlc_measure, forked child, JIT) with this run's repeats: what the
 * compiled function should match when the machine's load changed since
 * tuning. 0 (and a note) when it cannot be measured. */
static double remeasure(db_t *db, const mlc_compile_func_t *f, const mlc_target_t *target, const opts_t *o) {
  tir_func_t *w = NULL;
  sch_trace_t *trace = NULL;
  mlc_measure_result_t res;
  mlc_measure_options_t mo;
  mlc_measure_options_default(&mo);
  mo.repeat = o->repeat;
  mo.min_repeat_ms = o->min_repeat_ms;
  int rc = record_inputs(db, f, &w, &trace);
  if (rc == MLC_OK) rc = mlc_measure(&res, w, trace, target, &mo);
  double secs = 0;
  if (rc != MLC_OK) printf("  note: %s: the record cannot be measured again: %s\n", f->name, mlc_error_last());
  else if (res.error != MLC_ERROR_KIND_NONE) printf("  note: %s: measuring the record again failed: %s\n", f->name, res.message);
  else secs = mlc_measure_median(&res);
  sch_trace_free(trace);
  tir_func_free(w);
  return secs;
}

/* ------------------------------------------------------------------------ */
/* Measuring and reporting                                                   */
/* ------------------------------------------------------------------------ */

enum { PEAK, TUNED, DEFAULT, NCONTENDERS };

static double median_secs(const bench_contender_t *c, const bench_plan_t *plan, int ci) {
  double s[BENCH_MAX_REPEAT];
  int n = plan->repeat;
  memcpy(s, c->secs[ci][0], sizeof(double) * (size_t)n);
  for (int i = 1; i < n; i++) /* insertion sort: n <= 64 */
    for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
      double t = s[j];
      s[j] = s[j - 1], s[j - 1] = t;
    }
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* "  0.9070x" (or blanks when there is no reference); counts it within 10%. */
static void ratio_cell(double num, double den, int *nwithin, int *n) {
  if (den <= 0) {
    printf(" %9s", "-");
    return;
  }
  printf(" %8.3fx", num / den);
  (*n)++;
  *nwithin += fabs(num / den - 1) <= 0.10;
}

/* again[ci]: the record measured again now (0: none). */
static void report(const bench_contender_t *cs, const bench_plan_t *plan, const mlc_compile_result_t *res,
                   const double *again) {
  printf("\n%-12s %10s %10s %11s %9s %9s %10s %8s %17s\n", "function", "record_ms", "again_ms", "compiled_ms",
         "vs record", "vs again", "default_ms", "speedup", "max rel err t / d");
  int nrec = 0, nwithin_rec = 0, nagain = 0, nwithin_again = 0;
  double logsum = 0;
  for (int ci = 0; ci < res->nfuncs; ci++) {
    const mlc_compile_func_t *f = &res->funcs[ci];
    double t = median_secs(&cs[TUNED], plan, ci), d = median_secs(&cs[DEFAULT], plan, ci);
    double rec = f->how == MLC_COMPILE_TUNED ? f->median_secs : 0;
    printf("%-12s ", f->name);
    if (rec > 0) printf("%10.4f ", rec * 1e3);
    else printf("%10s ", "-");
    if (again[ci] > 0) printf("%10.4f ", again[ci] * 1e3);
    else printf("%10s ", "-");
    printf("%11.4f", t * 1e3);
    ratio_cell(t, rec, &nwithin_rec, &nrec);
    ratio_cell(t, again[ci], &nwithin_again, &nagain);
    printf(" %10.4f %7.2fx %8.1e / %.1e\n", d * 1e3, d / t, cs[TUNED].error[ci], cs[DEFAULT].error[ci]);
    logsum += log(d / t);
    bench_rate_t peak = bench_rate_of(&cs[PEAK], plan, ci, 0);
    if (peak.median < 0.9 * peak.best)
      printf("  (busy machine while timing %s: the FMA peak's median is %.0f%% below its best)\n", f->name,
             100 * (1 - peak.median / peak.best));
  }
  printf("\ncompiled vs the record's median, within 10%% (target: every function): %d of %d\n", nwithin_rec, nrec);
  printf("compiled vs the record's trace measured again now, within 10%%: %d of %d\n", nwithin_again, nagain);
  printf("tuned vs default schedules, geometric mean speedup: %.2fx over %d functions\n", exp(logsum / res->nfuncs),
         res->nfuncs);
}

/* The contenders: the FMA peak, then each library's functions. */
static int measure(const tir_module_t *m, const opts_t *o, bench_so_t *so_tuned, bench_so_t *so_default,
                   const mlc_compile_result_t *res, db_t *db, const mlc_target_t *target) {
  bench_contender_t cs[NCONTENDERS];
  bench_args_t *args[BENCH_MAX_CASES] = {0};
  bench_case_t cases[BENCH_MAX_CASES];
  bench_plan_t plan = {.threads = {o->threads}, .nthreads = 1, .repeat = o->repeat,
                       .min_secs = o->min_repeat_ms * 1e-3, .retries = o->retries};
  bench_peak_init(&cs[PEAK]);
  bench_so_contender_init(&cs[TUNED], "compiled with the database");
  bench_so_contender_init(&cs[DEFAULT], "compiled with default schedules");
  int rc = MLC_OK;
  for (int ci = 0; ci < m->nfuncs && rc == MLC_OK; ci++) {
    const char *name = m->funcs[ci]->name;
    cases[ci] = (bench_case_t){.name = name, .workload = ""};
    plan.cases[ci] = true, plan.case_of[ci] = &cases[ci];
    rc = bench_args_new(&args[ci], m->funcs[ci], o->seed);
    if (rc == MLC_OK) rc = bench_so_contender_add(&cs[TUNED], ci, so_tuned, name, args[ci]);
    if (rc == MLC_OK) rc = bench_so_contender_add(&cs[DEFAULT], ci, so_default, name, args[ci]);
  }
  if (rc == MLC_OK) {
    printf("\ntiming through the ABI: median of %d repeats of >= %d ms after a warm-up, %d thread%s, %d retries of "
           "a disturbed section...\n", o->repeat, o->min_repeat_ms, o->threads, o->threads > 1 ? "s" : "",
           o->retries);
    fflush(stdout);
    bench_measure(cs, NCONTENDERS, &plan);
    double again[BENCH_MAX_CASES] = {0};
    printf("measuring each record's trace again with mlc_measure (%d repeats of >= %d ms)...\n", o->repeat,
           o->min_repeat_ms);
    fflush(stdout);
    for (int ci = 0; ci < res->nfuncs; ci++)
      if (res->funcs[ci].how == MLC_COMPILE_TUNED) again[ci] = remeasure(db, &res->funcs[ci], target, o);
    report(cs, &plan, res, again);
  }
  for (int i = 0; i < NCONTENDERS; i++) bench_contender_free(&cs[i]);
  for (int ci = 0; ci < BENCH_MAX_CASES; ci++) bench_args_free(args[ci]);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Main                                                                      */
/* ------------------------------------------------------------------------ */

static int load_module(tir_module_t **m, const char *path) {
  char *src = NULL;
  size_t len = 0;
  int rc = mlc_read_file(&src, &len, path);
  if (rc == MLC_OK) rc = tir_parse(m, src, len, path, NULL);
  mlc_free(src);
  if (rc == MLC_OK && ((*m)->nfuncs < 1 || (*m)->nfuncs > BENCH_MAX_CASES))
    rc = mlc_error_set(MLC_EINVAL, "%s: %d functions; the benchmark takes 1 to %d", path, (*m)->nfuncs,
                       BENCH_MAX_CASES);
  return rc;
}

/* Everything after the setup; the failing step's name into *what. */
static int run(const opts_t *o, const tir_module_t *m, const mlc_target_t *target, const char **what) {
  char uri[4200], so_t[128], so_d[128];
  snprintf(uri, sizeof uri, "file:%s%s", o->db_dir ? o->db_dir : tmp_root, o->db_dir ? "" : "/db");
  tmp_path(so_t, sizeof so_t, "tuned.so");
  tmp_path(so_d, sizeof so_d, "default.so");
  printf("database: %s%s\n", uri + 5, o->db_dir ? "" : " (temporary; --db DIR keeps it)");
  db_t *db = NULL;
  mlc_compile_result_t tuned = {0}, dflt = {0};
  bench_so_t *lib_t = NULL, *lib_d = NULL;
  int rc = db_open(&db, uri);
  *what = "opening the database";
  if (rc == MLC_OK) *what = "tuning", rc = tune(db, o, m, target);
  if (rc == MLC_OK) *what = "compiling with the database", rc = compile(&tuned, m, target, db, so_t);
  if (rc == MLC_OK) *what = "compiling with default schedules", rc = compile(&dflt, m, target, NULL, so_d);
  if (rc == MLC_OK) *what = "loading the libraries", rc = bench_so_open(&lib_t, so_t);
  if (rc == MLC_OK) rc = bench_so_open(&lib_d, so_d);
  if (rc == MLC_OK) {
    print_compiled(&tuned);
    *what = "measuring";
    rc = measure(m, o, lib_t, lib_d, &tuned, db, target);
  }
  bench_so_free(lib_t);
  bench_so_free(lib_d);
  mlc_compile_result_free(&tuned);
  mlc_compile_result_free(&dflt);
  db_close(db);
  return rc;
}

int main(int argc, char **argv) {
  bench_set_program("bench_compile");
  opts_t o;
  parse_args(&o, argc, argv);
  bench_print_machine();
  char tstr[512];
  snprintf(tstr, sizeof tstr, "llvm -num-cores=%d", o.threads);
  mlc_target_t target;
  tir_module_t *m = NULL;
  if (mlc_target_parse(&target, tstr) != MLC_OK) bench_die("the target", mlc_error_last());
  if (load_module(&m, o.module) != MLC_OK) bench_die("the module", mlc_error_last());
  snprintf(tmp_root, sizeof tmp_root, "/tmp/bench_compile.XXXXXX");
  if (!mkdtemp(tmp_root)) bench_die("mkdtemp", "cannot create a temporary directory in /tmp");
  atexit(remove_tmp);
  printf("module:  %s (%d functions) for %s\n", o.module, m->nfuncs, mlc_target_str(&target, tstr, sizeof tstr));
  double load[1];
  if (getloadavg(load, 1) == 1 && load[0] > 1.0)
    printf("note:    load average %.2f before anything of ours runs: other work shares the CPUs; the figures "
           "carry its noise\n", load[0]);
  const char *what = "";
  int rc = run(&o, m, &target, &what);
  if (rc != MLC_OK) fprintf(stderr, "bench_compile: %s: %s\n", what, mlc_error_last());
  bench_print_load_at_end();
  tir_module_free(m);
  return rc == MLC_OK ? 0 : 1;
}
