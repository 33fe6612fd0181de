/*
 * measure_check.c - the correctness check: the compiled kernel against the
 * reference interpreter (tir_interp_run) on the same random state, every
 * buffer compared, the first difference reported with its index and values.
 *
 * The interpreter costs about 150 ns per store executed, so the check has a
 * budget (MLC_MEASURE_CHECK_BUDGET stores, default 2^26, about ten seconds);
 * above it the check is skipped with a warning rather than turning a good
 * candidate into a timeout.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/measure_internal.h"

#define CHECK_BUDGET_DEFAULT ((uint64_t)1 << 26)

/* ------------------------------------------------------------------------ */
/* Cost of the reference                                                     */
/* ------------------------------------------------------------------------ */

typedef struct {
  MLC_VEC(uint64_t) trips; /* iterations of the loops around the current node */
  uint64_t stores;
  bool failed;
} count_t;

static uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t current_trips(const count_t *c) {
  return c->trips.len ? c->trips.data[c->trips.len - 1] : 1;
}

static bool count_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  count_t *c = v->payload;
  if (s->kind == TIR_BUFFER_STORE) {
    uint64_t t = current_trips(c);
    c->stores = c->stores > UINT64_MAX - t ? UINT64_MAX : c->stores + t;
  } else if (s->kind == TIR_FOR) {
    int64_t extent;
    uint64_t n = tir_as_int(s->u.loop.extent, &extent) ? (extent > 0 ? (uint64_t)extent : 0) : UINT64_MAX;
    if (mlc_vec_push(&c->trips, sat_mul(current_trips(c), n)) != MLC_OK) c->failed = true;
  }
  return true;
}

static void count_stmt_post(tir_visitor_t *v, tir_stmt_t *s) {
  count_t *c = v->payload;
  if (s->kind == TIR_FOR && c->trips.len) c->trips.len--;
}

static bool count_skip_expr(tir_visitor_t *v, tir_expr_t *e) { return false; }

uint64_t measure_count_stores(const tir_func_t *f) {
  count_t c = {0};
  tir_visitor_t v = {.expr = count_skip_expr, .stmt = count_stmt, .stmt_post = count_stmt_post,
                     .payload = &c};
  tir_visit_stmt(&v, f->body);
  mlc_vec_free(&c.trips);
  return c.failed ? UINT64_MAX : c.stores;
}

uint64_t measure_check_budget(void) {
  const char *env = getenv("MLC_MEASURE_CHECK_BUDGET");
  if (!env || !*env) return CHECK_BUDGET_DEFAULT;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(env, &end, 10);
  if (errno || *end || env[0] == '-') {
    MLC_WARN("measure: MLC_MEASURE_CHECK_BUDGET=%s is not a count of stores; using 2^26", env);
    return CHECK_BUDGET_DEFAULT;
  }
  return v;
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                                */
/* ------------------------------------------------------------------------ */

static double get_float(const void *data, size_t i, tir_dtype_t t) {
  switch (t.bits) {
  case 64: return ((const double *)data)[i];
  case 32: return ((const float *)data)[i];
  default: {
    uint16_t h = ((const uint16_t *)data)[i];
    return t.code == TIR_CODE_BFLOAT ? tir_bf16_to_f32(h) : tir_f16_to_f32(h);
  }
  }
}

static int64_t get_int(const void *data, size_t i, tir_dtype_t t) {
  bool s = tir_dtype_is_int(t);
  switch (t.bits) {
  case 1: case 8: return s ? (int64_t)((const int8_t *)data)[i] : (int64_t)((const uint8_t *)data)[i];
  case 16: return s ? (int64_t)((const int16_t *)data)[i] : (int64_t)((const uint16_t *)data)[i];
  case 32: return s ? (int64_t)((const int32_t *)data)[i] : (int64_t)((const uint32_t *)data)[i];
  default: return ((const int64_t *)data)[i]; /* uint64 compared as its bits */
  }
}

/* The tolerance for a buffer: the default rtol (1e-4) becomes 1e-2 for
 * float16/bfloat16, whose interpreter rounds after every step. */
static double rtol_for(tir_dtype_t t, double rtol) {
  return tir_dtype_is_float(t) && t.bits == 16 && rtol == 1e-4 ? 1e-2 : rtol;
}

static bool close_enough(double got, double want, double rtol) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
  if (got == want) return true; /* infinities */
  return fabs(got - want) <= rtol * fmax(1.0, fabs(want));
}

/* "C[3, 17]" for flat index i of parameter p. */
static void format_index(char *buf, size_t len, const measure_args_t *a, int p, size_t i,
                         const char *name) {
  const int64_t *shape = a->shapes + (size_t)p * TIR_MAX_DIMS;
  int ndim = a->tensors[p].ndim;
  int64_t idx[TIR_MAX_DIMS];
  for (int d = ndim - 1; d >= 0; d--) {
    idx[d] = shape[d] ? (int64_t)(i % (size_t)shape[d]) : 0;
    i = shape[d] ? i / (size_t)shape[d] : 0;
  }
  int n = snprintf(buf, len, "%s[", name);
  for (int d = 0; d < ndim && n > 0 && (size_t)n < len; d++)
    n += snprintf(buf + n, len - (size_t)n, "%s%" PRId64, d ? ", " : "", idx[d]);
  if (n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, "]");
}

/* Compares parameter p: false (and out filled) on a difference. */
static bool compare_param(mlc_measure_result_t *out, const measure_args_t *a, int p, const void *want,
                          const char *name, double rtol) {
  const void *got = a->tensors[p].data;
  tir_dtype_t t = a->dtypes[p];
  double tol = rtol_for(t, rtol);
  size_t first = SIZE_MAX, ndiff = 0;
  for (size_t i = 0; i < a->counts[p]; i++) {
    bool same = tir_dtype_is_float(t) ? close_enough(get_float(got, i, t), get_float(want, i, t), tol)
                                      : get_int(got, i, t) == get_int(want, i, t);
    if (!same && ndiff++ == 0) first = i;
  }
  if (!ndiff) return true;
  char where[160];
  format_index(where, sizeof where, a, p, first, name);
  if (tir_dtype_is_float(t))
    measure_fail(out, MLC_ERROR_KIND_WRONG_RESULT,
                 "%s is %.9g, the reference gives %.9g (rtol %g); %zu of %zu elements differ", where,
                 get_float(got, first, t), get_float(want, first, t), tol, ndiff, a->counts[p]);
  else
    measure_fail(out, MLC_ERROR_KIND_WRONG_RESULT,
                 "%s is %" PRId64 ", the reference gives %" PRId64 "; %zu of %zu elements differ", where,
                 get_int(got, first, t), get_int(want, first, t), ndiff, a->counts[p]);
  return false;
}

/* ------------------------------------------------------------------------ */
/* The check                                                                 */
/* ------------------------------------------------------------------------ */

static size_t param_bytes(const measure_args_t *a, int p) {
  return a->counts[p] * (size_t)tir_dtype_bytes(a->dtypes[p]);
}

/* Inputs back to their random values, outputs to fresh random values. */
static void reset_state(measure_args_t *a) {
  mlc_rng_t rng;
  mlc_rng_seed(&rng, a->seed ^ 0x9e3779b97f4a7c15ull);
  for (int p = 0; p < a->n; p++) {
    if (a->saved[p]) memcpy(a->tensors[p].data, a->saved[p], param_bytes(a, p));
    else measure_fill_random(a->tensors[p].data, a->counts[p], a->dtypes[p], &rng);
  }
}

/* Interpreter arguments over copies of the kernel's buffers. */
static bool snapshot(tir_arg_t *args, void **copies, const measure_args_t *a) {
  for (int p = 0; p < a->n; p++) {
    size_t bytes = param_bytes(a, p);
    copies[p] = mlc_malloc(bytes ? bytes : 1);
    if (!copies[p]) return false;
    memcpy(copies[p], a->tensors[p].data, bytes);
    tir_arg_t *g = &args[p];
    memset(g, 0, sizeof *g);
    g->data = copies[p];
    g->ndim = a->tensors[p].ndim;
    g->dtype = a->dtypes[p];
    memcpy(g->shape, a->shapes + (size_t)p * TIR_MAX_DIMS, sizeof g->shape);
    if (g->ndim == 0 && tir_dtype_is_float(g->dtype)) g->scalar_float = get_float(copies[p], 0, g->dtype);
    else if (g->ndim == 0) g->scalar_int = get_int(copies[p], 0, g->dtype);
  }
  return true;
}

static bool check_with(mlc_measure_result_t *out, measure_args_t *a, mlc_packed_fn_t fn,
                       const tir_func_t *ref, double rtol, tir_arg_t *args, void **copies) {
  reset_state(a);
  if (!snapshot(args, copies, a)) {
    measure_fail(out, MLC_ERROR_KIND_RUN, "correctness check: out of memory");
    return false;
  }
  if (fn(a->tensors, a->n) != 0) {
    measure_fail(out, MLC_ERROR_KIND_RUN, "%s", mlc_last_error());
    return false;
  }
  if (tir_interp_run(ref, args, a->n) != MLC_OK) {
    /* Never trust a result the check was asked for and could not confirm. */
    measure_fail(out, MLC_ERROR_KIND_WRONG_RESULT, "the reference interpreter failed: %s",
                 mlc_error_last());
    return false;
  }
  for (int p = 0; p < a->n; p++) {
    const tir_buffer_t *b = ref->buffer_map ? ref->buffer_map[p] : NULL;
    const char *name = b ? b->name : ref->params[p]->u.var.name;
    if (!compare_param(out, a, p, copies[p], name, rtol)) return false;
  }
  return true;
}

bool measure_check(mlc_measure_result_t *out, measure_args_t *a, mlc_packed_fn_t fn,
                   const tir_func_t *reference, double rtol) {
  uint64_t cost = measure_count_stores(reference), budget = measure_check_budget();
  if (cost > budget) {
    MLC_WARN("measure: correctness check of %s skipped: the interpreter would execute %" PRIu64
             " stores, above the budget of %" PRIu64 " (MLC_MEASURE_CHECK_BUDGET)",
             reference->name, cost, budget);
    return true;
  }
  size_t k = a->n ? (size_t)a->n : 1;
  tir_arg_t *args = mlc_calloc(k, sizeof *args);
  void **copies = mlc_calloc(k, sizeof *copies);
  bool ok = false;
  if (!args || !copies) measure_fail(out, MLC_ERROR_KIND_RUN, "correctness check: out of memory");
  else ok = check_with(out, a, fn, reference, rtol, args, copies);
  for (int p = 0; copies && p < a->n; p++) mlc_free(copies[p]);
  mlc_free(copies);
  mlc_free(args);
  return ok;
}
