/*
 * workload.c - bench_workloads' problems: inputs, float64 references, the
 * work per call, the error measure, and our kernels bound to them. See
 * workload.h.
 */
#include "bench/common/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"

/* ------------------------------------------------------------------------ */
/* Problems                                                                  */
/* ------------------------------------------------------------------------ */

static const char *const kind_names[] = {"GMM", "BMM", "C2D", "SFM", "LN"};

bool bench_wl_kind_of(const char *workload, bench_wl_kind_t *out) {
  for (int i = 0; i < 5; i++)
    if (strcmp(workload, kind_names[i]) == 0) {
      *out = (bench_wl_kind_t)i;
      return true;
    }
  return false;
}

/* Values in [1, 10), as problem.c and the measurement library fill inputs
 * (the same generator, other seeds). */
static float *random_floats(size_t n, uint64_t seed) {
  float *p = bench_alloc_floats(n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    p[i] = 1.0f + 9.0f * (float)((double)(s >> 40) * (1.0 / 16777216.0));
  }
  return p;
}

static double *alloc_ref(size_t n) {
  double *r = calloc(n, sizeof(double));
  if (!r) bench_die("allocation", "out of memory");
  return r;
}

/* Z[b, i, j] = sum_k X[b, i, k] Y[b, k, j] */
static void ref_bmm(bench_wl_problem_t *p) {
  const int64_t *s = p->c.shape;
  int64_t B = s[0], M = s[1], N = s[2], K = s[3];
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < M; i++) {
      double *z = p->ref + (b * M + i) * N;
      for (int64_t k = 0; k < K; k++) {
        double x = p->in[0][(b * M + i) * K + k];
        const float *y = p->in[1] + (b * K + k) * N;
        for (int64_t j = 0; j < N; j++) z[j] += x * y[j];
      }
    }
}

/* Softmax over each row. */
static void ref_sfm(bench_wl_problem_t *p) {
  int64_t M = p->c.shape[0], N = p->c.shape[1];
  for (int64_t i = 0; i < M; i++) {
    const float *a = p->in[0] + i * N;
    double *out = p->ref + i * N, mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; j++) mx = fmax(mx, a[j]);
    for (int64_t j = 0; j < N; j++) sum += out[j] = exp(a[j] - mx);
    for (int64_t j = 0; j < N; j++) out[j] /= sum;
  }
}

/* Layer normalisation over each row, biased variance, epsilon 1e-5, as
 * tir/workloads.c defines LN. */
static void ref_ln(bench_wl_problem_t *p) {
  int64_t M = p->c.shape[0], N = p->c.shape[1];
  const float *gamma = p->in[1], *beta = p->in[2];
  for (int64_t i = 0; i < M; i++) {
    const float *a = p->in[0] + i * N;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < N; j++) mean += a[j];
    mean /= (double)N;
    for (int64_t j = 0; j < N; j++) var += (a[j] - mean) * (a[j] - mean);
    double inv = 1.0 / sqrt(var / (double)N + 1e-5);
    for (int64_t j = 0; j < N; j++) p->ref[i * N + j] = (a[j] - mean) * inv * gamma[j] + beta[j];
  }
}

/* The inputs of BMM, SFM and LN, in parameter order, and their reference. */
static void init_own(bench_wl_problem_t *p) {
  const int64_t *s = p->c.shape;
  if (p->kind == BENCH_WL_BMM) {
    p->nin = 2;
    p->in_len[0] = (size_t)(s[0] * s[1] * s[3]);
    p->in_len[1] = (size_t)(s[0] * s[3] * s[2]);
    p->nout = (size_t)(s[0] * s[1] * s[2]);
  } else {
    p->nin = p->kind == BENCH_WL_LN ? 3 : 1;
    p->in_len[0] = p->nout = (size_t)(s[0] * s[1]);
    p->in_len[1] = p->in_len[2] = (size_t)s[1]; /* LN's gamma and beta */
  }
  for (int i = 0; i < p->nin; i++) p->in[i] = random_floats(p->in_len[i], 11 + (uint64_t)i);
  p->ref = alloc_ref(p->nout);
  if (p->kind == BENCH_WL_BMM) ref_bmm(p);
  else if (p->kind == BENCH_WL_SFM) ref_sfm(p);
  else ref_ln(p);
}

void bench_wl_problem_init(bench_wl_problem_t *p, const bench_case_t *c) {
  memset(p, 0, sizeof *p);
  p->c = *c;
  if (!bench_wl_kind_of(c->workload, &p->kind)) bench_die(c->name, "not one of GMM, BMM, C2D, SFM, LN");
  int rc = tir_workload_build(&p->func, c->workload, c->shape, c->nshape, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0});
  if (rc != MLC_OK) bench_die(c->name, mlc_error_last());
  p->flop = ms_func_flop(p->func);
  if (p->kind == BENCH_WL_GMM || p->kind == BENCH_WL_C2D) {
    bench_inputs_init(&p->gemm, &p->c);
    p->nin = 2;
    p->in[0] = p->gemm.x, p->in_len[0] = p->gemm.nx;
    p->in[1] = p->gemm.y, p->in_len[1] = p->gemm.ny;
    p->nout = p->gemm.nout;
    p->ref = p->gemm.ref;
  } else {
    init_own(p);
  }
  double top = 0;
  for (size_t i = 0; i < p->nout; i++) top = fmax(top, fabs(p->ref[i]));
  p->ref_floor = 0.01 * top;
}

void bench_wl_problem_free(bench_wl_problem_t *p) {
  if (p->gemm.x) {
    bench_inputs_free(&p->gemm);
  } else {
    for (int i = 0; i < p->nin; i++) free(p->in[i]);
    free(p->ref);
  }
  tir_func_free(p->func);
  memset(p, 0, sizeof *p);
}

double bench_wl_bytes(const bench_wl_problem_t *p) {
  size_t n = p->nout;
  for (int i = 0; i < p->nin; i++) n += p->in_len[i];
  return 4.0 * (double)n;
}

bool bench_wl_memory_bound(const bench_wl_problem_t *p) { return p->kind == BENCH_WL_SFM || p->kind == BENCH_WL_LN; }

void bench_wl_describe(const bench_wl_problem_t *p, char *buf, size_t len) {
  const int64_t *s = p->c.shape;
  long long a = s[0], b = s[1], c = s[2], d = s[3];
  switch (p->kind) {
  case BENCH_WL_GMM:
  case BENCH_WL_C2D: bench_describe(&p->c, buf, len); break;
  case BENCH_WL_BMM:
    snprintf(buf, len, "Z[%lld, %lld, %lld] = X[%lld, %lld, %lld] Y[%lld, %lld, %lld]", a, b, c, a, b, d, a, d, c);
    break;
  case BENCH_WL_SFM: snprintf(buf, len, "softmax over the rows of A[%lld, %lld]", a, b); break;
  case BENCH_WL_LN: snprintf(buf, len, "layer norm over the rows of A[%lld, %lld], gamma, beta, eps 1e-5", a, b); break;
  }
}

double bench_wl_error(const float *got, const bench_wl_problem_t *p) {
  double worst = 0;
  for (size_t i = 0; i < p->nout; i++) {
    double e = fabs((double)got[i] - p->ref[i]) / fmax(fabs(p->ref[i]), p->ref_floor);
    if (!(e <= worst)) worst = e; /* a NaN sticks */
  }
  return worst;
}

/* ------------------------------------------------------------------------ */
/* Our kernels                                                               */
/* ------------------------------------------------------------------------ */

static double wl_error(const float *out, const void *problem) { return bench_wl_error(out, problem); }

int bench_wl_kernel_build(bench_kernel_t **out, const sch_t *sch, const mlc_target_t *target,
                          const bench_wl_problem_t *p) {
  return bench_kernel_build_arrays(out, sch, target, (float *const *)p->in, p->in_len, p->nin, p->nout, wl_error, p,
                                   getenv("MLC_BENCH_DUMP"));
}
