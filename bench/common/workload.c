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

#include "compiler/compiler.h"
#include "runtime/runtime.h"
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

struct bench_wl_kernel {
  mlc_jit_t *jit;
  mlc_packed_fn_t fn;
  float *out;
  int nargs;
  DLTensor args[BENCH_WL_MAX_INPUTS + 1];
  int64_t shapes[BENCH_WL_MAX_INPUTS + 1][TIR_MAX_DIMS];
  const bench_wl_problem_t *p;
};

static int kernel_compile(bench_wl_kernel_t *k, const sch_t *sch, const mlc_target_t *target) {
  mlc_module_t *m = NULL;
  tir_func_t *scheduled = sch_func(sch);
  mlc_lower_options_t lo = {0};
  int rc = mlc_build(&m, &scheduled, 1, target, &lo);
  if (rc == MLC_OK) rc = mlc_jit_load(&k->jit, m);
  if (rc == MLC_OK && !(k->fn = (mlc_packed_fn_t)mlc_jit_lookup(k->jit, scheduled->name)))
    rc = mlc_error_set(MLC_ENOTFOUND, "kernel %s not found in its module", scheduled->name);
  return rc;
}

/* One DLTensor per parameter: the problem's inputs, then our output; each
 * must hold as many elements as the array it is given. */
static int kernel_bind(bench_wl_kernel_t *k, const tir_func_t *f, const bench_wl_problem_t *p) {
  k->p = p;
  k->out = bench_alloc_floats(p->nout);
  if (f->nparams != p->nin + 1)
    return mlc_error_set(MLC_EINVAL, "%s: %d parameters, the problem has %d arrays", f->name, f->nparams, p->nin + 1);
  for (int i = 0; i < f->nparams; i++) {
    const tir_buffer_t *b = f->buffer_map[i];
    if (!b) return mlc_error_set(MLC_EINVAL, "%s: parameter %d is not a buffer", f->name, i);
    size_t elems = 1, want = i < p->nin ? p->in_len[i] : p->nout;
    for (int d = 0; d < b->ndim; d++) {
      if (!tir_as_int(b->shape[d], &k->shapes[i][d]))
        return mlc_error_set(MLC_EINVAL, "%s: parameter %d has a symbolic shape", f->name, i);
      elems *= (size_t)k->shapes[i][d];
    }
    if (elems != want)
      return mlc_error_set(MLC_EINVAL, "%s: parameter %d holds %zu elements, the problem's array %zu", f->name, i,
                           elems, want);
    k->args[i] = (DLTensor){.data = i < p->nin ? p->in[i] : k->out, .device = {kDLCPU, 0}, .ndim = b->ndim,
                            .dtype = {kDLFloat, 32, 1}, .shape = k->shapes[i]};
  }
  k->nargs = f->nparams;
  return MLC_OK;
}

int bench_wl_kernel_build(bench_wl_kernel_t **out, const sch_t *sch, const mlc_target_t *target,
                          const bench_wl_problem_t *p) {
  *out = NULL;
  bench_wl_kernel_t *k = calloc(1, sizeof *k);
  if (!k) return mlc_error_set(MLC_ENOMEM, "out of memory");
  int rc = kernel_compile(k, sch, target);
  if (rc == MLC_OK) rc = kernel_bind(k, sch_func(sch), p);
  if (rc == MLC_OK) {
    mlc_rt_set_num_threads(1);
    if (k->fn(k->args, k->nargs) != 0) rc = mlc_error_set(MLC_ERUNTIME, "the kernel failed: %s", mlc_last_error());
  }
  if (rc != MLC_OK) {
    bench_wl_kernel_free(k);
    return rc;
  }
  *out = k;
  return MLC_OK;
}

void bench_wl_kernel_free(bench_wl_kernel_t *k) {
  if (!k) return;
  mlc_jit_free(k->jit);
  free(k->out);
  free(k);
}

static double kernel_run(bench_contender_t *c, int ci, int threads, int number) {
  bench_wl_kernel_t *k = c->impl[ci];
  mlc_rt_set_num_threads(threads);
  double t0 = bench_now();
  for (int i = 0; i < number; i++)
    if (k->fn(k->args, k->nargs) != 0) bench_die("the kernel failed", mlc_last_error());
  return bench_now() - t0;
}

/* One run on one thread (as kernel.c checks): the schedule, not the
 * number of threads, fixes what each output element sums. */
static double kernel_check(bench_contender_t *c, int ci) {
  bench_wl_kernel_t *k = c->impl[ci];
  memset(k->out, 0xff, sizeof(float) * k->p->nout); /* NaNs: an element never written shows */
  kernel_run(c, ci, 1, 1);
  return bench_wl_error(k->out, k->p);
}

static void kernel_contender_free(bench_contender_t *c) {
  for (int ci = 0; ci < BENCH_MAX_CASES; ci++) {
    bench_wl_kernel_free(c->impl[ci]);
    c->impl[ci] = NULL;
  }
}

void bench_wl_kernel_contender(bench_contender_t *c, const char *name, int ci, bench_wl_kernel_t *k) {
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  c->run = kernel_run;
  c->check = kernel_check;
  c->free = kernel_contender_free;
  c->impl[ci] = k;
}
