/*
 * compile_lib.c - functions of an emitted shared library as harness
 * contenders: dlopen, arguments in the measurement's style, the
 * interpreter's result, run and check. See compile_lib.h.
 */
#include "bench/common/compile_lib.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

#define BENCH_SO_MAX_PARAMS 16

struct bench_so {
  void *handle;
  char path[1024];
  const char *(*last_error)(void);
  void (*set_num_threads)(int32_t);
};

struct bench_args {
  int n;
  DLTensor tensors[BENCH_SO_MAX_PARAMS];
  int64_t shapes[BENCH_SO_MAX_PARAMS][TIR_MAX_DIMS];
  float *data[BENCH_SO_MAX_PARAMS]; /* what the kernels are called on */
  float *want[BENCH_SO_MAX_PARAMS]; /* the interpreter's buffers after its run */
  size_t count[BENCH_SO_MAX_PARAMS];
};

/* One function of a library bound to its arguments (a contender's impl). */
typedef struct {
  bench_so_t *so;
  mlc_packed_fn_t fn;
  char name[128];
  bench_args_t *args;
} so_fn_t;

/* ------------------------------------------------------------------------ */
/* Libraries                                                                 */
/* ------------------------------------------------------------------------ */

/* dlsym's result as a function pointer (POSIX guarantees the conversion). */
static bool lookup(void *handle, const char *name, void *fn_out) {
  void *p = dlsym(handle, name);
  if (p) memcpy(fn_out, &p, sizeof p);
  return p != NULL;
}

int bench_so_open(bench_so_t **out, const char *path) {
  *out = NULL;
  bench_so_t *so = calloc(1, sizeof *so);
  if (!so) return mlc_error_set(MLC_ENOMEM, "out of memory");
  snprintf(so->path, sizeof so->path, "%s", path);
  so->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so->handle) {
    int rc = mlc_error_set(MLC_EIO, "dlopen: %s", dlerror());
    free(so);
    return rc;
  }
  if (!lookup(so->handle, "mlc_last_error", &so->last_error)) {
    bench_so_free(so);
    return mlc_error_set(MLC_ENOTFOUND, "%s: no mlc_last_error: not a library the compiler emitted", path);
  }
  /* The pool is linked in only when some function has a parallel loop. */
  lookup(so->handle, "mlc_rt_set_num_threads", &so->set_num_threads);
  *out = so;
  return MLC_OK;
}

void bench_so_free(bench_so_t *so) {
  if (!so) return;
  if (so->handle) dlclose(so->handle);
  free(so);
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

/* Parameter i's constant float32 shape into a; its element count. */
static int param_shape(bench_args_t *a, const tir_func_t *f, int i) {
  const tir_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
  if (!b || !tir_dtype_eq(b->dtype, tir_dt_FLOAT32()) || b->strides || b->ndim > TIR_MAX_DIMS)
    return mlc_error_set(MLC_EINVAL, "%s: parameter %d (%s) is not a compact float32 buffer", f->name, i,
                         f->params[i]->u.var.name);
  a->count[i] = 1;
  for (int d = 0; d < b->ndim; d++) {
    if (!tir_as_int(b->shape[d], &a->shapes[i][d]) || a->shapes[i][d] < 0)
      return mlc_error_set(MLC_EINVAL, "%s: parameter %d (%s): dimension %d is not a constant", f->name, i, b->name,
                           d);
    a->count[i] *= (size_t)a->shapes[i][d];
  }
  a->tensors[i] = (DLTensor){.data = NULL, .device = {kDLCPU, 0}, .ndim = b->ndim, .dtype = {kDLFloat, 32, 1},
                             .shape = a->shapes[i]};
  return MLC_OK;
}

/* Fills every buffer with values in [1, 10) and keeps a copy for the
 * interpreter. */
static void fill(bench_args_t *a, uint64_t seed) {
  mlc_rng_t rng;
  mlc_rng_seed(&rng, seed);
  for (int i = 0; i < a->n; i++) {
    for (size_t k = 0; k < a->count[i]; k++) {
      float v = (float)(1.0 + 9.0 * mlc_rng_uniform(&rng));
      a->data[i][k] = v < 10.0f ? v : 9.99999905f;
    }
    memcpy(a->want[i], a->data[i], sizeof(float) * a->count[i]);
    a->tensors[i].data = a->data[i];
  }
}

static int interpret(bench_args_t *a, const tir_func_t *f) {
  tir_arg_t targs[BENCH_SO_MAX_PARAMS];
  memset(targs, 0, sizeof targs);
  for (int i = 0; i < a->n; i++) {
    targs[i].data = a->want[i];
    targs[i].ndim = a->tensors[i].ndim;
    memcpy(targs[i].shape, a->shapes[i], sizeof a->shapes[i]);
    targs[i].dtype = tir_dt_FLOAT32();
  }
  int rc = tir_interp_run(f, targs, a->n);
  if (rc != MLC_OK) mlc_error_prefix("%s: the reference interpreter", f->name);
  return rc;
}

int bench_args_new(bench_args_t **out, const tir_func_t *f, uint64_t seed) {
  *out = NULL;
  if (f->nparams > BENCH_SO_MAX_PARAMS)
    return mlc_error_set(MLC_EINVAL, "%s: %d parameters, at most %d", f->name, f->nparams, BENCH_SO_MAX_PARAMS);
  bench_args_t *a = calloc(1, sizeof *a);
  if (!a) return mlc_error_set(MLC_ENOMEM, "out of memory");
  a->n = f->nparams;
  int rc = MLC_OK;
  for (int i = 0; i < a->n && rc == MLC_OK; i++) {
    rc = param_shape(a, f, i);
    if (rc == MLC_OK) {
      a->data[i] = bench_alloc_floats(a->count[i] ? a->count[i] : 1);
      a->want[i] = bench_alloc_floats(a->count[i] ? a->count[i] : 1);
    }
  }
  if (rc == MLC_OK) {
    fill(a, seed);
    rc = interpret(a, f);
  }
  if (rc != MLC_OK) {
    bench_args_free(a);
    return rc;
  }
  *out = a;
  return MLC_OK;
}

void bench_args_free(bench_args_t *a) {
  if (!a) return;
  for (int i = 0; i < a->n; i++) {
    free(a->data[i]);
    free(a->want[i]);
  }
  free(a);
}

/* ------------------------------------------------------------------------ */
/* The contender                                                             */
/* ------------------------------------------------------------------------ */

static double so_run(bench_contender_t *c, int ci, int threads, int number) {
  so_fn_t *k = c->impl[ci];
  if (k->so->set_num_threads) k->so->set_num_threads(threads);
  double t0 = bench_now();
  for (int i = 0; i < number; i++)
    if (k->fn(k->args->tensors, k->args->n) != 0) bench_die(k->name, k->so->last_error());
  return bench_now() - t0;
}

/* The largest |got - want| / |want| over every buffer after one call (the
 * inputs compare equal unless the kernel wrote into them). */
static double so_check(bench_contender_t *c, int ci) {
  so_fn_t *k = c->impl[ci];
  bench_args_t *a = k->args;
  so_run(c, ci, 1, 1);
  double worst = 0;
  for (int i = 0; i < a->n; i++)
    for (size_t j = 0; j < a->count[i]; j++) {
      double want = a->want[i][j], got = a->data[i][j];
      double e = want != 0 ? fabs(got - want) / fabs(want) : fabs(got);
      if (!(e <= worst)) worst = e; /* a NaN sticks */
    }
  return worst;
}

static void so_contender_free(bench_contender_t *c) {
  for (int ci = 0; ci < BENCH_MAX_CASES; ci++) {
    free(c->impl[ci]);
    c->impl[ci] = NULL;
  }
}

void bench_so_contender_init(bench_contender_t *c, const char *name) {
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  c->run = so_run;
  c->check = so_check;
  c->free = so_contender_free;
}

int bench_so_contender_add(bench_contender_t *c, int ci, bench_so_t *so, const char *fn_name, bench_args_t *args) {
  so_fn_t *k = calloc(1, sizeof *k);
  if (!k) return mlc_error_set(MLC_ENOMEM, "out of memory");
  k->so = so;
  k->args = args;
  snprintf(k->name, sizeof k->name, "%s", fn_name);
  if (!lookup(so->handle, fn_name, &k->fn)) {
    free(k);
    return mlc_error_set(MLC_ENOTFOUND, "%s: no function '%s'", so->path, fn_name);
  }
  if (so->set_num_threads) so->set_num_threads(1);
  if (k->fn(args->tensors, args->n) != 0) {
    int rc = mlc_error_set(MLC_ERUNTIME, "%s (%s) failed: %s", fn_name, so->path, so->last_error());
    free(k);
    return rc;
  }
  free(c->impl[ci]);
  c->impl[ci] = k;
  return MLC_OK;
}
