/*
 * test_e2e_tensorize.c - the third schedule of the end-to-end matrix: tiled
 * + tensorized, where an x86 tensor intrinsic applies, compiled for the host
 * and compared with the reference interpreter on the unscheduled function.
 *
 * - avx512_fp32_fma_16x4 (float32): the generic tensorizer
 *   (e2e_schedule_tensorized) finds the loops itself in GMM, BMM, C1D, C2D,
 *   C3D and DIL; D+B+R's matmul reads its weight as (N, K), so the weight is
 *   first copied transposed (cache_read + transform_layout). For the other
 *   workloads the intrinsic does not apply, and the matcher must say so.
 * - x86_vnni_u8s8s32_16x4 (uint8 x int8 -> int32): the library builds both
 *   inputs in one dtype, so the GMM is hand-written with uint8 A and int8 B
 *   (B as (K, N), packed into 16x4 tiles by the schedule); it is also checked
 *   unscheduled and tiled, with inputs over the full uint8 / int8 ranges.
 *   The library's int8 GMM (int8 x int8) must not match VNNI.
 *
 * Cases whose intrinsic the host lacks (avx512f, avx512vnni) are skipped
 * with a printed reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "e2e_helpers.h"

#define FMA "avx512_fp32_fma_16x4"
#define VNNI "x86_vnni_u8s8s32_16x4"

/* Tensorizes the main block of `c` with `intrin` (after `prepare`) and
 * checks the result; the tensorized block's outer loop must be parallel and
 * the optimised LLVM IR must still call the LLVM intrinsic the tensor
 * intrinsic lowers to (`llvm_intrin`). */
static void check_tensorized(e2e_case_t *c, const char *intrin, e2e_prepare_fn prepare, const char *llvm_intrin) {
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, c->f, 1, SCH_ERRORS_FAST), MLC_OK);
  char block[64];
  e2e_main_block_name(sch, block, sizeof(block));
  e2e_sched_log_t log;
  bool ok = e2e_schedule_tensorized(&sch, block, intrin, prepare, &log);
  if (getenv("E2E_VERBOSE")) e2e_print_log(&log), e2e_print_trace(sch);
  if (!ok || !log.blocks[0].parallel) {
    e2e_print_log(&log);
    e2e_print_trace(sch);
    sch_free(sch);
    fail_msg("%s %s [tiled+tensorized %s]: block %s was not %s", c->workload, c->dtype, intrin, block,
             ok ? "made parallel" : "tensorized");
  }
  char label[96];
  snprintf(label, sizeof(label), "tiled+tensorized %s", intrin);
  e2e_case_check_ir(c, label, sch_func(sch), sch, llvm_intrin);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* avx512_fp32_fma_16x4                                                      */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *workload;
  e2e_prepare_fn prepare;
} fma_spec_t;

static void check_fma(void **state) {
  const fma_spec_t *spec = (const fma_spec_t *)*state;
  if (!e2e_host_has("avx512f", spec->workload)) return;
  e2e_case_t c;
  e2e_case_init(&c, spec->workload, "float32", e2e_workload(spec->workload, tir_dt_FLOAT32()), 4004);
  e2e_case_reference(&c);
  check_tensorized(&c, FMA, spec->prepare, "@llvm.fma.v16f32");
  e2e_case_free(&c);
}

#define FMA_WORKLOADS(X)                                                                              \
  X(GMM, "GMM", NULL) X(BMM, "BMM", NULL) X(C1D, "C1D", NULL) X(C2D, "C2D", NULL) X(C3D, "C3D", NULL) \
  X(DIL, "DIL", NULL) X(DBR, "D+B+R", e2e_prepare_transpose_b)

enum {
#define ENUM_(e, name, prep) FMA_##e,
  FMA_WORKLOADS(ENUM_)
#undef ENUM_
};

static fma_spec_t fma_specs[] = {
#define SPEC_(e, name, prep) {name, prep},
    FMA_WORKLOADS(SPEC_)
#undef SPEC_
};

/* The workloads the FMA intrinsic does not apply to, and why (the test
 * prints the matcher's reason): GMV has no second spatial axis for the
 * 16-wide vector of B; DEP's reduction is only over the window (no channel
 * reduction for k); GRP's input tile moves with the output channel (groups
 * of 8 < 16 channels); T2D's update is guarded by an if_then_else; NRM, SFM
 * and LN are no products of two operands. */
static void test_fma_does_not_apply_where_no_matmul_tile_exists(void **state) {
  (void)state;
  static const char *const names[] = {"GMV", "DEP", "GRP", "T2D", "NRM", "SFM", "LN"};
  for (int i = 0; i < 7; i++) {
    tir_func_t *f = e2e_workload(names[i], tir_dt_FLOAT32());
    sch_t *sch = NULL;
    assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_FAST), MLC_OK);
    char block[64];
    e2e_main_block_name(sch, block, sizeof(block));
    e2e_sched_log_t log;
    bool ok = e2e_schedule_tensorized(&sch, block, FMA, NULL, &log);
    printf("%s float32: %s does not apply to block %s:\n%s", names[i], FMA, block, log.blocks[0].skipped);
    if (ok) e2e_print_trace(sch);
    sch_free(sch);
    tir_func_free(f);
    if (ok) fail_msg("%s: %s unexpectedly matched block %s", names[i], FMA, block);
  }
}

/* ------------------------------------------------------------------------ */
/* x86_vnni_u8s8s32_16x4                                                     */
/* ------------------------------------------------------------------------ */

static const char GMM_U8S8[] =
    "@T.prim_func\n"
    "def gmm_u8s8(A: T.Buffer((64, 64), \"uint8\"), B: T.Buffer((64, 64), \"int8\"), C: T.Buffer((64, 64), \"int32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm_u8s8\", \"tir.noalias\": T.bool(True)})\n"
    "    for i, j, k in T.grid(64, 64, 64):\n"
    "        with T.block(\"C\"):\n"
    "            v_i, v_j, v_k = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[v_i, v_k], B[v_k, v_j])\n"
    "            T.writes(C[v_i, v_j])\n"
    "            with T.init():\n"
    "                C[v_i, v_j] = 0\n"
    "            C[v_i, v_j] = C[v_i, v_j] + T.Cast(\"int32\", A[v_i, v_k]) * T.Cast(\"int32\", B[v_k, v_j])\n";

static void test_gmm_u8s8_under_all_three_schedules_matches_interpreter(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  tir_parse_error_t perr;
  if (tir_parse_func(&f, GMM_U8S8, strlen(GMM_U8S8), "<gmm_u8s8>", &perr) != MLC_OK)
    fail_msg("parse: %s", mlc_error_last());
  e2e_case_t c;
  e2e_case_init(&c, "GMM", "uint8 x int8->int32", f, 5005);
  /* Full ranges: vpdpbusd adds four u8 * s8 products into int32 without
   * saturating, so |C| <= 64 * 255 * 128 fits; extremes catch sign and
   * zero-extension mistakes. */
  e2e_fill(&c, 0, 0, 255);
  e2e_fill(&c, 1, -128, 127);
  e2e_case_reference(&c);

  e2e_case_check(&c, "none", c.f, NULL);

  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, c.f, 1, SCH_ERRORS_FAST), MLC_OK);
  e2e_sched_log_t log;
  e2e_schedule_tiled(sch, &log);
  assert_true(log.n == 1 && log.blocks[0].parallel && log.blocks[0].vectorized);
  e2e_case_check(&c, "tiled+vectorized+parallel", sch_func(sch), sch);
  sch_free(sch);

  if (e2e_host_has("avx512vnni", "GMM uint8 x int8->int32 tensorized with " VNNI))
    check_tensorized(&c, VNNI, e2e_prepare_pack_b_16x4, "@llvm.x86.avx512.vpdpbusd.512");
  e2e_case_free(&c);
}

/* The library's int8 GMM multiplies int8 by int8: VNNI's uint8 operand does
 * not match it, so no int8 workload of the library is tensorized. */
static void test_vnni_does_not_apply_to_int8_by_int8(void **state) {
  (void)state;
  tir_func_t *f = e2e_workload("GMM", tir_dt_INT8());
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_FAST), MLC_OK);
  e2e_sched_log_t log;
  bool ok = e2e_schedule_tensorized(&sch, "C", VNNI, e2e_prepare_pack_b_16x4, &log);
  printf("GMM int8->int32: %s does not apply:\n%s", VNNI, log.blocks[0].skipped);
  assert_false(ok);
  assert_non_null(strstr(log.blocks[0].skipped, "dtype"));
  sch_free(sch);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define TEST_(e, name, prep) \
  {name " float32: tiled+tensorized with " FMA " matches the interpreter", check_fma, NULL, NULL, &fma_specs[FMA_##e]},
      FMA_WORKLOADS(TEST_)
#undef TEST_
      cmocka_unit_test(test_fma_does_not_apply_where_no_matmul_tile_exists),
      cmocka_unit_test(test_gmm_u8s8_under_all_three_schedules_matches_interpreter),
      cmocka_unit_test(test_vnni_does_not_apply_to_int8_by_int8),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
