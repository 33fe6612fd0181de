/*
 * workload.h - the problems of bench_workloads: five built-in workloads
 * (GMM, BMM, C2D, SFM, LN; tir_workload_build) at one shape each, with
 * seeded inputs in the workloads' layouts, a float64 reference of the
 * output computed here in C (the interpreter is far too slow for these
 * sizes), the work each call does (floating-point operations, and the bytes
 * it must move at least), and our kernels bound to them as contenders of
 * the timing harness.
 *
 * GMM and C2D are bench/common/problem.c's problems (bench_inputs_t), so
 * the OpenBLAS peer of bench_blas_init serves them unchanged; BMM, SFM and
 * LN are set up here. Every contender writes its own output buffer; the
 * inputs are shared and never written.
 */
#ifndef MLC_BENCH_WORKLOAD_H
#define MLC_BENCH_WORKLOAD_H

#include "bench/common/harness.h"
#include "bench/common/kernel.h"
#include "schedule/schedule.h"

#define BENCH_WL_MAX_INPUTS 3

typedef enum { BENCH_WL_GMM, BENCH_WL_BMM, BENCH_WL_C2D, BENCH_WL_SFM, BENCH_WL_LN } bench_wl_kind_t;

/* One problem. shape[] is the workload's (mlc-tir workload NAME --help):
 * GMM M,N,K; BMM B,M,N,K; C2D N,H,W,CI,CO,KH,KW,stride,pad; SFM and LN M,N. */
typedef struct {
  bench_wl_kind_t kind;
  bench_case_t c;                 /* name, workload name, shape */
  bench_inputs_t gemm;            /* GMM and C2D: the shared problem (owned) */
  int nin;                        /* inputs, in the workload's parameter order */
  float *in[BENCH_WL_MAX_INPUTS]; /* owned (borrowed from gemm for GMM and C2D) */
  size_t in_len[BENCH_WL_MAX_INPUTS];
  size_t nout;                    /* output elements */
  double *ref;                    /* float64 output (owned, or gemm's) */
  double ref_floor;               /* see bench_wl_error */
  tir_func_t *func;               /* the workload, unscheduled (owned) */
  double flop;                    /* of one call: ms_func_flop(func), as mlc-tune counts */
} bench_wl_problem_t;

/* The kind of a workload name ("GMM", ...); false when it is none of the
 * five. */
bool bench_wl_kind_of(const char *workload, bench_wl_kind_t *out);

/* Builds the workload (float32), allocates and fills the inputs (values in
 * [1, 10), seeded: the same every run) and computes the reference. c is
 * copied (its strings must outlive p). Dies when out of memory or when the
 * workload does not build at this shape. */
void bench_wl_problem_init(bench_wl_problem_t *p, const bench_case_t *c);
void bench_wl_problem_free(bench_wl_problem_t *p); /* a zeroed struct is fine */

/* Bytes one call must move at least: every input read once and the output
 * written once, in float32. */
double bench_wl_bytes(const bench_wl_problem_t *p);
/* Whether the workload is judged in GB/s (SFM, LN) rather than GFLOP/s. */
bool bench_wl_memory_bound(const bench_wl_problem_t *p);
/* One line: "Z[16, 128, 128] = X[16, 128, 128] Y[16, 128, 128]" etc. */
void bench_wl_describe(const bench_wl_problem_t *p, char *buf, size_t len);

/* The largest |got - ref| / max(|ref|, ref_floor) over the output, where
 * ref_floor is 1% of the output's largest |ref|: relative error, except
 * where the exact result is near zero (LN's outputs cross zero), which is
 * measured against 1% of the output's scale instead. A NaN sticks. */
double bench_wl_error(const float *got, const bench_wl_problem_t *p);
/* Above this, an output is wrong and its contender gets no ratio. */
#define BENCH_WL_TOLERANCE 1e-3

/* ------------------------------------------------------------------------ */
/* Our kernels                                                               */
/* ------------------------------------------------------------------------ */

/* Our kernel for p (bench_kernel_build_arrays: p's inputs, an output of its
 * own, scored by bench_wl_error; p borrowed: it must outlive the kernel).
 * Make it a contender with bench_kernel_contender_init and _add. */
int bench_wl_kernel_build(bench_kernel_t **out, const sch_t *sch, const mlc_target_t *target,
                          const bench_wl_problem_t *p);

#endif /* MLC_BENCH_WORKLOAD_H */
