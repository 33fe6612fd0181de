/*
 * test_codegen_helpers.h - what the code generator's end-to-end tests share:
 * parse a lowered TVMScript function, generate and JIT it (mlc_codegen,
 * mlc_jit_load), make random arguments twice (host memory for the reference
 * interpreter, DLTensors for the generated code), run both and compare.
 *
 * Header-only (static functions); include after <cmocka.h>.
 */
#ifndef MLC_TESTS_CODEGEN_HELPERS_H
#define MLC_TESTS_CODEGEN_HELPERS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

#define CGT_MAX_ARGS 32
#define CGT_TARGET "llvm -num-cores=2"

typedef struct {
  tir_func_t *f;
  mlc_jit_t *jit;
  mlc_packed_fn_t fn;
} cgt_kernel_t;

/* Parses src; MLC_OK and a loaded kernel, or the codegen/JIT status. */
static MLC_UNUSED int cgt_try_build_for(cgt_kernel_t *k, const char *src, const char *target_str) {
  memset(k, 0, sizeof(*k));
  tir_parse_error_t perr;
  int rc = tir_parse_func(&k->f, src, strlen(src), "<test>", &perr);
  if (rc != MLC_OK) {
    fprintf(stderr, "parse failed: %s\n", mlc_error_last());
    fail();
  }
  mlc_target_t target;
  assert_int_equal(mlc_target_parse(&target, target_str), MLC_OK);
  mlc_module_t *m = NULL;
  if ((rc = mlc_codegen(&m, &k->f, 1, &target)) != MLC_OK) return rc;
  if ((rc = mlc_jit_load(&k->jit, m)) != MLC_OK) return rc;
  k->fn = (mlc_packed_fn_t)mlc_jit_lookup(k->jit, k->f->name);
  assert_non_null(k->fn);
  return MLC_OK;
}

static MLC_UNUSED void cgt_build_for(cgt_kernel_t *k, const char *src, const char *target_str) {
  int rc = cgt_try_build_for(k, src, target_str);
  if (rc != MLC_OK) {
    fprintf(stderr, "build failed: %s\n", mlc_error_last());
    fail();
  }
}

static MLC_UNUSED void cgt_build(cgt_kernel_t *k, const char *src) { cgt_build_for(k, src, CGT_TARGET); }

static MLC_UNUSED void cgt_free(cgt_kernel_t *k) {
  mlc_jit_free(k->jit);
  tir_func_free(k->f);
  memset(k, 0, sizeof(*k));
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

/* A value for a symbolic dimension or scalar parameter, by name. */
typedef struct {
  const char *name;
  double value;
} cgt_bind_t;

typedef struct {
  const tir_func_t *f;
  int n;
  tir_arg_t in[CGT_MAX_ARGS];      /* the interpreter's (own memory) */
  DLTensor dl[CGT_MAX_ARGS];       /* the generated code's (own memory) */
  int64_t dl_shape[CGT_MAX_ARGS][TIR_MAX_DIMS];
  size_t count[CGT_MAX_ARGS];      /* elements of a buffer argument */
  uint64_t scalar[CGT_MAX_ARGS];   /* a scalar argument's bytes */
  mlc_rng_t rng;
} cgt_args_t;

static int cgt_elem_bytes(tir_dtype_t t) { return t.bits <= 8 ? 1 : t.bits / 8; }

static double cgt_bound(const cgt_bind_t *binds, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(binds[i].name, name) == 0) return binds[i].value;
  fprintf(stderr, "no value for %s\n", name);
  fail();
  return 0;
}

/* Element i of memory p of dtype t as a double (integers exactly up to 2^53). */
static MLC_UNUSED double cgt_get(const void *p, tir_dtype_t t, size_t i) {
  const unsigned char *c = (const unsigned char *)p + i * (size_t)cgt_elem_bytes(t);
  uint16_t h;
  switch (t.code) {
  case TIR_CODE_FLOAT:
    if (t.bits == 32) return *(const float *)c;
    if (t.bits == 64) return *(const double *)c;
    memcpy(&h, c, 2);
    return tir_f16_to_f32(h);
  case TIR_CODE_BFLOAT: memcpy(&h, c, 2); return tir_bf16_to_f32(h);
  case TIR_CODE_INT:
    switch (t.bits) {
    case 8: return *(const int8_t *)c;
    case 16: return *(const int16_t *)c;
    case 32: return *(const int32_t *)c;
    default: return (double)*(const int64_t *)c;
    }
  default:
    switch (t.bits) {
    case 1:
    case 8: return *(const uint8_t *)c;
    case 16: return *(const uint16_t *)c;
    case 32: return *(const uint32_t *)c;
    default: return (double)*(const uint64_t *)c;
    }
  }
}

/* Stores v (rounded/converted to t) as element i. */
static MLC_UNUSED void cgt_set(void *p, tir_dtype_t t, size_t i, double v) {
  unsigned char *c = (unsigned char *)p + i * (size_t)cgt_elem_bytes(t);
  uint16_t h;
  switch (t.code) {
  case TIR_CODE_FLOAT:
    if (t.bits == 32) *(float *)c = (float)v;
    else if (t.bits == 64) *(double *)c = v;
    else h = tir_f32_to_f16((float)v), memcpy(c, &h, 2);
    return;
  case TIR_CODE_BFLOAT: h = tir_f32_to_bf16((float)v), memcpy(c, &h, 2); return;
  case TIR_CODE_INT:
    switch (t.bits) {
    case 8: *(int8_t *)c = (int8_t)v; return;
    case 16: *(int16_t *)c = (int16_t)v; return;
    case 32: *(int32_t *)c = (int32_t)v; return;
    default: *(int64_t *)c = (int64_t)v; return;
    }
  default:
    switch (t.bits) {
    case 1: *(uint8_t *)c = v != 0; return;
    case 8: *(uint8_t *)c = (uint8_t)v; return;
    case 16: *(uint16_t *)c = (uint16_t)v; return;
    case 32: *(uint32_t *)c = (uint32_t)v; return;
    default: *(uint64_t *)c = (uint64_t)v; return;
    }
  }
}

/* Refills buffer argument i (both copies) with values in [lo, hi): integers
 * in [lo, hi] for integer dtypes, 0/1 for bool. */
static MLC_UNUSED void cgt_fill(cgt_args_t *a, int i, double lo, double hi) {
  tir_dtype_t t = a->in[i].dtype;
  for (size_t k = 0; k < a->count[i]; k++) {
    double v = lo + (hi - lo) * mlc_rng_uniform(&a->rng);
    if (tir_dtype_is_bool(t)) v = mlc_rng_below(&a->rng, 2);
    else if (tir_dtype_is_integer(t)) v = (double)mlc_rng_range(&a->rng, (int64_t)lo, (int64_t)hi);
    cgt_set(a->in[i].data, t, k, v);
  }
  memcpy(a->dl[i].data, a->in[i].data, a->count[i] * (size_t)cgt_elem_bytes(t));
}

static void cgt_scalar_arg(cgt_args_t *a, int i, const tir_var_t *v, double value) {
  a->in[i].dtype = v->dtype;
  a->in[i].scalar_int = (int64_t)value;
  a->in[i].scalar_float = value;
  cgt_set(&a->scalar[i], v->dtype, 0, value);
  a->dl[i] = (DLTensor){.data = &a->scalar[i], .device = {kDLCPU, 0}, .ndim = 0,
                        .dtype = {v->dtype.code, v->dtype.bits, v->dtype.lanes}};
}

static void cgt_buffer_arg(cgt_args_t *a, int i, const tir_buffer_t *b, const cgt_bind_t *binds, int nbinds) {
  size_t count = 1;
  for (int d = 0; d < b->ndim; d++) {
    int64_t v;
    if (!tir_as_int(b->shape[d], &v)) {
      assert_int_equal(b->shape[d]->kind, TIR_VAR);
      v = (int64_t)cgt_bound(binds, nbinds, b->shape[d]->u.var.name);
    }
    a->in[i].shape[d] = a->dl_shape[i][d] = v;
    count *= (size_t)v;
  }
  size_t bytes = (count * (size_t)cgt_elem_bytes(b->dtype) + 63) / 64 * 64 + 64;
  a->count[i] = count;
  a->in[i].data = aligned_alloc(64, bytes);
  void *data = aligned_alloc(64, bytes);
  assert_non_null(a->in[i].data);
  assert_non_null(data);
  a->in[i].ndim = b->ndim;
  a->in[i].dtype = b->dtype;
  a->dl[i] = (DLTensor){.data = data, .device = {kDLCPU, 0}, .ndim = b->ndim,
                        .dtype = {b->dtype.code, b->dtype.bits, b->dtype.lanes},
                        .shape = a->dl_shape[i]};
  cgt_fill(a, i, 1, 10);
}

/* Arguments for f: buffers filled with values in [1, 10), scalars and
 * symbolic dimensions from binds (by name). */
static MLC_UNUSED void cgt_args_init(cgt_args_t *a, const tir_func_t *f, const cgt_bind_t *binds, int nbinds,
                                     uint64_t seed) {
  memset(a, 0, sizeof(*a));
  assert_true(f->nparams <= CGT_MAX_ARGS);
  a->f = f;
  a->n = f->nparams;
  mlc_rng_seed(&a->rng, seed);
  for (int i = 0; i < f->nparams; i++) {
    if (f->buffer_map[i]) cgt_buffer_arg(a, i, f->buffer_map[i], binds, nbinds);
    else cgt_scalar_arg(a, i, f->params[i], cgt_bound(binds, nbinds, f->params[i]->u.var.name));
  }
}

static MLC_UNUSED void cgt_args_free(cgt_args_t *a) {
  for (int i = 0; i < a->n; i++) {
    if (a->f->buffer_map[i]) {
      free(a->in[i].data);
      free(a->dl[i].data);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Running and comparing                                                     */
/* ------------------------------------------------------------------------ */

static MLC_UNUSED void cgt_run_interp(cgt_args_t *a) {
  if (tir_interp_run(a->f, a->in, a->n) != MLC_OK) {
    fprintf(stderr, "interpreter: %s\n", mlc_error_last());
    fail();
  }
}

static MLC_UNUSED void cgt_run_jit(const cgt_kernel_t *k, cgt_args_t *a) {
  int32_t rc = k->fn(a->dl, a->n);
  if (rc != 0) {
    fprintf(stderr, "generated code: %s\n", mlc_last_error());
    fail();
  }
}

/* Every buffer argument equal: integers exactly, floats within rtol
 * relative to max(1, |expected|), NaN matching NaN. */
static MLC_UNUSED void cgt_compare(const cgt_args_t *a, double rtol) {
  for (int i = 0; i < a->n; i++) {
    if (!a->f->buffer_map[i]) continue;
    tir_dtype_t t = a->in[i].dtype;
    for (size_t k = 0; k < a->count[i]; k++) {
      double want = cgt_get(a->in[i].data, t, k), got = cgt_get(a->dl[i].data, t, k);
      bool ok = want == got || (isnan(want) && isnan(got));
      if (!ok && tir_dtype_is_float(t)) ok = fabs(want - got) <= rtol * fmax(1.0, fabs(want));
      if (!ok) {
        char buf[24];
        fprintf(stderr, "buffer %s (%s) element %zu: generated %.17g, interpreter %.17g\n",
                a->f->buffer_map[i]->name, tir_dtype_str(t, buf), k, got, want);
        fail();
      }
    }
  }
}

/* Builds src, runs it on random arguments and the interpreter, compares. */
static MLC_UNUSED void cgt_check_against_interp(const char *src, const cgt_bind_t *binds, int nbinds, double rtol) {
  cgt_kernel_t k;
  cgt_build(&k, src);
  cgt_args_t a;
  cgt_args_init(&a, k.f, binds, nbinds, 42);
  cgt_run_interp(&a);
  cgt_run_jit(&k, &a);
  cgt_compare(&a, rtol);
  cgt_args_free(&a);
  cgt_free(&k);
}

/* The kernel's error message after a failing call. */
static MLC_UNUSED void cgt_expect_error(const cgt_kernel_t *k, DLTensor *args, int n, const char *message) {
  int32_t rc = k->fn(args, n);
  assert_int_not_equal(rc, 0);
  assert_string_equal(mlc_last_error(), message);
}

#endif /* MLC_TESTS_CODEGEN_HELPERS_H */
