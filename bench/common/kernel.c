/*
 * kernel.c - our kernels as contenders: schedule a workload by a trace,
 * build, JIT-load, bind to a problem's inputs, time. See kernel.h.
 */
#include "bench/common/kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "runtime/runtime.h"

struct bench_kernel {
  mlc_jit_t *jit;
  mlc_packed_fn_t fn;
  float *out;
  int nargs;
  DLTensor args[3];
  int64_t shapes[3][TIR_MAX_DIMS];
  const bench_inputs_t *in;
};

const char *bench_default_traces_dir(void) {
  static char dir[4096];
  snprintf(dir, sizeof dir, "%s", __FILE__); /* .../bench/common/kernel.c */
  for (int up = 0; up < 2; up++) {
    char *slash = strrchr(dir, '/');
    if (!slash) return "bench/traces";
    *slash = '\0';
  }
  size_t len = strlen(dir);
  snprintf(dir + len, sizeof dir - len, "/traces");
  return dir;
}

int bench_case_workload(tir_func_t **out, const bench_case_t *c) {
  int rc = tir_workload_build(out, c->workload, c->shape, c->nshape, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0});
  if (rc != MLC_OK) mlc_error_prefix("%s", c->name);
  return rc;
}

/* A fresh schedule of f with t replayed (decisions kept); `what` names the
 * trace in errors. */
static int schedule_with(sch_t **out, const tir_func_t *f, const sch_trace_t *t, const char *what) {
  *out = NULL;
  sch_t *sch = NULL;
  int rc = sch_create(&sch, f, 1, SCH_ERRORS_RICH);
  if (rc != MLC_OK) return rc;
  if ((rc = sch_trace_apply(sch, t, true)) != MLC_OK) {
    rc = mlc_error_set(rc, "%s: %s", what, sch_error(sch));
    sch_free(sch);
    return rc;
  }
  *out = sch;
  return MLC_OK;
}

int bench_schedule_python_file(sch_t **out, const tir_func_t *f, const char *path) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  sch_trace_t *t = NULL;
  int rc = mlc_read_file(&text, &len, path);
  if (rc == MLC_OK) rc = sch_trace_from_python(&t, text, len, path);
  if (rc == MLC_OK) rc = schedule_with(out, f, t, path);
  sch_trace_free(t);
  mlc_free(text);
  return rc;
}

int bench_schedule_json(sch_t **out, const tir_func_t *f, const char *json_text) {
  *out = NULL;
  json_t *json = mlc_json_loads(json_text, "trace");
  if (!json) return MLC_EPARSE; /* the detail names "trace" and where */
  sch_trace_t *t = NULL;
  int rc = sch_trace_from_json(&t, json);
  json_decref(json);
  if (rc == MLC_OK) rc = schedule_with(out, f, t, "trace");
  sch_trace_free(t);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Building                                                                  */
/* ------------------------------------------------------------------------ */

static void dump_lowered(const char *pass, const tir_func_t *f, void *payload) {
  (void)payload;
  char *text = tir_print_func(f);
  printf("# after %s\n%s\n", pass, text ? text : "(out of memory)");
  mlc_free(text);
}

/* Lowers and compiles the scheduled function, prints what `dump` asks
 * for, and loads it. */
static int kernel_compile(bench_kernel_t *k, const sch_t *sch, const mlc_target_t *target, const char *dump) {
  mlc_lower_options_t lo = {0};
  if (dump && strcmp(dump, "tir") == 0) lo = (mlc_lower_options_t){.dump_after = "all", .dump = dump_lowered};
  mlc_module_t *m = NULL;
  tir_func_t *scheduled = sch_func(sch);
  int rc = mlc_build(&m, &scheduled, 1, target, &lo);
  if (rc != MLC_OK) return rc;
  if (dump && strcmp(dump, "tir") != 0) {
    char *s = mlc_module_text(m, strcmp(dump, "ll") == 0 ? MLC_EMIT_LL : MLC_EMIT_ASM);
    printf("%s\n", s ? s : "(no text)");
    mlc_free(s);
  }
  if ((rc = mlc_jit_load(&k->jit, m)) != MLC_OK) return rc;
  if (!(k->fn = (mlc_packed_fn_t)mlc_jit_lookup(k->jit, scheduled->name)))
    return mlc_error_set(MLC_ENOTFOUND, "kernel %s not found in its module", scheduled->name);
  return MLC_OK;
}

/* The DLTensor arguments: the scheduled function's buffers, inputs then
 * output, each as large as the problem's array it is given. */
static int kernel_bind_args(bench_kernel_t *k, const tir_func_t *f, const bench_inputs_t *in) {
  k->in = in;
  k->out = bench_alloc_floats(in->nout);
  float *data[3] = {in->x, in->y, k->out};
  size_t sizes[3] = {in->nx, in->ny, in->nout};
  if (f->nparams != 3) return mlc_error_set(MLC_EINVAL, "%s: expected 3 parameters, got %d", f->name, f->nparams);
  for (int i = 0; i < 3; i++) {
    const tir_buffer_t *b = f->buffer_map[i];
    if (!b) return mlc_error_set(MLC_EINVAL, "%s: parameter %d is not a buffer", f->name, i);
    size_t elems = 1;
    for (int d = 0; d < b->ndim; d++) {
      if (!tir_as_int(b->shape[d], &k->shapes[i][d]))
        return mlc_error_set(MLC_EINVAL, "%s: parameter %d has a symbolic shape", f->name, i);
      elems *= (size_t)k->shapes[i][d];
    }
    if (elems != sizes[i])
      return mlc_error_set(MLC_EINVAL, "%s: parameter %d holds %zu elements, the problem's array %zu", f->name, i,
                           elems, sizes[i]);
    k->args[i] = (DLTensor){.data = data[i], .device = {kDLCPU, 0}, .ndim = b->ndim, .dtype = {kDLFloat, 32, 1},
                            .shape = k->shapes[i]};
  }
  k->nargs = 3;
  return MLC_OK;
}

int bench_kernel_build(bench_kernel_t **out, const sch_t *sch, const mlc_target_t *target, const bench_inputs_t *in,
                       const char *dump) {
  *out = NULL;
  bench_kernel_t *k = calloc(1, sizeof *k);
  if (!k) return mlc_error_set(MLC_ENOMEM, "out of memory");
  int rc = kernel_compile(k, sch, target, dump);
  if (rc == MLC_OK) rc = kernel_bind_args(k, sch_func(sch), in);
  if (rc == MLC_OK) {
    mlc_rt_set_num_threads(1);
    if (k->fn(k->args, k->nargs) != 0) rc = mlc_error_set(MLC_ERUNTIME, "the kernel failed: %s", mlc_last_error());
  }
  if (rc != MLC_OK) {
    bench_kernel_free(k);
    return rc;
  }
  *out = k;
  return MLC_OK;
}

void bench_kernel_free(bench_kernel_t *k) {
  if (!k) return;
  mlc_jit_free(k->jit);
  free(k->out);
  free(k);
}

/* ------------------------------------------------------------------------ */
/* The contender                                                             */
/* ------------------------------------------------------------------------ */

static double kernel_run(bench_contender_t *c, int ci, int threads, int number) {
  bench_kernel_t *k = c->impl[ci];
  mlc_rt_set_num_threads(threads);
  double t0 = bench_now();
  for (int i = 0; i < number; i++)
    if (k->fn(k->args, k->nargs) != 0) bench_die("the kernel failed", mlc_last_error());
  return bench_now() - t0;
}

static double kernel_check(bench_contender_t *c, int ci) {
  bench_kernel_t *k = c->impl[ci];
  memset(k->out, 0, sizeof(float) * k->in->nout);
  kernel_run(c, ci, 1, 1);
  return bench_max_rel_error(k->out, k->in);
}

static void kernel_contender_free(bench_contender_t *c) {
  for (int ci = 0; ci < BENCH_MAX_CASES; ci++) {
    bench_kernel_free(c->impl[ci]);
    c->impl[ci] = NULL;
  }
}

void bench_kernel_contender_init(bench_contender_t *c, const char *name) {
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  c->run = kernel_run;
  c->check = kernel_check;
  c->free = kernel_contender_free;
}

void bench_kernel_contender_add(bench_contender_t *c, int ci, bench_kernel_t *k) {
  bench_kernel_free(c->impl[ci]);
  c->impl[ci] = k;
}
