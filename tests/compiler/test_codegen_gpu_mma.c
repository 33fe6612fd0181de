/*
 * test_codegen_gpu_mma.c - mma.sync tensor cores (docs/compiler/gpu.md,
 * "mma.sync"): a float16 GMM with B transposed (C = A B^T, float32
 * accumulation), one 16x8 tile per warp, staged through shared memory,
 * its operands in "warp" buffers of the ldmatrix/mma layout and
 * tensorized with the five mma intrinsics of schedule/intrin/builtin_cuda.c.
 *
 * - the PTX has ldmatrix .x4 (A) and .x2 (B) from shared memory and
 *   mma.sync m16n8k16, keeps the warp buffers in registers (no .local), and
 *   ptxas assembles it for sm_80 and sm_90 (skipped with a note without
 *   ptxas); with 2x2 warps per block and with two tiles per warp too;
 * - sm_75 (no m16n8k16 for float16) and rocm are refused saying why;
 * - a warp buffer read by another lane than the one whose registers it
 *   names (an untensorized warp-layout block) is refused, not miscompiled.
 * The numbers (interpreter runs of the scheduled and lowered program
 * against the unscheduled one) are tests/tir/test_interp_mma.c's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpu_test_helpers.h"
#include "mma_gmm.h"

/* GMM-NT m x n x k on blocks of wm x wn warps of tm tiles; tensorized or not. */
static sch_t *mma_gmm(tir_func_t **f, int m, int n, int k, int wm, int tm, int wn, bool tensorize) {
  char src[2048], py[8192];
  snprintf(src, sizeof src, MMA_GMM_NT_FMT, m, k, n, k, m, n, m, n, k);
  assert_int_equal(tir_parse_func(f, src, strlen(src), "gmm_nt.py", NULL), MLC_OK);
  snprintf(py, sizeof py, MMA_TRACE_FMT, wm, tm, wn, tensorize ? MMA_TENSORIZE : "", wm * wn, wm * wn);
  return schedule_py(*f, py);
}

static void free_gmm(sch_t *sch, tir_func_t *f) {
  sch_free(sch);
  tir_func_free(f);
}

static void test_mma_gmm_ptx_has_ldmatrix_and_mma_and_assembles(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  sch_t *sch = mma_gmm(&f, 32, 16, 32, 2, 1, 1, true);
  /* k in 2 steps of 16: two mma per warp, unrolled or in a loop */
  assert_true(check_ptx_count(sch_func(sch), "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") >= 1);
  char *ptx = asm_for(sch_func(sch), "cuda -arch=sm_80");
  assert_non_null(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
  assert_non_null(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x2.shared.b16"));
  assert_true(count(ptx, "bar.sync") >= 2);
  assert_null(strstr(ptx, ".local")); /* warp buffers in registers */
  mlc_free(ptx);
  free_gmm(sch, f);
}

/* 2x2 warps per block and several blocks (64x32x64); one warp of two
 * tiles (warp buffers of two tiles: registers tile * W + j). */
static void test_mma_gmm_on_2x2_warps_and_with_two_tiles_per_warp_stays_in_registers(void **state) {
  (void)state;
  static const struct { int m, n, k, wm, tm, wn; } cases[] = {{64, 32, 64, 2, 1, 2}, {64, 16, 32, 1, 2, 1}};
  for (int i = 0; i < 2; i++) {
    tir_func_t *f = NULL;
    sch_t *sch = mma_gmm(&f, cases[i].m, cases[i].n, cases[i].k, cases[i].wm, cases[i].tm, cases[i].wn, true);
    assert_true(check_ptx_count(sch_func(sch), "mma.sync.aligned.m16n8k16") >= 1);
    char *ptx = asm_for(sch_func(sch), "cuda -arch=sm_90");
    assert_null(strstr(ptx, ".local"));
    mlc_free(ptx);
    free_gmm(sch, f);
  }
}

static void test_mma_gmm_is_refused_before_sm_80_and_on_rocm(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  sch_t *sch = mma_gmm(&f, 32, 16, 32, 2, 1, 1, true);
  expect_refused(sch_func(sch), "cuda -arch=sm_75", "needs sm_80 or newer");
  expect_refused(sch_func(sch), "rocm -mcpu=gfx90a", "mma.sync and ldmatrix are NVIDIA instructions");
  free_gmm(sch, f);
}

/* Without tensorize the warp-layout blocks copy element by element across
 * lanes (lane 0 reads what lane 5 holds): refused, naming the buffer. */
static void test_warp_buffer_read_across_lanes_is_refused(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  sch_t *sch = mma_gmm(&f, 32, 16, 32, 2, 1, 1, false);
  expect_refused(sch_func(sch), "cuda -arch=sm_80", "warp buffer");
  free_gmm(sch, f);
}

/* A warp buffer of 32 lanes x 4 registers written by each lane at
 * register 3 and read back at `idx`. */
static tir_func_t *warp_roundtrip(const char *idx) {
  char src[1024];
  snprintf(src, sizeof src,
           "@T.prim_func\n"
           "def main(A: T.Buffer((32,), \"float32\"), B: T.Buffer((32,), \"float32\")):\n"
           "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
           "    for ty in T.thread_binding(1, thread=\"threadIdx.y\"):\n"
           "        W = T.decl_buffer((128,), scope=\"warp\")\n"
           "        for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
           "            W[tx * 4 + 3] = A[tx]\n"
           "        for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
           "            B[tx] = W[%s]\n", idx);
  tir_func_t *f = NULL;
  assert_int_equal(tir_parse_func(&f, src, strlen(src), "warp.py", NULL), MLC_OK);
  return f;
}

/* The lane's own register builds (in registers, compaction leaves the
 * lanes alone); the next lane's, a lane-permuted index, and one outside
 * every lane loop are refused, each saying why. */
static void test_warp_buffer_accesses_must_stay_in_the_lane(void **state) {
  (void)state;
  tir_func_t *f = warp_roundtrip("tx * 4 + 3");
  char *ptx = asm_for(f, "cuda -arch=sm_80");
  assert_null(strstr(ptx, ".local"));
  mlc_free(ptx);
  tir_func_free(f);
  static const struct { const char *idx, *why; } bad[] = {
      {"tx * 4 + 4", "W[tx * 4 + 4]: its elements are not proven to stay within the lane's registers"},
      {"(tx + 1) % 32 * 4", "the index is not linear in the lane"},
      {"ty * 4", "not the lane times a constant number of registers"},
  };
  for (int i = 0; i < 3; i++) {
    f = warp_roundtrip(bad[i].idx);
    expect_refused(f, "cuda -arch=sm_80", bad[i].why);
    tir_func_free(f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mma_gmm_ptx_has_ldmatrix_and_mma_and_assembles),
      cmocka_unit_test(test_mma_gmm_on_2x2_warps_and_with_two_tiles_per_warp_stays_in_registers),
      cmocka_unit_test(test_mma_gmm_is_refused_before_sm_80_and_on_rocm),
      cmocka_unit_test(test_warp_buffer_read_across_lanes_is_refused),
      cmocka_unit_test(test_warp_buffer_accesses_must_stay_in_the_lane),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
