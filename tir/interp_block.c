/*
 * interp_block.c - block instances in the reference interpreter.
 *
 * A BlockRealize runs one block instance: the bindings are evaluated, the
 * predicate (T.where) decides whether the instance runs at all, each binding
 * must lie in its iter var's domain, then the block's own buffers are
 * allocated (poisoned, not zeroed), its match_buffers become views of their
 * source regions, the init statement runs when every reduction iter var is at
 * its domain minimum, and the body runs. Everything is released when the
 * instance ends.
 */
#include "tir/interp_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A block with more iter vars than this is not a program anyone wrote. */
#define INTERP_MAX_ITER_VARS 64

int interp_bind_or_check(interp_t *it, const tir_expr_t *e, int64_t value, bool *match) {
  if (e->kind == TIR_VAR) {
    const interp_var_slot_t *slot = interp_var_slot(it, e);
    if (!slot || !slot->bound) {
      *match = true;
      return interp_bind_int(it, e, value);
    }
  }
  int64_t v;
  int rc = interp_eval_int(it, e, &v);
  *match = rc == MLC_OK && v == value;
  return rc;
}

/* ------------------------------------------------------------------------ */
/* match_buffer                                                              */
/* ------------------------------------------------------------------------ */

typedef struct {
  int ndim;
  int64_t min[TIR_MAX_DIMS], extent[TIR_MAX_DIMS];
} interp_region_t;

static void region_str(const interp_region_t *r, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  for (int k = 0; k < r->ndim && at < len; k++)
    at += (size_t)snprintf(buf + at, len - at, "%s%" PRId64 ":%" PRId64, k ? ", " : "", r->min[k],
                           r->min[k] + r->extent[k]);
}

/* Evaluates the source region and checks it against the source's shape. */
static int eval_region(interp_t *it, const tir_match_buffer_t *m, const interp_view_t *src,
                       interp_region_t *r) {
  const tir_region_t *reg = &m->source;
  if (reg->ndim != src->ndim)
    return interp_fail(it, "match_buffer %s: a region of %d dimensions of %s, which has %d",
                       m->buffer->name, reg->ndim, reg->buffer->name, src->ndim);
  r->ndim = reg->ndim;
  bool inside = true;
  for (int k = 0; k < reg->ndim; k++) {
    int rc = interp_eval_int(it, reg->ranges[k].min, &r->min[k]);
    if (rc == MLC_OK) rc = interp_eval_int(it, reg->ranges[k].extent, &r->extent[k]);
    if (rc != MLC_OK) return rc;
    inside = inside && r->min[k] >= 0 && r->extent[k] >= 0 &&
             r->min[k] + r->extent[k] <= src->shape[k];
  }
  if (inside) return MLC_OK;
  char buf[256];
  region_str(r, buf, sizeof(buf));
  return interp_fail(it, "match_buffer %s: region [%s] of %s is out of bounds", m->buffer->name,
                     buf, reg->buffer->name);
}

/* The view of the region: the source's layout, starting at the region. The
 * matched buffer's dimensions are the region's trailing ones; the leading
 * ones it drops must have extent 1 (as TVM's match_buffer lowering). */
static int region_view(interp_t *it, const tir_match_buffer_t *m, const interp_view_t *src,
                       const interp_region_t *r, interp_view_t *view) {
  const tir_buffer_t *dst = m->buffer;
  int off = r->ndim - dst->ndim;
  char a[24], b[24];
  if (dst->ndim < 0 || off < 0)
    return interp_fail(it, "match_buffer %s: %d dimensions cannot view a region of %d",
                       dst->name, dst->ndim, r->ndim);
  if (!tir_dtype_eq(dst->dtype, src->dtype))
    return interp_fail(it, "match_buffer %s: dtype %s differs from %s of %s", dst->name,
                       tir_dtype_str(dst->dtype, a), tir_dtype_str(src->dtype, b),
                       m->source.buffer->name);
  *view = *src;
  view->ndim = dst->ndim;
  for (int k = 0; k < r->ndim; k++) {
    view->elem_offset += r->min[k] * src->strides[k];
    if (k < off && r->extent[k] != 1)
      return interp_fail(it, "match_buffer %s: dimension %d of the region has extent %" PRId64
                         " but is not part of %s", dst->name, k, r->extent[k], dst->name);
  }
  for (int k = 0; k < dst->ndim; k++) {
    view->shape[k] = r->extent[k + off];
    view->strides[k] = src->strides[k + off];
  }
  return MLC_OK;
}

static int check_field(interp_t *it, const tir_buffer_t *dst, const tir_expr_t *e, int64_t value,
                       const char *what, int k) {
  bool match;
  int rc = interp_bind_or_check(it, e, value, &match);
  if (rc != MLC_OK || match) return rc;
  int64_t declared = 0;
  (void)interp_eval_int(it, e, &declared);
  if (k < 0)
    return interp_fail(it, "match_buffer %s: %s is %" PRId64 " but the region gives %" PRId64,
                       dst->name, what, declared, value);
  return interp_fail(it, "match_buffer %s: %s %d is %" PRId64 " but the region gives %" PRId64,
                     dst->name, what, k, declared, value);
}

/* Binds the matched buffer's symbolic shape, strides and elem_offset to the
 * region's, or checks the constant ones. A buffer declared without strides
 * is compact, so the region must be; except a tensor-core fragment (scope
 * wmma.*), which has no memory layout a program can see (the WMMA
 * intrinsics match 16x16 tiles of a larger fragment buffer that way, as in
 * TVM): it views the region with the source's strides. */
static int bind_layout(interp_t *it, const tir_buffer_t *dst, const interp_view_t *view) {
  int rc = MLC_OK;
  for (int k = 0; k < dst->ndim && rc == MLC_OK; k++)
    rc = check_field(it, dst, dst->shape[k], view->shape[k], "dimension", k);
  for (int k = 0; dst->strides && k < dst->ndim && rc == MLC_OK; k++)
    rc = check_field(it, dst, dst->strides[k], view->strides[k], "stride", k);
  if (rc == MLC_OK && dst->elem_offset)
    rc = check_field(it, dst, dst->elem_offset, view->elem_offset, "elem_offset", -1);
  if (rc != MLC_OK || dst->strides || strncmp(dst->scope, "wmma.", 5) == 0) return rc;
  int64_t compact = 1;
  for (int k = dst->ndim - 1; k >= 0; k--) {
    if (view->shape[k] > 1 && view->strides[k] != compact)
      return interp_fail(it, "match_buffer %s: the region is not compact (stride %" PRId64
                         " in dimension %d, compact %" PRId64 "); declare strides",
                         dst->name, view->strides[k], k, compact);
    compact *= view->shape[k];
  }
  return MLC_OK;
}

static int match_buffer(interp_t *it, const tir_match_buffer_t *m) {
  const interp_view_t *found;
  interp_view_t src, view;
  interp_region_t r;
  int rc = interp_buffer_view(it, m->source.buffer, &found);
  if (rc != MLC_OK) return rc;
  src = *found;
  if ((rc = eval_region(it, m, &src, &r)) != MLC_OK) return rc;
  if ((rc = region_view(it, m, &src, &r, &view)) != MLC_OK) return rc;
  if ((rc = bind_layout(it, m->buffer, &view)) != MLC_OK) return rc;
  if (m->buffer->data) {
    interp_value_t h = {tir_dt_HANDLE(), {.i = view.storage}, NULL};
    if ((rc = interp_bind_var(it, m->buffer->data, &h, NULL)) != MLC_OK) return rc;
  }
  return interp_bind_buffer(it, m->buffer, &view);
}

/* ------------------------------------------------------------------------ */
/* Block instances                                                           */
/* ------------------------------------------------------------------------ */

/* Checks each binding against its domain and binds the iter vars; *init gets
 * whether every reduction iter var is at its minimum. */
INTERP_COLD static int outside_domain(interp_t *it, const tir_iter_var_t *iv, int64_t value,
                                      int64_t min, int64_t extent) {
  return interp_fail(it, "iter var %s = %" PRId64 " is outside its domain [%" PRId64 ", %" PRId64 ")",
                     iv->var->u.var.name, value, min, min + extent);
}

static int bind_iter_vars(interp_t *it, const tir_block_t *blk, const int64_t *vals, bool *init) {
  *init = true;
  for (int i = 0; i < blk->niter_vars; i++) {
    const tir_iter_var_t *iv = &blk->iter_vars[i];
    int64_t min, extent;
    int rc = interp_eval_int(it, iv->dom.min, &min);
    if (rc == MLC_OK) rc = interp_eval_int(it, iv->dom.extent, &extent);
    if (rc != MLC_OK) return rc;
    if (vals[i] < min || vals[i] - min >= extent) return outside_domain(it, iv, vals[i], min, extent);
    if (iv->type == TIR_ITER_REDUCE && vals[i] != min) *init = false;
    if ((rc = interp_rebind_int(it, iv->var, vals[i])) != MLC_OK) return rc;
  }
  return MLC_OK;
}

/* Most blocks have no T.where: their predicate is the constant true. */
static int eval_predicate(interp_t *it, const tir_expr_t *pred, bool *run) {
  if (!pred || (pred->kind == TIR_INT_IMM && pred->dtype.lanes == 1 && pred->u.int_value != 0)) {
    *run = true;
    return MLC_OK;
  }
  return interp_eval_bool(it, pred, run);
}

INTERP_COLD static int bad_block_shape(interp_t *it, const tir_stmt_t *s) {
  int n = s->u.realize.block->niter_vars;
  if (n != s->u.realize.n) return interp_fail(it, "%d bindings for %d iter vars", s->u.realize.n, n);
  return interp_fail(it, "%d iter vars", n);
}

/* The block's own buffers, then the init (when due) and the body. */
static int run_block_body(interp_t *it, const tir_block_t *blk, bool init) {
  int rc = MLC_OK;
  for (int i = 0; i < blk->nalloc_buffers && rc == MLC_OK; i++)
    rc = interp_alloc_buffer(it, blk->alloc_buffers[i]);
  for (int i = 0; i < blk->nmatch_buffers && rc == MLC_OK; i++)
    rc = match_buffer(it, &blk->match_buffers[i]);
  if (rc == MLC_OK && init && blk->init) rc = interp_exec(it, blk->init);
  return rc == MLC_OK ? interp_exec(it, blk->body) : rc;
}

static int run_block(interp_t *it, const tir_stmt_t *s, const tir_block_t *blk) {
  int64_t vals[INTERP_MAX_ITER_VARS];
  int n = blk->niter_vars;
  if (n != s->u.realize.n || n > INTERP_MAX_ITER_VARS) return bad_block_shape(it, s);
  int rc = MLC_OK;
  for (int i = 0; i < n && rc == MLC_OK; i++)
    rc = interp_eval_int(it, s->u.realize.iter_values[i], &vals[i]);
  bool run, init;
  if (rc == MLC_OK) rc = eval_predicate(it, s->u.realize.predicate, &run);
  if (rc != MLC_OK || !run) return rc;
  if ((rc = bind_iter_vars(it, blk, vals, &init)) != MLC_OK) return rc;
  return run_block_body(it, blk, init);
}

int interp_exec_realize(interp_t *it, const tir_stmt_t *s) {
  const char *outer = it->block;
  it->block = s->u.realize.block->name;
  int rc = run_block(it, s, s->u.realize.block);
  it->block = outer;
  return rc;
}
