/*
 * test_codegen_gpu_tensorcore.c - WMMA tensor cores (docs/compiler/gpu.md,
 * "Tensor cores"): a float16 GMM with float32 accumulation, tiled for warps
 * (one 16x16 tile per warp, warps on threadIdx.y, the 32 lanes of the
 * shared-memory fetches on threadIdx.x), staged through shared memory and
 * tensorized with the WMMA intrinsics of schedule/intrin/builtin_cuda.c.
 *
 * - the interpreter runs the tensorized program (tvm_* calls on tiles) and
 *   agrees exactly with the unscheduled GMM, and the lowered program agrees
 *   with both (32x32x32 on one warp; 64x64x64 and 64x32x96 on 2x2 warps;
 *   64x64x64 on 2 warps of 2x2 tiles each);
 * - the PTX has wmma.load.a/.b, wmma.mma and wmma.store and ptxas
 *   assembles it for sm_80 and sm_90 (skipped with a note without ptxas);
 * - rocm refuses it with MLC_EUNSUPPORTED saying why, and a WMMA call the
 *   lanes of a warp would run one by one (inside threadIdx.x) is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpu_test_helpers.h"

/* The trace steps both tensor-core schedules share: blocks and warps bound,
 * the accumulator and the fragments of A and B cached, A and B staged in
 * shared memory, the reduction's init split off. */
#define TC_STAGING \
    "l12 = sch.fuse(l4, l7, preserve_unit_iters=True)\n" \
    "sch.bind(loop=l12, thread_axis=\"blockIdx.x\")\n" \
    "l13 = sch.fuse(l5, l8, preserve_unit_iters=True)\n" \
    "sch.bind(loop=l13, thread_axis=\"threadIdx.y\")\n" \
    "b14 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"wmma.accumulator\")\n" \
    "sch.reverse_compute_at(block=b14, loop=l13, preserve_unit_loops=True, index=-1)\n" \
    "b17 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"wmma.matrix_a\", consumer_blocks=[b0])\n" \
    "sch.compute_at(block=b17, loop=l10, preserve_unit_loops=True, index=-1)\n" \
    "b18 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope=\"wmma.matrix_b\", consumer_blocks=[b0])\n" \
    "sch.compute_at(block=b18, loop=l10, preserve_unit_loops=True, index=-1)\n" \
    "b15 = sch.cache_read(block=b17, read_buffer_index=0, storage_scope=\"shared\", consumer_blocks=[b17])\n" \
    "sch.compute_at(block=b15, loop=l10, preserve_unit_loops=True, index=-1)\n" \
    "b16 = sch.cache_read(block=b18, read_buffer_index=0, storage_scope=\"shared\", consumer_blocks=[b18])\n" \
    "sch.compute_at(block=b16, loop=l10, preserve_unit_loops=True, index=-1)\n" \
    "b19 = sch.decompose_reduction(block=b0, loop=l10)\n" \
    "l20, l21, l22, l23, l24 = sch.get_loops(block=b15)\n" \
    "l25 = sch.fuse(l23, l24, preserve_unit_iters=True)\n"

/* GMM M x N x K (float16 -> float32): blocks of wm x wn warps, one 16x16
 * tile per warp, k in steps of 16 through shared tiles of A ((wm*16) x 16)
 * and B (16 x (wn*16)) fetched by all the block's threads. `lane_ext` is
 * the extent of the fetches' threadIdx.x loop (32; 16 to break it). */
static const char *tc_trace_fmt =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5, l6 = sch.split(loop=l1, factors=[None, %d, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "l7, l8, l9 = sch.split(loop=l2, factors=[None, %d, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "l10, l11 = sch.split(loop=l3, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l4, l7, l5, l8, l10, l6, l9, l11)\n"
    TC_STAGING
    "l26, l27, l28 = sch.split(loop=l25, factors=[None, %d, %d], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l27, thread_axis=\"threadIdx.y\")\n"
    "sch.bind(loop=l28, thread_axis=\"threadIdx.x\")\n"
    "l30, l31, l32, l33, l34 = sch.get_loops(block=b16)\n"
    "l35 = sch.fuse(l33, l34, preserve_unit_iters=True)\n"
    "l36, l37, l38 = sch.split(loop=l35, factors=[None, %d, %d], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l37, thread_axis=\"threadIdx.y\")\n"
    "sch.bind(loop=l38, thread_axis=\"threadIdx.x\")\n"
    "l40, l41, l42, l43 = sch.get_loops(block=b19)\n"
    "sch.tensorize(block_or_loop=l42, tensor_intrin=\"wmma_fill_16x16x16_f32\", preserve_unit_iters=True)\n"
    "l44, l45, l46, l47, l48 = sch.get_loops(block=b17)\n"
    "sch.tensorize(block_or_loop=l47, tensor_intrin=\"wmma_load_16x16x16_f16_a_shared\", preserve_unit_iters=True)\n"
    "l49, l50, l51, l52, l53 = sch.get_loops(block=b18)\n"
    "sch.tensorize(block_or_loop=l52, tensor_intrin=\"wmma_load_16x16x16_f16_b_shared\", preserve_unit_iters=True)\n"
    "l54, l55, l56, l57, l58, l59 = sch.get_loops(block=b0)\n"
    "sch.tensorize(block_or_loop=l57, tensor_intrin=\"wmma_sync_16x16x16_f16f16f32\", preserve_unit_iters=True)\n"
    "l60, l61, l62, l63 = sch.get_loops(block=b14)\n"
    "sch.tensorize(block_or_loop=l62, tensor_intrin=\"wmma_store_16x16x16_f32_global\", preserve_unit_iters=True)\n";

/* GMM 64x64x64 on 2 warps per block, each computing 2x2 tiles (a 32x32
 * accumulator, fragments of A and B holding 2 tiles each). */
static const char *tc_multi_tile_trace =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5, l6, l6b = sch.split(loop=l1, factors=[None, 2, 2, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "l7, l8, l9, l9b = sch.split(loop=l2, factors=[None, 1, 2, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "l10, l11 = sch.split(loop=l3, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l4, l7, l5, l8, l10, l6, l9, l6b, l9b, l11)\n"
    TC_STAGING
    "l26, l27, l28 = sch.split(loop=l25, factors=[None, 2, 32], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l27, thread_axis=\"threadIdx.y\")\n"
    "sch.bind(loop=l28, thread_axis=\"threadIdx.x\")\n"
    "l30, l31, l32, l33, l34 = sch.get_loops(block=b16)\n"
    "l35 = sch.fuse(l33, l34, preserve_unit_iters=True)\n"
    "l36, l37, l38 = sch.split(loop=l35, factors=[None, 2, 32], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.bind(loop=l37, thread_axis=\"threadIdx.y\")\n"
    "sch.bind(loop=l38, thread_axis=\"threadIdx.x\")\n"
    "l40, l41, l42, l43, l44, l45 = sch.get_loops(block=b19)\n"
    "sch.tensorize(block_or_loop=l44, tensor_intrin=\"wmma_fill_16x16x16_f32\", preserve_unit_iters=True)\n"
    "l46, l47, l48, l49, l50 = sch.get_loops(block=b17)\n"
    "l51, l52 = sch.split(loop=l49, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.tensorize(block_or_loop=l52, tensor_intrin=\"wmma_load_16x16x16_f16_a_shared\", preserve_unit_iters=True)\n"
    "l53, l54, l55, l56, l57 = sch.get_loops(block=b18)\n"
    "l58, l59 = sch.split(loop=l57, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l58, l56)\n"
    "sch.tensorize(block_or_loop=l56, tensor_intrin=\"wmma_load_16x16x16_f16_b_shared\", preserve_unit_iters=True)\n"
    "l60, l61, l62, l63, l64, l65, l66, l67 = sch.get_loops(block=b0)\n"
    "sch.tensorize(block_or_loop=l65, tensor_intrin=\"wmma_sync_16x16x16_f16f16f32\", preserve_unit_iters=True)\n"
    "l70, l71, l72, l73 = sch.get_loops(block=b14)\n"
    "l74, l75 = sch.split(loop=l72, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "l76, l77 = sch.split(loop=l73, factors=[None, 16], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l74, l76, l75, l77)\n"
    "sch.tensorize(block_or_loop=l75, tensor_intrin=\"wmma_store_16x16x16_f32_global\", preserve_unit_iters=True)\n";

typedef struct {
  int64_t m, n, k;
  int wm, wn; /* warps per block along M and N */
} tc_shape_t;

/* The GMM (*f, owned by the caller) scheduled by the trace py. */
static sch_t *gmm_scheduled(tir_func_t **f, const int64_t *shape, const char *py) {
  assert_int_equal(tir_workload_build(f, "GMM", shape, 3, tir_dt_FLOAT16(), tir_dt_FLOAT32()), MLC_OK);
  return schedule_py(*f, py);
}

/* The GMM and its tensorized schedule, one tile per warp. */
static sch_t *tc_gmm(tir_func_t **f, const tc_shape_t *s, int lane_ext) {
  int64_t shape[3] = {s->m, s->n, s->k};
  char py[8192];
  int warps = s->wm * s->wn;
  snprintf(py, sizeof py, tc_trace_fmt, s->wm, s->wn, warps, lane_ext, warps, lane_ext);
  return gmm_scheduled(f, shape, py);
}

/* The unscheduled and the tensorized GMM in the interpreter, on the same
 * inputs: equal to the last bit (the same sums in the same order). */
static void check_tensorized_keeps_meaning(tir_func_t *f, tir_func_t *tensorized) {
  cgt_args_t a, b;
  cgt_args_init(&a, f, NULL, 0, 11);
  cgt_args_init(&b, tensorized, NULL, 0, 11);
  cgt_run_interp(&a);
  cgt_run_interp(&b);
  for (size_t k = 0; k < a.count[2]; k++) {
    double want = cgt_get(a.in[2].data, a.in[2].dtype, k), got = cgt_get(b.in[2].data, b.in[2].dtype, k);
    if (want != got) {
      fprintf(stderr, "C[%zu]: tensorized %.9g, unscheduled %.9g\n", k, got, want);
      fail();
    }
  }
  cgt_args_free(&a);
  cgt_args_free(&b);
}

static const tc_shape_t shapes[] = {
    {32, 32, 32, 1, 1}, /* one warp per block */
    {64, 64, 64, 2, 2}, /* 2x2 warps */
    {64, 32, 96, 2, 2},
};

static void test_tensorized_gmm_keeps_its_meaning_through_lowering(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    tir_func_t *f = NULL;
    sch_t *sch = tc_gmm(&f, &shapes[i], 32);
    check_tensorized_keeps_meaning(f, sch_func(sch));
    check_lowered(sch_func(sch), 0.0);
    sch_free(sch);
    tir_func_free(f);
  }
}

/* Fragment buffers are laid out tile by tile and the shared tiles'
 * strides follow their compaction: the lowered program says so. */
static void test_lowering_gives_fragments_whole_tiles_and_compact_strides(void **state) {
  (void)state;
  tir_func_t *f = NULL, *low = NULL;
  sch_t *sch = tc_gmm(&f, &shapes[1], 32);
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, "cuda -arch=sm_80"), MLC_OK);
  assert_int_equal(mlc_lower(&low, sch_func(sch), &t, NULL), MLC_OK);
  char *text = tir_print_func(low);
  assert_non_null(text);
  assert_non_null(strstr(text, "T.decl_buffer((256,), scope=\"wmma.accumulator\")"));
  assert_non_null(strstr(text, "T.decl_buffer((256,), \"float16\", scope=\"wmma.matrix_a\")"));
  /* A's shared tile is 32x16, B's 16x32: their row strides */
  assert_non_null(strstr(text, "A_shared[i_1_j_1_fused // 2 * 256], 16, \"row_major\")"));
  assert_non_null(strstr(text, "], 32, \"row_major\")"));
  mlc_free(text);
  tir_func_free(low);
  sch_free(sch);
  tir_func_free(f);
}

static void test_tensorized_gmm_ptx_has_wmma_and_assembles(void **state) {
  (void)state;
  for (size_t i = 0; i < 2; i++) {
    tir_func_t *f = NULL;
    sch_t *sch = tc_gmm(&f, &shapes[i], 32);
    assert_true(check_ptx_count(sch_func(sch), "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32") >= 1);
    char *ptx = asm_for(sch_func(sch), "cuda -arch=sm_80");
    assert_non_null(strstr(ptx, "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16"));
    assert_non_null(strstr(ptx, "wmma.load.b.sync.aligned.row.m16n16k16.shared.f16"));
    assert_non_null(strstr(ptx, "wmma.store.d.sync.aligned.row.m16n16k16"));
    assert_true(count(ptx, "bar.sync") >= 2);
    assert_null(strstr(ptx, ".local")); /* fragments in registers */
    mlc_free(ptx);
    sch_free(sch);
    tir_func_free(f);
  }
}

/* Several tiles per warp: fragment buffers of several tiles (laid out tile
 * by tile), loops of WMMA calls over them, all in registers. */
static void test_warps_with_several_tiles_lower_right_and_keep_fragments_in_registers(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  int64_t shape[3] = {64, 64, 64};
  sch_t *sch = gmm_scheduled(&f, shape, tc_multi_tile_trace);
  check_tensorized_keeps_meaning(f, sch_func(sch));
  check_lowered(sch_func(sch), 0.0);
  assert_int_equal(check_ptx_count(sch_func(sch), "wmma.mma.sync"), 4); /* the 2x2 tiles, unrolled */
  char *ptx = asm_for(sch_func(sch), "cuda -arch=sm_80");
  assert_null(strstr(ptx, ".local"));
  mlc_free(ptx);
  sch_free(sch);
  tir_func_free(f);
}

static void test_tensorized_gmm_is_refused_on_rocm_and_with_half_warps(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  sch_t *sch = tc_gmm(&f, &shapes[0], 32);
  expect_refused(sch_func(sch), "rocm -mcpu=gfx90a", "tensor-core intrinsics (WMMA) are NVIDIA instructions");
  expect_refused(sch_func(sch), "rocm -mcpu=gfx90a", "MFMA is not generated");
  sch_free(sch);
  tir_func_free(f);
  /* 16 lanes on threadIdx.x: a warp would span two threadIdx.y values */
  sch = tc_gmm(&f, &shapes[0], 16);
  check_lowered(sch_func(sch), 0.0); /* still the same program */
  expect_refused(sch_func(sch), "cuda -arch=sm_80", "constant multiple of the warp size 32 (it is 16)");
  sch_free(sch);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tensorized_gmm_keeps_its_meaning_through_lowering),
      cmocka_unit_test(test_lowering_gives_fragments_whole_tiles_and_compact_strides),
      cmocka_unit_test(test_tensorized_gmm_ptx_has_wmma_and_assembles),
      cmocka_unit_test(test_warps_with_several_tiles_lower_right_and_keep_fragments_in_registers),
      cmocka_unit_test(test_tensorized_gmm_is_refused_on_rocm_and_with_half_warps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
