/*
 * interp_access.c - buffer accesses in the reference interpreter: from a
 * buffer and its indices to the address of each element, with the bounds
 * checks that make out-of-bounds accesses errors naming the block, the buffer,
 * the index and the shape.
 *
 * An element's address is elem_offset + sum(index_k * stride_k) elements from
 * the start of the buffer's storage. Every access is checked per dimension
 * against the buffer's shape and then against the storage behind it (a view
 * made by match_buffer or an alias may reach past its source).
 */
#include "tir/interp_internal.h"

#include <inttypes.h>
#include <stdio.h>

static void list_ints(char *buf, size_t len, const int64_t *v, int n) {
  size_t at = 0;
  buf[0] = '\0';
  for (int k = 0; k < n && at < len; k++)
    at += (size_t)snprintf(buf + at, len - at, "%s%" PRId64, k ? ", " : "", v[k]);
}

/* Both kinds of bounds errors: an index outside the buffer's shape, or (when
 * in_shape) element `flat` outside the storage. */
INTERP_COLD int interp_out_of_bounds(interp_t *it, const tir_buffer_t *b,
                                     const interp_view_t *view, const int64_t *idx,
                                     bool in_shape, int64_t flat) {
  char at[256], shape[256];
  list_ints(at, sizeof(at), idx, view->ndim);
  if (in_shape)
    return interp_fail(it, "buffer %s: index [%s] is element %" PRId64
                       ", outside its storage of %" PRId64 " elements",
                       b->name, at, flat, view->limit);
  list_ints(shape, sizeof(shape), view->shape, view->ndim);
  return interp_fail(it, "buffer %s: index [%s] out of bounds for shape (%s%s)", b->name, at,
                     shape, view->ndim == 1 ? "," : "");
}

/* A buffer without a declaration of its own (e.g. a flattened alias made
   * by lowering): it views whatever storage its data variable holds. */
static int alias_view(interp_t *it, const tir_buffer_t *b, const interp_view_t **out) {
  const interp_var_slot_t *d = b->data ? interp_var_slot(it, b->data) : NULL;
  if (!d || !d->bound || interp_class(d->val.t) != INTERP_HANDLE)
    return interp_fail(it, "buffer %s is not defined here", b->name);
  interp_view_t view;
  int rc = interp_view_from_decl(it, b, &view);
  if (rc != MLC_OK) return rc;
  const interp_storage_t *st = &it->storages.data[d->val.s.i];
  view.base = st->data;
  view.limit = st->nbytes / interp_elem_bytes(view.dtype);
  view.storage = d->val.s.i;
  if ((rc = interp_bind_buffer(it, b, &view)) != MLC_OK) return rc;
  *out = &interp_buf_slot(it, b)->view;
  return MLC_OK;
}

int interp_buffer_view(interp_t *it, const tir_buffer_t *b, const interp_view_t **out) {
  const interp_buf_slot_t *slot = interp_buf_slot(it, b);
  if (slot && slot->bound) {
    *out = &slot->view;
    return MLC_OK;
  }
  return alias_view(it, b, out);
}

INTERP_COLD static int bad_index_count(interp_t *it, const tir_buffer_t *b, int n, int ndim) {
  return interp_fail(it, "buffer %s: %d indices for %d dimensions", b->name, n, ndim);
}

int interp_buffer_view_checked(interp_t *it, const tir_buffer_t *b, int nindices,
                               const interp_view_t **out) {
  int rc = interp_buffer_view(it, b, out);
  if (rc == MLC_OK && nindices != (*out)->ndim) return bad_index_count(it, b, nindices, (*out)->ndim);
  return rc;
}

int interp_access_scalar(interp_t *it, const tir_buffer_t *b, tir_expr_t *const *indices, int n,
                         unsigned char **p) {
  int64_t at[TIR_MAX_DIMS];
  const interp_view_t *view;
  if (n > TIR_MAX_DIMS) return bad_index_count(it, b, n, TIR_MAX_DIMS);
  for (int k = 0; k < n; k++) {
    int rc = interp_eval_int(it, indices[k], &at[k]);
    if (rc != MLC_OK) return rc;
  }
  int rc = interp_buffer_view_checked(it, b, n, &view);
  return rc == MLC_OK ? interp_locate(it, b, view, at, p) : rc;
}

/* Evaluates the indices of an access; *lanes gets the common lane count (a
 * ramp index makes the access a vector one; scalar indices join every lane). */
int interp_eval_indices(interp_t *it, const tir_buffer_t *b, tir_expr_t *const *indices, int n,
                        interp_value_t *idx, int *lanes) {
  if (n > TIR_MAX_DIMS) return interp_fail(it, "buffer %s: %d indices", b->name, n);
  *lanes = 1;
  for (int k = 0; k < n; k++) {
    int rc = interp_eval(it, indices[k], &idx[k]);
    if (rc != MLC_OK) return rc;
    interp_class_t c = interp_class(idx[k].t);
    if (c != INTERP_INT && c != INTERP_UINT)
      return interp_fail(it, "buffer %s: index %d is not an integer", b->name, k);
    int l = idx[k].t.lanes;
    if (l != 1 && *lanes != 1 && l != *lanes)
      return interp_fail(it, "buffer %s: indices with %d and %d lanes", b->name, *lanes, l);
    if (l != 1) *lanes = l;
  }
  return MLC_OK;
}

int interp_access_lane(interp_t *it, const tir_buffer_t *b, const interp_view_t *view,
                       const interp_value_t *idx, int l, unsigned char **p) {
  int64_t at[TIR_MAX_DIMS];
  for (int k = 0; k < view->ndim; k++) at[k] = interp_lane(&idx[k], l).i;
  return interp_locate(it, b, view, at, p);
}
