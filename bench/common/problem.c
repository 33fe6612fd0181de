/*
 * problem.c - GEMM-shaped problems: dimensions, seeded inputs, the float64
 * reference every contender's result is compared with, and im2col (what
 * OpenBLAS needs to compute a convolution). See problem.h.
 */
#include "bench/common/problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *program = "bench";

void bench_set_program(const char *name) { program = name; }

void bench_die(const char *what, const char *detail) {
  fprintf(stderr, "%s: %s: %s\n", program, what, detail);
  exit(1);
}

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

float *bench_alloc_floats(size_t n) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  if (!p) bench_die("allocation", "out of memory");
  return p;
}

bool bench_is_conv(const bench_case_t *c) { return strcmp(c->workload, "C2D") == 0; }

bench_dims_t bench_dims_of(const bench_case_t *c) {
  const int64_t *s = c->shape;
  bench_dims_t d = {0};
  if (!bench_is_conv(c)) {
    d.m = s[0], d.n = s[1], d.k = s[2];
    return d;
  }
  d.batch = s[0], d.h = s[1], d.w = s[2], d.ci = s[3], d.n = s[4], d.kh = s[5], d.kw = s[6];
  d.stride = s[7], d.pad = s[8];
  d.oh = (d.h + 2 * d.pad - d.kh) / d.stride + 1;
  d.ow = (d.w + 2 * d.pad - d.kw) / d.stride + 1;
  d.m = d.batch * d.oh * d.ow;
  d.k = d.kh * d.kw * d.ci;
  return d;
}

double bench_case_flops(const bench_case_t *c) {
  bench_dims_t d = bench_dims_of(c);
  return 2.0 * (double)d.m * (double)d.n * (double)d.k;
}

void bench_describe(const bench_case_t *c, char *buf, size_t len) {
  bench_dims_t d = bench_dims_of(c);
  if (!bench_is_conv(c))
    snprintf(buf, len, "C[%lld, %lld] = A[%lld, %lld] B[%lld, %lld]", (long long)d.m, (long long)d.n,
             (long long)d.m, (long long)d.k, (long long)d.k, (long long)d.n);
  else
    snprintf(buf, len, "conv2d NHWC %lldx%lldx%lldx%lld, HWIO %lldx%lld, %lld -> %lld channels, stride %lld, pad %lld",
             (long long)d.batch, (long long)d.h, (long long)d.w, (long long)d.ci, (long long)d.kh,
             (long long)d.kw, (long long)d.ci, (long long)d.n, (long long)d.stride, (long long)d.pad);
}

/* Values in [1, 10), as the measurement library fills inputs (no zeros). */
static void fill_random(float *p, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    p[i] = 1.0f + 9.0f * (float)((double)(s >> 40) * (1.0 / 16777216.0));
  }
}

/* Row m of the left operand in float64 (GEMM: A's row; C2D: the input
 * pixels under output pixel m, zero in the padding). */
static void gather_row(const bench_inputs_t *in, int64_t m, double *row) {
  const bench_dims_t *d = &in->d;
  if (!bench_is_conv(in->c)) {
    for (int64_t k = 0; k < d->k; k++) row[k] = in->x[m * d->k + k];
    return;
  }
  int64_t b = m / (d->oh * d->ow), oh = m / d->ow % d->oh, ow = m % d->ow, k = 0;
  for (int64_t r = 0; r < d->kh; r++)
    for (int64_t s = 0; s < d->kw; s++) {
      int64_t ih = oh * d->stride + r - d->pad, iw = ow * d->stride + s - d->pad;
      bool inside = ih >= 0 && ih < d->h && iw >= 0 && iw < d->w;
      const float *px = in->x + ((b * d->h + ih) * d->w + iw) * d->ci;
      for (int64_t c = 0; c < d->ci; c++) row[k++] = inside ? px[c] : 0.0;
    }
}

void bench_inputs_init(bench_inputs_t *in, const bench_case_t *c) {
  in->c = c;
  in->d = bench_dims_of(c);
  const bench_dims_t *d = &in->d;
  in->nx = bench_is_conv(c) ? (size_t)(d->batch * d->h * d->w * d->ci) : (size_t)(d->m * d->k);
  in->ny = (size_t)(d->k * d->n); /* B[k, n], or the weight [KH, KW, CI, CO] */
  in->nout = (size_t)(d->m * d->n);
  in->x = bench_alloc_floats(in->nx);
  in->y = bench_alloc_floats(in->ny);
  fill_random(in->x, in->nx, 1);
  fill_random(in->y, in->ny, 2);
  in->ref = calloc(in->nout, sizeof(double));
  double *row = calloc((size_t)d->k, sizeof(double));
  if (!in->ref || !row) bench_die("allocation", "out of memory");
  for (int64_t m = 0; m < d->m; m++) {
    gather_row(in, m, row);
    double *out = in->ref + m * d->n;
    for (int64_t k = 0; k < d->k; k++) {
      const float *yrow = in->y + k * d->n;
      for (int64_t n = 0; n < d->n; n++) out[n] += row[k] * yrow[n];
    }
  }
  free(row);
}

void bench_inputs_free(bench_inputs_t *in) {
  free(in->x);
  free(in->y);
  free(in->ref);
  memset(in, 0, sizeof *in);
}

double bench_max_rel_error(const float *got, const bench_inputs_t *in) {
  double worst = 0;
  for (size_t i = 0; i < in->nout; i++) {
    double e = fabs((double)got[i] - in->ref[i]) / fabs(in->ref[i]);
    if (!(e <= worst)) worst = e; /* a NaN sticks */
  }
  return worst;
}

void bench_im2col(const bench_inputs_t *in, float *col) {
  const bench_dims_t *d = &in->d;
  for (int64_t b = 0; b < d->batch; b++)
    for (int64_t oh = 0; oh < d->oh; oh++)
      for (int64_t ow = 0; ow < d->ow; ow++)
        for (int64_t r = 0; r < d->kh; r++)
          for (int64_t s = 0; s < d->kw; s++) {
            int64_t ih = oh * d->stride + r - d->pad, iw = ow * d->stride + s - d->pad;
            float *dst = col + (((b * d->oh + oh) * d->ow + ow) * d->kh * d->kw + r * d->kw + s) * d->ci;
            if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) memset(dst, 0, sizeof(float) * (size_t)d->ci);
            else memcpy(dst, in->x + ((b * d->h + ih) * d->w + iw) * d->ci, sizeof(float) * (size_t)d->ci);
          }
}
