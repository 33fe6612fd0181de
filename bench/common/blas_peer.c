/*
 * blas_peer.c - OpenBLAS in a child process, one per core type. The child
 * loads OpenBLAS with its own environment and serves requests over pipes:
 * {case, threads, number} -> {seconds, error}; number 0 asks for one run
 * and the error of its result. See blas_peer.h.
 */
#include "bench/common/blas_peer.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELLO_LEN 160 /* OpenBLAS's "corename|config" */

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

/* ------------------------------------------------------------------------ */
/* The child                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
  sgemm_fn_t sgemm;
  void (*set_threads)(int);
  float *out[BENCH_MAX_CASES], *col[BENCH_MAX_CASES];
} blas_t;

/* One run of case ci with OpenBLAS: sgemm, after im2col for a convolution
 * (on one thread: im2col is a copy, and its time counts). */
static void blas_once(blas_t *bl, int ci, const bench_inputs_t *x) {
  const bench_dims_t *d = &x->d;
  const float *left = x->x;
  if (bench_is_conv(x->c)) {
    bench_im2col(x, bl->col[ci]);
    left = bl->col[ci];
  }
  bl->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)d->m, (int)d->n, (int)d->k, 1.0f, left,
            (int)d->k, x->y, (int)d->n, 0.0f, bl->out[ci], (int)d->n);
}

/* Loads OpenBLAS; hello gets "corename|config", or "" on failure. */
static void blas_load(blas_t *bl, char hello[HELLO_LEN]) {
  hello[0] = '\0';
  void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  bl->sgemm = lib ? (sgemm_fn_t)(uintptr_t)dlsym(lib, "cblas_sgemm") : NULL;
  bl->set_threads = lib ? (void (*)(int))(uintptr_t)dlsym(lib, "openblas_set_num_threads") : NULL;
  char *(*corename)(void) = lib ? (char *(*)(void))(uintptr_t)dlsym(lib, "openblas_get_corename") : NULL;
  char *(*config)(void) = lib ? (char *(*)(void))(uintptr_t)dlsym(lib, "openblas_get_config") : NULL;
  if (bl->sgemm && bl->set_threads && corename && config)
    snprintf(hello, HELLO_LEN, "%s|%s", corename(), config());
  else
    fprintf(stderr, "OpenBLAS: %s\n", lib ? "symbols missing" : dlerror());
}

/* The child's life: load, say hello (the core name, or "" on failure), serve. */
MLC_NORETURN static void blas_child_main(int in, int out, const bench_inputs_t *inputs) {
  char hello[HELLO_LEN];
  blas_t bl = {0};
  blas_load(&bl, hello);
  if (!mlc_write_full(out, hello, sizeof hello) || !hello[0]) _exit(1);
  blas_req_t req;
  while (mlc_read_full(in, &req, sizeof req)) {
    if (req.ci < 0 || req.ci >= BENCH_MAX_CASES || !inputs[req.ci].x) _exit(1);
    const bench_inputs_t *x = &inputs[req.ci];
    if (!bl.out[req.ci]) {
      bl.out[req.ci] = bench_alloc_floats(x->nout);
      bl.col[req.ci] = bench_is_conv(x->c) ? bench_alloc_floats((size_t)(x->d.m * x->d.k)) : NULL;
    }
    bl.set_threads(req.threads);
    int number = req.number > 0 ? req.number : 1;
    double t0 = bench_now();
    for (int i = 0; i < number; i++) blas_once(&bl, req.ci, x);
    blas_resp_t resp = {bench_now() - t0, req.number == 0 ? bench_max_rel_error(bl.out[req.ci], x) : NAN};
    if (!mlc_write_full(out, &resp, sizeof resp)) break;
  }
  _exit(0);
}

/* ------------------------------------------------------------------------ */
/* The parent                                                                */
/* ------------------------------------------------------------------------ */

/* The parent's ends of the pipes to children forked so far: a new child
 * closes them, or an earlier child would never see its end of input. */
static int parent_fds[16];
static int nparent_fds;
static char blas_config[HELLO_LEN]; /* openblas_get_config() */

const char *bench_blas_config(void) { return blas_config; }

static void forget_parent_fd(int fd) {
  for (int i = 0; i < nparent_fds; i++)
    if (parent_fds[i] == fd) parent_fds[i--] = parent_fds[--nparent_fds];
}

static void child_close(blas_child_t *ch) {
  forget_parent_fd(ch->to_child);
  forget_parent_fd(ch->from_child);
  close(ch->to_child);
  close(ch->from_child);
  waitpid(ch->pid, NULL, 0);
}

/* Forks a child with OPENBLAS_CORETYPE set to coretype (NULL: unset). */
static pid_t blas_fork(int down[2], int up[2], const char *coretype, const bench_inputs_t *inputs) {
  if (pipe(down) != 0 || pipe(up) != 0) bench_die("pipe", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) bench_die("fork", strerror(errno));
  if (pid > 0) return pid;
  close(down[1]);
  close(up[0]);
  for (int i = 0; i < nparent_fds; i++) close(parent_fds[i]);
  /* ^C is the parent's to handle (bench_tune stops tuning and reports);
   * the child ends when its pipe closes. */
  signal(SIGINT, SIG_IGN);
  if (coretype) setenv("OPENBLAS_CORETYPE", coretype, 1);
  else unsetenv("OPENBLAS_CORETYPE");
  /* Idle workers spin 2^20 cycles (under a millisecond) before they sleep,
   * so they do not take the CPU from the contender timed next; back-to-back
   * calls in a timing loop never get that far. */
  setenv("OPENBLAS_THREAD_TIMEOUT", "20", 1);
  blas_child_main(down[0], up[1], inputs);
}

static bool blas_spawn(bench_contender_t *c, blas_child_t *ch, const char *coretype, const bench_inputs_t *inputs) {
  int down[2], up[2];
  pid_t pid = blas_fork(down, up, coretype, inputs);
  close(down[0]);
  close(up[1]);
  *ch = (blas_child_t){pid, down[1], up[0]};
  if (nparent_fds + 2 <= (int)(sizeof parent_fds / sizeof parent_fds[0])) {
    parent_fds[nparent_fds++] = down[1];
    parent_fds[nparent_fds++] = up[0];
  }
  char hello[HELLO_LEN];
  if (!mlc_read_full(ch->from_child, hello, sizeof hello) || !hello[0]) {
    fprintf(stderr, "OpenBLAS (%s) could not be loaded; left out\n", coretype ? coretype : "detected");
    child_close(ch);
    return false;
  }
  hello[HELLO_LEN - 1] = '\0';
  char *bar = strchr(hello, '|');
  if (bar) *bar = '\0';
  snprintf(blas_config, sizeof blas_config, "%s", bar ? bar + 1 : "");
  snprintf(c->name, sizeof c->name, "OpenBLAS %s (%s)", hello, coretype ? coretype : "detected");
  return true;
}

static blas_resp_t blas_request(bench_contender_t *c, int ci, int threads, int number) {
  blas_child_t *ch = c->impl[0];
  blas_req_t req = {ci, threads, number};
  blas_resp_t resp;
  if (!mlc_write_full(ch->to_child, &req, sizeof req) || !mlc_read_full(ch->from_child, &resp, sizeof resp))
    bench_die("OpenBLAS child", "it stopped answering");
  return resp;
}

static double blas_run(bench_contender_t *c, int ci, int threads, int number) {
  return blas_request(c, ci, threads, number).secs;
}

static double blas_check(bench_contender_t *c, int ci) { return blas_request(c, ci, 1, 0).error; }

static void blas_free(bench_contender_t *c) {
  blas_child_t *ch = c->impl[0];
  child_close(ch);
  free(ch);
  c->impl[0] = NULL;
}

bool bench_blas_init(bench_contender_t *c, const char *coretype, const bench_inputs_t *inputs) {
  memset(c, 0, sizeof *c);
  blas_child_t *ch = malloc(sizeof *ch);
  if (!ch) bench_die("allocation", "out of memory");
  if (!blas_spawn(c, ch, coretype, inputs)) {
    free(ch);
    return false;
  }
  c->is_blas = true;
  c->run = blas_run;
  c->check = blas_check;
  c->free = blas_free;
  c->impl[0] = ch;
  return true;
}
