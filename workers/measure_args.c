/*
 * measure_args.c - the kernel's arguments: which workloads can be measured
 * (every parameter a compact buffer of constant shape, or a scalar), one
 * 64-byte-aligned host buffer per parameter with random inputs in [1, 10)
 * and zeroed outputs, and the DLTensors of the C ABI (compiler.h) over them.
 *
 * Outputs are the buffers the reference function writes: the targets of its
 * stores and the write regions of its blocks. Everything else is an input.
 */
#include <string.h>

#include "workers/measure_internal.h"

/* DLPack asks for 64-byte alignment; AVX-512 loads want the same. */
#define MEASURE_ALIGN 64

/* ------------------------------------------------------------------------ */
/* Validation                                                                */
/* ------------------------------------------------------------------------ */

/* Shape of parameter i of f into shape[] (ndim into *ndim; 0 for scalars). */
static int param_shape(const tir_func_t *f, int i, int64_t *shape, int *ndim, tir_dtype_t *dtype) {
  const tir_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
  const char *pname = f->params[i]->u.var.name;
  if (!b) {
    if (tir_dtype_is_handle(f->params[i]->dtype) || f->params[i]->dtype.lanes != 1)
      return mlc_error_set(MLC_EINVAL, "measure: parameter %d (%s) is a handle without a buffer", i,
                           pname);
    *ndim = 0;
    *dtype = f->params[i]->dtype;
    return MLC_OK;
  }
  if (b->ndim > TIR_MAX_DIMS || b->dtype.lanes != 1)
    return mlc_error_set(MLC_EINVAL, "measure: buffer %s has %d dimensions or vector dtype", b->name,
                         b->ndim);
  int64_t stride = 1;
  for (int d = b->ndim - 1; d >= 0; d--) {
    if (!tir_as_int(b->shape[d], &shape[d]) || shape[d] < 0)
      return mlc_error_set(MLC_EINVAL, "measure: buffer %s: dimension %d is not a constant", b->name, d);
    if (b->strides && !tir_is_const_int(b->strides[d], stride))
      return mlc_error_set(MLC_EINVAL, "measure: buffer %s is not compact (strides)", b->name);
    stride *= shape[d];
  }
  if (b->elem_offset && !tir_is_const_int(b->elem_offset, 0))
    return mlc_error_set(MLC_EINVAL, "measure: buffer %s has an element offset", b->name);
  *ndim = b->ndim;
  *dtype = b->dtype;
  return MLC_OK;
}

static bool has_buffer(const tir_func_t *f, int i) { return f->buffer_map && f->buffer_map[i]; }

static int same_param(const tir_func_t *w, const tir_func_t *r, int i) {
  int64_t ws[TIR_MAX_DIMS], rs[TIR_MAX_DIMS];
  int wn, rn;
  tir_dtype_t wt, rt;
  int rc = param_shape(w, i, ws, &wn, &wt);
  if (rc == MLC_OK) rc = param_shape(r, i, rs, &rn, &rt);
  if (rc != MLC_OK) return rc;
  bool same = wn == rn && tir_dtype_eq(wt, rt) && memcmp(ws, rs, (size_t)wn * sizeof *ws) == 0 &&
              has_buffer(w, i) == has_buffer(r, i);
  if (!same)
    return mlc_error_set(MLC_EINVAL,
                         "measure: reference parameter %d (%s) differs from the workload's (%s) in "
                         "kind, dtype or shape",
                         i, r->params[i]->u.var.name, w->params[i]->u.var.name);
  return MLC_OK;
}

int measure_validate(const tir_func_t *workload, const mlc_measure_options_t *opts) {
  int64_t shape[TIR_MAX_DIMS];
  int ndim;
  tir_dtype_t t;
  for (int i = 0; i < workload->nparams; i++) {
    int rc = param_shape(workload, i, shape, &ndim, &t);
    if (rc != MLC_OK) return rc;
  }
  const tir_func_t *ref = opts->reference;
  if (!ref || ref == workload) return MLC_OK;
  if (ref->nparams != workload->nparams)
    return mlc_error_set(MLC_EINVAL, "measure: the reference has %d parameters, the workload %d",
                         ref->nparams, workload->nparams);
  for (int i = 0; i < workload->nparams; i++) {
    int rc = same_param(workload, ref, i);
    if (rc != MLC_OK) return rc;
  }
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Outputs: data vars the reference writes                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  MLC_VEC(const tir_var_t *) written;
  bool failed;
} writes_t;

static void note_write(writes_t *w, const tir_buffer_t *b) {
  for (size_t i = 0; i < w->written.len; i++)
    if (w->written.data[i] == b->data) return;
  if (mlc_vec_push(&w->written, b->data) != MLC_OK) w->failed = true;
}

static bool writes_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  if (s->kind == TIR_BUFFER_STORE) note_write(v->payload, s->u.store.buffer);
  return true;
}

static bool writes_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  for (int i = 0; i < b->nwrites; i++) note_write(v->payload, b->writes[i].buffer);
  return true;
}

static bool skip_expr(tir_visitor_t *v, tir_expr_t *e) { return false; }

/* is_output[i] for each parameter of f. MLC_ENOMEM on failure. */
static int find_outputs(bool *is_output, const tir_func_t *f) {
  writes_t w = {0};
  tir_visitor_t v = {.expr = skip_expr, .stmt = writes_stmt, .block = writes_block, .payload = &w};
  tir_visit_stmt(&v, f->body);
  for (int i = 0; i < f->nparams; i++) {
    is_output[i] = false;
    const tir_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    for (size_t k = 0; b && k < w.written.len; k++)
      if (w.written.data[k] == b->data) is_output[i] = true;
  }
  bool failed = w.failed;
  mlc_vec_free(&w.written);
  return failed ? MLC_ENOMEM : MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                   */
/* ------------------------------------------------------------------------ */

/* v in [1, 10) as a float32, kept below 10 after rounding. */
static float f32_below_ten(double v) {
  float f = (float)v;
  return f >= 10.0f ? 9.99999905f : f; /* the largest float32 below 10 */
}

/* Writes v (an integer or a float in [1, 10)) as element i of dtype t,
 * keeping floats below 10 after rounding to t. */
static void put_value(void *data, size_t i, tir_dtype_t t, double v) {
  if (tir_dtype_is_integer(t)) {
    int64_t x = (int64_t)v;
    switch (t.bits) {
    case 1: case 8: ((uint8_t *)data)[i] = (uint8_t)x; break;
    case 16: ((uint16_t *)data)[i] = (uint16_t)x; break;
    case 32: ((uint32_t *)data)[i] = (uint32_t)x; break;
    default: ((uint64_t *)data)[i] = (uint64_t)x; break;
    }
    return;
  }
  if (t.bits == 64) {
    ((double *)data)[i] = v;
  } else if (t.bits == 32) {
    ((float *)data)[i] = f32_below_ten(v);
  } else {
    bool bf = t.code == TIR_CODE_BFLOAT;
    uint16_t h = bf ? tir_f32_to_bf16((float)v) : tir_f32_to_f16((float)v);
    if ((bf ? tir_bf16_to_f32(h) : tir_f16_to_f32(h)) >= 10.0f) h--; /* next smaller */
    ((uint16_t *)data)[i] = h;
  }
}

/* Random values in [1, 10): integers 1..9, floats uniform; bool 0 or 1.
 * Floats are drawn in blocks (the same values as one at a time): a
 * candidate's inputs are millions of them, and drawing them one call at a
 * time was half of what preparing its arguments cost. */
void measure_fill_random(void *data, size_t count, tir_dtype_t t, mlc_rng_t *rng) {
  if (!tir_dtype_is_bool(t) && !tir_dtype_is_integer(t)) {
    enum { BLOCK = 256 };
    double u[BLOCK];
    for (size_t i = 0; i < count; i += BLOCK) {
      size_t k = count - i < BLOCK ? count - i : BLOCK;
      mlc_rng_uniform_fill(rng, u, k);
      if (t.bits == 32) {
        float *d = (float *)data + i;
        for (size_t j = 0; j < k; j++) d[j] = f32_below_ten(1.0 + 9.0 * u[j]);
      } else {
        for (size_t j = 0; j < k; j++) put_value(data, i + j, t, 1.0 + 9.0 * u[j]);
      }
    }
    return;
  }
  for (size_t i = 0; i < count; i++) {
    double v;
    if (tir_dtype_is_bool(t)) v = (double)mlc_rng_below(rng, 2);
    else v = (double)mlc_rng_range(rng, 1, 9);
    put_value(data, i, t, v);
  }
}

static size_t elem_bytes(tir_dtype_t t) { return (size_t)tir_dtype_bytes(t); }

static int alloc_param(measure_args_t *a, int i, int ndim, mlc_rng_t *rng, bool keep_copy) {
  tir_dtype_t t = a->dtypes[i];
  int64_t *shape = a->shapes + (size_t)i * TIR_MAX_DIMS;
  size_t count = 1;
  for (int d = 0; d < ndim; d++) {
    if (__builtin_mul_overflow(count, (size_t)shape[d], &count))
      return mlc_error_set(MLC_ENOMEM, "measure: parameter %d is too large", i);
  }
  size_t bytes;
  if (__builtin_mul_overflow(count, elem_bytes(t), &bytes) || bytes > SIZE_MAX - 2 * MEASURE_ALIGN)
    return mlc_error_set(MLC_ENOMEM, "measure: parameter %d is too large", i);
  a->counts[i] = count;
  a->raw[i] = mlc_malloc(bytes + MEASURE_ALIGN);
  if (!a->raw[i]) return mlc_error_set(MLC_ENOMEM, "measure: no memory for %zu bytes of parameter %d", bytes, i);
  void *data = (void *)(((uintptr_t)a->raw[i] + MEASURE_ALIGN - 1) & ~(uintptr_t)(MEASURE_ALIGN - 1));
  if (a->is_output[i]) memset(data, 0, bytes);
  else measure_fill_random(data, count, t, rng);
  if (keep_copy && !a->is_output[i]) {
    a->saved[i] = mlc_malloc(bytes ? bytes : 1);
    if (!a->saved[i]) return mlc_error_set(MLC_ENOMEM, "measure: no memory to keep the inputs");
    memcpy(a->saved[i], data, bytes);
  }
  DLTensor *dl = &a->tensors[i];
  dl->data = data;
  dl->device.device_type = kDLCPU;
  dl->device.device_id = 0;
  dl->ndim = ndim;
  dl->dtype.code = t.code;
  dl->dtype.bits = t.bits;
  dl->dtype.lanes = t.lanes;
  dl->shape = ndim ? shape : NULL;
  dl->strides = NULL;
  dl->byte_offset = 0;
  return MLC_OK;
}

static int alloc_tables(measure_args_t *a, int n) {
  size_t k = n ? (size_t)n : 1;
  a->n = n;
  a->tensors = mlc_calloc(k, sizeof *a->tensors);
  a->shapes = mlc_calloc(k * TIR_MAX_DIMS, sizeof *a->shapes);
  a->dtypes = mlc_calloc(k, sizeof *a->dtypes);
  a->counts = mlc_calloc(k, sizeof *a->counts);
  a->is_output = mlc_calloc(k, sizeof *a->is_output);
  a->raw = mlc_calloc(k, sizeof *a->raw);
  a->saved = mlc_calloc(k, sizeof *a->saved);
  if (!a->tensors || !a->shapes || !a->dtypes || !a->counts || !a->is_output || !a->raw || !a->saved)
    return mlc_error_set(MLC_ENOMEM, "measure: out of memory");
  return MLC_OK;
}

int measure_args_init(measure_args_t *a, const tir_func_t *workload, const tir_func_t *reference,
                      uint64_t seed, bool keep_inputs) {
  memset(a, 0, sizeof *a);
  a->seed = seed;
  mlc_rng_t rng;
  mlc_rng_seed(&rng, seed);
  int rc = alloc_tables(a, workload->nparams);
  if (rc == MLC_OK) rc = find_outputs(a->is_output, reference ? reference : workload);
  for (int i = 0; rc == MLC_OK && i < a->n; i++) {
    int ndim;
    rc = param_shape(workload, i, a->shapes + (size_t)i * TIR_MAX_DIMS, &ndim, &a->dtypes[i]);
    if (rc == MLC_OK) rc = alloc_param(a, i, ndim, &rng, keep_inputs);
  }
  if (rc != MLC_OK) measure_args_free(a);
  return rc;
}

void measure_args_free(measure_args_t *a) {
  for (int i = 0; a->raw && i < a->n; i++) mlc_free(a->raw[i]);
  for (int i = 0; a->saved && i < a->n; i++) mlc_free(a->saved[i]);
  mlc_free(a->tensors);
  mlc_free(a->shapes);
  mlc_free(a->dtypes);
  mlc_free(a->counts);
  mlc_free(a->is_output);
  mlc_free(a->raw);
  mlc_free(a->saved);
  memset(a, 0, sizeof *a);
}
