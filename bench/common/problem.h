/*
 * problem.h - the GEMM-shaped problems the benchmarks time (GMM, and C2D
 * computed as a GEMM over im2col rows): their dimensions, inputs in the
 * workload's layouts, a float64 reference of the output, and the small
 * helpers every benchmark needs (a monotonic clock, aligned allocation, and
 * die() for a benchmark that cannot go on).
 *
 * Shared by bench_gemm and bench_tune (bench/common/, linked into every
 * bench program); nothing here is part of the libraries.
 */
#ifndef MLC_BENCH_PROBLEM_H
#define MLC_BENCH_PROBLEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/support.h"

/* The most problems one run holds (bench_gemm: GMM-1024, GMM-512, C2D). */
#define BENCH_MAX_CASES 3

/* A problem: a built-in workload (tir_workload_build) at one shape. GMM's
 * shape is M, N, K; C2D's is N, H, W, CI, CO, KH, KW, stride, pad. */
typedef struct {
  const char *name, *workload;
  int nshape;
  int64_t shape[9];
} bench_case_t;

/* The dimensions both workloads reduce to: GMM is C[m, n] = A[m, k] B[k, n];
 * C2D is that GEMM over im2col rows (m output pixels, n output channels,
 * k = KH * KW * CI). */
typedef struct {
  int64_t m, n, k;
  /* C2D only */
  int64_t batch, h, w, ci, kh, kw, stride, pad, oh, ow;
} bench_dims_t;

/* A problem's data. x and y are the two inputs in the workload's layouts
 * (A[m, k] and B[k, n]; or the NHWC image and the HWIO weight), values in
 * [1, 10) as the measurement library fills them; ref is the output computed
 * in float64. Owned (bench_inputs_free). */
typedef struct {
  const bench_case_t *c; /* borrowed: must outlive the inputs */
  bench_dims_t d;
  float *x, *y;
  size_t nx, ny, nout;
  double *ref;
} bench_inputs_t;

/* Ends the program with "PROGRAM: what: detail" on stderr and exit status
 * 1: a benchmark with a broken part has nothing to say. */
MLC_NORETURN void bench_die(const char *what, const char *detail);
/* The program name bench_die prints (default "bench"). */
void bench_set_program(const char *name);

/* Monotonic wall-clock seconds. */
double bench_now(void);
/* n floats aligned to 64 bytes (free()); dies when out of memory. */
float *bench_alloc_floats(size_t n);

bool bench_is_conv(const bench_case_t *c);
bench_dims_t bench_dims_of(const bench_case_t *c);
/* 2 m n k: multiply-adds count two. */
double bench_case_flops(const bench_case_t *c);
/* One line: "C[1024, 1024] = A[1024, 1024] B[1024, 1024]" or the conv's shape. */
void bench_describe(const bench_case_t *c, char *buf, size_t len);

/* Allocates and fills the inputs (seeded: the same values every run) and
 * computes the float64 reference. Dies when out of memory. */
void bench_inputs_init(bench_inputs_t *in, const bench_case_t *c);
void bench_inputs_free(bench_inputs_t *in); /* a zeroed struct is fine */

/* The largest |got - ref| / |ref| over the output (a NaN sticks). */
double bench_max_rel_error(const float *got, const bench_inputs_t *in);

/* im2col for NHWC input and HWIO weights: row m (an output pixel) of col
 * (m x k floats, caller's) holds the KH x KW x CI input values under it,
 * zeros in the padding, in the weight's [KH, KW, CI] order, so
 * out = col x weight is the convolution. */
void bench_im2col(const bench_inputs_t *in, float *col);

#endif /* MLC_BENCH_PROBLEM_H */
