/*
 * sched_testing.h - what every schedule primitive test does: parse a
 * TVMScript function, schedule it, compare the result with exact expected
 * TVMScript, and check with the reference interpreter that the scheduled
 * program computes what the original did on random inputs.
 *
 * Header-only (static functions) so each test executable includes it once.
 * Include after <cmocka.h>.
 */
#ifndef MLC_TESTS_SCHED_TESTING_H
#define MLC_TESTS_SCHED_TESTING_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "schedule/schedule.h"

/* Parses src (must succeed) into a function owning its arena. */
static MLC_UNUSED tir_func_t *st_parse(const char *src) {
  tir_func_t *f = NULL;
  tir_parse_error_t err;
  int rc = tir_parse_func(&f, src, strlen(src), "<test>", &err);
  if (rc != MLC_OK) {
    fprintf(stderr, "parse failed: %s\n", mlc_error_last());
    fail();
  }
  return f;
}

/* A schedule over src, RICH errors, seed 1. */
static MLC_UNUSED sch_t *st_schedule(const char *src) {
  tir_func_t *f = st_parse(src);
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_RICH), MLC_OK);
  tir_func_free(f);
  return sch;
}

/* Asserts that the canonical printing of f is exactly `expected` (also a
 * canonical printing, e.g. a literal written as the printer prints). On a
 * mismatch prints both and the first differing line. */
static MLC_UNUSED void st_assert_script(const tir_func_t *f, const char *expected) {
  char *got = tir_print_func(f);
  assert_non_null(got);
  if (strcmp(got, expected) != 0) {
    int line = 1;
    size_t i = 0;
    while (got[i] && got[i] == expected[i]) {
      if (got[i] == '\n') line++;
      i++;
    }
    fprintf(stderr, "---- expected ----\n%s---- got ----\n%s---- first difference at line %d\n",
            expected, got, line);
    mlc_free(got);
    fail();
  }
  mlc_free(got);
}

/* Fills buffer memory with values in [1, 10) (integers for integer dtypes;
 * float16/bfloat16 as their bit patterns). */
static MLC_UNUSED void st_fill_random(void *data, size_t count, tir_dtype_t t, mlc_rng_t *rng) {
  for (size_t i = 0; i < count; i++) {
    double v = 1.0 + 9.0 * mlc_rng_uniform(rng);
    if (tir_dtype_is_integer(t)) v = (double)(int64_t)v;
    switch (t.code) {
    case TIR_CODE_FLOAT:
      if (t.bits == 32) ((float *)data)[i] = (float)v;
      else if (t.bits == 64) ((double *)data)[i] = v;
      else ((uint16_t *)data)[i] = tir_f32_to_f16((float)v);
      break;
    case TIR_CODE_BFLOAT: ((uint16_t *)data)[i] = tir_f32_to_bf16((float)v); break;
    default:
      if (t.bits <= 8) ((int8_t *)data)[i] = (int8_t)v;
      else if (t.bits == 16) ((int16_t *)data)[i] = (int16_t)v;
      else if (t.bits == 32) ((int32_t *)data)[i] = (int32_t)v;
      else ((int64_t *)data)[i] = (int64_t)v;
    }
  }
}

static MLC_UNUSED double st_read(const void *data, size_t i, tir_dtype_t t) {
  switch (t.code) {
  case TIR_CODE_FLOAT:
    if (t.bits == 32) return ((const float *)data)[i];
    if (t.bits == 64) return ((const double *)data)[i];
    return tir_f16_to_f32(((const uint16_t *)data)[i]);
  case TIR_CODE_BFLOAT: return tir_bf16_to_f32(((const uint16_t *)data)[i]);
  default:
    if (t.bits <= 8) return t.code == TIR_CODE_INT ? ((const int8_t *)data)[i] : ((const uint8_t *)data)[i];
    if (t.bits == 16) return ((const int16_t *)data)[i];
    if (t.bits == 32) return ((const int32_t *)data)[i];
    return (double)((const int64_t *)data)[i];
  }
}

/* Runs `before` and `after` (same parameters, static shapes) on the same
 * random inputs and asserts every buffer ends equal: bit-exact for integers,
 * relative tolerance `rtol` for floats (0 demands exact equality, right for
 * schedules that keep the order of floating-point operations). */
static MLC_UNUSED void st_assert_same_outputs(const tir_func_t *before, const tir_func_t *after, uint64_t seed,
                                              double rtol) {
  assert_int_equal(before->nparams, after->nparams);
  int n = before->nparams;
  tir_arg_t a1[16], a2[16];
  void *mem1[16] = {0}, *mem2[16] = {0};
  size_t counts[16] = {0};
  mlc_rng_t rng;
  mlc_rng_seed(&rng, seed);
  assert_true(n <= 16);
  for (int i = 0; i < n; i++) {
    memset(&a1[i], 0, sizeof(a1[i]));
    tir_buffer_t *b = before->buffer_map ? before->buffer_map[i] : NULL;
    if (!b) { /* scalar params get 3 */
      a1[i].scalar_int = 3;
      a1[i].scalar_float = 3.0;
      a2[i] = a1[i];
      continue;
    }
    size_t count = 1;
    a1[i].ndim = b->ndim;
    a1[i].dtype = b->dtype;
    for (int d = 0; d < b->ndim; d++) {
      int64_t ext = 0;
      assert_true(tir_as_int(b->shape[d], &ext));
      a1[i].shape[d] = ext;
      count *= (size_t)ext;
    }
    size_t bytes = count * (size_t)tir_dtype_bytes(b->dtype) + 1;
    mem1[i] = mlc_calloc(1, bytes);
    mem2[i] = mlc_calloc(1, bytes);
    st_fill_random(mem1[i], count, b->dtype, &rng);
    memcpy(mem2[i], mem1[i], bytes);
    counts[i] = count;
    a1[i].data = mem1[i];
    a2[i] = a1[i];
    a2[i].data = mem2[i];
  }
  int rc1 = tir_interp_run(before, a1, n);
  if (rc1 != MLC_OK) fprintf(stderr, "interp(before): %s\n", mlc_error_last());
  assert_int_equal(rc1, MLC_OK);
  int rc2 = tir_interp_run(after, a2, n);
  if (rc2 != MLC_OK) fprintf(stderr, "interp(after): %s\n", mlc_error_last());
  assert_int_equal(rc2, MLC_OK);
  for (int i = 0; i < n; i++) {
    if (!mem1[i]) continue;
    tir_dtype_t t = a1[i].dtype;
    for (size_t k = 0; k < counts[i]; k++) {
      double x = st_read(mem1[i], k, t), y = st_read(mem2[i], k, t);
      bool ok = tir_dtype_is_float(t) ? (x == y || fabs(x - y) <= rtol * fabs(x)) : x == y;
      if (!ok) {
        fprintf(stderr, "param %d (%s) element %zu: before %.9g, after %.9g\n", i,
                before->buffer_map[i]->name, k, x, y);
        fail();
      }
    }
    mlc_free(mem1[i]);
    mlc_free(mem2[i]);
  }
}

/* The common shape of a positive test: the schedule's program prints as
 * `expected` and computes what `original` computes. */
static MLC_UNUSED void st_check(sch_t *sch, const char *original_src, const char *expected) {
  st_assert_script(sch_func(sch), expected);
  tir_func_t *orig = st_parse(original_src);
  st_assert_same_outputs(orig, sch_func(sch), 7, 0.0);
  tir_func_free(orig);
}

/* A negative test: `rc` is MLC_ESCHEDULE and the schedule's error contains
 * `needle`; the program is unchanged (prints as before_text). */
static MLC_UNUSED void st_assert_fails(sch_t *sch, int rc, const char *needle, const char *before_text) {
  assert_int_equal(rc, MLC_ESCHEDULE);
  if (!strstr(sch_error(sch), needle)) {
    fprintf(stderr, "error was: %s\nexpected it to contain: %s\n", sch_error(sch), needle);
    fail();
  }
  if (before_text) st_assert_script(sch_func(sch), before_text);
}

#endif /* MLC_TESTS_SCHED_TESTING_H */
