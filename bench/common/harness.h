/*
 * harness.h - the timing harness of the benchmarks: contenders behind one
 * small vtable (our kernels, OpenBLAS, the FMA peak), calibration, fair
 * interleaved repeats, the FMA peak as a noise meter with re-measurement of
 * disturbed sections, and the report rows (GFLOP/s, ratio to the best
 * OpenBLAS, % of the peak, max relative error).
 *
 * Method (docs/compiler/benchmark.md): per (case, thread count, contender)
 * one warm-up run, then `number` grown until a repeat lasts min_secs; then
 * `repeat` rounds, each timing one repeat of every contender in turn, so a
 * change of machine load hits all of them alike. The statistic is the
 * median repeat. A section whose FMA peak median is below 90% of what it
 * should be is measured again, up to `retries` times, and the quietest
 * attempt kept.
 */
#ifndef MLC_BENCH_HARNESS_H
#define MLC_BENCH_HARNESS_H

#include "bench/common/problem.h"

#define BENCH_MAX_THREADS 2
#define BENCH_MAX_REPEAT 64
#define BENCH_NAME_LEN 384

/* What to time: the cases taking part (indices into the caller's case
 * array, at most BENCH_MAX_CASES), thread counts, and the method's knobs. */
typedef struct {
  bool cases[BENCH_MAX_CASES];
  const bench_case_t *case_of[BENCH_MAX_CASES]; /* borrowed; set for each case taking part */
  int threads[BENCH_MAX_THREADS];
  int nthreads;
  int repeat;      /* rounds (<= BENCH_MAX_REPEAT); 7 */
  double min_secs; /* the least time of one repeat; 0.2 */
  int retries;     /* re-measurements of a disturbed section; 2 */
} bench_plan_t;

/* Something timed. `run` performs `number` runs of case ci with `threads`
 * threads and returns their seconds; `check` does one run and returns the
 * max relative error of its result (NaN when it has none). A failure inside
 * either ends the program (bench_die). impl[] is the contender's own state
 * per case (NULL where it does not take part, unless is_peak or is_blas:
 * those take part in every case). Results are filled by bench_measure. */
typedef struct bench_contender bench_contender_t;
struct bench_contender {
  char name[BENCH_NAME_LEN];
  bool is_peak, is_blas;
  double (*run)(bench_contender_t *c, int ci, int threads, int number);
  double (*check)(bench_contender_t *c, int ci);
  void (*free)(bench_contender_t *c); /* releases impl[]; NULL when none */
  void *impl[BENCH_MAX_CASES];
  int number[BENCH_MAX_CASES][BENCH_MAX_THREADS];
  double secs[BENCH_MAX_CASES][BENCH_MAX_THREADS][BENCH_MAX_REPEAT];
  double error[BENCH_MAX_CASES];
};

/* Whether c runs case ci. */
bool bench_takes_part(const bench_contender_t *c, int ci);
/* Calls c->free (when set); c stays a zeroed husk. */
void bench_contender_free(bench_contender_t *c);

/* The FMA peak: 16 independent vfmadd231ps chains per thread on zmm
 * registers (ymm without AVX-512), on 1..BENCH_MAX_THREADS threads at once. */
void bench_peak_init(bench_contender_t *c);

/* Checks every contender's result, calibrates and times every section of
 * the plan (see the file comment). */
void bench_measure(bench_contender_t *cs, int n, const bench_plan_t *plan);

typedef struct {
  double median, best; /* GFLOP/s */
} bench_rate_t;

/* The rate of contender c in section (ci, thread index ti). */
bench_rate_t bench_rate_of(const bench_contender_t *c, const bench_plan_t *plan, int ci, int ti);
/* The best one-thread FMA peak measured in the run (0 if none). */
double bench_single_thread_peak(const bench_contender_t *cs, int n, const bench_plan_t *plan);
/* The best OpenBLAS median in a section (0 if none took part). */
double bench_blas_median(const bench_contender_t *cs, int n, const bench_plan_t *plan, int ci, int ti);

/* The column header of bench_report_rows; with ref_label, a column of
 * ratios to that contender ("vs hand"). */
void bench_report_header(const char *ref_label);
/* One row per contender of section (ci, ti): name, threads, GFLOP/s median
 * (best), ratio to the best OpenBLAS, ratio to contender `ref` (when
 * ref >= 0), % of the FMA peak, max relative error; then notes when the
 * peak shows the machine was busy or the section needed retries. peak1:
 * bench_single_thread_peak. */
void bench_report_rows(const bench_contender_t *cs, int n, const bench_plan_t *plan, int ci, int ti, double peak1,
                       int ref);

/* "machine: CPU model, N CPUs online; load average a b c" and the host
 * target with the LLVM version. */
void bench_print_machine(void);
/* "load average at the end: a b c". */
void bench_print_load_at_end(void);

#endif /* MLC_BENCH_HARNESS_H */
