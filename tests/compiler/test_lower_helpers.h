/*
 * test_lower_helpers.h - what the lowering tests share: run one pass (or
 * the passes up to one) on a copy of a function, and the shape of a pass
 * test: the output prints as the exact expected TVMScript and the reference
 * interpreter gives the same outputs before and after on random inputs.
 *
 * Header-only (static functions); include after <cmocka.h>. Builds on the
 * schedule tests' helpers (st_parse, st_assert_script,
 * st_assert_same_outputs).
 */
#ifndef MLC_TESTS_TEST_LOWER_HELPERS_H
#define MLC_TESTS_TEST_LOWER_HELPERS_H

#include "../schedule/sched_testing.h"
#include "compiler/compiler.h"

static MLC_UNUSED mlc_target_t lt_target(void) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=skylake-avx512 -num-cores=2"), MLC_OK);
  return t;
}

/* Runs pass `id` on f in place; notes (may be NULL) collect its notes. */
static MLC_UNUSED void lt_run(tir_func_t *f, mlc_pass_id_t id, mlc_strbuf_t *notes) {
  mlc_target_t t = lt_target();
  int rc = mlc_pass_fn_of(id)(f, &t, notes);
  if (rc != MLC_OK) fprintf(stderr, "%s: %s\n", mlc_pass_name(id), mlc_error_last());
  assert_int_equal(rc, MLC_OK);
}

/* A copy of f after the passes before `id` (id itself not run). */
static MLC_UNUSED tir_func_t *lt_before(const tir_func_t *f, mlc_pass_id_t id) {
  tir_func_t *c = tir_func_clone(f);
  assert_non_null(c);
  for (int i = 0; i < (int)id; i++) lt_run(c, (mlc_pass_id_t)i, NULL);
  return c;
}

/* The usual pass test: src is lowered up to and including pass `id`; the
 * result prints as `expected` and computes what src computes. Returns the
 * notes of pass `id` (mlc_free), or NULL when it had none. */
static MLC_UNUSED char *lt_check(const char *src, mlc_pass_id_t id, const char *expected) {
  tir_func_t *orig = st_parse(src);
  tir_func_t *f = lt_before(orig, id);
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  lt_run(f, id, &notes);
  st_assert_script(f, expected);
  st_assert_same_outputs(orig, f, 11, 0.0);
  tir_func_free(f);
  tir_func_free(orig);
  return notes.len ? mlc_sb_take(&notes) : (mlc_sb_free(&notes), NULL);
}

/* The same when src is already the input of pass `id` (earlier passes are
 * not run): exact text, same outputs. */
static MLC_UNUSED char *lt_check_only(const char *src, mlc_pass_id_t id, const char *expected) {
  tir_func_t *orig = st_parse(src);
  tir_func_t *f = tir_func_clone(orig);
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  lt_run(f, id, &notes);
  st_assert_script(f, expected);
  st_assert_same_outputs(orig, f, 13, 0.0);
  tir_func_free(f);
  tir_func_free(orig);
  return notes.len ? mlc_sb_take(&notes) : (mlc_sb_free(&notes), NULL);
}

/* src lowered through pass `id` (every pass up to it) computes what src
 * computes; returns all the notes (mlc_free) or NULL. */
static MLC_UNUSED char *lt_check_through(const char *src, mlc_pass_id_t id) {
  tir_func_t *orig = st_parse(src);
  tir_func_t *f = tir_func_clone(orig);
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  for (int i = 0; i <= (int)id; i++) lt_run(f, (mlc_pass_id_t)i, &notes);
  st_assert_same_outputs(orig, f, 17, 0.0);
  tir_func_free(f);
  tir_func_free(orig);
  return notes.len ? mlc_sb_take(&notes) : (mlc_sb_free(&notes), NULL);
}

/* Whether `after` computes what `before` computes on random inputs (the
 * same parameters, static shapes; scalars get 3): both run, and every
 * buffer ends equal (floats within rtol, NaN never equal). On false, *why
 * says what differed. The non-asserting form of st_assert_same_outputs, for
 * tests that must tell a broken input apart from a broken pass. */
static MLC_UNUSED bool lt_same_outputs(const tir_func_t *before, const tir_func_t *after, uint64_t seed, double rtol,
                                       char *why, size_t why_len) {
  int n = before->nparams;
  tir_arg_t a1[16], a2[16];
  void *mem1[16] = {0}, *mem2[16] = {0};
  size_t counts[16] = {0};
  mlc_rng_t rng;
  mlc_rng_seed(&rng, seed);
  assert_true(n <= 16 && after->nparams == n);
  for (int i = 0; i < n; i++) {
    memset(&a1[i], 0, sizeof(a1[i]));
    a1[i].scalar_int = 3;
    a1[i].scalar_float = 3.0;
    tir_buffer_t *b = before->buffer_map ? before->buffer_map[i] : NULL;
    if (b) {
      a1[i].ndim = b->ndim;
      a1[i].dtype = b->dtype;
      counts[i] = 1;
      for (int d = 0; d < b->ndim; d++) {
        assert_true(tir_as_int(b->shape[d], &a1[i].shape[d]));
        counts[i] *= (size_t)a1[i].shape[d];
      }
      size_t bytes = counts[i] * (size_t)tir_dtype_bytes(b->dtype) + 1;
      mem1[i] = mlc_calloc(1, bytes);
      mem2[i] = mlc_calloc(1, bytes);
      st_fill_random(mem1[i], counts[i], b->dtype, &rng);
      memcpy(mem2[i], mem1[i], bytes);
      a1[i].data = mem1[i];
    }
    a2[i] = a1[i];
    a2[i].data = mem2[i];
  }
  bool same = true;
  if (tir_interp_run(before, a1, n) != MLC_OK) {
    snprintf(why, why_len, "before: %s", mlc_error_last());
    same = false;
  } else if (tir_interp_run(after, a2, n) != MLC_OK) {
    snprintf(why, why_len, "after: %s", mlc_error_last());
    same = false;
  }
  for (int i = 0; i < n && same; i++) {
    tir_dtype_t t = a1[i].dtype;
    for (size_t k = 0; k < counts[i] && same; k++) {
      double x = st_read(mem1[i], k, t), y = st_read(mem2[i], k, t);
      same = tir_dtype_is_float(t) ? (x == y || fabs(x - y) <= rtol * fabs(x)) : x == y;
      if (!same) snprintf(why, why_len, "param %d element %zu: before %.9g, after %.9g", i, k, x, y);
    }
  }
  for (int i = 0; i < n; i++) {
    mlc_free(mem1[i]);
    mlc_free(mem2[i]);
  }
  return same;
}

/* Asserts that text contains needle. */
static MLC_UNUSED void lt_assert_contains(const char *text, const char *needle) {
  if (text && strstr(text, needle)) return;
  fprintf(stderr, "expected to find: %s\nin: %s\n", needle, text ? text : "(null)");
  fail();
}

#endif /* MLC_TESTS_TEST_LOWER_HELPERS_H */
