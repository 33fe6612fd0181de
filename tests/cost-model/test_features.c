/*
 * test_features.c - cm_extract on hand-written lowered functions (named
 * features have the values the loop nest implies), on GMM lowered under two
 * schedules, and on every built-in workload with default lowering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"
#include "cost-model/cost_model.h"
#include "schedule/schedule.h"

static tir_func_t *parse(const char *src) {
  tir_func_t *f = NULL;
  tir_parse_error_t err;
  int rc = tir_parse_func(&f, src, strlen(src), "<test>", &err);
  if (rc != MLC_OK) fprintf(stderr, "parse: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  return f;
}

static mlc_target_t cpu(void) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "llvm -mcpu=skylake-avx512 -num-cores=2"), MLC_OK);
  return t;
}

static int index_of(const char *name) {
  for (int i = 0; i < CM_FEATURE_DIM; i++)
    if (strcmp(cm_feature_name(i), name) == 0) return i;
  fprintf(stderr, "no feature %s\n", name);
  fail();
  return -1;
}

/* Feature `name` of row r is log2(1 + raw). */
static void assert_feature(const cm_features_t *f, int r, const char *name, double raw) {
  float got = f->data[(size_t)r * CM_FEATURE_DIM + index_of(name)];
  double want = log2(1.0 + raw);
  if (fabs(got - want) > 1e-4) {
    fprintf(stderr, "row %d %s: got %g (raw %g), want raw %g\n", r, name, got, exp2(got) - 1, raw);
    fail();
  }
}

static cm_features_t extract_src(const char *src) {
  tir_func_t *f = parse(src);
  mlc_target_t t = cpu();
  cm_features_t out;
  int rc = cm_extract(&out, f, &t);
  if (rc != MLC_OK) fprintf(stderr, "extract: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  tir_func_free(f);
  return out;
}

static const char *const VECTOR_MAD =
    "@T.prim_func\n"
    "def vmad(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\"), C: T.Buffer((64,), \"float32\")):\n"
    "    for i in range(8):\n"
    "        C[T.Ramp(i * 8, 1, 8)] = C[T.Ramp(i * 8, 1, 8)] + A[T.Ramp(i * 8, 1, 8)] * B[T.Ramp(i * 8, 1, 8)]\n";

/* 8 iterations of an 8-lane multiply-add: 64 mads, C read and written. */
static void test_vector_mad_counts(void **state) {
  (void)state;
  cm_features_t f = extract_src(VECTOR_MAD);
  assert_int_equal(f.nrows, 1);
  assert_feature(&f, 0, "float_mad", 64);
  assert_feature(&f, 0, "float_add_sub", 0);
  assert_feature(&f, 0, "float_mul", 0);
  assert_feature(&f, 0, "vec_num", 1);
  assert_feature(&f, 0, "vec_len", 8);
  assert_feature(&f, 0, "vec_type.inner_spatial", 1);
  assert_feature(&f, 0, "unroll_type.none", 1);
  assert_feature(&f, 0, "B0.acc_type.rw", 1);
  assert_feature(&f, 0, "B0.bytes", 512); /* read and written: 2 x 64 x 4 */
  assert_feature(&f, 0, "B0.unique_bytes", 256);
  assert_feature(&f, 0, "B0.stride", 1);
  assert_feature(&f, 0, "B1.acc_type.read", 1);
  assert_feature(&f, 0, "B1.bytes", 256);
  assert_feature(&f, 0, "B3.bytes", 0); /* three buffers: the rest is zero */
  assert_feature(&f, 0, "outer_prod", 64);
  assert_feature(&f, 0, "num_loops", 2); /* i and the lanes */
  assert_feature(&f, 0, "is_gpu", 0);
  assert_feature(&f, 0, "threadIdx_x_len", 0);
  cm_features_free(&f);
  assert_null(f.data);
}

/* A reduction over k: C and A are re-read across the loops their index
 * ignores, and C's 8 x 8 tile of a 64-wide buffer is 64 elements, not the
 * 456 of its flat hull. */
static void test_reduction_reuse_and_footprint(void **state) {
  (void)state;
  cm_features_t f = extract_src("@T.prim_func\n"
                                "def red(A: T.Buffer((4096,), \"float32\"), C: T.Buffer((4096,), \"float32\")):\n"
                                "    for i, k, j in T.grid(8, 16, 8):\n"
                                "        C[i * 64 + j] = C[i * 64 + j] + A[i * 64 + k]\n");
  assert_feature(&f, 0, "float_add_sub", 1024);
  assert_feature(&f, 0, "B0.acc_type.rw", 1);
  assert_feature(&f, 0, "B0.bytes", 8192);
  assert_feature(&f, 0, "B0.unique_bytes", 256);
  assert_feature(&f, 0, "B0.reuse_type.loop_multiple_read", 1);
  assert_feature(&f, 0, "B0.reuse_ct", 16);
  assert_feature(&f, 0, "B0.reuse_dis_iter", 8);
  assert_feature(&f, 0, "B1.acc_type.read", 1);
  assert_feature(&f, 0, "B1.unique_bytes", 512);
  assert_feature(&f, 0, "B1.reuse_ct", 8);
  assert_feature(&f, 0, "B1.reuse_dis_iter", 1);
  assert_feature(&f, 0, "B1.stride", 1);
  cm_features_free(&f);
}

/* A transposed read walks A with stride 16: every access is a new line. */
static void test_strided_access_lines(void **state) {
  (void)state;
  cm_features_t f = extract_src("@T.prim_func\n"
                                "def tr(A: T.Buffer((512,), \"float32\"), B: T.Buffer((512,), \"float32\")):\n"
                                "    for i, j in T.grid(16, 32):\n"
                                "        B[i * 32 + j] = A[j * 16 + i] * T.float32(2)\n");
  assert_feature(&f, 0, "float_mul", 512);
  assert_feature(&f, 0, "B0.acc_type.write", 1);
  assert_feature(&f, 0, "B0.stride", 1);
  assert_feature(&f, 0, "B0.lines", 32); /* 512 floats, 16 to a line */
  assert_feature(&f, 0, "B1.acc_type.read", 1);
  assert_feature(&f, 0, "B1.stride", 16);
  assert_feature(&f, 0, "B1.lines", 512);
  assert_feature(&f, 0, "B1.reuse_type.no_reuse", 1);
  cm_features_free(&f);
}

static const char COPIES_SRC[] =
    "@T.prim_func\n"
    "def copies(A: T.Buffer((64,), \"float32\"), B: T.Buffer((256,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    for k in range(16):\n"
    "        C[T.Ramp(0, 1, 4)] = C[T.Ramp(0, 1, 4)] + T.Broadcast(A[k], 4) * B[T.Ramp(k * 16, 1, 4)]\n"
    "        C[T.Ramp(4, 1, 4)] = C[T.Ramp(4, 1, 4)] + T.Broadcast(A[k + 16], 4) * B[T.Ramp(k * 16 + 4, 1, 4)]\n"
    "        C[T.Ramp(8, 1, 4)] = C[T.Ramp(8, 1, 4)] + T.Broadcast(A[k + 32], 4) * B[T.Ramp(k * 16 + 8, 1, 4)]\n"
    "        C[T.Ramp(12, 1, 4)] = C[T.Ramp(12, 1, 4)] + T.Broadcast(A[k + 48], 4) * B[T.Ramp(k * 16 + 12, 1, 4)]\n";

/* Four copies of an unrolled body are one row under a virtual unrolled
 * loop of extent 4. */
static void test_unrolled_copies_fold(void **state) {
  (void)state;
  cm_features_t f = extract_src(COPIES_SRC);
  assert_int_equal(f.nrows, 1);
  assert_feature(&f, 0, "float_mad", 256);
  assert_feature(&f, 0, "unroll_num", 1);
  assert_feature(&f, 0, "unroll_len", 4);
  assert_feature(&f, 0, "unroll_type.outer_spatial", 1);
  assert_feature(&f, 0, "vec_len", 4);
  assert_feature(&f, 0, "B0.acc_type.rw", 1); /* C */
  assert_feature(&f, 0, "B0.unique_bytes", 64);
  assert_feature(&f, 0, "B0.reuse_ct", 16);    /* k does not move C */
  assert_feature(&f, 0, "B1.unique_bytes", 1024); /* B: 16 x 16 floats */
  assert_feature(&f, 0, "B2.unique_bytes", 256);  /* A: 64 floats */
  assert_feature(&f, 0, "num_loops", 3);
  cm_features_free(&f);
}

/* The search lowers with unrolled loops kept as loops
 * (keep_unrolled_loops): the loop of kind unroll around one copy reads as
 * the four copies above do, but for the integer arithmetic of its index
 * expressions (u * 4, k * 16 + u * 4, ...), which the copies fold into
 * constants; MetaSchedule, reading the loop, counts it too. */
static void test_kept_unrolled_loop_reads_as_its_copies(void **state) {
  (void)state;
  cm_features_t copies = extract_src(COPIES_SRC);
  cm_features_t kept = extract_src(
      "@T.prim_func\n"
      "def kept(A: T.Buffer((64,), \"float32\"), B: T.Buffer((256,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
      "    for k in range(16):\n"
      "        for u in T.unroll(4, annotations={\"pragma_unroll_explicit\": 1}):\n"
      "            C[T.Ramp(u * 4, 1, 4)] = C[T.Ramp(u * 4, 1, 4)] + T.Broadcast(A[k + u * 16], 4) * B[T.Ramp(k * 16 + u * 4, 1, 4)]\n");
  assert_int_equal(kept.nrows, 1);
  int differ = 0, int_mad = index_of("int_mad"), int_mul = index_of("int_mul");
  for (int i = 0; i < CM_FEATURE_DIM; i++)
    if (i != int_mad && i != int_mul && fabsf(kept.data[i] - copies.data[i]) > 1e-4f) {
      fprintf(stderr, "%s: kept loop %g, copies %g\n", cm_feature_name(i), kept.data[i], copies.data[i]);
      differ++;
    }
  assert_int_equal(differ, 0);
  assert_feature(&kept, 0, "int_mad", 128); /* k * 16 + u * 4 and k + u * 16, 64 times */
  assert_feature(&copies, 0, "int_mad", 0);
  assert_true(kept.data[int_mul] > copies.data[int_mul]);
  cm_features_free(&kept);
  cm_features_free(&copies);
}

/* The init store under `if k == 0` runs once per (i, j), not per k; an
 * allocation's size and how often it is made. */
static void test_init_guard_and_allocation(void **state) {
  (void)state;
  cm_features_t f = extract_src("@T.prim_func\n"
                                "def g(A: T.Buffer((256,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
                                "    for i in range(4):\n"
                                "        acc = T.decl_buffer((4,), scope=\"local\")\n"
                                "        for j, k in T.grid(4, 16):\n"
                                "            if k == 0:\n"
                                "                acc[j] = T.float32(0)\n"
                                "            acc[j] = acc[j] + A[i * 64 + j * 16 + k]\n"
                                "        for j in range(4):\n"
                                "            C[i * 4 + j] = acc[j]\n");
  assert_int_equal(f.nrows, 3);
  assert_feature(&f, 0, "outer_prod", 16); /* i, j: k is pinned */
  assert_feature(&f, 0, "alloc_size", 16);
  assert_feature(&f, 0, "alloc_outer_prod", 4);
  assert_feature(&f, 0, "alloc_prod", 64);
  assert_feature(&f, 0, "alloc_inner_prod", 4);
  assert_feature(&f, 1, "outer_prod", 256);
  assert_feature(&f, 1, "float_add_sub", 256);
  assert_feature(&f, 1, "alloc_inner_prod", 64);
  assert_feature(&f, 2, "alloc_size", 0); /* C is a parameter */
  cm_features_free(&f);
}

static void test_no_store_is_one_zero_row(void **state) {
  (void)state;
  cm_features_t f = extract_src("@T.prim_func\n"
                                "def nothing(A: T.Buffer((4,), \"float32\")):\n"
                                "    T.evaluate(0)\n");
  assert_int_equal(f.nrows, 1);
  for (int k = 0; k < CM_FEATURE_DIM; k++) assert_true(f.data[k] == 0.0f);
  cm_features_free(&f);
}

static void test_feature_names(void **state) {
  (void)state;
  assert_string_equal(cm_feature_name(0), "float_mad");
  assert_string_equal(cm_feature_name(57), "B0.acc_type.read");
  assert_string_equal(cm_feature_name(CM_FEATURE_DIM - 1), "auto_unroll_max_step");
  assert_null(cm_feature_name(CM_FEATURE_DIM));
  assert_null(cm_feature_name(-1));
  for (int i = 0; i < CM_FEATURE_DIM; i++)
    for (int j = i + 1; j < CM_FEATURE_DIM; j++) assert_string_not_equal(cm_feature_name(i), cm_feature_name(j));
}

static void test_bad_input(void **state) {
  (void)state;
  cm_features_t f = {7, (float *)&f};
  mlc_target_t t = cpu();
  assert_int_equal(cm_extract(&f, NULL, &t), MLC_EINVAL);
  assert_int_equal(f.nrows, 0);
  assert_null(f.data);
  assert_int_equal(cm_extract(NULL, NULL, &t), MLC_EINVAL);
  cm_features_free(NULL);
  cm_features_free(&f);
}

/* Every allocation failure gives MLC_ENOMEM and leaks nothing (ASan). */
static void test_out_of_memory(void **state) {
  (void)state;
  tir_func_t *fn = parse(VECTOR_MAD);
  mlc_target_t t = cpu();
  int rc = MLC_ENOMEM;
  for (long n = 0; rc == MLC_ENOMEM; n++) {
    cm_features_t f;
    mlc_alloc_fail_after(n);
    rc = cm_extract(&f, fn, &t);
    mlc_alloc_fail_after(-1);
    if (rc == MLC_OK) cm_features_free(&f);
    else assert_int_equal(rc, MLC_ENOMEM);
  }
  tir_func_free(fn);
}

/* ------------------------------------------------------------------------ */
/* Lowered programs                                                          */
/* ------------------------------------------------------------------------ */

static cm_features_t extract_lowered(const tir_func_t *scheduled) {
  mlc_target_t t = cpu();
  tir_func_t *low = NULL;
  int rc = mlc_lower(&low, scheduled, &t, NULL);
  if (rc != MLC_OK) fprintf(stderr, "lower: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  cm_features_t f;
  rc = cm_extract(&f, low, &t);
  if (rc != MLC_OK) fprintf(stderr, "extract %s: %s\n", scheduled->name, mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  tir_func_free(low);
  return f;
}

static const char *const GMM_TRACE =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l1, l4, l3, l5)\n"
    "sch.parallel(loop=l1)\n"
    "sch.vectorize(loop=l5)\n";

/* The same GMM under two schedules: same arithmetic, different loops. */
static void test_gmm_schedules_differ(void **state) {
  (void)state;
  int64_t shape[] = {64, 64, 64};
  tir_func_t *gmm = NULL;
  assert_int_equal(tir_workload_build(&gmm, "GMM", shape, 3, tir_dt_FLOAT32(), tir_dtype(0, 0, 0)), MLC_OK);
  cm_features_t plain = extract_lowered(gmm);

  sch_trace_t *trace = NULL;
  sch_t *sch = NULL;
  assert_int_equal(sch_trace_from_python(&trace, GMM_TRACE, strlen(GMM_TRACE), "<trace>"), MLC_OK);
  assert_int_equal(sch_create(&sch, gmm, 1, SCH_ERRORS_RICH), MLC_OK);
  int rc = sch_trace_apply(sch, trace, true);
  if (rc != MLC_OK) fprintf(stderr, "apply: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  cm_features_t tiled = extract_lowered(sch_func(sch));

  assert_int_equal(plain.nrows, tiled.nrows); /* init and update */
  int last = plain.nrows - 1;
  assert_feature(&plain, last, "float_mad", 64.0 * 64 * 64);
  assert_feature(&tiled, last, "float_mad", 64.0 * 64 * 64);
  assert_feature(&plain, last, "vec_type.none", 1);
  assert_feature(&tiled, last, "vec_len", 16);
  assert_feature(&tiled, last, "parallel_len", 64);
  assert_true(memcmp(plain.data, tiled.data, sizeof(float) * CM_FEATURE_DIM * (size_t)plain.nrows) != 0);

  /* Extraction is deterministic. */
  cm_features_t again = extract_lowered(sch_func(sch));
  assert_int_equal(again.nrows, tiled.nrows);
  assert_memory_equal(again.data, tiled.data, sizeof(float) * CM_FEATURE_DIM * (size_t)tiled.nrows);

  cm_features_free(&again);
  cm_features_free(&plain);
  cm_features_free(&tiled);
  sch_free(sch);
  sch_trace_free(trace);
  tir_func_free(gmm);
}

/* Extraction never fails on the built-in workloads lowered by default, and
 * every value is finite and non-negative. */
static void test_all_workloads_extract(void **state) {
  (void)state;
  int n = 0;
  const tir_workload_desc_t *w = tir_workloads(&n);
  assert_true(n >= 14);
  for (int i = 0; i < n; i++) {
    tir_func_t *f = NULL;
    int rc = tir_workload_build(&f, w[i].name, NULL, 0, tir_dt_FLOAT32(), tir_dtype(0, 0, 0));
    if (rc != MLC_OK) fprintf(stderr, "%s: %s\n", w[i].name, mlc_error_last());
    assert_int_equal(rc, MLC_OK);
    cm_features_t fe = extract_lowered(f);
    assert_true(fe.nrows >= 1);
    for (size_t k = 0; k < (size_t)fe.nrows * CM_FEATURE_DIM; k++)
      assert_true(isfinite(fe.data[k]) && fe.data[k] >= 0);
    cm_features_free(&fe);
    tir_func_free(f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vector_mad_counts),
      cmocka_unit_test(test_reduction_reuse_and_footprint),
      cmocka_unit_test(test_strided_access_lines),
      cmocka_unit_test(test_unrolled_copies_fold),
      cmocka_unit_test(test_kept_unrolled_loop_reads_as_its_copies),
      cmocka_unit_test(test_init_guard_and_allocation),
      cmocka_unit_test(test_no_store_is_one_zero_row),
      cmocka_unit_test(test_feature_names),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_gmm_schedules_differ),
      cmocka_unit_test(test_all_workloads_extract),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
