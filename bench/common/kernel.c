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
  size_t nout;
  int nargs;
  DLTensor args[BENCH_KERNEL_MAX_ARGS];
  int64_t shapes[BENCH_KERNEL_MAX_ARGS][TIR_MAX_DIMS];
  bench_kernel_error_fn error;
  const void *problem;
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
  sch_trace_t *t = NULL;
  int rc = sch_trace_from_json_text(&t, json_text, "trace");
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

/* One DLTensor per parameter: the inputs in order, then an output of the
 * kernel's own; each must hold as many elements as the array it is given. */
static int kernel_bind(bench_kernel_t *k, const tir_func_t *f, float *const *inputs, const size_t *sizes, int nin,
                       size_t nout) {
  k->nout = nout;
  k->out = bench_alloc_floats(nout);
  if (nin + 1 > BENCH_KERNEL_MAX_ARGS || f->nparams != nin + 1)
    return mlc_error_set(MLC_EINVAL, "%s: %d parameters, the problem has %d arrays", f->name, f->nparams, nin + 1);
  for (int i = 0; i < f->nparams; i++) {
    const tir_buffer_t *b = f->buffer_map[i];
    if (!b) return mlc_error_set(MLC_EINVAL, "%s: parameter %d is not a buffer", f->name, i);
    size_t elems = 1, want = i < nin ? sizes[i] : nout;
    for (int d = 0; d < b->ndim; d++) {
      if (!tir_as_int(b->shape[d], &k->shapes[i][d]))
        return mlc_error_set(MLC_EINVAL, "%s: parameter %d has a symbolic shape", f->name, i);
      elems *= (size_t)k->shapes[i][d];
    }
    if (elems != want)
      return mlc_error_set(MLC_EINVAL, "%s: parameter %d holds %zu elements, the problem's array %zu", f->name, i,
                           elems, want);
    k->args[i] = (DLTensor){.data = i < nin ? inputs[i] : k->out, .device = {kDLCPU, 0}, .ndim = b->ndim,
                            .dtype = {kDLFloat, 32, 1}, .shape = k->shapes[i]};
  }
  k->nargs = f->nparams;
  return MLC_OK;
}

int bench_kernel_build_arrays(bench_kernel_t **out, const sch_t *sch, const mlc_target_t *target,
                              float *const *inputs, const size_t *sizes, int nin, size_t nout,
                              bench_kernel_error_fn error, const void *problem, const char *dump) {
  *out = NULL;
  bench_kernel_t *k = calloc(1, sizeof *k);
  if (!k) return mlc_error_set(MLC_ENOMEM, "out of memory");
  k->error = error;
  k->problem = problem;
  int rc = kernel_compile(k, sch, target, dump);
  if (rc == MLC_OK) rc = kernel_bind(k, sch_func(sch), inputs, sizes, nin, nout);
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

static double gemm_error(const float *out, const void *problem) { return bench_max_rel_error(out, problem); }

int bench_kernel_build(bench_kernel_t **out, const sch_t *sch, const mlc_target_t *target, const bench_inputs_t *in,
                       const char *dump) {
  float *inputs[2] = {in->x, in->y};
  size_t sizes[2] = {in->nx, in->ny};
  return bench_kernel_build_arrays(out, sch, target, inputs, sizes, 2, in->nout, gemm_error, in, dump);
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

/* One run on one thread: the schedule, not the number of threads, fixes
 * what each output element sums. The output starts as NaNs, so an element
 * the kernel never writes shows. */
static double kernel_check(bench_contender_t *c, int ci) {
  bench_kernel_t *k = c->impl[ci];
  memset(k->out, 0xff, sizeof(float) * k->nout);
  kernel_run(c, ci, 1, 1);
  return k->error(k->out, k->problem);
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
