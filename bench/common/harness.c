/*
 * harness.c - calibration, interleaved repeats, the FMA peak as a noise
 * meter, and the report rows every GEMM-shaped benchmark prints. See
 * harness.h for the method.
 */
#include "bench/common/harness.h"

#include <errno.h>
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm/Config/llvm-config.h>

/* Attempts each (case, thread index) section took (bench_measure). */
static int attempts[BENCH_MAX_CASES][BENCH_MAX_THREADS];

bool bench_takes_part(const bench_contender_t *c, int ci) { return c->is_peak || c->is_blas || c->impl[ci]; }

void bench_contender_free(bench_contender_t *c) {
  if (c->free) c->free(c);
  memset(c, 0, sizeof *c);
}

/* ------------------------------------------------------------------------ */
/* The FMA peak                                                              */
/* ------------------------------------------------------------------------ */

/* One thread's share: 16 independent chains (FMA latency 4 x 2 ports needs
 * 8 to keep both ports busy) of vfmadd231ps, PEAK_ITERS times, on zmm
 * registers, or ymm where the CPU has no AVX-512. */
enum { PEAK_CHAINS = 16, PEAK_ITERS = 1 << 20 };
static int peak_lanes = 16;

#define PEAK_CHAIN_LIST(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

/* The chains of vector type V (SET1 its broadcast): each function defines
 * ACC_(i), STEP_(i) and SUM_(i) for chain i with its own intrinsics. */
#define PEAK_LOOP(V, SET1)                                               \
  V x = SET1(0.999999f), y = SET1(1e-6f), sum = x;                       \
  PEAK_CHAIN_LIST(ACC_)                                                  \
  for (long it = 0; it < iters; it++) {                                  \
    PEAK_CHAIN_LIST(STEP_)                                               \
  }                                                                      \
  PEAK_CHAIN_LIST(SUM_)

__attribute__((target("avx512f"))) static float peak_avx512(long iters) {
#define ACC_(i) __m512 acc##i = _mm512_set1_ps(1.0f + (float)(i) * 1e-3f);
#define STEP_(i) acc##i = _mm512_fmadd_ps(acc##i, x, y);
#define SUM_(i) sum = _mm512_add_ps(sum, acc##i);
  PEAK_LOOP(__m512, _mm512_set1_ps)
  return _mm512_reduce_add_ps(sum);
#undef ACC_
#undef STEP_
#undef SUM_
}

__attribute__((target("avx2,fma"))) static float peak_avx2(long iters) {
#define ACC_(i) __m256 acc##i = _mm256_set1_ps(1.0f + (float)(i) * 1e-3f);
#define STEP_(i) acc##i = _mm256_fmadd_ps(acc##i, x, y);
#define SUM_(i) sum = _mm256_add_ps(sum, acc##i);
  PEAK_LOOP(__m256, _mm256_set1_ps)
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return lanes[0] + lanes[7];
#undef ACC_
#undef STEP_
#undef SUM_
}

typedef struct {
  long iters;
  float result;
} peak_job_t;

static void *peak_thread(void *arg) {
  peak_job_t *job = arg;
  job->result = peak_lanes == 16 ? peak_avx512(job->iters) : peak_avx2(job->iters);
  return NULL;
}

static volatile float peak_sink;

static double peak_run(bench_contender_t *c, int ci, int threads, int number) {
  (void)c, (void)ci;
  pthread_t tid[BENCH_MAX_THREADS];
  peak_job_t jobs[BENCH_MAX_THREADS];
  double t0 = bench_now();
  for (int t = 0; t < threads; t++) {
    jobs[t].iters = (long)PEAK_ITERS * number;
    if (t > 0 && pthread_create(&tid[t], NULL, peak_thread, &jobs[t]) != 0)
      bench_die("pthread_create", strerror(errno));
  }
  peak_thread(&jobs[0]);
  for (int t = 1; t < threads; t++) pthread_join(tid[t], NULL);
  double secs = bench_now() - t0;
  for (int t = 0; t < threads; t++) peak_sink += jobs[t].result;
  return secs;
}

static double no_check(bench_contender_t *c, int ci) {
  (void)c, (void)ci;
  return NAN;
}

void bench_peak_init(bench_contender_t *c) {
  memset(c, 0, sizeof *c);
  __builtin_cpu_init();
  peak_lanes = __builtin_cpu_supports("avx512f") ? 16 : 8;
  snprintf(c->name, sizeof c->name, "FMA peak (vfmadd231ps %s x %d per thread)", peak_lanes == 16 ? "zmm" : "ymm",
           PEAK_CHAINS);
  c->is_peak = true;
  c->run = peak_run;
  c->check = no_check;
}

/* ------------------------------------------------------------------------ */
/* Measurement                                                               */
/* ------------------------------------------------------------------------ */

static double flops_of(const bench_contender_t *c, const bench_plan_t *plan, int ci, int threads) {
  if (c->is_peak) return 2.0 * peak_lanes * PEAK_CHAINS * (double)PEAK_ITERS * threads;
  return bench_case_flops(plan->case_of[ci]);
}

/* One warm-up run, then number grown until a repeat lasts min_secs. */
static int calibrate(bench_contender_t *c, int ci, int threads, double min_secs) {
  c->run(c, ci, threads, 1);
  int number = 1;
  for (;;) {
    double dt = c->run(c, ci, threads, number);
    if (dt >= min_secs || number >= (1 << 20)) return number;
    int grow = dt > 0 ? (int)(min_secs / dt * number * 1.2) + 1 : number * 10;
    number = grow > number * 10 ? number * 10 : grow;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

bench_rate_t bench_rate_of(const bench_contender_t *c, const bench_plan_t *plan, int ci, int ti) {
  double s[BENCH_MAX_REPEAT];
  int n = plan->repeat;
  memcpy(s, c->secs[ci][ti], sizeof(double) * (size_t)n);
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  double fl = flops_of(c, plan, ci, plan->threads[ti]) * 1e-9;
  return (bench_rate_t){fl / med, fl / s[0]};
}

/* `repeat` rounds of section (case ci, thread index ti), each timing one
 * repeat of every contender in turn. */
static void measure_rounds(bench_contender_t *cs, int n, const bench_plan_t *plan, int ci, int ti) {
  for (int r = 0; r < plan->repeat; r++)
    for (int i = 0; i < n; i++) {
      if (!bench_takes_part(&cs[i], ci)) continue;
      int number = cs[i].number[ci][ti];
      cs[i].secs[ci][ti][r] = cs[i].run(&cs[i], ci, plan->threads[ti], number) / number;
    }
}

/* How undisturbed a section was: the FMA peak's median over what it should
 * be (threads x the best one-thread peak so far, or its own best). 1 when
 * no peak takes part (nothing to tell by). */
static double quietness(const bench_contender_t *cs, int n, const bench_plan_t *plan, int ci, int ti, double peak1) {
  for (int i = 0; i < n; i++) {
    if (!cs[i].is_peak) continue;
    bench_rate_t r = bench_rate_of(&cs[i], plan, ci, ti);
    double expect = peak1 > r.best / plan->threads[ti] ? peak1 * plan->threads[ti] : r.best;
    return r.median / expect;
  }
  return 1;
}

/* One section: calibrate every contender, then measure it until the peak
 * says it was quiet or the retries run out, keeping the quietest attempt:
 * other work on the machine comes in bursts. */
static void measure_section(bench_contender_t *cs, int n, const bench_plan_t *plan, int ci, int ti, double peak1) {
  double (*kept)[BENCH_MAX_REPEAT] = calloc((size_t)n, sizeof *kept);
  if (!kept) bench_die("allocation", "out of memory");
  for (int i = 0; i < n; i++)
    if (bench_takes_part(&cs[i], ci)) cs[i].number[ci][ti] = calibrate(&cs[i], ci, plan->threads[ti], plan->min_secs);
  double best_q = -1;
  for (int attempt = 0; attempt <= plan->retries && best_q < 0.9; attempt++) {
    measure_rounds(cs, n, plan, ci, ti);
    double q = quietness(cs, n, plan, ci, ti, peak1);
    attempts[ci][ti] = attempt + 1;
    if (q <= best_q) continue;
    best_q = q;
    for (int i = 0; i < n; i++) memcpy(kept[i], cs[i].secs[ci][ti], sizeof(double) * (size_t)plan->repeat);
  }
  for (int i = 0; i < n; i++) memcpy(cs[i].secs[ci][ti], kept[i], sizeof(double) * (size_t)plan->repeat);
  free(kept);
}

void bench_measure(bench_contender_t *cs, int n, const bench_plan_t *plan) {
  double peak1 = 0;
  for (int ci = 0; ci < BENCH_MAX_CASES; ci++) {
    if (!plan->cases[ci]) continue;
    for (int i = 0; i < n; i++)
      if (bench_takes_part(&cs[i], ci)) cs[i].error[ci] = cs[i].check(&cs[i], ci);
    for (int ti = 0; ti < plan->nthreads; ti++) {
      measure_section(cs, n, plan, ci, ti, peak1);
      for (int i = 0; i < n && plan->threads[ti] == 1; i++) {
        double best = cs[i].is_peak ? bench_rate_of(&cs[i], plan, ci, ti).best : 0;
        if (best > peak1) peak1 = best;
      }
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Report                                                                    */
/* ------------------------------------------------------------------------ */

double bench_single_thread_peak(const bench_contender_t *cs, int n, const bench_plan_t *plan) {
  double best = 0;
  for (int i = 0; i < n; i++)
    for (int ci = 0; cs[i].is_peak && ci < BENCH_MAX_CASES; ci++)
      for (int ti = 0; plan->cases[ci] && ti < plan->nthreads; ti++) {
        double b = plan->threads[ti] == 1 ? bench_rate_of(&cs[i], plan, ci, ti).best : 0;
        if (b > best) best = b;
      }
  return best;
}

double bench_blas_median(const bench_contender_t *cs, int n, const bench_plan_t *plan, int ci, int ti) {
  double blas = 0;
  for (int i = 0; i < n; i++) {
    if (!cs[i].is_blas) continue;
    double m = bench_rate_of(&cs[i], plan, ci, ti).median;
    if (m > blas) blas = m;
  }
  return blas;
}

void bench_report_header(const char *ref_label) {
  printf("%-46s %3s %17s %8s", "contender", "thr", "GFLOP/s", "vs BLAS");
  if (ref_label) printf(" %8s", ref_label);
  printf(" %7s %9s\n", "% peak", "max rel err");
}

/* "  1.06x" into the row, or blanks when there is nothing to divide by. */
static void print_ratio(double num, double den, bool show) {
  if (show && den > 0) printf(" %7.2fx", num / den);
  else printf(" %8s", "");
}

void bench_report_rows(const bench_contender_t *cs, int n, const bench_plan_t *plan, int ci, int ti, double peak1,
                       int ref) {
  bench_rate_t peak = {0, 0};
  double blas = bench_blas_median(cs, n, plan, ci, ti);
  double ref_median = ref >= 0 && bench_takes_part(&cs[ref], ci) ? bench_rate_of(&cs[ref], plan, ci, ti).median : 0;
  for (int i = 0; i < n; i++)
    if (cs[i].is_peak) peak = bench_rate_of(&cs[i], plan, ci, ti);
  for (int i = 0; i < n; i++) {
    if (!bench_takes_part(&cs[i], ci)) continue;
    bench_rate_t r = bench_rate_of(&cs[i], plan, ci, ti);
    printf("%-46.46s %3d %8.1f (%6.1f)", cs[i].name, plan->threads[ti], r.median, r.best);
    print_ratio(r.median, blas, !cs[i].is_peak);
    if (ref >= 0) print_ratio(r.median, ref_median, !cs[i].is_peak);
    if (peak.median > 0) printf(" %6.1f%%", 100.0 * r.median / peak.median);
    if (!isnan(cs[i].error[ci])) printf(" %11.2e", cs[i].error[ci]);
    printf("\n");
  }
  /* The peak loop touches no memory and always does the same work, so its
   * shortfall from t times the best one-thread peak is the machine's noise,
   * not the code's. */
  double expect = peak1 > 0 ? peak1 * plan->threads[ti] : peak.best;
  if (peak.median > 0 && peak.median < 0.9 * expect)
    printf("  (busy machine: the FMA peak's median is %.0f%% below %.0f GFLOP/s; other work shared the CPUs)\n",
           100.0 * (1.0 - peak.median / expect), expect);
  if (attempts[ci][ti] > 1) printf("  (the quietest of %d attempts at this section)\n", attempts[ci][ti]);
}

/* ------------------------------------------------------------------------ */
/* The machine                                                               */
/* ------------------------------------------------------------------------ */

void bench_print_machine(void) {
  char model[256];
  mlc_cpu_model(model, sizeof model);
  double load[3] = {0};
  if (getloadavg(load, 3) < 0) load[0] = load[1] = load[2] = NAN;
  mlc_target_t host;
  mlc_target_host(&host);
  char tstr[512];
  printf("machine: %s, %ld CPUs online; load average %.2f %.2f %.2f\n", model, sysconf(_SC_NPROCESSORS_ONLN),
         load[0], load[1], load[2]);
  printf("target:  %s (LLVM %s)\n", mlc_target_str(&host, tstr, sizeof tstr), LLVM_VERSION_STRING);
}

void bench_print_load_at_end(void) {
  double load[3];
  if (getloadavg(load, 3) == 3) printf("\nload average at the end: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
}
