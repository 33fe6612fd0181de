/*
 * interp.c - the reference interpreter's entry point: tir_interp_run binds
 * the arguments to the function's parameters and runs its body.
 *
 * The interpreter is the correctness oracle for schedule transformations and
 * generated code, so it favours exactness and clear errors over speed (a
 * 128x128x128 matmul still takes a fraction of a second). What it guarantees
 * is documented in docs/tir.md, "The reference interpreter".
 *
 * Arguments: host buffers are compact row-major memory of the buffer's dtype.
 * Symbolic shape variables are bound from the argument shapes in parameter
 * order (the first occurrence binds, later ones must agree); symbolic strides
 * are bound to the compact strides and a symbolic elem_offset to 0.
 */
#include "tir/interp_internal.h"

#include <inttypes.h>
#include <stdio.h>

/* A raw handle parameter (no buffer): its storage is whatever the argument
 * describes. */
static int bind_handle_param(interp_t *it, const tir_var_t *p, const tir_arg_t *a) {
  int64_t n = interp_dtype_supported(tir_dtype_scalar(a->dtype)) ? a->dtype.lanes : 0;
  for (int k = 0; k < a->ndim && k < TIR_MAX_DIMS; k++) n *= a->shape[k] > 0 ? a->shape[k] : 0;
  int64_t id;
  int64_t bytes = n ? n * interp_lane_bytes(tir_dtype_scalar(a->dtype)) : 0;
  int rc = interp_storage_add(it, &id, p->u.var.name, a->data, bytes, a->dtype);
  interp_value_t h = {tir_dt_HANDLE(), {.i = id}, NULL};
  return rc == MLC_OK ? interp_bind_var(it, p, &h, NULL) : rc;
}

static int bind_scalar_param(interp_t *it, const tir_var_t *p, const tir_arg_t *a) {
  interp_value_t v = {p->dtype, {0}, NULL};
  if (p->dtype.lanes != 1 || (!interp_dtype_supported(p->dtype) && !tir_dtype_is_handle(p->dtype))) {
    char buf[24];
    return interp_fail(it, "parameter %s: unsupported dtype %s", p->u.var.name,
                       tir_dtype_str(p->dtype, buf));
  }
  switch (interp_class(p->dtype)) {
  case INTERP_HANDLE: return bind_handle_param(it, p, a);
  case INTERP_FLOAT: v.s.f = interp_round(p->dtype, a->scalar_float); break;
  default:
    v.s = tir_dtype_is_bool(p->dtype) ? interp_wrap(p->dtype, a->scalar_int != 0)
                                      : interp_wrap(p->dtype, (uint64_t)a->scalar_int);
  }
  return interp_bind_var(it, p, &v, NULL);
}

/* First pass over a buffer argument: shape dimensions that are plain
 * variables not bound yet take the argument's extents. */
static int bind_shape_vars(interp_t *it, const tir_buffer_t *b, const tir_arg_t *a) {
  for (int k = 0; k < b->ndim && k < a->ndim; k++) {
    const tir_expr_t *e = b->shape[k];
    const interp_var_slot_t *slot = e->kind == TIR_VAR ? interp_var_slot(it, e) : NULL;
    if (e->kind != TIR_VAR || (slot && slot->bound)) continue;
    int rc = interp_bind_int(it, e, a->shape[k]);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}

static int check_arg_header(interp_t *it, int i, const tir_buffer_t *b, const tir_arg_t *a) {
  char x[24], y[24];
  if (!a->data) return interp_fail(it, "argument %d (%s): no data", i, b->name);
  if (!tir_dtype_eq(a->dtype, b->dtype))
    return interp_fail(it, "argument %d (%s): dtype %s, expected %s", i, b->name,
                       tir_dtype_str(a->dtype, x), tir_dtype_str(b->dtype, y));
  if (a->ndim != b->ndim)
    return interp_fail(it, "argument %d (%s): %d dimensions, expected %d", i, b->name, a->ndim,
                       b->ndim);
  if (!interp_dtype_supported(tir_dtype_scalar(b->dtype)) || b->ndim > TIR_MAX_DIMS)
    return interp_fail(it, "argument %d (%s): unsupported buffer", i, b->name);
  for (int k = 0; k < a->ndim; k++)
    if (a->shape[k] < 0)
      return interp_fail(it, "argument %d (%s): negative extent in dimension %d", i, b->name, k);
  return MLC_OK;
}

/* Second pass: every dimension, stride and elem_offset agrees. */
static int check_arg_layout(interp_t *it, int i, const tir_buffer_t *b, const tir_arg_t *a,
                            const int64_t *strides) {
  bool match;
  int64_t want = 0;
  int rc = MLC_OK;
  for (int k = 0; k < b->ndim; k++) {
    if ((rc = interp_bind_or_check(it, b->shape[k], a->shape[k], &match)) != MLC_OK) return rc;
    if (match) continue;
    (void)interp_eval_int(it, b->shape[k], &want);
    if (b->shape[k]->kind == TIR_VAR)
      return interp_fail(it, "argument %d (%s): dimension %d is %" PRId64 ", expected %s = %" PRId64,
                         i, b->name, k, a->shape[k], b->shape[k]->u.var.name, want);
    return interp_fail(it, "argument %d (%s): dimension %d is %" PRId64 ", expected %" PRId64, i,
                       b->name, k, a->shape[k], want);
  }
  for (int k = 0; b->strides && k < b->ndim; k++) {
    if ((rc = interp_bind_or_check(it, b->strides[k], strides[k], &match)) != MLC_OK) return rc;
    if (!match)
      return interp_fail(it, "argument %d (%s): the buffer's stride %d is not the compact %" PRId64,
                         i, b->name, k, strides[k]);
  }
  if (b->elem_offset && (rc = interp_bind_or_check(it, b->elem_offset, 0, &match)) == MLC_OK && !match)
    return interp_fail(it, "argument %d (%s): elem_offset must be 0 for a host argument", i, b->name);
  return rc;
}

static int bind_buffer_arg(interp_t *it, int i, const tir_buffer_t *b, const tir_arg_t *a) {
  interp_view_t view = {0};
  int rc = check_arg_header(it, i, b, a);
  if (rc != MLC_OK) return rc;
  int64_t n = 1;
  for (int k = b->ndim - 1; k >= 0; k--) {
    view.shape[k] = a->shape[k];
    view.strides[k] = n;
    n *= a->shape[k];
  }
  if ((rc = check_arg_layout(it, i, b, a, view.strides)) != MLC_OK) return rc;
  int64_t bytes = n * interp_lane_bytes(tir_dtype_scalar(b->dtype)) * b->dtype.lanes;
  if ((rc = interp_storage_add(it, &view.storage, b->name, a->data, bytes, b->dtype)) != MLC_OK)
    return rc;
  view.base = a->data;
  view.limit = n;
  view.dtype = b->dtype;
  view.ndim = b->ndim;
  interp_value_t h = {tir_dt_HANDLE(), {.i = view.storage}, NULL};
  rc = interp_bind_var(it, it->func->params[i], &h, NULL);
  if (rc == MLC_OK && b->data) rc = interp_bind_var(it, b->data, &h, NULL);
  return rc == MLC_OK ? interp_bind_buffer(it, b, &view) : rc;
}

static int bind_args(interp_t *it, const tir_func_t *f, tir_arg_t *args, int nargs) {
  if (nargs != f->nparams)
    return interp_fail(it, "%d arguments for %d parameters", nargs, f->nparams);
  int rc = MLC_OK;
  const tir_buffer_t *b;
  /* Scalars first: buffer shapes may use them. */
  for (int i = 0; i < nargs && rc == MLC_OK; i++)
    if (!f->buffer_map || !f->buffer_map[i]) rc = bind_scalar_param(it, f->params[i], &args[i]);
  for (int i = 0; i < nargs && rc == MLC_OK; i++)
    if (f->buffer_map && (b = f->buffer_map[i])) rc = bind_shape_vars(it, b, &args[i]);
  for (int i = 0; i < nargs && rc == MLC_OK; i++)
    if (f->buffer_map && (b = f->buffer_map[i])) rc = bind_buffer_arg(it, i, b, &args[i]);
  return rc;
}

int tir_interp_run(const tir_func_t *f, tir_arg_t *args, int nargs) {
  interp_t it;
  int rc = interp_init(&it, f);
  if (rc != MLC_OK) return rc;
  rc = bind_args(&it, f, args, nargs);
  if (rc == MLC_OK) rc = interp_exec(&it, f->body);
  interp_free(&it);
  return rc;
}
