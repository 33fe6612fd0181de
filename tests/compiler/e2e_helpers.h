/*
 * e2e_helpers.h - what the end-to-end workload tests (test_e2e_*.c) share:
 *
 * - a case: one workload instance (unscheduled function) with random
 *   arguments and the reference interpreter's result on them;
 * - checking a schedule of it: mlc_build for the host target, mlc_jit_load,
 *   a call through the DLPack ABI on the same arguments, and a comparison of
 *   every buffer with the tolerance of the case's dtype; a failure names the
 *   workload, the dtype, the schedule and the first mismatching element, and
 *   prints the schedule's trace so the case can be replayed;
 * - two generic schedule builders that work on any block from its structure
 *   alone: tiled + vectorized + parallel (e2e_schedule_tiled), and tiled +
 *   tensorized with a registered intrinsic (e2e_schedule_tensorized), whose
 *   loop pattern is read from the intrinsic's description.
 *
 * Header-only (static functions); include after <cmocka.h>.
 */
#ifndef MLC_TESTS_E2E_HELPERS_H
#define MLC_TESTS_E2E_HELPERS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/compiler.h"
#include "schedule/schedule.h"

#define E2E_TARGET "llvm -num-cores=2"
#define E2E_MAX_ARGS 16
#define E2E_MAX_LOOPS 16
#define E2E_MAX_BLOCKS 16

/* ------------------------------------------------------------------------ */
/* Cases: arguments and the interpreter's result                             */
/* ------------------------------------------------------------------------ */

typedef struct {
  char workload[32];   /* "GMM" */
  char dtype[32];      /* "float32", "float16->float32", "int8->int32" */
  tir_func_t *f;       /* the unscheduled function (owned) */
  int n;
  tir_dtype_t dt[E2E_MAX_ARGS];
  int ndim[E2E_MAX_ARGS];
  int64_t shape[E2E_MAX_ARGS][TIR_MAX_DIMS];
  size_t count[E2E_MAX_ARGS], bytes[E2E_MAX_ARGS];
  void *init[E2E_MAX_ARGS];   /* the arguments before any run */
  void *want[E2E_MAX_ARGS];   /* after the interpreter */
  void *got[E2E_MAX_ARGS];    /* the generated code's memory */
  DLTensor dl[E2E_MAX_ARGS];
  double rtol;                /* 0: exact */
  char tol_why[96];
  mlc_rng_t rng;
} e2e_case_t;

static int e2e_elem_bytes(tir_dtype_t t) { return t.bits <= 8 ? 1 : t.bits / 8; }

/* Element i of p (dtype t) as a double; integers of up to 32 bits exactly. */
static MLC_UNUSED double e2e_get(const void *p, tir_dtype_t t, size_t i) {
  const unsigned char *c = (const unsigned char *)p + i * (size_t)e2e_elem_bytes(t);
  uint16_t h;
  if (t.code == TIR_CODE_FLOAT && t.bits == 32) return *(const float *)c;
  if (t.code == TIR_CODE_FLOAT && t.bits == 64) return *(const double *)c;
  if (t.code == TIR_CODE_FLOAT) return memcpy(&h, c, 2), tir_f16_to_f32(h);
  if (t.code == TIR_CODE_BFLOAT) return memcpy(&h, c, 2), tir_bf16_to_f32(h);
  if (t.code == TIR_CODE_INT) {
    if (t.bits == 8) return *(const int8_t *)c;
    if (t.bits == 16) return *(const int16_t *)c;
    if (t.bits == 32) return *(const int32_t *)c;
    return (double)*(const int64_t *)c;
  }
  if (t.bits <= 8) return *(const uint8_t *)c;
  if (t.bits == 16) return *(const uint16_t *)c;
  if (t.bits == 32) return *(const uint32_t *)c;
  return (double)*(const uint64_t *)c;
}

/* Stores v, converted to t, as element i of p. */
static MLC_UNUSED void e2e_set(void *p, tir_dtype_t t, size_t i, double v) {
  unsigned char *c = (unsigned char *)p + i * (size_t)e2e_elem_bytes(t);
  uint16_t h;
  if (t.code == TIR_CODE_FLOAT && t.bits == 32) *(float *)c = (float)v;
  else if (t.code == TIR_CODE_FLOAT && t.bits == 64) *(double *)c = v;
  else if (t.code == TIR_CODE_FLOAT) h = tir_f32_to_f16((float)v), memcpy(c, &h, 2);
  else if (t.code == TIR_CODE_BFLOAT) h = tir_f32_to_bf16((float)v), memcpy(c, &h, 2);
  else if (t.bits <= 8) *c = (unsigned char)(int64_t)v; /* two's complement for int8 */
  else if (t.bits == 16) h = (uint16_t)(int64_t)v, memcpy(c, &h, 2);
  else if (t.bits == 32) { int32_t w = (int32_t)(int64_t)v; memcpy(c, &w, 4); }
  else { int64_t w = (int64_t)v; memcpy(c, &w, 8); }
}

/* Fills argument i's initial contents: floats uniform in [lo, hi), integers
 * uniform in [lo, hi] (inclusive). */
static MLC_UNUSED void e2e_fill(e2e_case_t *c, int i, double lo, double hi) {
  tir_dtype_t t = c->dt[i];
  for (size_t k = 0; k < c->count[i]; k++) {
    double v = tir_dtype_is_float(t) ? lo + (hi - lo) * mlc_rng_uniform(&c->rng)
                                     : (double)mlc_rng_range(&c->rng, (int64_t)lo, (int64_t)hi);
    e2e_set(c->init[i], t, k, v);
  }
}

/* The default input ranges: floats in [1, 10) (the measurement library's);
 * int8 in [-8, 8] and uint8 in [0, 16], signed so sign extension is
 * exercised, small so that no int32 accumulation of these tests can
 * overflow (|sum| <= 64 * reduction length); wider integers (outputs, which
 * every kernel overwrites) in [-100, 100]. */
static void e2e_fill_default(e2e_case_t *c, int i) {
  tir_dtype_t t = c->dt[i];
  if (tir_dtype_is_float(t)) e2e_fill(c, i, 1, 10);
  else if (t.bits <= 8 && t.code == TIR_CODE_UINT) e2e_fill(c, i, 0, 16);
  else if (t.bits <= 8) e2e_fill(c, i, -8, 8);
  else e2e_fill(c, i, -100, 100);
}

/* The largest product of reduce iter var extents over f's blocks: how many
 * terms one reduction adds up. */
typedef struct {
  tir_visitor_t v;
  int64_t max_len;
} e2e_red_walk_t;

static bool e2e_red_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  (void)realize;
  e2e_red_walk_t *w = (e2e_red_walk_t *)v->payload;
  int64_t len = 1, e;
  for (int i = 0; i < b->niter_vars; i++)
    if (b->iter_vars[i].type == TIR_ITER_REDUCE && tir_as_int(b->iter_vars[i].dom.extent, &e)) len *= e;
  if (len > w->max_len) w->max_len = len;
  return true;
}

static MLC_UNUSED int64_t e2e_reduction_length(const tir_func_t *f) {
  e2e_red_walk_t w = {{0}, 1};
  w.v.block = e2e_red_block;
  w.v.payload = &w;
  tir_visit_stmt(&w.v, f->body);
  return w.max_len;
}

/* Tolerances, relative to max(|expected|, 1) (outputs near zero, as in
 * layer normalisation, are compared absolutely):
 * - integers: exact;
 * - float32: 1e-5. Code generation is exact (no fast-math, no reassociation)
 *   but the tensorized kernels fuse multiply and add (one rounding instead of
 *   two) and libm's exp/sqrt may differ from the interpreter's in the last
 *   bit; those differences add up over a reduction, about n * 2^-24 for n
 *   terms, so reductions over more than 64 terms get 1e-4;
 * - float16 inputs with float32 accumulation: 1e-3. */
static void e2e_set_tolerance(e2e_case_t *c) {
  tir_dtype_t in = c->dt[0];
  int64_t len = e2e_reduction_length(c->f);
  if (!tir_dtype_is_float(in)) {
    c->rtol = 0;
    snprintf(c->tol_why, sizeof(c->tol_why), "exact (integers)");
  } else if (in.bits == 16) {
    c->rtol = 1e-3;
    snprintf(c->tol_why, sizeof(c->tol_why), "rtol 1e-3 (16-bit float inputs)");
  } else {
    c->rtol = len > 64 ? 1e-4 : 1e-5;
    snprintf(c->tol_why, sizeof(c->tol_why), "rtol %.0e (float32, reductions of %lld terms)", c->rtol,
             (long long)len);
  }
}

/* Takes f (the unscheduled function), makes random arguments (default
 * ranges, seed) and allocates the result memory. Call e2e_case_reference
 * after changing any fill. */
static MLC_UNUSED void e2e_case_init(e2e_case_t *c, const char *workload, const char *dtype, tir_func_t *f,
                                     uint64_t seed) {
  memset(c, 0, sizeof(*c));
  snprintf(c->workload, sizeof(c->workload), "%s", workload);
  snprintf(c->dtype, sizeof(c->dtype), "%s", dtype);
  c->f = f;
  c->n = f->nparams;
  assert_true(c->n <= E2E_MAX_ARGS);
  mlc_rng_seed(&c->rng, seed);
  for (int i = 0; i < c->n; i++) {
    const tir_buffer_t *b = f->buffer_map[i];
    if (!b) fail_msg("%s: parameter %d has no buffer (scalars are not used here)", workload, i);
    c->dt[i] = b->dtype;
    c->ndim[i] = b->ndim;
    c->count[i] = 1;
    for (int d = 0; d < b->ndim; d++) {
      assert_true(tir_as_int(b->shape[d], &c->shape[i][d]));
      c->count[i] *= (size_t)c->shape[i][d];
    }
    /* 64-byte aligned like the tensors a user passes, and exactly as large
     * as the buffer, so a kernel's access past the end is an ASan report. */
    c->bytes[i] = c->count[i] * (size_t)e2e_elem_bytes(b->dtype);
    assert_int_equal(posix_memalign(&c->init[i], 64, c->bytes[i]), 0);
    assert_int_equal(posix_memalign(&c->want[i], 64, c->bytes[i]), 0);
    assert_int_equal(posix_memalign(&c->got[i], 64, c->bytes[i]), 0);
    c->dl[i] = (DLTensor){.data = c->got[i], .device = {kDLCPU, 0}, .ndim = b->ndim,
                          .dtype = {b->dtype.code, b->dtype.bits, b->dtype.lanes}, .shape = c->shape[i]};
    e2e_fill_default(c, i);
  }
  e2e_set_tolerance(c);
}

/* Seconds on the monotonic clock (for the E2E_VERBOSE timings). */
static MLC_UNUSED double e2e_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs the interpreter on the unscheduled function: want = f(init). */
static MLC_UNUSED void e2e_case_reference(e2e_case_t *c) {
  double t0 = e2e_now();
  tir_arg_t args[E2E_MAX_ARGS];
  memset(args, 0, sizeof(args));
  for (int i = 0; i < c->n; i++) {
    memcpy(c->want[i], c->init[i], c->bytes[i]);
    args[i].data = c->want[i];
    args[i].ndim = c->ndim[i];
    args[i].dtype = c->dt[i];
    memcpy(args[i].shape, c->shape[i], sizeof(args[i].shape));
  }
  if (tir_interp_run(c->f, args, c->n) != MLC_OK)
    fail_msg("%s %s: the interpreter failed: %s", c->workload, c->dtype, mlc_error_last());
  if (getenv("E2E_VERBOSE"))
    printf("%s %s: interpreter %.3f s, tolerance %s\n", c->workload, c->dtype, e2e_now() - t0, c->tol_why);
}

static MLC_UNUSED void e2e_case_free(e2e_case_t *c) {
  for (int i = 0; i < c->n; i++) free(c->init[i]), free(c->want[i]), free(c->got[i]);
  tir_func_free(c->f);
  memset(c, 0, sizeof(*c));
}

/* "C[1, 17]" for element k of argument i. */
static void e2e_elem_name(const e2e_case_t *c, int i, size_t k, char *buf, size_t len) {
  size_t idx[TIR_MAX_DIMS];
  for (int d = c->ndim[i] - 1; d >= 0; d--) idx[d] = k % (size_t)c->shape[i][d], k /= (size_t)c->shape[i][d];
  int off = snprintf(buf, len, "%s[", c->f->buffer_map[i]->name);
  for (int d = 0; d < c->ndim[i] && off > 0 && (size_t)off < len; d++)
    off += snprintf(buf + off, len - (size_t)off, "%s%zu", d ? ", " : "", idx[d]);
  if (off > 0 && (size_t)off < len) snprintf(buf + off, len - (size_t)off, "]");
}

/* The first element of any argument where got and want differ beyond the
 * tolerance: false and a message, or true. *max_dev gets the largest
 * deviation seen, relative to max(|expected|, 1). */
static bool e2e_compare(const e2e_case_t *c, char *msg, size_t len, double *max_dev) {
  *max_dev = 0;
  for (int i = 0; i < c->n; i++) {
    for (size_t k = 0; k < c->count[i]; k++) {
      double want = e2e_get(c->want[i], c->dt[i], k), got = e2e_get(c->got[i], c->dt[i], k);
      bool ok = want == got || (isnan(want) && isnan(got));
      double dev = ok ? 0 : fabs(want - got) / fmax(1.0, fabs(want));
      if (!ok && c->rtol > 0) ok = dev <= c->rtol;
      if (dev > *max_dev) *max_dev = dev;
      if (ok) continue;
      char where[96];
      e2e_elem_name(c, i, k, where, sizeof(where));
      snprintf(msg, len, "first mismatch at %s (flat element %zu): generated %.9g, interpreter %.9g (%s)", where,
               k, got, want, c->tol_why);
      return false;
    }
  }
  return true;
}

/* Prints the schedule's trace, without the lookups the builders made only
 * to inspect blocks (how to replay a failing case: mlc-sched lower
 * --script). */
static MLC_UNUSED void e2e_print_trace(const sch_t *sch) {
  if (!sch) return;
  sch_trace_t *t = NULL;
  char *py = sch_trace_simplified(&t, sch_get_trace(sch)) == MLC_OK ? sch_trace_to_python(t) : NULL;
  fprintf(stderr, "schedule trace:\n%s\n", py ? py : "(none)");
  mlc_free(py);
  sch_trace_free(t);
}

/* Builds `scheduled` for the host (notes collects lowering's notes) and
 * loads it into a JIT; checks that the optimised LLVM IR contains
 * `ir_must_have` when not NULL. NULL and a message in msg on failure. */
static mlc_jit_t *e2e_build(tir_func_t *scheduled, const char *ir_must_have, mlc_strbuf_t *notes, char *msg,
                            size_t len) {
  mlc_target_t target;
  assert_int_equal(mlc_target_parse(&target, E2E_TARGET), MLC_OK);
  mlc_lower_options_t opts = {.notes = notes};
  mlc_module_t *m = NULL;
  mlc_jit_t *jit = NULL;
  if (mlc_build(&m, &scheduled, 1, &target, &opts) != MLC_OK) {
    snprintf(msg, len, "mlc_build failed: %s", mlc_error_last());
    return NULL;
  }
  if (ir_must_have) {
    char *ir = mlc_module_text(m, MLC_EMIT_LL);
    bool found = ir && strstr(ir, ir_must_have);
    mlc_free(ir);
    if (!found) {
      snprintf(msg, len, "the optimised LLVM IR does not contain %s", ir_must_have);
      mlc_module_free(m);
      return NULL;
    }
  }
  if (mlc_jit_load(&jit, m) != MLC_OK) snprintf(msg, len, "mlc_jit_load failed: %s", mlc_error_last());
  return jit;
}

/* Runs the generated function on a fresh copy of the case's arguments and
 * compares; a message in msg on failure. */
static void e2e_run(e2e_case_t *c, mlc_jit_t *jit, const char *name, char *msg, size_t len) {
  mlc_packed_fn_t fn = (mlc_packed_fn_t)mlc_jit_lookup(jit, name);
  if (!fn) {
    snprintf(msg, len, "no function %s in the JIT", name);
    return;
  }
  for (int i = 0; i < c->n; i++) memcpy(c->got[i], c->init[i], c->bytes[i]);
  int32_t rc = fn(c->dl, c->n);
  double dev = 0;
  if (rc != 0) snprintf(msg, len, "the generated function returned %d: %s", (int)rc, mlc_last_error());
  else e2e_compare(c, msg, len, &dev);
  if (getenv("E2E_VERBOSE")) printf("%s %s: largest relative deviation %.3g\n", c->workload, c->dtype, dev);
}

/* Builds `scheduled` (a schedule of c->f; the caller keeps it) for the host,
 * runs it through the ABI on the case's arguments and compares with the
 * interpreter's result. `schedule` names the schedule in messages; `sch`
 * (may be NULL) is printed as a trace on failure; `ir_must_have` (may be
 * NULL) is text the optimised LLVM IR must contain (an intrinsic's name). */
static MLC_UNUSED void e2e_case_check_ir(e2e_case_t *c, const char *schedule, tir_func_t *scheduled,
                                         const sch_t *sch, const char *ir_must_have) {
  double t0 = e2e_now();
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  char msg[512] = "";
  mlc_jit_t *jit = e2e_build(scheduled, ir_must_have, &notes, msg, sizeof(msg));
  if (jit) e2e_run(c, jit, scheduled->name, msg, sizeof(msg));
  mlc_jit_free(jit);
  if (getenv("E2E_VERBOSE"))
    printf("%s %s [%s]: build and run %.3f s\n%s", c->workload, c->dtype, schedule, e2e_now() - t0,
           mlc_sb_str(&notes));
  if (msg[0]) {
    if (notes.len) fprintf(stderr, "lowering notes:\n%s", mlc_sb_str(&notes));
    e2e_print_trace(sch);
  }
  mlc_sb_free(&notes);
  if (msg[0]) fail_msg("%s %s [%s]: %s", c->workload, c->dtype, schedule, msg);
}

static MLC_UNUSED void e2e_case_check(e2e_case_t *c, const char *schedule, tir_func_t *scheduled, const sch_t *sch) {
  e2e_case_check_ir(c, schedule, scheduled, sch, NULL);
}

/* ------------------------------------------------------------------------ */
/* Block structure                                                           */
/* ------------------------------------------------------------------------ */

typedef enum { E2E_LOOP_SPATIAL, E2E_LOOP_REDUCE, E2E_LOOP_OTHER } e2e_loop_role_t;

/* The loops of a block (outermost first) with their extents and roles, read
 * from the block's bindings: a loop is a reduce
 * loop when a reduce iter var's binding uses it, spatial when only spatial
 * ones do (or none: a unit loop), OTHER when it feeds a scan/opaque iter or
 * its extent is not constant. */
typedef struct {
  int n;
  sch_rv_t rv[E2E_MAX_LOOPS];
  int64_t extent[E2E_MAX_LOOPS];
  e2e_loop_role_t role[E2E_MAX_LOOPS];
  bool has_init;
} e2e_nest_t;

typedef struct {
  tir_visitor_t v;
  uint32_t uid;
  tir_stmt_t *realize;
} e2e_find_t;

static bool e2e_find_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  e2e_find_t *w = (e2e_find_t *)v->payload;
  if (b->uid == w->uid) w->realize = realize;
  return w->realize == NULL;
}

/* The BLOCK_REALIZE of block `b` in `body`, or NULL. */
static tir_stmt_t *e2e_realize_of(tir_stmt_t *body, const tir_block_t *b) {
  e2e_find_t w = {{0}, b->uid, NULL};
  w.v.block = e2e_find_block;
  w.v.payload = &w;
  tir_visit_stmt(&w.v, body);
  return w.realize;
}

static bool e2e_nest_of(sch_t *sch, sch_rv_t block, e2e_nest_t *nest) {
  memset(nest, 0, sizeof(*nest));
  tir_block_t *b = NULL;
  const sch_rv_t *loops = NULL;
  if (sch_get_block_node(sch, block, &b) != MLC_OK || sch_get_loops(sch, &loops, &nest->n, block) != MLC_OK)
    return false;
  tir_stmt_t *realize = e2e_realize_of(sch_func(sch)->body, b);
  if (!realize || nest->n > E2E_MAX_LOOPS) return false;
  nest->has_init = b->init != NULL;
  for (int l = 0; l < nest->n; l++) {
    tir_stmt_t *loop = NULL;
    nest->rv[l] = loops[l];
    if (sch_get_loop_node(sch, loops[l], &loop) != MLC_OK) return false;
    bool reduce = false, other = !tir_as_int(loop->u.loop.extent, &nest->extent[l]);
    for (int k = 0; k < realize->u.realize.n; k++) {
      if (!tir_expr_uses_var(realize->u.realize.iter_values[k], loop->u.loop.var)) continue;
      tir_iter_type_t t = b->iter_vars[k].type;
      reduce |= t == TIR_ITER_REDUCE;
      other |= t != TIR_ITER_SPATIAL && t != TIR_ITER_REDUCE;
    }
    nest->role[l] = other ? E2E_LOOP_OTHER : reduce ? E2E_LOOP_REDUCE : E2E_LOOP_SPATIAL;
  }
  return true;
}

/* Names of the function's blocks (not the root), in program order. */
typedef struct {
  tir_visitor_t v;
  int n;
  char names[E2E_MAX_BLOCKS][64];
} e2e_names_t;

static bool e2e_name_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  (void)realize;
  e2e_names_t *w = (e2e_names_t *)v->payload;
  if (strcmp(b->name, "root") != 0 && w->n < E2E_MAX_BLOCKS)
    snprintf(w->names[w->n++], sizeof(w->names[0]), "%s", b->name);
  return true;
}

static MLC_UNUSED void e2e_block_names(const tir_func_t *f, e2e_names_t *out) {
  memset(out, 0, sizeof(*out));
  out->v.block = e2e_name_block;
  out->v.payload = out;
  tir_visit_stmt(&out->v, f->body);
}

/* ------------------------------------------------------------------------ */
/* What a schedule builder did                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
  char name[64];
  int64_t iters;   /* product of the loop extents before scheduling */
  int nsplits;
  bool reordered, decomposed, parallel, vectorized, init_vectorized, tensorized;
  char skipped[768]; /* "step: reason" lines for steps whose preconditions failed */
} e2e_block_log_t;

typedef struct {
  int n;
  e2e_block_log_t blocks[E2E_MAX_BLOCKS];
} e2e_sched_log_t;

/* Notes that `step` was skipped and why; returns false (for failing steps). */
static bool e2e_skip_note(e2e_block_log_t *log, const char *step, const char *why) {
  /* Format into a local line first: the block's name lives in the same struct
   * as the destination, which GCC's -Wrestrict (Release) rightly flags. */
  char line[sizeof(log->skipped)];
  snprintf(line, sizeof(line), "  %s: %s: %s\n", log->name, step, why);
  size_t used = strlen(log->skipped);
  snprintf(log->skipped + used, sizeof(log->skipped) - used, "%s", line);
  return false;
}

/* The block with the most loop iterations: the one a workload is about. */
static MLC_UNUSED const e2e_block_log_t *e2e_main_block(const e2e_sched_log_t *log) {
  const e2e_block_log_t *best = NULL;
  for (int i = 0; i < log->n; i++)
    if (!best || log->blocks[i].iters > best->iters) best = &log->blocks[i];
  return best;
}

static MLC_UNUSED void e2e_print_log(const e2e_sched_log_t *log) {
  for (int i = 0; i < log->n; i++) {
    const e2e_block_log_t *b = &log->blocks[i];
    fprintf(stderr, "  block %s (%lld iterations): splits %d%s%s%s%s%s%s\n%s", b->name, (long long)b->iters,
            b->nsplits, b->reordered ? ", reordered" : "", b->decomposed ? ", reduction decomposed" : "",
            b->parallel ? ", parallel" : "", b->vectorized ? ", vectorized" : "",
            b->init_vectorized ? ", init vectorized" : "", b->tensorized ? ", tensorized" : "", b->skipped);
  }
}

/* Splits `loop` by [None, factor]: MLC_OK with the outer and inner loops. */
static int e2e_split2(sch_t *sch, sch_rv_t loop, int64_t factor, sch_rv_t *outer, sch_rv_t *inner) {
  sch_arg_t factors[2] = {sch_arg_none(), sch_arg_int(factor)};
  const sch_rv_t *out = NULL;
  int rc = sch_split(sch, &out, loop, factors, 2, true);
  if (rc == MLC_OK) *outer = out[0], *inner = out[1];
  return rc;
}

/* Fuses the outer spatial loops (if more than one) and makes the result
 * parallel. */
static void e2e_parallel_outer(sch_t *sch, const sch_rv_t *outer, int nouter, e2e_block_log_t *log) {
  if (nouter == 0) {
    e2e_skip_note(log, "parallel", "no outer spatial loop");
    return;
  }
  sch_rv_t par = outer[0];
  if (nouter > 1 && sch_fuse(sch, &par, outer, nouter, true) != MLC_OK) {
    e2e_skip_note(log, "fuse", sch_error(sch));
    par = outer[0];
  }
  if (sch_parallel(sch, par) == MLC_OK) log->parallel = true;
  else e2e_skip_note(log, "parallel", sch_error(sch));
}

/* Vectorizes the innermost loop of a decomposed reduction's init block,
 * unless decompose_reduction copied a vectorized loop's kind already. */
static void e2e_vectorize_init(sch_t *sch, sch_rv_t init, e2e_block_log_t *log) {
  const sch_rv_t *loops = NULL;
  int n = 0;
  tir_stmt_t *loop = NULL;
  if (sch_get_loops(sch, &loops, &n, init) != MLC_OK || n == 0) return;
  if (sch_get_loop_node(sch, loops[n - 1], &loop) != MLC_OK) return;
  if (loop->u.loop.kind == TIR_FOR_VECTORIZED) log->init_vectorized = true;
  if (loop->u.loop.kind != TIR_FOR_SERIAL) return;
  if (sch_vectorize(sch, loops[n - 1]) == MLC_OK) log->init_vectorized = true;
  else e2e_skip_note(log, "vectorize init", sch_error(sch));
}

/* ------------------------------------------------------------------------ */
/* Tiled + vectorized + parallel                                             */
/* ------------------------------------------------------------------------ */

/* Tile factor of a spatial loop that is not the vector loop: 4 or 2 when
 * that leaves an outer extent of at least 2, else no split (1). */
static int64_t e2e_tile_factor(int64_t extent) {
  if (extent % 4 == 0 && extent >= 8) return 4;
  if (extent % 2 == 0 && extent >= 4) return 2;
  return 1;
}

/* Vector length for the innermost spatial loop: 16, 8 or 4 lanes dividing
 * its extent; when the other outer loops alone give no parallelism
 * (outer_par < 2), the split must leave an outer extent of at least 2. */
static int64_t e2e_vector_factor(int64_t extent, int64_t outer_par) {
  static const int64_t lanes[] = {16, 8, 4};
  for (int i = 0; i < 3; i++)
    if (extent % lanes[i] == 0 && (outer_par >= 2 || extent / lanes[i] >= 2)) return lanes[i];
  return 0;
}

/* The loops of a block being tiled: outer spatial tiles (outermost first),
 * the reduce loops, inner spatial tiles and the vector loop. */
typedef struct {
  int nouter, nreduce, ninner;
  sch_rv_t outer[E2E_MAX_LOOPS], reduce[E2E_MAX_LOOPS], inner[E2E_MAX_LOOPS];
  sch_rv_t vec; /* SCH_RV_NONE when no loop can be vectorized */
} e2e_tiles_t;

/* Step 1: splits the spatial loops spatial[0..ns) of nest. */
static void e2e_tile_split(sch_t *sch, const e2e_nest_t *nest, const int *spatial, int ns, e2e_tiles_t *t,
                           e2e_block_log_t *log) {
  int64_t outer_par = 1;
  t->vec = SCH_RV_NONE;
  for (int s = 0; s + 1 < ns; s++) {
    int l = spatial[s];
    int64_t f = e2e_tile_factor(nest->extent[l]);
    sch_rv_t o = nest->rv[l], i = SCH_RV_NONE;
    if (f > 1 && e2e_split2(sch, nest->rv[l], f, &o, &i) != MLC_OK) {
      e2e_skip_note(log, "split", sch_error(sch));
      f = 1;
    }
    if (f > 1) log->nsplits++, t->inner[t->ninner++] = i;
    t->outer[t->nouter++] = o;
    outer_par *= nest->extent[l] / f;
  }
  int last = spatial[ns - 1];
  int64_t v = e2e_vector_factor(nest->extent[last], outer_par);
  sch_rv_t o;
  if (v > 0 && v < nest->extent[last]) {
    if (e2e_split2(sch, nest->rv[last], v, &o, &t->vec) == MLC_OK) log->nsplits++, t->outer[t->nouter++] = o;
    else e2e_skip_note(log, "split", sch_error(sch));
  } else if (v == nest->extent[last] || (v == 0 && nest->extent[last] <= 16)) {
    t->vec = nest->rv[last]; /* the whole loop is the vector */
  } else {
    t->outer[t->nouter++] = nest->rv[last];
    e2e_skip_note(log, "vectorize", "the innermost spatial extent has no factor of 16, 8 or 4");
  }
}

/* Step 2: outer tiles, reduce loops, inner tiles, the vector loop. */
static void e2e_tile_reorder(sch_t *sch, const e2e_tiles_t *t, e2e_block_log_t *log) {
  sch_rv_t order[4 * E2E_MAX_LOOPS];
  int n = 0;
  for (int i = 0; i < t->nouter; i++) order[n++] = t->outer[i];
  for (int i = 0; i < t->nreduce; i++) order[n++] = t->reduce[i];
  for (int i = 0; i < t->ninner; i++) order[n++] = t->inner[i];
  if (t->vec != SCH_RV_NONE) order[n++] = t->vec;
  if (sch_reorder(sch, order, n) == MLC_OK) log->reordered = true;
  else e2e_skip_note(log, "reorder", sch_error(sch));
}

/* The block's loops sorted by role into spatial[] and t->reduce; false
 * (with a note) when the block cannot be tiled. */
static bool e2e_tile_roles(const e2e_nest_t *nest, int *spatial, int *ns, e2e_tiles_t *t, e2e_block_log_t *log) {
  *ns = 0;
  log->iters = 1;
  for (int l = 0; l < nest->n; l++) {
    log->iters *= nest->extent[l];
    if (nest->role[l] == E2E_LOOP_OTHER)
      return e2e_skip_note(log, "tile", "a loop with a non-constant extent or a scan/opaque iter var");
    if (nest->role[l] == E2E_LOOP_SPATIAL) spatial[(*ns)++] = l;
    else t->reduce[t->nreduce++] = nest->rv[l];
  }
  if (*ns == 0) return e2e_skip_note(log, "tile", "no spatial loop");
  return true;
}

/* Tiles one block generically:
 * 1. each spatial loop but the innermost is split by e2e_tile_factor, the
 *    innermost spatial loop by a vector length (e2e_vector_factor);
 * 2. reorder: outer spatial tiles, the reduce loops (original order, so the
 *    order of each reduction's terms is unchanged), inner spatial tiles,
 *    the vector loop innermost;
 * 3. the outer spatial tiles are fused and the fused loop made parallel;
 * 4. the vector loop is vectorized;
 * 5. a reduction is decomposed at its outermost reduce loop, so the init
 *    becomes a loop nest of its own (its copy of the vector loop keeps the
 *    kind). This comes last, as in MetaSchedule (RewriteReductionBlock after
 *    RewriteParallelVectorizeUnroll): once init and update are separate
 *    blocks writing the same buffer, neither is a complete or reduction
 *    block under a loop holding both, so parallel and vectorize would fail.
 * Steps whose preconditions fail are skipped with a note in the log. */
static MLC_UNUSED void e2e_tile_block(sch_t *sch, const char *name, e2e_block_log_t *log) {
  memset(log, 0, sizeof(*log));
  snprintf(log->name, sizeof(log->name), "%s", name);
  sch_rv_t block;
  e2e_nest_t nest;
  if (sch_get_block(sch, &block, name) != MLC_OK || !e2e_nest_of(sch, block, &nest)) {
    e2e_skip_note(log, "get_block", "block or its loops not found");
    return;
  }
  e2e_tiles_t t;
  memset(&t, 0, sizeof(t));
  int spatial[E2E_MAX_LOOPS], ns;
  if (!e2e_tile_roles(&nest, spatial, &ns, &t, log)) return;
  e2e_tile_split(sch, &nest, spatial, ns, &t, log);
  e2e_tile_reorder(sch, &t, log);
  /* 3. parallel; 4. vectorize */
  e2e_parallel_outer(sch, t.outer, t.nouter, log);
  if (t.vec != SCH_RV_NONE) {
    if (sch_vectorize(sch, t.vec) == MLC_OK) log->vectorized = true;
    else e2e_skip_note(log, "vectorize", sch_error(sch));
  }
  /* 5. decompose the reduction at its outermost reduce loop */
  sch_rv_t init = SCH_RV_NONE;
  if (nest.has_init && t.nreduce > 0) {
    if (sch_decompose_reduction(sch, &init, block, t.reduce[0]) == MLC_OK) log->decomposed = true;
    else e2e_skip_note(log, "decompose_reduction", sch_error(sch));
  }
  if (init != SCH_RV_NONE) e2e_vectorize_init(sch, init, log);
}

/* Tiles every block of the schedule's function, in program order. */
static MLC_UNUSED void e2e_schedule_tiled(sch_t *sch, e2e_sched_log_t *log) {
  memset(log, 0, sizeof(*log));
  e2e_names_t names;
  e2e_block_names(sch_func(sch), &names);
  for (int i = 0; i < names.n && log->n < E2E_MAX_BLOCKS; i++)
    e2e_tile_block(sch, names.names[i], &log->blocks[log->n++]);
}

/* ------------------------------------------------------------------------ */
/* Tiled + tensorized                                                        */
/* ------------------------------------------------------------------------ */

/* The loop pattern of an intrinsic's description: its loops outermost
 * first, each with its extent and role (spatial or reduce). */
typedef struct {
  int n;
  int64_t extent[4];
  e2e_loop_role_t role[4];
} e2e_intrin_pattern_t;

static bool e2e_intrin_pattern(const char *intrin, e2e_intrin_pattern_t *p) {
  memset(p, 0, sizeof(*p));
  const sch_intrin_t *in = sch_intrin_get(intrin);
  if (!in) return false;
  /* The description's root block holds a nest of loops around one block. */
  tir_block_t *root = tir_func_root_block(in->desc);
  tir_stmt_t *s = root ? root->body : NULL, *loops[4];
  while (s && s->kind == TIR_FOR && p->n < 4) loops[p->n++] = s, s = s->u.loop.body;
  if (!s || s->kind != TIR_BLOCK_REALIZE) return false;
  tir_block_t *b = s->u.realize.block;
  for (int l = 0; l < p->n; l++) {
    if (!tir_as_int(loops[l]->u.loop.extent, &p->extent[l])) return false;
    p->role[l] = E2E_LOOP_SPATIAL;
    for (int k = 0; k < s->u.realize.n; k++)
      if (tir_expr_uses_var(s->u.realize.iter_values[k], loops[l]->u.loop.var) &&
          b->iter_vars[k].type == TIR_ITER_REDUCE)
        p->role[l] = E2E_LOOP_REDUCE;
  }
  return p->n > 0;
}

/* An optional layout change applied before tensorizing (on the block
 * `block`): e.g. packing an operand so that its tile is what the
 * intrinsic's description reads. MLC_OK or a schedule error. */
typedef int (*e2e_prepare_fn)(sch_t *sch, sch_rv_t block);

/* One attempt: loops chosen[k] (indices into nest) play description loop k.
 * Splits them by the description's extents, reorders (other spatial loops
 * with the outer parts of the chosen ones, then the reduce loops, then the
 * inner parts in the description's order), fuses and parallelises the outer
 * spatial loops, decomposes the reduction at the outermost reduce loop,
 * tensorizes the outermost inner part and vectorizes the init. Returns
 * false (with the failing step in log) when a step fails. */
static bool e2e_tensorize_try(sch_t *sch, sch_rv_t block, const e2e_nest_t *nest, const e2e_intrin_pattern_t *p,
                              const int *chosen, const char *intrin, e2e_block_log_t *log) {
  log->parallel = log->init_vectorized = false; /* what an earlier attempt did is gone with its copy */
  sch_rv_t outer_of[E2E_MAX_LOOPS], inner[4];
  for (int l = 0; l < nest->n; l++) outer_of[l] = nest->rv[l];
  for (int k = 0; k < p->n; k++) {
    if (e2e_split2(sch, nest->rv[chosen[k]], p->extent[k], &outer_of[chosen[k]], &inner[k]) != MLC_OK)
      return e2e_skip_note(log, "split", sch_error(sch));
  }
  sch_rv_t order[2 * E2E_MAX_LOOPS], spatial_outer[E2E_MAX_LOOPS], first_reduce = SCH_RV_NONE;
  int norder = 0, nspatial = 0;
  for (int l = 0; l < nest->n; l++)
    if (nest->role[l] == E2E_LOOP_SPATIAL) spatial_outer[nspatial++] = order[norder++] = outer_of[l];
  for (int l = 0; l < nest->n; l++)
    if (nest->role[l] == E2E_LOOP_REDUCE) {
      if (first_reduce == SCH_RV_NONE) first_reduce = outer_of[l];
      order[norder++] = outer_of[l];
    }
  for (int k = 0; k < p->n; k++) order[norder++] = inner[k];
  if (sch_reorder(sch, order, norder) != MLC_OK) return e2e_skip_note(log, "reorder", sch_error(sch));
  e2e_parallel_outer(sch, spatial_outer, nspatial, log); /* before decomposing: see e2e_tile_block */
  sch_rv_t init = SCH_RV_NONE;
  if (nest->has_init && sch_decompose_reduction(sch, &init, block, first_reduce) != MLC_OK)
    return e2e_skip_note(log, "decompose_reduction", sch_error(sch));
  if (sch_tensorize(sch, inner[0], intrin, true) != MLC_OK)
    return e2e_skip_note(log, "tensorize", sch_error(sch));
  log->tensorized = log->reordered = true;
  log->decomposed = init != SCH_RV_NONE;
  log->nsplits = p->n;
  if (init != SCH_RV_NONE) e2e_vectorize_init(sch, init, log);
  return true;
}

/* Candidate program loops for description loop k: same role, extent a
 * multiple of the description's; innermost first. */
static int e2e_candidates(const e2e_nest_t *nest, const e2e_intrin_pattern_t *p, int k, int *out) {
  int n = 0;
  for (int l = nest->n - 1; l >= 0; l--)
    if (nest->role[l] == p->role[k] && nest->extent[l] % p->extent[k] == 0) out[n++] = l;
  return n;
}

/* Tries each assignment of the block's loops to the description's two
 * loops on a copy of *sch until tensorize accepts one; the successful copy
 * replaces *sch. Failed attempts are noted in log. */
static bool e2e_tensorize_search(sch_t **sch, sch_rv_t block, const e2e_nest_t *nest, const e2e_intrin_pattern_t *p,
                                 const char *intrin, e2e_block_log_t *log) {
  int c0[E2E_MAX_LOOPS], c1[E2E_MAX_LOOPS];
  int n0 = e2e_candidates(nest, p, 0, c0), n1 = e2e_candidates(nest, p, 1, c1);
  if (n0 == 0 || n1 == 0) return e2e_skip_note(log, "tensorize", "no loops with the description's roles and extents");
  for (int a = 0; a < n0; a++) {
    for (int b = 0; b < n1; b++) {
      if (c0[a] == c1[b]) continue;
      sch_t *copy = NULL;
      assert_int_equal(sch_copy(&copy, *sch), MLC_OK);
      int chosen[2] = {c0[a], c1[b]};
      if (e2e_tensorize_try(copy, block, nest, p, chosen, intrin, log)) {
        sch_free(*sch);
        *sch = copy;
        return true;
      }
      sch_free(copy);
    }
  }
  return false;
}

/* Tensorizes block `name` of *sch with `intrin` (after `prepare`, if not
 * NULL; its loops must be a perfect nest): e2e_tensorize_search, then every
 * other block is tiled with e2e_tile_block. Returns whether tensorize
 * applied; log->blocks[0] is the tensorized block, and when tensorize did
 * not apply its `skipped` lists why each attempt failed. */
static MLC_UNUSED bool e2e_schedule_tensorized(sch_t **sch, const char *name, const char *intrin, e2e_prepare_fn prepare,
                                                e2e_sched_log_t *log) {
  memset(log, 0, sizeof(*log));
  e2e_block_log_t *bl = &log->blocks[log->n++];
  snprintf(bl->name, sizeof(bl->name), "%s", name);
  e2e_intrin_pattern_t p;
  sch_rv_t block;
  e2e_nest_t nest;
  if (!e2e_intrin_pattern(intrin, &p) || p.n != 2)
    return e2e_skip_note(bl, "tensorize", "intrinsic without a two-loop description");
  if (sch_get_block(*sch, &block, name) != MLC_OK) return e2e_skip_note(bl, "get_block", sch_error(*sch));
  if (prepare && prepare(*sch, block) != MLC_OK) return e2e_skip_note(bl, "prepare", sch_error(*sch));
  if (!e2e_nest_of(*sch, block, &nest)) return e2e_skip_note(bl, "loops", "cannot read the block's loops");
  bl->iters = 1;
  for (int l = 0; l < nest.n; l++) bl->iters *= nest.extent[l];
  e2e_names_t others;
  e2e_block_names(sch_func(*sch), &others);
  if (!e2e_tensorize_search(sch, block, &nest, &p, intrin, bl)) return false;
  bl->skipped[0] = '\0'; /* the failed attempts no longer matter */
  for (int i = 0; i < others.n && log->n < E2E_MAX_BLOCKS; i++)
    if (strcmp(others.names[i], name) != 0) e2e_tile_block(*sch, others.names[i], &log->blocks[log->n++]);
  return true;
}

/* The name of the block with the most loop iterations (the block a
 * workload is about) into buf. */
static MLC_UNUSED void e2e_main_block_name(sch_t *sch, char *buf, size_t len) {
  e2e_names_t names;
  e2e_block_names(sch_func(sch), &names);
  int64_t best = -1;
  buf[0] = '\0';
  for (int i = 0; i < names.n; i++) {
    sch_rv_t b;
    e2e_nest_t nest;
    if (sch_get_block(sch, &b, names.names[i]) != MLC_OK || !e2e_nest_of(sch, b, &nest)) continue;
    int64_t iters = 1;
    for (int l = 0; l < nest.n; l++) iters *= nest.extent[l];
    if (iters > best) best = iters, snprintf(buf, len, "%s", names.names[i]);
  }
}

/* Layout preparations for tensorize: cache_read of read buffer `index` of
 * the block (a copy stage at the root), then transform_layout of the copy. */
static int e2e_cache_and_transform(sch_t *sch, sch_rv_t block, int index, int nsrc, int ndst,
                                   tir_expr_t *(*map)(mlc_arena_t *a, tir_var_t **src, int k)) {
  mlc_arena_t *a = mlc_arena_new();
  assert_non_null(a);
  tir_var_t *src[TIR_MAX_DIMS];
  tir_expr_t *dst[TIR_MAX_DIMS];
  static const char *const names[] = {"i", "j", "k", "l"};
  for (int d = 0; d < nsrc; d++) src[d] = tir_var(a, names[d], tir_dt_INT32());
  for (int d = 0; d < ndst; d++) dst[d] = map(a, src, d);
  sch_index_map_t m = {nsrc, src, ndst, dst};
  sch_rv_t copy;
  int rc = sch_cache_read(sch, &copy, block, index, "global", NULL, 0);
  if (rc == MLC_OK) rc = sch_transform_layout(sch, block, index, SCH_BUFFER_READ, &m);
  mlc_arena_free(a);
  return rc;
}

/* lambda i, j: (j, i) */
static tir_expr_t *e2e_map_transpose(mlc_arena_t *a, tir_var_t **src, int k) {
  (void)a;
  return src[1 - k];
}

/* lambda i, j: (j // 16, i // 4, j % 16, i % 4): a (K, N) operand (i over
 * K, j over N) packed into 16x4 tiles, N tiles outer, then K tiles, each
 * tile 16 columns of 4 consecutive k: the layout of VNNI's B operand. */
static tir_expr_t *e2e_map_pack_16x4(mlc_arena_t *a, tir_var_t **src, int d) {
  tir_var_t *v = src[d % 2 == 0 ? 1 : 0];
  int64_t f = d % 2 == 0 ? 16 : 4;
  return tir_binary(a, d < 2 ? TIR_FLOOR_DIV : TIR_FLOOR_MOD, v, tir_i32(a, f));
}

/* Read buffer 1 (B of C += A * B) transposed / packed into 16x4 tiles. */
static MLC_UNUSED int e2e_prepare_transpose_b(sch_t *sch, sch_rv_t block) {
  return e2e_cache_and_transform(sch, block, 1, 2, 2, e2e_map_transpose);
}
static MLC_UNUSED int e2e_prepare_pack_b_16x4(sch_t *sch, sch_rv_t block) {
  return e2e_cache_and_transform(sch, block, 1, 2, 4, e2e_map_pack_16x4);
}

/* ------------------------------------------------------------------------ */
/* The matrix: workloads, dtypes, schedules                                  */
/* ------------------------------------------------------------------------ */

/* Small shapes of every built-in workload (in the order of the desc's dims)
 * that still exercise tiling: every spatial extent splits, the innermost
 * spatial extent takes 8 or 16 lanes, and GMM, BMM and D+B+R have a K and
 * an N that the 16x4 tensor intrinsics tile. */
typedef struct {
  const char *name;
  int n;
  int64_t shape[12];
} e2e_shape_t;

static const e2e_shape_t e2e_shapes[] = {
    {"GMM", 3, {64, 64, 64}},
    {"BMM", 4, {2, 32, 32, 16}},
    {"GMV", 2, {64, 64}},
    {"C1D", 7, {1, 32, 16, 32, 3, 2, 1}},
    {"C2D", 9, {1, 8, 8, 16, 16, 3, 3, 1, 1}},
    {"C3D", 11, {1, 4, 4, 4, 4, 16, 3, 3, 3, 1, 1}},
    {"DEP", 8, {1, 8, 8, 16, 3, 3, 1, 1}},
    {"DIL", 10, {1, 8, 8, 8, 16, 3, 3, 1, 2, 2}},
    {"GRP", 10, {1, 8, 8, 16, 32, 3, 3, 2, 1, 4}},
    {"T2D", 9, {1, 4, 4, 8, 16, 4, 4, 2, 1}},
    {"NRM", 3, {32, 8, 8}},
    {"SFM", 2, {16, 64}},
    {"LN", 2, {16, 64}},
    {"D+B+R", 3, {16, 64, 32}},
};

static MLC_UNUSED const e2e_shape_t *e2e_shape_of(const char *name) {
  for (size_t i = 0; i < sizeof(e2e_shapes) / sizeof(e2e_shapes[0]); i++)
    if (strcmp(e2e_shapes[i].name, name) == 0) return &e2e_shapes[i];
  return NULL;
}

/* One cell of the matrix: a workload in a dtype. */
typedef struct {
  const char *workload;
  tir_dtype_t in;       /* the inputs' dtype; the accumulator is the library's default */
  const char *label;    /* "float16->float32" */
} e2e_spec_t;

/* The workload's function at its small shape, or a failure. */
static MLC_UNUSED tir_func_t *e2e_workload(const char *name, tir_dtype_t in) {
  const e2e_shape_t *s = e2e_shape_of(name);
  if (!s) fail_msg("%s: no small shape for this workload in e2e_shapes", name);
  tir_func_t *f = NULL;
  if (tir_workload_build(&f, name, s->shape, s->n, in, (tir_dtype_t){0, 0, 0}) != MLC_OK)
    fail_msg("%s: tir_workload_build failed: %s", name, mlc_error_last());
  return f;
}

/* Schedules (a) none and (b) tiled + vectorized + parallel of one cell,
 * each checked against the interpreter; (b) must have made the main block's
 * outer loop parallel and its inner loop vectorized. */
static MLC_UNUSED void e2e_check_none_and_tiled(const e2e_spec_t *spec, uint64_t seed) {
  e2e_case_t c;
  e2e_case_init(&c, spec->workload, spec->label, e2e_workload(spec->workload, spec->in), seed);
  e2e_case_reference(&c);
  e2e_case_check(&c, "none", c.f, NULL);

  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, c.f, 1, SCH_ERRORS_FAST), MLC_OK);
  e2e_sched_log_t log;
  e2e_schedule_tiled(sch, &log);
  if (getenv("E2E_VERBOSE")) e2e_print_log(&log), e2e_print_trace(sch);
  const e2e_block_log_t *main_block = e2e_main_block(&log);
  if (!main_block || !main_block->parallel || !main_block->vectorized) {
    e2e_print_log(&log);
    e2e_print_trace(sch);
    fail_msg("%s %s [tiled+vectorized+parallel]: the main block %s was not made %s", c.workload, c.dtype,
             main_block ? main_block->name : "(none)",
             main_block && main_block->parallel ? "vectorized" : "parallel");
  }
  e2e_case_check(&c, "tiled+vectorized+parallel", sch_func(sch), sch);
  sch_free(sch);
  e2e_case_free(&c);
}

/* Every workload of tir_workloads() has a small shape here, so a new
 * workload cannot silently stay out of the matrix. */
static MLC_UNUSED void e2e_assert_every_workload_has_a_shape(void) {
  int n = 0;
  const tir_workload_desc_t *w = tir_workloads(&n);
  assert_true(n > 0);
  for (int i = 0; i < n; i++) {
    const e2e_shape_t *s = e2e_shape_of(w[i].name);
    if (!s) fail_msg("built-in workload %s is missing from e2e_shapes", w[i].name);
    assert_int_equal(s->n, w[i].ndims);
  }
  assert_int_equal(n, (int)(sizeof(e2e_shapes) / sizeof(e2e_shapes[0])));
}

/* ------------------------------------------------------------------------ */
/* Host features                                                             */
/* ------------------------------------------------------------------------ */

/* True when the host has `feature`; otherwise prints why `what` is skipped. */
static MLC_UNUSED bool e2e_host_has(const char *feature, const char *what) {
  mlc_target_t host;
  mlc_target_host(&host);
  if (mlc_target_has_feature(&host, feature)) return true;
  printf("SKIPPED: %s: the host CPU (%s) lacks %s\n", what, host.mcpu, feature);
  return false;
}

#endif /* MLC_TESTS_E2E_HELPERS_H */
