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

/* C[M, N] = A[M, K] B[N, K]^T, float16 -> float32. */
static const char *gmm_nt_fmt =
    "@T.prim_func\n"
    "def main(A: T.Buffer((%d, %d), \"float16\"), B: T.Buffer((%d, %d), \"float16\"), C: T.Buffer((%d, %d), \"float32\")):\n"
    "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "    for i, j, k in T.grid(%d, %d, %d):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + T.Cast(\"float32\", A[vi, vk]) * T.Cast(\"float32\", B[vj, vk])\n";

/* Blocks of wm x wn warps, tm 16x8 tiles each (along M), k in steps of 16: A and B
 * staged in shared memory by all the block's threads (wm*wn warps of 32
 * lanes), then into warp buffers by ldmatrix, multiplied by mma.sync into
 * a warp accumulator, stored by the lanes. */
static const char *mma_trace_fmt =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5, l6, l6b = sch.split(loop=l1, factors=[None, %d, %d, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "l7, l8, l9 = sch.split(loop=l2, factors=[None, %d, 8], preserve_unit_iters=True, disable_predication=False)\n"
    "l10, l11 = sch.split(loop=l3, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l4, l7, l5, l8, l10, l6, l6b, l9, l11)\n"
    "l12 = sch.fuse(l4, l7, preserve_unit_iters=True)\n"
    "sch.bind(loop=l12, thread_axis=\"blockIdx.x\")\n"
    "l13 = sch.fuse(l5, l8, preserve_unit_iters=True)\n"
    "sch.bind(loop=l13, thread_axis=\"threadIdx.y\")\n"
    "b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"warp\")\n"
    "sch.reverse_compute_at(block=b14, loop=l13, preserve_unit_loops=True, index=-1)\n"
    "b17 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"warp\", consumer_blocks=[b0])\n"
    "sch.compute_at(block=b17, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "b18 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope=\"warp\", consumer_blocks=[b0])\n"
    "sch.compute_at(block=b18, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "b15 = sch.cache_read(block=b17, read_buffer_index=0, storage_scope=\"shared\", consumer_blocks=[b17])\n"
    "sch.compute_at(block=b15, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "b16 = sch.cache_read(block=b18, read_buffer_index=0, storage_scope=\"shared\", consumer_blocks=[b18])\n"
    "sch.compute_at(block=b16, loop=l10, preserve_unit_loops=True, index=-1)\n"
    "b19 = sch.decompose_reduction(block=b0, loop=l10)\n"
    "sch.transform_layout(block=b17, buffer=(\"write\", 0), index_map=lambda i, j: (i // 16, j // 16, i %% 8 * 4 + j %% 8 // 2, j %% 16 // 8 * 4 + i %% 16 // 8 * 2 + j %% 2))\n"
    "sch.transform_layout(block=b18, buffer=(\"write\", 0), index_map=lambda n, k: (n // 8, k // 16, n %% 8 * 4 + k %% 8 // 2, k %% 16 // 8 * 2 + k %% 2))\n"
    "sch.transform_layout(block=b14, buffer=(\"read\", 0), index_map=lambda i, j: (i // 16, j // 8, i %% 8 * 4 + j %% 8 // 2, i %% 16 // 8 * 2 + j %% 2))\n"
    "%s"
    "l60, l61, l62, l63, l64 = sch.get_loops(block=b15)\n"
    "l65 = sch.fuse(l63, l64, preserve_unit_iters=True)\n"
    "l66, l67, l68 = sch.split(loop=l65, factors=[None, %d, 32], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l67, thread_axis=\"threadIdx.y\")\n"
    "sch.bind(loop=l68, thread_axis=\"threadIdx.x\")\n"
    "l70, l71, l72, l73, l74 = sch.get_loops(block=b16)\n"
    "l75 = sch.fuse(l73, l74, preserve_unit_iters=True)\n"
    "l76, l77, l78 = sch.split(loop=l75, factors=[None, %d, 32], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l77, thread_axis=\"threadIdx.y\")\n"
    "sch.bind(loop=l78, thread_axis=\"threadIdx.x\")\n";

/* The five tensorize steps (left out: the warp-layout blocks stay plain). */
static const char *mma_tensorize =
    "l30, l31, l32, l33, l34 = sch.get_loops(block=b17)\n"
    "l30b, l30c = sch.split(loop=l33, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.tensorize(block_or_loop=l30c, tensor_intrin=\"mma_ldmatrix_a_16x16_f16\")\n"
    "l35, l36, l37, l38, l39 = sch.get_loops(block=b18)\n"
    "sch.tensorize(block_or_loop=l38, tensor_intrin=\"mma_ldmatrix_b_8x16_f16\")\n"
    "l40, l41, l42, l43, l44, l45, l45b = sch.get_loops(block=b0)\n"
    "sch.tensorize(block_or_loop=l44, tensor_intrin=\"mma_sync_m16n8k16_f16f16f32\")\n"
    "l46, l47, l48, l48b, l49 = sch.get_loops(block=b19)\n"
    "sch.tensorize(block_or_loop=l48b, tensor_intrin=\"mma_fill_16x8_f32\")\n"
    "l50, l51, l52, l53 = sch.get_loops(block=b14)\n"
    "l52b, l52c = sch.split(loop=l52, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.tensorize(block_or_loop=l52c, tensor_intrin=\"mma_store_16x8_f32_global\")\n";

/* GMM-NT m x n x k on blocks of wm x wn warps of tm tiles; tensorized or not. */
static sch_t *mma_gmm(tir_func_t **f, int m, int n, int k, int wm, int tm, int wn, bool tensorize) {
  char src[2048], py[8192];
  snprintf(src, sizeof src, gmm_nt_fmt, m, k, n, k, m, n, m, n, k);
  assert_int_equal(tir_parse_func(f, src, strlen(src), "gmm_nt.py", NULL), MLC_OK);
  snprintf(py, sizeof py, mma_trace_fmt, wm, tm, wn, tensorize ? mma_tensorize : "", wm * wn, wm * wn);
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
  mlc_module_t *m = build_for(sch_func(sch), "cuda -arch=sm_80");
  char *ptx = mlc_module_text(m, MLC_EMIT_ASM);
  assert_non_null(ptx);
  assert_non_null(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
  assert_non_null(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x2.shared.b16"));
  assert_true(count(ptx, "bar.sync") >= 2);
  assert_null(strstr(ptx, ".local")); /* warp buffers in registers */
  mlc_free(ptx);
  mlc_module_free(m);
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
    mlc_module_t *m = build_for(sch_func(sch), "cuda -arch=sm_90");
    char *ptx = mlc_module_text(m, MLC_EMIT_ASM);
    assert_non_null(ptx);
    assert_null(strstr(ptx, ".local"));
    mlc_free(ptx);
    mlc_module_free(m);
    free_gmm(sch, f);
  }
}

/* Builds for target and expects MLC_EUNSUPPORTED with `message` in it. */
static void expect_refused(tir_func_t *f, const char *target_str, const char *message) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, target_str), MLC_OK);
  mlc_module_t *m = NULL;
  assert_int_equal(mlc_build(&m, &f, 1, &t, NULL), MLC_EUNSUPPORTED);
  assert_null(m);
  if (!strstr(mlc_error_last(), message)) {
    fprintf(stderr, "error: %s\nwanted: %s\n", mlc_error_last(), message);
    fail();
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
  mlc_module_t *m = build_for(f, "cuda -arch=sm_80");
  char *ptx = mlc_module_text(m, MLC_EMIT_ASM);
  assert_non_null(ptx);
  assert_null(strstr(ptx, ".local"));
  mlc_free(ptx);
  mlc_module_free(m);
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
