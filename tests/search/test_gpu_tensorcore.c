/*
 * test_gpu_tensorcore.c - MultiLevelTilingTensorCore (docs/search/gpu.md,
 * "Tensor cores"): cuda targets of sm_70 and newer get TVM's
 * DefaultCUDATensorCore sets; an fp16 x fp16 -> fp32 GMM's space holds a
 * WMMA sketch whose candidates replay, tensorize and pass VerifyGPUCode for
 * sm_80 and sm_90; the sketch computes the GMM in the reference
 * interpreter: its tiles before tensorization, the tensorized program with
 * the WMMA calls and its lowered form (GMM and a batched BMM, whose batch
 * loop stays outside the tiles), and the whole pipeline with "identity"
 * intrinsics (implementation = description) in place of the WMMA ones; an
 * fp32 GMM and a shape 16 does not divide get MultiLevelTiling's sketch;
 * and, where the compiler builds CUDA and ptxas is installed, the PTX of a
 * tensorized sample has wmma instructions and assembles for sm_80 / sm_90.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_testing.h"
#include "search/postproc/postproc.h"
#include "search/space/rules.h"
#include "tests/schedule/sched_testing.h"

static tir_func_t *gmm(int64_t m, int64_t n, int64_t k, tir_dtype_t in) {
  tir_func_t *f = NULL;
  int64_t shape[3] = {m, n, k};
  OK(tir_workload_build(&f, "GMM", shape, 3, in, tir_dt_FLOAT32()));
  return f;
}

static bool trace_has(const sch_trace_t *t, const char *text) {
  char *py = sch_trace_to_python(t);
  bool has = py && strstr(py, text) != NULL;
  mlc_free(py);
  return has;
}

/* The sketch of the space that uses the WMMA mma, or -1. */
static int tensor_core_sketch(const ms_space_t *space) {
  for (int i = 0; i < space->n; i++)
    if (trace_has(space->traces[i], "\"wmma_sync_16x16x16_f16f16f32\"")) return i;
  return -1;
}

/* ------------------------------------------------------------------------ */
/* Which targets get it                                                      */
/* ------------------------------------------------------------------------ */

static void tensor_core_defaults_for_sm70_and_newer(void **state) {
  (void)state;
  tir_func_t *f = gmm(64, 64, 64, tir_dt_FLOAT16());
  ms_ctx_t sm80, sm60, rocm;
  gpu_ctx(&sm80, f, SM80, 0);
  gpu_ctx(&sm60, f, "cuda -arch=sm_61", 0);
  gpu_ctx(&rocm, f, "rocm -mcpu=gfx90a", 0);
  int n, n60;
  const ms_rule_t *const *r = ms_rules_default(&sm80, &n);
  const ms_rule_t *const *r60 = ms_rules_default(&sm60, &n60);
  assert_int_equal(n, n60);
  assert_string_equal(r[0]->name, "MultiLevelTilingTensorCore");
  assert_string_equal(r60[0]->name, "MultiLevelTiling");
  for (int i = 1; i < n; i++) assert_ptr_equal(r[i], r60[i]);
  assert_ptr_equal(ms_rules_default(&rocm, &n), r60);
  assert_ptr_equal(ms_rule_find("MultiLevelTilingTensorCore"), r[0]);
  assert_ptr_equal(ms_rule_find_for(&sm80, "MultiLevelTilingTensorCore"), r[0]);
  assert_ptr_equal(ms_rule_find_for(&sm80, "MultiLevelTiling"), r60[0]); /* the GPU one */
  const ms_postproc_t *const *pp = ms_postprocs_default(&sm80, &n);
  assert_string_equal(pp[n - 2]->name, "RewriteTensorize");
  assert_string_equal(pp[n - 1]->name, "VerifyGPUCode");
  ms_postprocs_default(&sm60, &n60);
  assert_int_equal(n60, n - 1);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* The sketch and its candidates                                             */
/* ------------------------------------------------------------------------ */

/* TVM's tensor-core sketch of a matmul: the 16x16x16 tile blockized and
 * annotated, the outer loops bound to blockIdx.y / blockIdx.x /
 * threadIdx.y, the fragments and the shared copies. */
static void gmm_fp16_space_has_a_wmma_sketch(void **state) {
  (void)state;
  tir_func_t *f = gmm(128, 128, 128, tir_dt_FLOAT16());
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, SM80, 1);
  make_space(&space, &ctx, NULL, 0);
  assert_int_equal(space.n, 1);
  int s = tensor_core_sketch(&space);
  assert_int_equal(s, 0);
  static const char *const expect[] = {
      "ann_val=\"SSSRRSRS\"",
      "factors=[None, 16]",
      "sch.blockize(",
      "ann_val=\"wmma_fill_16x16x16_f32\"",
      "ann_key=\"warp_execution\", ann_val=1",
      "max_innermost_factor=4",
      "thread_axis=\"blockIdx.y\"",
      "thread_axis=\"blockIdx.x\"",
      "thread_axis=\"threadIdx.y\"",
      "storage_scope=\"wmma.accumulator\"",
      "ann_val=\"wmma_store_16x16x16_f32_global\"",
      "storage_scope=\"shared\"",
      "ann_key=\"meta_schedule.cooperative_fetch\"",
      "candidates=[1, 2, 4, 8]", /* float16: 16-byte fetches at most */
      "storage_scope=\"wmma.matrix_a\"",
      "ann_val=\"wmma_load_16x16x16_f16_a_shared\"",
      "storage_scope=\"wmma.matrix_b\"",
      "ann_val=\"wmma_load_16x16x16_f16_b_shared\"",
  };
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    if (!trace_has(space.traces[0], expect[i])) fprintf(stderr, "missing: %s\n", expect[i]);
    assert_true(trace_has(space.traces[0], expect[i]));
  }
  assert_false(trace_has(space.traces[0], "vthread"));
  ms_space_free(&space);
  tir_func_free(f);
}

/* Every annotated tile became its intrinsic: the four WMMA calls are there
 * and no auto_tensorize or cooperative-fetch annotation is left. */
static void assert_tensorized(const tir_func_t *f) {
  char *text = tir_print_func(f);
  assert_non_null(text);
  static const char *const calls[] = {"tvm_fill_fragment", "tvm_load_matrix_sync", "tvm_mma_sync",
                                      "tvm_store_matrix_sync"};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) assert_non_null(strstr(text, calls[i]));
  assert_null(strstr(text, MS_ANN_AUTO_TENSORIZE));
  assert_null(strstr(text, MS_ANN_COOPERATIVE_FETCH));
  /* the shared copies are split over the warps' lanes (threadIdx.x, which
   * no loop of the tiling binds) */
  assert_non_null(strstr(text, "thread=\"threadIdx.x\""));
  mlc_free(text);
}

/* The sketch with its decisions and fresh samples on `target`: each
 * candidate is valid (tensorized) or rejected by VerifyGPUCode; how many
 * were valid. */
static int check_candidates(const tir_func_t *f, const char *target, int nseeds) {
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, target, 7);
  make_space(&space, &ctx, NULL, 0);
  assert_true(tensor_core_sketch(&space) >= 0);
  int npp, valid = 0;
  const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
  for (int s = 0; s <= nseeds; s++) {
    ms_candidate_t c;
    int rc = ms_candidate_make(&c, &ctx, space.traces[0], s == 0, 300 + (uint64_t)s, pp, npp);
    if (rc != MLC_OK) {
      if (strncmp(mlc_error_last(), "VerifyGPUCode: ", 15) != 0 || getenv("GPU_TC_VERBOSE"))
        fprintf(stderr, "%s seed %d: %s\n", target, s, mlc_error_last());
      assert_int_equal(rc, MLC_ESCHEDULE);
      assert_true(strncmp(mlc_error_last(), "VerifyGPUCode: ", 15) == 0);
      continue;
    }
    assert_tensorized(sch_func(c.sch));
    valid++;
    ms_candidate_free(&c);
  }
  ms_space_free(&space);
  return valid;
}

static void gmm_fp16_candidates_tensorize_and_verify(void **state) {
  (void)state;
  tir_func_t *f = gmm(128, 128, 128, tir_dt_FLOAT16());
  assert_true(check_candidates(f, SM80, 6) > 0);
  assert_true(check_candidates(f, SM90, 6) > 0);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* The sketch computes the GMM                                               */
/* ------------------------------------------------------------------------ */

/* Each postprocessor of the tensor-core set but RewriteTensorize and
 * VerifyGPUCode: the tiles stay what the intrinsics' descriptions say, which
 * the interpreter runs. */
static int without_tensorize(const ms_ctx_t *ctx, const ms_postproc_t **out) {
  int n, k = 0;
  const ms_postproc_t *const *pp = ms_postprocs_default(ctx, &n);
  for (int i = 0; i < n; i++)
    if (pp[i] != &ms_postproc_rewrite_tensorize && pp[i] != &ms_postproc_verify_gpu_code) out[k++] = pp[i];
  return k;
}

static void untensorized_tiles_compute_gmm(void **state) {
  (void)state;
  tir_func_t *f = gmm(64, 64, 32, tir_dt_FLOAT16());
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, SM80, 3);
  make_space(&space, &ctx, NULL, 0);
  assert_int_equal(tensor_core_sketch(&space), 0);
  const ms_postproc_t *pp[16];
  int npp = without_tensorize(&ctx, pp);
  for (int s = 0; s < 2; s++) {
    ms_candidate_t c;
    OK(ms_candidate_make(&c, &ctx, space.traces[0], s == 0, 40 + (uint64_t)s, pp, npp));
    st_assert_same_outputs(f, sch_func(c.sch), 9 + (uint64_t)s, 1e-5);
    ms_candidate_free(&c);
  }
  ms_space_free(&space);
  tir_func_free(f);
}

/* The real WMMA calls, which the interpreter runs (tir/interp_wmma.c): up
 * to two tensorized candidates of f and their lowered programs compute
 * what f does. */
static void check_wmma_meaning(const tir_func_t *f, uint64_t seed) {
  ms_ctx_t ctx;
  ms_space_t space;
  gpu_ctx(&ctx, f, SM80, seed);
  make_space(&space, &ctx, NULL, 0);
  assert_int_equal(tensor_core_sketch(&space), 0);
  int npp, checked = 0;
  const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
  for (int s = 0; s < 6 && checked < 2; s++) {
    ms_candidate_t c;
    if (ms_candidate_make(&c, &ctx, space.traces[0], s == 0, 80 + (uint64_t)s, pp, npp) != MLC_OK) {
      assert_true(strncmp(mlc_error_last(), "VerifyGPUCode: ", 15) == 0);
      continue;
    }
    assert_tensorized(sch_func(c.sch));
    st_assert_same_outputs(f, sch_func(c.sch), 17 + (uint64_t)s, 1e-5);
    tir_func_t *low = NULL;
    OK(mlc_lower(&low, sch_func(c.sch), &ctx.target, NULL));
    st_assert_same_outputs(f, low, 19 + (uint64_t)s, 1e-5);
    cm_features_t feat; /* the cost model reads it */
    OK(cm_extract(&feat, low, &ctx.target));
    assert_true(feat.nrows > 0);
    cm_features_free(&feat);
    tir_func_free(low);
    ms_candidate_free(&c);
    checked++;
  }
  assert_true(checked > 0);
  ms_space_free(&space);
}

static void wmma_tensorized_programs_compute_gmm_and_bmm(void **state) {
  (void)state;
  tir_func_t *f = gmm(64, 32, 48, tir_dt_FLOAT16());
  check_wmma_meaning(f, 4);
  tir_func_free(f);
  int64_t shape[4] = {2, 32, 32, 32}; /* the batch loop stays outside the tiles */
  OK(tir_workload_build(&f, "BMM", shape, 4, tir_dt_FLOAT16(), tir_dt_FLOAT32()));
  check_wmma_meaning(f, 6);
  tir_func_free(f);
}

/* "<name>_identity": the intrinsic with its description as implementation. */
static const char *const WMMA[5] = {"wmma_fill_16x16x16_f32", "wmma_load_16x16x16_f16_a_shared",
                                    "wmma_load_16x16x16_f16_b_shared", "wmma_sync_16x16x16_f16f16f32",
                                    "wmma_store_16x16x16_f32_global"};
static char identity_names[5][64];

static void register_identity_intrinsics(void) {
  for (int i = 0; i < 5; i++) {
    snprintf(identity_names[i], sizeof identity_names[i], "%s_identity", WMMA[i]);
    if (sch_intrin_get(identity_names[i])) continue;
    const sch_intrin_t *in = sch_intrin_get(WMMA[i]);
    assert_non_null(in);
    char *text = tir_print_func(in->desc);
    OK(sch_intrin_register(identity_names[i], text, text));
    mlc_free(text);
  }
}

/* The whole pipeline with identity intrinsics: the tensorized, lowered
 * program computes the GMM. */
static void identity_tensorized_lowered_program_computes_gmm(void **state) {
  (void)state;
  register_identity_intrinsics();
  ms_mlt_tc_params_t params = *(const ms_mlt_tc_params_t *)ms_rule_mlt_tensor_core.params;
  params.ngroups = 1;
  params.groups[0] = (ms_tc_intrins_t){identity_names[0], identity_names[1], identity_names[2], identity_names[3],
                                       identity_names[4]};
  ms_rule_t rule = ms_rule_mlt_tensor_core;
  rule.params = &params;
  tir_func_t *f = gmm(64, 32, 32, tir_dt_FLOAT16());
  ms_ctx_t ctx;
  gpu_ctx(&ctx, f, SM90, 5);
  int n, npp;
  const ms_rule_t *const *defaults = ms_rules_default(&ctx, &n);
  const ms_rule_t *rules[16];
  for (int i = 0; i < n; i++) rules[i] = defaults[i] == &ms_rule_mlt_tensor_core ? &rule : defaults[i];
  ms_space_t space;
  make_space(&space, &ctx, rules, n);
  assert_true(trace_has(space.traces[0], "wmma_sync_16x16x16_f16f16f32_identity"));
  const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
  int lowered = 0;
  for (int s = 0; s < 6 && lowered < 2; s++) {
    ms_candidate_t c;
    if (ms_candidate_make(&c, &ctx, space.traces[0], s == 0, 60 + (uint64_t)s, pp, npp) != MLC_OK) {
      assert_true(strncmp(mlc_error_last(), "VerifyGPUCode: ", 15) == 0);
      continue;
    }
    char *text = tir_print_func(sch_func(c.sch));
    assert_null(strstr(text, MS_ANN_AUTO_TENSORIZE)); /* every tile was tensorized */
    mlc_free(text);
    tir_func_t *low = NULL;
    OK(mlc_lower(&low, sch_func(c.sch), &ctx.target, NULL));
    st_assert_same_outputs(f, low, 13 + (uint64_t)s, 1e-5);
    tir_func_free(low);
    ms_candidate_free(&c);
    lowered++;
  }
  assert_true(lowered > 0);
  ms_space_free(&space);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Where it does not apply                                                   */
/* ------------------------------------------------------------------------ */

/* The same space as MultiLevelTiling's (DefaultCUDA) gives. */
static void assert_plain_space(const tir_func_t *f, const char *target) {
  ms_ctx_t ctx;
  ms_space_t space, plain;
  gpu_ctx(&ctx, f, target, 2);
  make_space(&space, &ctx, NULL, 0);
  assert_int_equal(tensor_core_sketch(&space), -1);
  int n;
  const ms_rule_t *const *defaults = ms_rules_default(&ctx, &n);
  const ms_rule_t *rules[16];
  for (int i = 0; i < n; i++) rules[i] = defaults[i] == &ms_rule_mlt_tensor_core ? &ms_rule_mlt_cuda : defaults[i];
  make_space(&plain, &ctx, rules, n);
  assert_int_equal(space.n, plain.n);
  for (int i = 0; i < space.n; i++) {
    char *a = sch_trace_to_python(space.traces[i]), *b = sch_trace_to_python(plain.traces[i]);
    assert_string_equal(a, b);
    assert_null(strstr(a, "wmma"));
    mlc_free(a);
    mlc_free(b);
  }
  ms_space_free(&space);
  ms_space_free(&plain);
}

static void fp32_gmm_and_odd_shapes_get_no_tensor_cores(void **state) {
  (void)state;
  tir_func_t *f32 = gmm(128, 128, 128, tir_dt_FLOAT32());
  assert_plain_space(f32, SM80);
  tir_func_free(f32);
  tir_func_t *odd = gmm(128, 120, 128, tir_dt_FLOAT16()); /* 16 does not divide j */
  assert_plain_space(odd, SM90);
  tir_func_free(odd);
}

/* ------------------------------------------------------------------------ */
/* PTX                                                                       */
/* ------------------------------------------------------------------------ */

/* Builds a tensorized sample for target, assembles its PTX with ptxas and
 * looks for the wmma instructions. MLC_OK, or the build's error. */
static int assemble(const ms_candidate_t *c, const mlc_target_t *t, const char *arch) {
  char path[32];
  int rc = write_device_code(c, t, path, "mlc_gpu_tc");
  if (rc != MLC_OK) return rc;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "grep -q 'wmma.mma.sync' %s && grep -q 'wmma.load.a' %s && grep -q 'wmma.store' %s",
           path, path, path);
  int has = system(cmd);
  snprintf(cmd, sizeof cmd, PTXAS " -arch=%s %s -o /dev/null", arch, path);
  int st = system(cmd);
  if (st != 0 || has != 0) fprintf(stderr, "%s: ptxas %d, wmma instructions %s (kept for a look)\n", path, st,
                                   has == 0 ? "found" : "missing");
  else unlink(path);
  assert_int_equal(has, 0);
  assert_int_equal(st, 0);
  return MLC_OK;
}

static void ptx_of_tensorized_sample_has_wmma(void **state) {
  (void)state;
  SKIP_WITHOUT_PTXAS();
  tir_func_t *f = gmm(128, 128, 128, tir_dt_FLOAT16());
  static const char *const targets[2][2] = {{SM80, "sm_80"}, {SM90, "sm_90"}};
  for (int k = 0; k < 2; k++) {
    ms_ctx_t ctx;
    ms_space_t space;
    gpu_ctx(&ctx, f, targets[k][0], 21);
    make_space(&space, &ctx, NULL, 0);
    int npp, built = 0;
    char why[512] = "";
    const ms_postproc_t *const *pp = ms_postprocs_default(&ctx, &npp);
    for (int s = 0; s < 8 && built == 0 && !why[0]; s++) {
      ms_candidate_t c;
      if (ms_candidate_make(&c, &ctx, space.traces[0], s == 0, 500 + (uint64_t)s, pp, npp) != MLC_OK) continue;
      if (assemble(&c, &ctx.target, targets[k][1]) == MLC_OK) built++;
      else snprintf(why, sizeof why, "%s", mlc_error_last());
      ms_candidate_free(&c);
    }
    ms_space_free(&space);
    if (built == 0) { /* the code generator does not lower the WMMA calls yet */
      fprintf(stderr, "skipped: mlc_build of a tensorized sample for %s: %s\n", targets[k][0],
              why[0] ? why : "no valid sample");
      tir_func_free(f);
      skip();
    }
  }
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tensor_core_defaults_for_sm70_and_newer),
      cmocka_unit_test(gmm_fp16_space_has_a_wmma_sketch),
      cmocka_unit_test(gmm_fp16_candidates_tensorize_and_verify),
      cmocka_unit_test(untensorized_tiles_compute_gmm),
      cmocka_unit_test(wmma_tensorized_programs_compute_gmm_and_bmm),
      cmocka_unit_test(identity_tensorized_lowered_program_computes_gmm),
      cmocka_unit_test(fp32_gmm_and_odd_shapes_get_no_tensor_cores),
      cmocka_unit_test(ptx_of_tensorized_sample_has_wmma),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
