/*
 * cublas_peer.c - cuBLAS GEMM measured in a forked child (cublas_peer.h).
 *
 * cuBLAS is column-major: the row-major C = A B is the column-major
 * C^T = B^T A^T, i.e. gemm(N, N, n, m, k, B, ldb = n, A, lda = k, C, ldc = n).
 * It runs on the legacy default stream, which is also the runtime's stream
 * when none is set, so the runtime's event timers bracket its kernels.
 * Declarations are cuBLAS's public C ABI (cublas_api.h): a handle is a
 * pointer, statuses and enums ints.
 */
#include "bench/common/cublas_peer.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "support/support.h"
#include "tir/tir.h"

enum {
  CUBLAS_OP_N = 0,
  CUDA_R_32F = 0,
  CUDA_R_16F = 2,
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99,
  MAX_REPEAT = 64,
  SAMPLES = 16,
};

typedef struct {
  int (*create)(void **handle);
  int (*destroy)(void *handle);
  int (*sgemm)(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *a, int lda,
               const float *b, int ldb, const float *beta, float *c, int ldc);
  int (*gemm_ex)(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *a, int atype,
                 int lda, const void *b, int btype, int ldb, const void *beta, void *c, int ctype, int ldc,
                 int compute, int algo);
} cublas_t;

typedef struct {
  int32_t ok;
  double secs;
  char why[512];
} answer_t;

static bool load_cublas(cublas_t *cb, char *why, size_t len) {
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so",
                                      "/usr/local/cuda/lib64/libcublas.so.13",
                                      "/usr/local/cuda/lib64/libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so"};
  void *lib = NULL;
  char first[256] = "";
  for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib && !first[0]) snprintf(first, sizeof first, "%s", dlerror());
  }
  if (!lib) {
    snprintf(why, len, "no cuBLAS (%s)", first);
    return false;
  }
  static const char *const sym_names[] = {"cublasCreate_v2", "cublasDestroy_v2", "cublasSgemm_v2", "cublasGemmEx"};
  void *syms[4];
  for (int i = 0; i < 4; i++)
    if (!(syms[i] = dlsym(lib, sym_names[i]))) {
      snprintf(why, len, "cuBLAS lacks %s", sym_names[i]);
      return false;
    }
  memcpy(&cb->create, &syms[0], sizeof syms[0]);
  memcpy(&cb->destroy, &syms[1], sizeof syms[1]);
  memcpy(&cb->sgemm, &syms[2], sizeof syms[2]);
  memcpy(&cb->gemm_ex, &syms[3], sizeof syms[3]);
  return true;
}

typedef struct {
  const bench_cublas_case_t *c;
  cublas_t cb;
  void *handle;
  void *a, *b, *out; /* device */
  float *ha, *hb;    /* host values as the GPU sees them (fp16 rounded) */
} gemm_t;

static int call(const gemm_t *g) {
  const bench_cublas_case_t *c = g->c;
  float one = 1, zero = 0;
  int m = (int)c->m, n = (int)c->n, k = (int)c->k;
  if (!c->fp16) return g->cb.sgemm(g->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, g->b, n, g->a, k, &zero, g->out, n);
  return g->cb.gemm_ex(g->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, g->b, CUDA_R_16F, n, g->a, CUDA_R_16F, k,
                       &zero, g->out, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
}

/* Random values in [1, 10) into a device buffer (and their host copy). */
static bool upload(const gemm_t *g, void *dev, float *host, size_t count, mlc_rng_t *rng) {
  size_t esize = g->c->fp16 ? 2 : 4;
  void *buf = malloc(count * esize);
  if (!buf) return false;
  for (size_t i = 0; i < count; i++) {
    float v = (float)(1.0 + 9.0 * mlc_rng_uniform(rng));
    if (g->c->fp16) {
      uint16_t h = tir_f32_to_f16(v);
      ((uint16_t *)buf)[i] = h;
      host[i] = tir_f16_to_f32(h);
    } else {
      ((float *)buf)[i] = v;
      host[i] = v;
    }
  }
  bool ok = mlc_rt_gpu_copy_to_device(MLC_RT_GPU_CUDA, g->c->device, dev, buf, count * esize) == 0;
  free(buf);
  return ok;
}

/* A sample of C against float64 dot products. */
static bool check_sample(const gemm_t *g, char *why, size_t len) {
  const bench_cublas_case_t *c = g->c;
  size_t count = (size_t)(c->m * c->n);
  float *hc = malloc(count * sizeof *hc);
  if (!hc || mlc_rt_gpu_copy_to_host(MLC_RT_GPU_CUDA, c->device, hc, g->out, count * sizeof *hc) != 0) {
    snprintf(why, len, "copying C back: %s", hc ? mlc_last_error() : "out of memory");
    free(hc);
    return false;
  }
  bool ok = true;
  for (int s = 0; s < SAMPLES && ok; s++) {
    int64_t i = (int64_t)s * 7919 % c->m, j = (int64_t)s * 104729 % c->n;
    double want = 0;
    for (int64_t l = 0; l < c->k; l++) want += (double)g->ha[i * c->k + l] * g->hb[l * c->n + j];
    double got = hc[i * c->n + j];
    if (fabs(got - want) > 1e-3 * fabs(want)) {
      snprintf(why, len, "cuBLAS gives C[%lld, %lld] = %.9g, expected %.9g", (long long)i, (long long)j, got, want);
      ok = false;
    }
  }
  free(hc);
  return ok;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Median seconds per call, as measure_gpu.c times a candidate. */
static bool time_calls(const gemm_t *g, double *secs, char *why, size_t len) {
  const bench_cublas_case_t *c = g->c;
  double runs[MAX_REPEAT];
  int number = 1, repeat = c->repeat < 1 ? 1 : c->repeat > MAX_REPEAT ? MAX_REPEAT : c->repeat;
  for (int r = 0; r < repeat; r++) {
    for (;;) {
      mlc_rt_gpu_timer_t *t = NULL;
      double elapsed = 0;
      int st = mlc_rt_gpu_timer_start(MLC_RT_GPU_CUDA, c->device, &t);
      for (int i = 0; st == 0 && i < number; i++) st = call(g) ? -1 : 0;
      if (t && mlc_rt_gpu_timer_stop(t, &elapsed) != 0) st = -1;
      if (st != 0) {
        snprintf(why, len, "timing cuBLAS: %s", *mlc_last_error() ? mlc_last_error() : "a call failed");
        return false;
      }
      if (elapsed >= c->min_repeat_ms * 1e-3 || number > (1 << 20)) {
        runs[r] = elapsed / number;
        break;
      }
      number = (int)fmax(2.0 * number, ceil(number * c->min_repeat_ms * 1e-3 / fmax(elapsed, 1e-9) * 1.2));
    }
  }
  qsort(runs, (size_t)repeat, sizeof *runs, cmp_double);
  *secs = repeat % 2 ? runs[repeat / 2] : (runs[repeat / 2 - 1] + runs[repeat / 2]) / 2;
  return true;
}

static void child(answer_t *ans, const bench_cublas_case_t *c) {
  gemm_t g = {.c = c};
  size_t esize = c->fp16 ? 2 : 4;
  size_t na = (size_t)(c->m * c->k), nb = (size_t)(c->k * c->n), nc = (size_t)(c->m * c->n);
  char *why = ans->why;
  size_t len = sizeof ans->why;
  if (mlc_rt_gpu_init(MLC_RT_GPU_CUDA) != 0) {
    snprintf(why, len, "%s", mlc_last_error());
    return;
  }
  if (!load_cublas(&g.cb, why, len)) return;
  g.ha = malloc(na * sizeof *g.ha);
  g.hb = malloc(nb * sizeof *g.hb);
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 1);
  if (!g.ha || !g.hb || mlc_rt_gpu_alloc(MLC_RT_GPU_CUDA, c->device, na * esize, &g.a) != 0 ||
      mlc_rt_gpu_alloc(MLC_RT_GPU_CUDA, c->device, nb * esize, &g.b) != 0 ||
      mlc_rt_gpu_alloc(MLC_RT_GPU_CUDA, c->device, nc * 4, &g.out) != 0 || !upload(&g, g.a, g.ha, na, &rng) ||
      !upload(&g, g.b, g.hb, nb, &rng)) {
    snprintf(why, len, "buffers: %s", *mlc_last_error() ? mlc_last_error() : "out of memory");
    return; /* the child exits: the process takes everything with it */
  }
  int st = g.cb.create(&g.handle);
  if (st != 0) {
    snprintf(why, len, "cublasCreate: status %d", st);
    return;
  }
  st = call(&g);
  if (st != 0 || mlc_rt_gpu_sync(MLC_RT_GPU_CUDA, c->device) != 0) {
    snprintf(why, len, "%s: %s", c->fp16 ? "cublasGemmEx" : "cublasSgemm",
             st ? "a nonzero status" : mlc_last_error());
    return;
  }
  if (!check_sample(&g, why, len) || !time_calls(&g, &ans->secs, why, len)) return;
  g.cb.destroy(g.handle);
  ans->ok = 1;
}

int bench_cublas_gemm(double *secs, char *why, size_t len, const bench_cublas_case_t *c) {
  *secs = 0;
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(why, len, "pipe: %s", strerror(errno));
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    answer_t ans;
    memset(&ans, 0, sizeof ans);
    child(&ans, c);
    ssize_t w = write(fds[1], &ans, sizeof ans);
    _exit(w == (ssize_t)sizeof ans ? 0 : 1);
  }
  close(fds[1]);
  answer_t ans;
  memset(&ans, 0, sizeof ans);
  ssize_t got = pid > 0 ? read(fds[0], &ans, sizeof ans) : -1;
  close(fds[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  if (got != (ssize_t)sizeof ans) {
    snprintf(why, len, "the cuBLAS process ended without an answer (status %d)", status);
    return -1;
  }
  ans.why[sizeof ans.why - 1] = '\0';
  if (!ans.ok) {
    snprintf(why, len, "%s", ans.why);
    return -1;
  }
  *secs = ans.secs;
  return 0;
}
