/*
 * bench_gemm.c - how fast the code this compiler generates runs, against
 * OpenBLAS and the machine's FMA peak measured in the same run (issue 4,
 * "Benchmark"; docs/compiler/benchmark.md has the method and the figures).
 *
 * Problems: GMM-1024 and GMM-512 (fp32, row-major C = A B) and C2D
 * (ResNet's 3x3 conv, 64 -> 64 channels, 56x56, NHWC). Each is built from
 * its built-in workload scheduled by hand-written traces (bench/traces/, in
 * TVM's Python form) with mlc_build, loaded with mlc_jit_load and called
 * through the DLTensor ABI. Beside them:
 *  - OpenBLAS cblas_sgemm (for C2D: im2col, then sgemm), loaded with dlopen
 *    in one forked child per core type setting - as detected
 *    (OPENBLAS_CORETYPE unset), Haswell (what the environment may set) and
 *    SkylakeX (AVX-512 kernels) - because OpenBLAS picks its kernels when it
 *    is loaded; the best of them is the peer the ratios are taken against;
 *  - the FMA peak: 16 independent vfmadd231ps zmm chains on each thread.
 * Every contender runs with 1 and 2 threads: ours through the runtime's
 * pool (mlc_rt_set_num_threads; kernels are built for -num-cores=2),
 * OpenBLAS through openblas_set_num_threads, the peak loop on 1 or 2
 * threads at once.
 *
 * Timing: per (problem, threads, contender) one warm-up, then `number`
 * grown until a repeat lasts --min-ms; then --repeat rounds, each timing
 * one repeat of every contender in turn, so a change of machine load hits
 * all of them alike. Printed: GFLOP/s (median of the repeats, best beside
 * it), the ratio to the best OpenBLAS (medians), % of the FMA peak at the
 * same thread count (medians), and the max relative error of each result
 * against a float64 reference - how a -fast-math build's accuracy compares
 * with OpenBLAS's. The load average is printed first: run on a quiet
 * machine.
 *
 *   bench_gemm [--cases GMM-1024,GMM-512,C2D] [--threads 1,2] [--repeat R]
 *              [--min-ms MS] [--traces DIR]
 *              [--variants fma,fastmath,exact,tiled,ssrsrs]
 *              [--retries N] [--dump tir|ll|asm] [--no-openblas]
 *
 * Variants (all_variants: a trace in --traces, default bench/traces beside
 * this source, and the target options it is built with):
 *   fma       the register tile's multiply-adds tensorized by
 *             avx512_fp32_fma_16x4 (explicit llvm.fma), exact semantics
 *             otherwise (GMM and C2D)
 *   fastmath  the plain GMM trace built with -fast-math (the backend
 *             contracts multiply and add into FMAs)
 *   exact     the plain GMM trace as is: multiply and add stay two rounded
 *             operations, as the interpreter computes them
 *   tiled, ssrsrs  untuned baselines: the codegen tests' small tiled GMM,
 *             and a MetaSchedule-shaped SSRSRS GMM (-fast-math)
 *
 * The problems, the OpenBLAS children, the FMA peak, our kernels and the
 * timing harness live in bench/common/ (shared with bench_tune); this file
 * is the choice of cases and variants, and the report.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/common/blas_peer.h"
#include "bench/common/kernel.h"

#define MAX_CASES BENCH_MAX_CASES

/* ------------------------------------------------------------------------ */
/* Settings                                                                  */
/* ------------------------------------------------------------------------ */

static const bench_case_t all_cases[MAX_CASES] = {
    {"GMM-1024", "GMM", 3, {1024, 1024, 1024}},
    {"GMM-512", "GMM", 3, {512, 512, 512}},
    /* N, H, W, CI, CO, KH, KW, stride, pad: ResNet's 3x3 conv at 56x56. */
    {"C2D", "C2D", 9, {1, 56, 56, 64, 64, 3, 3, 1, 1}},
};

/* A hand-written schedule: a trace in --traces for one workload, and the
 * target options it is built with. */
typedef struct {
  const char *name, *workload, *trace, *target_opts, *what;
} variant_t;

static const variant_t all_variants[] = {
    {"fma", "GMM", "gmm_avx512_fma.py", "", "tensorized fma, exact"},
    {"fastmath", "GMM", "gmm_avx512.py", " -fast-math", "plain, -fast-math"},
    {"exact", "GMM", "gmm_avx512.py", "", "plain, exact mul+add"},
    {"tiled", "GMM", "gmm_tiled.py", " -fast-math", "simple 4x16 tiles, -fast-math"},
    {"ssrsrs", "GMM", "gmm_ssrsrs.py", " -fast-math", "MetaSchedule-style SSRSRS, -fast-math"},
    {"fma", "C2D", "c2d_avx512_fma.py", "", "tensorized fma, exact"},
};

enum { NVARIANTS = sizeof all_variants / sizeof all_variants[0], MAX_CONTENDERS = 4 + NVARIANTS };

typedef struct {
  bench_plan_t plan; /* cases, threads, repeat, min_secs, retries */
  bool variants[NVARIANTS];
  const char *traces_dir;
  const char *dump; /* NULL, "tir", "ll" or "asm" */
  bool openblas;
} opts_t;

/* ------------------------------------------------------------------------ */
/* Our kernels                                                               */
/* ------------------------------------------------------------------------ */

/* The kernel of variant v for case c: the workload scheduled by the
 * variant's trace, built for `llvm -num-cores=2` plus its options. */
static bench_kernel_t *variant_kernel(const opts_t *o, const bench_inputs_t *in, const variant_t *v) {
  char path[4096], tstr[256];
  snprintf(path, sizeof path, "%s/%s", o->traces_dir, v->trace);
  snprintf(tstr, sizeof tstr, "llvm -num-cores=%d%s", BENCH_MAX_THREADS, v->target_opts);
  mlc_target_t target;
  if (mlc_target_parse(&target, tstr) != MLC_OK) bench_die("parsing the target", mlc_error_last());
  tir_func_t *f = NULL;
  if (bench_case_workload(&f, in->c) != MLC_OK) bench_die("building the workload", mlc_error_last());
  sch_t *sch = NULL;
  if (bench_schedule_python_file(&sch, f, path) != MLC_OK) bench_die("applying the trace", mlc_error_last());
  bench_kernel_t *k = NULL;
  if (bench_kernel_build(&k, sch, &target, in, o->dump) != MLC_OK) bench_die("building the kernel", mlc_error_last());
  sch_free(sch);
  tir_func_free(f);
  return k;
}

static void ours_init(bench_contender_t *c, const opts_t *o, const bench_inputs_t *inputs, const variant_t *v) {
  char name[BENCH_NAME_LEN];
  snprintf(name, sizeof name, "mlc %s (%s)", v->name, v->what);
  bench_kernel_contender_init(c, name);
  for (int ci = 0; ci < MAX_CASES; ci++)
    if (o->plan.cases[ci] && strcmp(all_cases[ci].workload, v->workload) == 0)
      bench_kernel_contender_add(c, ci, variant_kernel(o, &inputs[ci], v));
}

/* ------------------------------------------------------------------------ */
/* Report                                                                    */
/* ------------------------------------------------------------------------ */

static void report(const bench_contender_t *cs, int n, const opts_t *o) {
  const bench_plan_t *plan = &o->plan;
  double peak1 = bench_single_thread_peak(cs, n, plan);
  for (int ci = 0; ci < MAX_CASES; ci++) {
    if (!plan->cases[ci]) continue;
    char what[256];
    bench_describe(&all_cases[ci], what, sizeof what);
    printf("\n%s: %s, fp32; GFLOP/s median of %d (best)\n", all_cases[ci].name, what, plan->repeat);
    if (bench_is_conv(&all_cases[ci])) printf("OpenBLAS computes it as im2col (one thread) + sgemm\n");
    bench_report_header(NULL);
    for (int ti = 0; ti < plan->nthreads; ti++) bench_report_rows(cs, n, plan, ci, ti, peak1, -1);
  }
}

/* ------------------------------------------------------------------------ */
/* Command line                                                              */
/* ------------------------------------------------------------------------ */

MLC_NORETURN static void usage(void) {
  fprintf(stderr,
          "usage: bench_gemm [--cases GMM-1024,GMM-512,C2D] [--threads 1,2] [--repeat R]\n"
          "                  [--min-ms MS] [--traces DIR] [--variants fma,fastmath,exact,tiled,ssrsrs]\n"
          "                  [--retries N] [--dump tir|ll|asm] [--no-openblas]\n");
  exit(2);
}

/* Index of the comma-separated item s[0:n] in names (stride bytes apart). */
static int find_name(const char *s, size_t n, const void *names, size_t stride, int count) {
  for (int i = 0; i < count; i++) {
    const char *name = *(const char *const *)((const char *)names + stride * (size_t)i);
    if (strlen(name) == n && strncmp(name, s, n) == 0) return i;
  }
  usage();
}

static void parse_list(opts_t *o, const char *s, char what) {
  bench_plan_t *plan = &o->plan;
  while (*s) {
    size_t n = strcspn(s, ",");
    if (what == 'c') plan->cases[find_name(s, n, all_cases, sizeof all_cases[0], MAX_CASES)] = true;
    if (what == 'v') {
      find_name(s, n, all_variants, sizeof all_variants[0], NVARIANTS); /* exits on an unknown name */
      for (int v = 0; v < NVARIANTS; v++)
        if (strlen(all_variants[v].name) == n && strncmp(all_variants[v].name, s, n) == 0) o->variants[v] = true;
    }
    if (what == 't') {
      int t = atoi(s);
      if (t < 1 || t > BENCH_MAX_THREADS || plan->nthreads >= BENCH_MAX_THREADS) usage();
      plan->threads[plan->nthreads++] = t;
    }
    s += n;
    if (*s == ',') s++;
  }
}

static void parse_args(opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  bench_plan_t *plan = &o->plan;
  plan->repeat = 7;
  plan->retries = 2;
  plan->min_secs = 0.2;
  o->traces_dir = bench_default_traces_dir();
  o->openblas = true;
  bool any_case = false, any_variant = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--no-openblas") == 0) {
      o->openblas = false;
      continue;
    }
    if (!v) usage();
    i++;
    if (strcmp(a, "--cases") == 0) parse_list(o, v, 'c'), any_case = true;
    else if (strcmp(a, "--threads") == 0) parse_list(o, v, 't');
    else if (strcmp(a, "--variants") == 0) parse_list(o, v, 'v'), any_variant = true;
    else if (strcmp(a, "--repeat") == 0) plan->repeat = atoi(v);
    else if (strcmp(a, "--retries") == 0) plan->retries = atoi(v);
    else if (strcmp(a, "--min-ms") == 0) plan->min_secs = atof(v) * 1e-3;
    else if (strcmp(a, "--traces") == 0) o->traces_dir = v;
    else if (strcmp(a, "--dump") == 0) o->dump = v;
    else usage();
  }
  if (plan->repeat < 1 || plan->repeat > BENCH_MAX_REPEAT || plan->retries < 0 || !(plan->min_secs >= 0)) usage();
  if (!any_case) parse_list(o, "GMM-1024,GMM-512,C2D", 'c');
  if (plan->nthreads == 0) parse_list(o, "1,2", 't');
  if (!any_variant) parse_list(o, "fma,fastmath,exact,tiled,ssrsrs", 'v');
  for (int ci = 0; ci < MAX_CASES; ci++) plan->case_of[ci] = &all_cases[ci];
}

int main(int argc, char **argv) {
  bench_set_program("bench_gemm");
  opts_t o;
  parse_args(&o, argc, argv);
  signal(SIGPIPE, SIG_IGN);
  bench_print_machine();
  bench_inputs_t inputs[MAX_CASES] = {0};
  for (int ci = 0; ci < MAX_CASES; ci++)
    if (o.plan.cases[ci]) bench_inputs_init(&inputs[ci], &all_cases[ci]);
  bench_contender_t *cs = calloc(MAX_CONTENDERS, sizeof *cs);
  if (!cs) bench_die("allocation", "out of memory");
  int n = 0;
  /* OpenBLAS first: its children are forked before any thread exists. */
  static const char *const coretypes[] = {NULL, "Haswell", "SkylakeX"};
  for (int i = 0; o.openblas && i < 3; i++)
    if (bench_blas_init(&cs[n], coretypes[i], inputs)) n++;
  bench_peak_init(&cs[n++]);
  for (int v = 0; v < NVARIANTS; v++)
    if (o.variants[v]) ours_init(&cs[n++], &o, inputs, &all_variants[v]);
  if (bench_blas_config()[0]) printf("peer:    %s\n", bench_blas_config());
  fflush(stdout);
  bench_measure(cs, n, &o.plan);
  report(cs, n, &o);
  bench_print_load_at_end();
  for (int i = 0; i < n; i++) bench_contender_free(&cs[i]);
  free(cs);
  for (int ci = 0; ci < MAX_CASES; ci++) bench_inputs_free(&inputs[ci]);
  return 0;
}
