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
 */
#include <dlfcn.h>
#include <errno.h>
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <llvm/Config/llvm-config.h>

#include "compiler/compiler.h"
#include "runtime/runtime.h"
#include "schedule/schedule.h"

#define MAX_CASES 3
#define MAX_THREADS 2
#define MAX_REPEAT 64
#define HELLO_LEN 160 /* OpenBLAS's "corename|config" */

/* ------------------------------------------------------------------------ */
/* Settings                                                                  */
/* ------------------------------------------------------------------------ */

/* A problem: a built-in workload (tir_workload_build) at one shape. */
typedef struct {
  const char *name, *workload;
  int nshape;
  int64_t shape[9];
} case_t;

static const case_t all_cases[MAX_CASES] = {
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
  bool cases[MAX_CASES];
  int threads[MAX_THREADS];
  int nthreads;
  bool variants[NVARIANTS];
  int repeat;
  double min_secs;
  const char *traces_dir;
  const char *dump; /* NULL, "tir", "ll" or "asm" */
  int retries; /* re-measurements of a disturbed section */
  bool openblas;
} opts_t;

/* Attempts each (case, thread index) section took (measure). */
static int attempts[MAX_CASES][MAX_THREADS];

MLC_NORETURN static void die(const char *what, const char *detail) {
  fprintf(stderr, "bench_gemm: %s: %s\n", what, detail);
  exit(1);
}

/* ------------------------------------------------------------------------ */
/* Problems: inputs, float64 references, flops                               */
/* ------------------------------------------------------------------------ */

/* The dimensions both workloads reduce to: GMM is C[m, n] = A[m, k] B[k, n];
 * C2D is that GEMM over im2col rows (m output pixels, n output channels,
 * k = KH * KW * CI). */
typedef struct {
  int64_t m, n, k;
  /* C2D only */
  int64_t batch, h, w, ci, kh, kw, stride, pad, oh, ow;
} dims_t;

typedef struct {
  const case_t *c;
  dims_t d;
  float *x, *y;     /* the two inputs, in the workload's layouts */
  size_t nx, ny, nout;
  double *ref;      /* the output in float64 */
} inputs_t;

static bool is_conv(const case_t *c) { return strcmp(c->workload, "C2D") == 0; }

static dims_t dims_of(const case_t *c) {
  const int64_t *s = c->shape;
  dims_t d = {0};
  if (!is_conv(c)) {
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

static double case_flops(const case_t *c) {
  dims_t d = dims_of(c);
  return 2.0 * (double)d.m * (double)d.n * (double)d.k;
}

static void describe(const case_t *c, char *buf, size_t len) {
  dims_t d = dims_of(c);
  if (!is_conv(c))
    snprintf(buf, len, "C[%lld, %lld] = A[%lld, %lld] B[%lld, %lld]", (long long)d.m, (long long)d.n,
             (long long)d.m, (long long)d.k, (long long)d.k, (long long)d.n);
  else
    snprintf(buf, len, "conv2d NHWC %lldx%lldx%lldx%lld, HWIO %lldx%lld, %lld -> %lld channels, stride %lld, pad %lld",
             (long long)d.batch, (long long)d.h, (long long)d.w, (long long)d.ci, (long long)d.kh,
             (long long)d.kw, (long long)d.ci, (long long)d.n, (long long)d.stride, (long long)d.pad);
}

static float *alloc_floats(size_t n) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  if (!p) die("allocation", "out of memory");
  return p;
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

/* out[m, n] += sum_k rows(m)[k] * y[k, n] in float64, where row m of the
 * left operand is gathered by `row` (GEMM: A's row; C2D: the input pixels
 * under output pixel m, zero in the padding). */
static void gather_row(const inputs_t *in, int64_t m, double *row) {
  const dims_t *d = &in->d;
  if (!is_conv(in->c)) {
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

static void inputs_init(inputs_t *in, const case_t *c) {
  in->c = c;
  in->d = dims_of(c);
  const dims_t *d = &in->d;
  in->nx = is_conv(c) ? (size_t)(d->batch * d->h * d->w * d->ci) : (size_t)(d->m * d->k);
  in->ny = (size_t)(d->k * d->n); /* B[k, n], or the weight [KH, KW, CI, CO] */
  in->nout = (size_t)(d->m * d->n);
  in->x = alloc_floats(in->nx);
  in->y = alloc_floats(in->ny);
  fill_random(in->x, in->nx, 1);
  fill_random(in->y, in->ny, 2);
  in->ref = calloc(in->nout, sizeof(double));
  double *row = calloc((size_t)d->k, sizeof(double));
  if (!in->ref || !row) die("allocation", "out of memory");
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

static void inputs_free(inputs_t *in) {
  free(in->x);
  free(in->y);
  free(in->ref);
}

static double max_rel_error(const float *got, const inputs_t *in) {
  double worst = 0;
  for (size_t i = 0; i < in->nout; i++) {
    double e = fabs((double)got[i] - in->ref[i]) / fabs(in->ref[i]);
    if (!(e <= worst)) worst = e; /* a NaN sticks */
  }
  return worst;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Contenders                                                                */
/* ------------------------------------------------------------------------ */

/* Something timed (a small vtable: ours, OpenBLAS, the peak): `run`
 * performs `number` runs of case ci with `threads` threads and returns
 * their seconds; `check` does one run and returns the max relative error of
 * its result (NaN when it has none). A failure ends the program with the
 * reason: a benchmark with a broken contender has nothing to say. */
typedef struct contender contender_t;
struct contender {
  char name[2 * HELLO_LEN + 64];
  bool is_peak, is_blas;
  double (*run)(contender_t *c, int ci, int threads, int number);
  double (*check)(contender_t *c, int ci);
  void *impl[MAX_CASES];
  /* Results by case and thread index. */
  int number[MAX_CASES][MAX_THREADS];
  double secs[MAX_CASES][MAX_THREADS][MAX_REPEAT];
  double error[MAX_CASES];
};

static double flops_of(const contender_t *c, int ci, int threads);

/* Whether c runs case ci (ours: only where its workload's trace applies). */
static bool takes_part(const contender_t *c, int ci) { return c->is_peak || c->is_blas || c->impl[ci]; }

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

static double peak_run(contender_t *c, int ci, int threads, int number) {
  (void)c, (void)ci;
  pthread_t tid[MAX_THREADS];
  peak_job_t jobs[MAX_THREADS];
  double t0 = now();
  for (int t = 0; t < threads; t++) {
    jobs[t].iters = (long)PEAK_ITERS * number;
    if (t > 0 && pthread_create(&tid[t], NULL, peak_thread, &jobs[t]) != 0) die("pthread_create", strerror(errno));
  }
  peak_thread(&jobs[0]);
  for (int t = 1; t < threads; t++) pthread_join(tid[t], NULL);
  double secs = now() - t0;
  for (int t = 0; t < threads; t++) peak_sink += jobs[t].result;
  return secs;
}

static double no_check(contender_t *c, int ci) {
  (void)c, (void)ci;
  return NAN;
}

static void peak_init(contender_t *c) {
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
/* OpenBLAS in a child process                                               */
/* ------------------------------------------------------------------------ */

/* The child loads OpenBLAS with its own environment and serves requests
 * over pipes: {case, threads, number} -> {seconds, error}. number 0 asks
 * for one run and the error of its result. Children are forked before
 * this process starts any thread or LLVM, and inherit the inputs. */
typedef struct {
  int ci, threads, number;
} blas_req_t;

typedef struct {
  double secs, error;
} blas_resp_t;

typedef void (*sgemm_fn_t)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                           const float *b, int ldb, float beta, float *c, int ldc);
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };

typedef struct {
  pid_t pid;
  int to_child, from_child;
} blas_child_t;

static bool read_all(int fd, void *p, size_t n) {
  char *q = p;
  while (n > 0) {
    ssize_t r = read(fd, q, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    q += r;
    n -= (size_t)r;
  }
  return true;
}

static bool write_all(int fd, const void *p, size_t n) {
  const char *q = p;
  while (n > 0) {
    ssize_t r = write(fd, q, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    q += r;
    n -= (size_t)r;
  }
  return true;
}

/* The child's life: load, say hello (the core name, or "" on failure), serve. */
/* im2col for NHWC input and HWIO weights: row m (an output pixel) holds
 * the KH x KW x CI input values under it, zeros in the padding, in the
 * weight's [KH, KW, CI] order, so out = col x weight is the convolution. */
static void im2col(const inputs_t *in, float *col) {
  const dims_t *d = &in->d;
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

typedef struct {
  sgemm_fn_t sgemm;
  void (*set_threads)(int);
  float *out[MAX_CASES], *col[MAX_CASES];
} blas_t;

/* One run of case x with OpenBLAS: sgemm, after im2col for a convolution
 * (on one thread: im2col is a copy, and its time counts). */
static void blas_once(blas_t *bl, int ci, const inputs_t *x) {
  const dims_t *d = &x->d;
  const float *left = x->x;
  if (is_conv(x->c)) {
    im2col(x, bl->col[ci]);
    left = bl->col[ci];
  }
  bl->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)d->m, (int)d->n, (int)d->k, 1.0f, left,
            (int)d->k, x->y, (int)d->n, 0.0f, bl->out[ci], (int)d->n);
}

/* The child's life: load, say hello (the core name, or "" on failure), serve. */
static void blas_child_main(int in, int out, const inputs_t *inputs) {
  char hello[HELLO_LEN] = "";
  blas_t bl = {0};
  void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  bl.sgemm = lib ? (sgemm_fn_t)(uintptr_t)dlsym(lib, "cblas_sgemm") : NULL;
  bl.set_threads = lib ? (void (*)(int))(uintptr_t)dlsym(lib, "openblas_set_num_threads") : NULL;
  char *(*corename)(void) = lib ? (char *(*)(void))(uintptr_t)dlsym(lib, "openblas_get_corename") : NULL;
  char *(*config)(void) = lib ? (char *(*)(void))(uintptr_t)dlsym(lib, "openblas_get_config") : NULL;
  if (bl.sgemm && bl.set_threads && corename && config)
    snprintf(hello, sizeof hello, "%s|%s", corename(), config());
  else
    fprintf(stderr, "bench_gemm: OpenBLAS: %s\n", lib ? "symbols missing" : dlerror());
  if (!write_all(out, hello, sizeof hello) || !hello[0]) _exit(1);
  blas_req_t req;
  while (read_all(in, &req, sizeof req)) {
    const inputs_t *x = &inputs[req.ci];
    if (!bl.out[req.ci]) {
      bl.out[req.ci] = alloc_floats(x->nout);
      bl.col[req.ci] = is_conv(x->c) ? alloc_floats((size_t)(x->d.m * x->d.k)) : NULL;
    }
    bl.set_threads(req.threads);
    int number = req.number > 0 ? req.number : 1;
    double t0 = now();
    for (int i = 0; i < number; i++) blas_once(&bl, req.ci, x);
    blas_resp_t resp = {now() - t0, req.number == 0 ? max_rel_error(bl.out[req.ci], x) : NAN};
    if (!write_all(out, &resp, sizeof resp)) break;
  }
  _exit(0);
}

/* The parent's ends of the pipes to children forked so far: a new child
 * closes them, or an earlier child would never see its end of input. */
static int parent_fds[8];
static char blas_config[HELLO_LEN]; /* openblas_get_config() */
static int nparent_fds;

/* Forks a child with OPENBLAS_CORETYPE set to coretype (NULL: unset). */
static bool blas_spawn(contender_t *c, blas_child_t *ch, const char *coretype, const inputs_t *inputs) {
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) die("pipe", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) die("fork", strerror(errno));
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    for (int i = 0; i < nparent_fds; i++) close(parent_fds[i]);
    if (coretype) setenv("OPENBLAS_CORETYPE", coretype, 1);
    else unsetenv("OPENBLAS_CORETYPE");
    /* Idle workers spin 2^20 cycles (under a millisecond) before they
     * sleep, so they do not take the CPU from the contender timed next;
     * back-to-back calls in a timing loop never get that far. */
    setenv("OPENBLAS_THREAD_TIMEOUT", "20", 1);
    blas_child_main(down[0], up[1], inputs);
  }
  close(down[0]);
  close(up[1]);
  *ch = (blas_child_t){pid, down[1], up[0]};
  if (nparent_fds + 2 <= (int)(sizeof parent_fds / sizeof parent_fds[0])) {
    parent_fds[nparent_fds++] = down[1];
    parent_fds[nparent_fds++] = up[0];
  }
  char hello[HELLO_LEN];
  if (!read_all(ch->from_child, hello, sizeof hello) || !hello[0]) {
    fprintf(stderr, "bench_gemm: OpenBLAS (%s) could not be loaded; left out\n", coretype ? coretype : "detected");
    close(ch->to_child);
    close(ch->from_child);
    waitpid(pid, NULL, 0);
    return false;
  }
  char *bar = strchr(hello, '|');
  *bar = '\0';
  snprintf(blas_config, sizeof blas_config, "%s", bar + 1);
  snprintf(c->name, sizeof c->name, "OpenBLAS %s (%s)", hello, coretype ? coretype : "detected");
  return true;
}

static blas_resp_t blas_request(contender_t *c, int ci, int threads, int number) {
  blas_child_t *ch = c->impl[0];
  blas_req_t req = {ci, threads, number};
  blas_resp_t resp;
  if (!write_all(ch->to_child, &req, sizeof req) || !read_all(ch->from_child, &resp, sizeof resp))
    die("OpenBLAS child", "it stopped answering");
  return resp;
}

static double blas_run(contender_t *c, int ci, int threads, int number) {
  return blas_request(c, ci, threads, number).secs;
}

static double blas_check(contender_t *c, int ci) { return blas_request(c, ci, 1, 0).error; }

static bool blas_init(contender_t *c, const char *coretype, const inputs_t *inputs) {
  memset(c, 0, sizeof *c);
  blas_child_t *ch = malloc(sizeof *ch);
  if (!ch) die("allocation", "out of memory");
  if (!blas_spawn(c, ch, coretype, inputs)) {
    free(ch);
    return false;
  }
  c->is_blas = true;
  c->run = blas_run;
  c->check = blas_check;
  c->impl[0] = ch;
  return true;
}

static void blas_free(contender_t *c) {
  blas_child_t *ch = c->impl[0];
  close(ch->to_child);
  close(ch->from_child);
  waitpid(ch->pid, NULL, 0);
  free(ch);
}

/* ------------------------------------------------------------------------ */
/* Our kernels                                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
  mlc_jit_t *jit;
  mlc_packed_fn_t fn;
  float *out;
  DLTensor args[3];
  int64_t shapes[3][TIR_MAX_DIMS];
  const inputs_t *in;
} kernel_t;

static void dump_lowered(const char *pass, const tir_func_t *f, void *payload) {
  (void)payload;
  char *text = tir_print_func(f);
  printf("# after %s\n%s\n", pass, text ? text : "(out of memory)");
  mlc_free(text);
}

static tir_func_t *schedule_trace(const opts_t *o, const case_t *c, const variant_t *v, sch_t **sch) {
  tir_func_t *f = NULL;
  if (tir_workload_build(&f, c->workload, c->shape, c->nshape, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}) != MLC_OK)
    die("building the workload", mlc_error_last());
  char path[4096], *text = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/%s", o->traces_dir, v->trace);
  if (mlc_read_file(&text, &len, path) != MLC_OK) die("reading the trace", mlc_error_last());
  sch_trace_t *t = NULL;
  if (sch_trace_from_python(&t, text, len, path) != MLC_OK) die("parsing the trace", mlc_error_last());
  if (sch_create(sch, f, 1, SCH_ERRORS_RICH) != MLC_OK) die("creating the schedule", mlc_error_last());
  if (sch_trace_apply(*sch, t, true) != MLC_OK) die(path, sch_error(*sch));
  sch_trace_free(t);
  mlc_free(text);
  return f;
}

/* Lowers and compiles the scheduled function for the variant's target,
 * prints what --dump asks for, and loads it. */
static void kernel_compile(kernel_t *k, const opts_t *o, sch_t *sch, const variant_t *v) {
  char tstr[256];
  snprintf(tstr, sizeof tstr, "llvm -num-cores=%d%s", MAX_THREADS, v->target_opts);
  mlc_target_t target;
  if (mlc_target_parse(&target, tstr) != MLC_OK) die("parsing the target", mlc_error_last());
  mlc_lower_options_t lo = {0};
  if (o->dump && strcmp(o->dump, "tir") == 0) lo = (mlc_lower_options_t){.dump_after = "all", .dump = dump_lowered};
  mlc_module_t *m = NULL;
  tir_func_t *scheduled = sch_func(sch);
  if (mlc_build(&m, &scheduled, 1, &target, &lo) != MLC_OK) die("building the kernel", mlc_error_last());
  if (o->dump && strcmp(o->dump, "tir") != 0) {
    char *s = mlc_module_text(m, strcmp(o->dump, "ll") == 0 ? MLC_EMIT_LL : MLC_EMIT_ASM);
    printf("%s\n", s ? s : "(no text)");
    mlc_free(s);
  }
  if (mlc_jit_load(&k->jit, m) != MLC_OK) die("loading the kernel", mlc_error_last());
  if (!(k->fn = (mlc_packed_fn_t)mlc_jit_lookup(k->jit, scheduled->name))) die("looking up the kernel", scheduled->name);
}

/* The DLTensor arguments: the workload's buffers, inputs then output. */
static void kernel_bind_args(kernel_t *k, const tir_func_t *f, const inputs_t *in) {
  k->in = in;
  k->out = alloc_floats(in->nout);
  float *data[3] = {in->x, in->y, k->out};
  if (f->nparams != 3) die("the workload", "expected 3 parameters");
  for (int i = 0; i < 3; i++) {
    const tir_buffer_t *b = f->buffer_map[i];
    for (int d = 0; d < b->ndim; d++)
      if (!tir_as_int(b->shape[d], &k->shapes[i][d])) die("the workload", "symbolic shape");
    k->args[i] = (DLTensor){.data = data[i], .device = {kDLCPU, 0}, .ndim = b->ndim, .dtype = {kDLFloat, 32, 1},
                            .shape = k->shapes[i]};
  }
}

static void kernel_build(kernel_t *k, const opts_t *o, const inputs_t *in, const variant_t *v) {
  memset(k, 0, sizeof *k);
  sch_t *sch = NULL;
  tir_func_t *f = schedule_trace(o, in->c, v, &sch);
  kernel_compile(k, o, sch, v);
  kernel_bind_args(k, f, in);
  sch_free(sch);
  tir_func_free(f);
}

static double ours_run(contender_t *c, int ci, int threads, int number) {
  kernel_t *k = c->impl[ci];
  mlc_rt_set_num_threads(threads);
  double t0 = now();
  for (int i = 0; i < number; i++)
    if (k->fn(k->args, 3) != 0) die("the kernel failed", mlc_last_error());
  return now() - t0;
}

static double ours_check(contender_t *c, int ci) {
  kernel_t *k = c->impl[ci];
  memset(k->out, 0, sizeof(float) * k->in->nout);
  ours_run(c, ci, 1, 1);
  return max_rel_error(k->out, k->in);
}

static void ours_init(contender_t *c, const opts_t *o, const inputs_t *inputs, const variant_t *v) {
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "mlc %s (%s)", v->name, v->what);
  c->run = ours_run;
  c->check = ours_check;
  for (int ci = 0; ci < MAX_CASES; ci++) {
    if (!o->cases[ci] || strcmp(all_cases[ci].workload, v->workload) != 0) continue;
    kernel_t *k = malloc(sizeof *k);
    if (!k) die("allocation", "out of memory");
    kernel_build(k, o, &inputs[ci], v);
    c->impl[ci] = k;
  }
}

static void ours_free(contender_t *c) {
  for (int ci = 0; ci < MAX_CASES; ci++) {
    kernel_t *k = c->impl[ci];
    if (!k) continue;
    mlc_jit_free(k->jit);
    free(k->out);
    free(k);
  }
}

/* ------------------------------------------------------------------------ */
/* Measurement and report                                                    */
/* ------------------------------------------------------------------------ */

static double flops_of(const contender_t *c, int ci, int threads) {
  if (c->is_peak) return 2.0 * peak_lanes * PEAK_CHAINS * (double)PEAK_ITERS * threads;
  return case_flops(&all_cases[ci]);
}

/* One warm-up run, then number grown until a repeat lasts min_secs. */
static int calibrate(contender_t *c, int ci, int threads, double min_secs) {
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

typedef struct {
  double median, best; /* GFLOP/s */
} rate_t;

static rate_t rate_of(const contender_t *c, const opts_t *o, int ci, int ti) {
  double s[MAX_REPEAT];
  int n = o->repeat;
  memcpy(s, c->secs[ci][ti], sizeof(double) * (size_t)n);
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  double fl = flops_of(c, ci, o->threads[ti]) * 1e-9;
  return (rate_t){fl / med, fl / s[0]};
}

/* --repeat rounds of section (case ci, thread index ti), each timing one
 * repeat of every contender in turn. */
static void measure_rounds(contender_t *cs, int n, const opts_t *o, int ci, int ti) {
  for (int r = 0; r < o->repeat; r++)
    for (int i = 0; i < n; i++) {
      if (!takes_part(&cs[i], ci)) continue;
      int number = cs[i].number[ci][ti];
      cs[i].secs[ci][ti][r] = cs[i].run(&cs[i], ci, o->threads[ti], number) / number;
    }
}

/* How undisturbed a section was: the FMA peak's median over what it should
 * be (threads x the best one-thread peak so far, or its own best). */
static double quietness(const contender_t *cs, int n, const opts_t *o, int ci, int ti, double peak1) {
  for (int i = 0; i < n; i++) {
    if (!cs[i].is_peak) continue;
    rate_t r = rate_of(&cs[i], o, ci, ti);
    double expect = peak1 > r.best / o->threads[ti] ? peak1 * o->threads[ti] : r.best;
    return r.median / expect;
  }
  return 1;
}

/* Measures every section; a section the peak shows was disturbed (below
 * 90%) is measured again, up to --retries times, and the quietest attempt
 * kept: other work on the machine comes in bursts. */
static void measure(contender_t *cs, int n, const opts_t *o) {
  static double kept[MAX_CONTENDERS][MAX_REPEAT];
  double peak1 = 0;
  for (int ci = 0; ci < MAX_CASES; ci++) {
    if (!o->cases[ci]) continue;
    for (int i = 0; i < n; i++)
      if (takes_part(&cs[i], ci)) cs[i].error[ci] = cs[i].check(&cs[i], ci);
    for (int ti = 0; ti < o->nthreads; ti++) {
      for (int i = 0; i < n; i++)
        if (takes_part(&cs[i], ci)) cs[i].number[ci][ti] = calibrate(&cs[i], ci, o->threads[ti], o->min_secs);
      double best_q = -1;
      for (int attempt = 0; attempt <= o->retries && best_q < 0.9; attempt++) {
        measure_rounds(cs, n, o, ci, ti);
        double q = quietness(cs, n, o, ci, ti, peak1);
        attempts[ci][ti] = attempt + 1;
        if (q <= best_q) continue;
        best_q = q;
        for (int i = 0; i < n; i++) memcpy(kept[i], cs[i].secs[ci][ti], sizeof(double) * (size_t)o->repeat);
      }
      for (int i = 0; i < n; i++) memcpy(cs[i].secs[ci][ti], kept[i], sizeof(double) * (size_t)o->repeat);
      for (int i = 0; i < n && o->threads[ti] == 1; i++) {
        double best = cs[i].is_peak ? rate_of(&cs[i], o, ci, ti).best : 0;
        if (best > peak1) peak1 = best;
      }
    }
  }
}

/* The rows of one (case, thread count); peak and blas are the medians
 * the ratios are taken against. peak1 is the best one-thread FMA peak seen
 * in the run (0 if none). */
static void report_rows(const contender_t *cs, int n, const opts_t *o, int ci, int ti, double peak1) {
  rate_t peak = {0, 0};
  double blas = 0;
  for (int i = 0; i < n; i++) {
    if (!takes_part(&cs[i], ci)) continue;
    rate_t r = rate_of(&cs[i], o, ci, ti);
    if (cs[i].is_peak) peak = r;
    if (cs[i].is_blas && r.median > blas) blas = r.median;
  }
  for (int i = 0; i < n; i++) {
    if (!takes_part(&cs[i], ci)) continue;
    rate_t r = rate_of(&cs[i], o, ci, ti);
    printf("%-46.46s %3d %8.1f (%6.1f)", cs[i].name, o->threads[ti], r.median, r.best);
    if (blas > 0 && !cs[i].is_peak) printf(" %7.2fx", r.median / blas);
    else printf(" %8s", "");
    if (peak.median > 0) printf(" %6.1f%%", 100.0 * r.median / peak.median);
    if (!isnan(cs[i].error[ci])) printf(" %11.2e", cs[i].error[ci]);
    printf("\n");
  }
  /* The peak loop touches no memory and always does the same work, so its
   * shortfall from t times the best one-thread peak is the machine's noise,
   * not the code's. */
  double expect = peak1 > 0 ? peak1 * o->threads[ti] : peak.best;
  if (peak.median > 0 && peak.median < 0.9 * expect)
    printf("  (busy machine: the FMA peak's median is %.0f%% below %.0f GFLOP/s; other work shared the CPUs)\n",
           100.0 * (1.0 - peak.median / expect), expect);
  if (attempts[ci][ti] > 1)
    printf("  (the quietest of %d attempts at this section)\n", attempts[ci][ti]);
}

static double best_single_thread_peak(const contender_t *cs, int n, const opts_t *o) {
  double best = 0;
  for (int i = 0; i < n; i++)
    for (int ci = 0; cs[i].is_peak && ci < MAX_CASES; ci++)
      for (int ti = 0; o->cases[ci] && ti < o->nthreads; ti++) {
        double b = o->threads[ti] == 1 ? rate_of(&cs[i], o, ci, ti).best : 0;
        if (b > best) best = b;
      }
  return best;
}

static void report(const contender_t *cs, int n, const opts_t *o) {
  double peak1 = best_single_thread_peak(cs, n, o);
  for (int ci = 0; ci < MAX_CASES; ci++) {
    if (!o->cases[ci]) continue;
    char what[256];
    describe(&all_cases[ci], what, sizeof what);
    printf("\n%s: %s, fp32; GFLOP/s median of %d (best)\n", all_cases[ci].name, what, o->repeat);
    if (is_conv(&all_cases[ci])) printf("OpenBLAS computes it as im2col (one thread) + sgemm\n");
    printf("%-46s %3s %17s %8s %7s %9s\n", "contender", "thr", "GFLOP/s", "vs BLAS", "% peak", "max rel err");
    for (int ti = 0; ti < o->nthreads; ti++) report_rows(cs, n, o, ci, ti, peak1);
  }
}

static void print_machine(void) {
  char model[256] = "unknown";
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "model name", 10) == 0) {
      char *colon = strchr(line, ':');
      const char *m = colon ? colon + 2 : line;
      size_t len = strcspn(m, "\n");
      if (len >= sizeof model) len = sizeof model - 1;
      memcpy(model, m, len);
      model[len] = '\0';
      break;
    }
  if (f) fclose(f);
  double load[3] = {0};
  if (getloadavg(load, 3) < 0) load[0] = load[1] = load[2] = NAN;
  mlc_target_t host;
  mlc_target_host(&host);
  char tstr[512];
  printf("machine: %s, %ld CPUs online; load average %.2f %.2f %.2f\n", model, sysconf(_SC_NPROCESSORS_ONLN),
         load[0], load[1], load[2]);
  printf("target:  %s (LLVM %s)\n", mlc_target_str(&host, tstr, sizeof tstr), LLVM_VERSION_STRING);
}

/* ------------------------------------------------------------------------ */
/* Command line                                                              */
/* ------------------------------------------------------------------------ */

static void usage(void) {
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
  return -1;
}

static void parse_list(opts_t *o, const char *s, char what) {
  while (*s) {
    size_t n = strcspn(s, ",");
    if (what == 'c') o->cases[find_name(s, n, all_cases, sizeof all_cases[0], MAX_CASES)] = true;
    if (what == 'v') {
      find_name(s, n, all_variants, sizeof all_variants[0], NVARIANTS); /* exits on an unknown name */
      for (int v = 0; v < NVARIANTS; v++)
        if (strlen(all_variants[v].name) == n && strncmp(all_variants[v].name, s, n) == 0) o->variants[v] = true;
    }
    if (what == 't') {
      int t = atoi(s);
      if (t < 1 || t > MAX_THREADS || o->nthreads >= MAX_THREADS) usage();
      o->threads[o->nthreads++] = t;
    }
    s += n;
    if (*s == ',') s++;
  }
}

/* bench/traces beside this source file (__FILE__ is the path CMake
 * compiles, absolute), so the program runs from any directory. */
static const char *default_traces_dir(void) {
  static char dir[4096];
  snprintf(dir, sizeof dir, "%s", __FILE__);
  char *slash = strrchr(dir, '/');
  if (slash) snprintf(slash, sizeof dir - (size_t)(slash - dir), "/traces");
  else snprintf(dir, sizeof dir, "bench/traces");
  return dir;
}

static void parse_args(opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->repeat = 7;
  o->retries = 2;
  o->min_secs = 0.2;
  o->traces_dir = default_traces_dir();
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
    else if (strcmp(a, "--repeat") == 0) o->repeat = atoi(v);
    else if (strcmp(a, "--retries") == 0) o->retries = atoi(v);
    else if (strcmp(a, "--min-ms") == 0) o->min_secs = atof(v) * 1e-3;
    else if (strcmp(a, "--traces") == 0) o->traces_dir = v;
    else if (strcmp(a, "--dump") == 0) o->dump = v;
    else usage();
  }
  if (o->repeat < 1 || o->repeat > MAX_REPEAT || o->retries < 0 || !(o->min_secs >= 0)) usage();
  if (!any_case) parse_list(o, "GMM-1024,GMM-512,C2D", 'c');
  if (o->nthreads == 0) parse_list(o, "1,2", 't');
  if (!any_variant) parse_list(o, "fma,fastmath,exact,tiled,ssrsrs", 'v');
}

int main(int argc, char **argv) {
  opts_t o;
  parse_args(&o, argc, argv);
  signal(SIGPIPE, SIG_IGN);
  print_machine();
  inputs_t inputs[MAX_CASES] = {0};
  for (int ci = 0; ci < MAX_CASES; ci++)
    if (o.cases[ci]) inputs_init(&inputs[ci], &all_cases[ci]);
  contender_t *cs = calloc(MAX_CONTENDERS, sizeof *cs);
  if (!cs) die("allocation", "out of memory");
  int n = 0;
  /* OpenBLAS first: its children are forked before any thread exists. */
  static const char *const coretypes[] = {NULL, "Haswell", "SkylakeX"};
  for (int i = 0; o.openblas && i < 3; i++)
    if (blas_init(&cs[n], coretypes[i], inputs)) n++;
  peak_init(&cs[n++]);
  for (int v = 0; v < NVARIANTS; v++)
    if (o.variants[v]) ours_init(&cs[n++], &o, inputs, &all_variants[v]);
  if (blas_config[0]) printf("peer:    %s\n", blas_config);
  fflush(stdout);
  measure(cs, n, &o);
  report(cs, n, &o);
  double load[3];
  if (getloadavg(load, 3) == 3) printf("\nload average at the end: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  for (int i = 0; i < n; i++) {
    if (cs[i].is_blas) blas_free(&cs[i]);
    else if (!cs[i].is_peak) ours_free(&cs[i]);
  }
  free(cs);
  for (int ci = 0; ci < MAX_CASES; ci++)
    if (o.cases[ci]) inputs_free(&inputs[ci]);
  return 0;
}
