/*
 * gemm_main.c - calls the `gmm` function of libraries mlc-compile built
 * from a GMM workload (`mlc-tir workload GMM --shape M,N,K`: C = A · B,
 * float32, A[M, K], B[K, N], C[M, N]) and compares them: each library is
 * loaded with dlopen, called through the DLPack ABI on the same inputs,
 * checked against a float64 reference computed here, and timed as the
 * measurement times a candidate: after a warm-up call, 15 runs of 10 calls
 * back to back on 64-byte aligned buffers, the median run per call. The README's main job uses it to show
 * what tuning bought: the library compiled with the database against the
 * one compiled without it (the default schedule).
 *
 *   gemm_main M N K LIB.so [LIB2.so ...]
 *
 * Prints one line per library (median ms, GFLOP/s, largest relative error)
 * and, from the second on, its speedup over the first. Exit status: 0
 * every library ran and matched, 1 a load, call or comparison failed, 2 bad
 * usage. Needs only libc, dlfcn and <dlpack/dlpack.h>.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, dlopen with -std=c11 */

#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int32_t (*packed_fn)(DLTensor *args, int32_t num_args);
typedef const char *(*last_error_fn)(void);

enum { RUNS = 15, NUMBER = 10 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* n floats, 64-byte aligned (free()); NULL when out of memory. */
static float *alloc_floats(int64_t n) {
  size_t bytes = ((size_t)n * sizeof(float) + 63) / 64 * 64;
  return aligned_alloc(64, bytes);
}

static DLTensor tensor(float *data, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

/* Calls lib's gmm, checks C against ref, times it: the median seconds, or
 * a negative value after printing why. */
static double run_lib(const char *path, int64_t m, int64_t n, int64_t k, const float *a, const float *b,
                      float *c, const double *ref) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "gemm_main: %s\n", dlerror());
    return -1;
  }
  packed_fn gmm = (packed_fn)(uintptr_t)dlsym(lib, "gmm");
  last_error_fn last_error = (last_error_fn)(uintptr_t)dlsym(lib, "mlc_last_error");
  if (!gmm) {
    fprintf(stderr, "gemm_main: %s has no function gmm\n", path);
    dlclose(lib);
    return -1;
  }
  int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
  DLTensor args[3] = {tensor((float *)a, sa), tensor((float *)b, sb), tensor(c, sc)};
  double times[RUNS], secs = -1;
  int rc = gmm(args, 3); /* warm-up, and the result checked */
  for (int i = 0; rc == 0 && i < RUNS; i++) { /* a run: NUMBER calls back to back */
    double t0 = now_s();
    for (int j = 0; rc == 0 && j < NUMBER; j++) rc = gmm(args, 3);
    times[i] = (now_s() - t0) / NUMBER;
  }
  if (rc != 0) {
    fprintf(stderr, "gemm_main: %s: gmm returned %d: %s\n", path, rc, last_error ? last_error() : "?");
  } else {
    double worst = 0;
    for (int64_t i = 0; i < m * n; i++) {
      double err = fabs((double)c[i] - ref[i]) / fmax(fabs(ref[i]), 1e-30);
      if (err > worst) worst = err;
    }
    qsort(times, RUNS, sizeof times[0], cmp_double);
    secs = times[RUNS / 2];
    printf("%-40s %10.3f ms %9.1f GFLOP/s   max rel. error %.1e", path, secs * 1e3,
           2.0 * (double)m * (double)n * (double)k / secs * 1e-9, worst);
    if (worst > 1e-4) {
      printf("  WRONG\n");
      secs = -1;
    }
  }
  dlclose(lib);
  return secs;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: gemm_main M N K LIB.so [LIB2.so ...]\n");
    return 2;
  }
  int64_t m = atoll(argv[1]), n = atoll(argv[2]), k = atoll(argv[3]);
  if (m <= 0 || n <= 0 || k <= 0 || m > 8192 || n > 8192 || k > 8192) {
    fprintf(stderr, "gemm_main: M, N and K must be integers in [1, 8192]\n");
    return 2;
  }
  /* 64-byte aligned, as the measurement's buffers are: with AVX-512 a
   * vector that straddles two cache lines costs two loads. */
  float *a = alloc_floats(m * k), *b = alloc_floats(k * n), *c = alloc_floats(m * n);
  double *ref = calloc((size_t)(m * n), sizeof(double));
  if (!a || !b || !c || !ref) {
    fprintf(stderr, "gemm_main: out of memory\n");
    return 1;
  }
  uint64_t s = 1;
  for (int64_t i = 0; i < m * k; i++) a[i] = (float)(1 + (s = s * 6364136223846793005ULL + 1) % 9000 / 1000.0);
  for (int64_t i = 0; i < k * n; i++) b[i] = (float)(1 + (s = s * 6364136223846793005ULL + 1) % 9000 / 1000.0);
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = 0; p < k; p++)
      for (int64_t j = 0; j < n; j++) ref[i * n + j] += (double)a[i * k + p] * (double)b[p * n + j];
  int status = 0;
  double first = 0;
  for (int i = 4; i < argc; i++) {
    double secs = run_lib(argv[i], m, n, k, a, b, c, ref);
    if (secs < 0) {
      status = 1;
      continue;
    }
    if (i == 4) first = secs;
    if (i > 4 && first > 0) printf("   %.2fx the first", first / secs);
    printf("\n");
  }
  free(a);
  free(b);
  free(c);
  free(ref);
  return status;
}
