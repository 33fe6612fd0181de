/*
 * blas_batch.c - OpenBLAS sgemm per batch of a BMM, in a child process per
 * core type. The child serves {threads, number} -> {seconds, error} over
 * pipes; number 0 asks for one run and the error of its result. See
 * blas_batch.h.
 */
#include "bench/common/blas_batch.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELLO_LEN 160

typedef struct {
  int threads, number;
} batch_req_t;

typedef struct {
  double secs, error;
} batch_resp_t;

typedef void (*sgemm_fn_t)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                           const float *b, int ldb, float beta, float *c, int ldc);
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };

typedef struct {
  pid_t pid;
  int to_child, from_child;
} batch_child_t;

static bool io_all(int fd, void *p, size_t n, bool writing) {
  char *q = p;
  while (n > 0) {
    ssize_t r = writing ? write(fd, q, n) : read(fd, q, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    q += r;
    n -= (size_t)r;
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* The child                                                                 */
/* ------------------------------------------------------------------------ */

/* Z[b] = X[b] Y[b] for every batch b, one sgemm each. */
static void batch_once(sgemm_fn_t sgemm, const bench_wl_problem_t *p, float *out) {
  const int64_t *s = p->c.shape;
  int B = (int)s[0], M = (int)s[1], N = (int)s[2], K = (int)s[3];
  for (int b = 0; b < B; b++)
    sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, M, N, K, 1.0f, p->in[0] + (size_t)b * M * K, K,
          p->in[1] + (size_t)b * K * N, N, 0.0f, out + (size_t)b * M * N, N);
}

/* Closes every inherited descriptor but stdin/out/err and the two kept. */
static void close_others(int keep1, int keep2) {
  long max = sysconf(_SC_OPEN_MAX);
  for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
    if (fd != keep1 && fd != keep2) close(fd);
}

MLC_NORETURN static void child_main(int in, int out, const char *coretype, const bench_wl_problem_t *p) {
  close_others(in, out);
  signal(SIGINT, SIG_IGN); /* ^C is the parent's; the child ends when its pipe closes */
  if (coretype) setenv("OPENBLAS_CORETYPE", coretype, 1);
  else unsetenv("OPENBLAS_CORETYPE");
  setenv("OPENBLAS_THREAD_TIMEOUT", "20", 1);
  char hello[HELLO_LEN] = "";
  void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  sgemm_fn_t sgemm = lib ? (sgemm_fn_t)(uintptr_t)dlsym(lib, "cblas_sgemm") : NULL;
  void (*set_threads)(int) = lib ? (void (*)(int))(uintptr_t)dlsym(lib, "openblas_set_num_threads") : NULL;
  char *(*corename)(void) = lib ? (char *(*)(void))(uintptr_t)dlsym(lib, "openblas_get_corename") : NULL;
  if (sgemm && set_threads && corename) snprintf(hello, sizeof hello, "%s", corename());
  else fprintf(stderr, "OpenBLAS: %s\n", lib ? "symbols missing" : dlerror());
  if (!io_all(out, hello, sizeof hello, true) || !hello[0]) _exit(1);
  float *z = bench_alloc_floats(p->nout);
  batch_req_t req;
  while (io_all(in, &req, sizeof req, false)) {
    set_threads(req.threads);
    int number = req.number > 0 ? req.number : 1;
    double t0 = bench_now();
    for (int i = 0; i < number; i++) batch_once(sgemm, p, z);
    batch_resp_t resp = {bench_now() - t0, req.number == 0 ? bench_wl_error(z, p) : NAN};
    if (!io_all(out, &resp, sizeof resp, true)) break;
  }
  _exit(0);
}

/* ------------------------------------------------------------------------ */
/* The parent                                                                */
/* ------------------------------------------------------------------------ */

static void child_close(batch_child_t *ch) {
  close(ch->to_child);
  close(ch->from_child);
  waitpid(ch->pid, NULL, 0);
}

static batch_resp_t batch_request(bench_contender_t *c, int ci, int threads, int number) {
  batch_child_t *ch = c->impl[ci];
  batch_req_t req = {threads, number};
  batch_resp_t resp;
  if (!io_all(ch->to_child, &req, sizeof req, true) || !io_all(ch->from_child, &resp, sizeof resp, false))
    bench_die("OpenBLAS child (BMM)", "it stopped answering");
  return resp;
}

static double batch_run(bench_contender_t *c, int ci, int threads, int number) {
  return batch_request(c, ci, threads, number).secs;
}

static double batch_check(bench_contender_t *c, int ci) { return batch_request(c, ci, 1, 0).error; }

static void batch_free(bench_contender_t *c) {
  for (int ci = 0; ci < BENCH_MAX_CASES; ci++) {
    if (!c->impl[ci]) continue;
    child_close(c->impl[ci]);
    free(c->impl[ci]);
    c->impl[ci] = NULL;
  }
}

bool bench_blas_batch_init(bench_contender_t *c, const char *coretype, const bench_wl_problem_t *p, int ci) {
  memset(c, 0, sizeof *c);
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) bench_die("pipe", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) bench_die("fork", strerror(errno));
  if (pid == 0) child_main(down[0], up[1], coretype, p);
  close(down[0]);
  close(up[1]);
  batch_child_t *ch = malloc(sizeof *ch);
  if (!ch) bench_die("allocation", "out of memory");
  *ch = (batch_child_t){pid, down[1], up[0]};
  char hello[HELLO_LEN];
  if (!io_all(ch->from_child, hello, sizeof hello, false) || !hello[0]) {
    fprintf(stderr, "OpenBLAS (%s) could not be loaded for BMM; left out\n", coretype ? coretype : "detected");
    child_close(ch);
    free(ch);
    return false;
  }
  hello[HELLO_LEN - 1] = '\0';
  snprintf(c->name, sizeof c->name, "OpenBLAS %s (%s), %lld sgemm calls", hello, coretype ? coretype : "detected",
           (long long)p->c.shape[0]);
  c->run = batch_run;
  c->check = batch_check;
  c->free = batch_free;
  c->impl[ci] = ch;
  return true;
}
