/*
 * test_intrin.c - the tensor intrinsic registry and the built-in
 * intrinsics: registration on first use (from several threads at once), the
 * names and shapes of the built-ins, what registration rejects, and that the
 * CUDA intrinsics (WMMA and mma.sync in the warp layout) tensorize the tiles
 * they describe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>

#include "sched_testing.h"

static const char *const BUILTINS[] = {
    "avx512_fp32_fma_16x4",
    "x86_vnni_u8s8s32_16x4",
    "mma_ldmatrix_a_16x16_f16",
    "mma_ldmatrix_b_8x16_f16",
    "mma_sync_m16n8k16_f16f16f32",
    "mma_store_16x8_f32_global",
    "mma_fill_16x8_f32",
    "wmma_load_16x16x16_f16_a_shared",
    "wmma_load_16x16x16_f16_b_shared",
    "wmma_sync_16x16x16_f16f16f32",
    "wmma_fill_16x16x16_f32",
    "wmma_store_16x16x16_f32_global",
    "wmma_store_16x16x16_f32_shared",
};
#define NBUILTINS ((int)(sizeof(BUILTINS) / sizeof(BUILTINS[0])))

static void *lookup_thread(void *arg) {
  *(const sch_intrin_t **)arg = sch_intrin_get("x86_vnni_u8s8s32_16x4");
  return NULL;
}

/* Runs first: the built-ins get registered exactly once however many
 * threads race for them. */
static void builtins_register_once_under_concurrent_first_use(void **state) {
  pthread_t threads[4];
  const sch_intrin_t *got[4] = {0};
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&threads[i], NULL, lookup_thread, &got[i]), 0);
  for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
  assert_non_null(got[0]);
  for (int i = 1; i < 4; i++) assert_ptr_equal(got[i], got[0]);
  int n;
  const char *const *names = sch_intrin_names(&n);
  assert_int_equal(n, NBUILTINS);
  for (int i = 0; i < NBUILTINS; i++) assert_string_equal(names[i], BUILTINS[i]);
  assert_null(names[n]);
}

static bool count_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  (*(int *)v->payload)++;
  return true;
}

static int count_blocks(tir_stmt_t *s) {
  int n = 0;
  tir_visitor_t v = {.block = count_block, .payload = &n};
  tir_visit_stmt(&v, s);
  return n;
}

/* Every built-in: desc and impl take the same buffers, their bodies are root
 * blocks, the description holds one block to match, and both print back to
 * the text they were parsed from (they are written in canonical form). */
static void builtins_are_well_formed_and_canonical(void **state) {
  for (int i = 0; i < NBUILTINS; i++) {
    const sch_intrin_t *in = sch_intrin_get(BUILTINS[i]);
    assert_non_null(in);
    assert_string_equal(in->name, BUILTINS[i]);
    assert_int_equal(in->desc->nparams, in->impl->nparams);
    for (int p = 0; p < in->desc->nparams; p++) {
      assert_true(tir_dtype_eq(in->desc->buffer_map[p]->dtype, in->impl->buffer_map[p]->dtype));
      assert_string_equal(in->desc->buffer_map[p]->scope, in->impl->buffer_map[p]->scope);
    }
    assert_int_equal(in->desc->body->kind, TIR_BLOCK_REALIZE);
    assert_int_equal(in->impl->body->kind, TIR_BLOCK_REALIZE);
    assert_int_equal(count_blocks(in->desc->body->u.realize.block->body), 1);
    assert_int_equal(tir_verify(in->desc, NULL), MLC_OK);
    assert_int_equal(tir_verify(in->impl, NULL), MLC_OK);
    for (int f = 0; f < 2; f++) {
      const tir_func_t *fn = f ? in->impl : in->desc;
      char *text = tir_print_func(fn);
      tir_func_t *back = st_parse(text);
      assert_true(tir_func_equal(fn, back, NULL, 0));
      tir_func_free(back);
      mlc_free(text);
    }
  }
  assert_null(sch_intrin_get("no_such_intrinsic"));
  assert_null(sch_intrin_get(NULL));
}

static const char *const COPY4 =
    "@T.prim_func\n"
    "def copy4(a: T.handle, b: T.handle):\n"
    "    A = T.match_buffer(a, (4,), offset_factor=1)\n"
    "    B = T.match_buffer(b, (4,), offset_factor=1)\n"
    "    with T.block(\"root\"):\n"
    "        T.reads(A[0:4])\n"
    "        T.writes(B[0:4])\n"
    "        for i in range(4):\n"
    "            with T.block(\"copy\"):\n"
    "                vi = T.axis.spatial(4, i)\n"
    "                B[vi] = A[vi]\n";

static void register_rejects_taken_names_bad_text_and_mismatched_params(void **state) {
  int n0;
  sch_intrin_names(&n0);
  assert_int_equal(sch_intrin_register("test_copy4", COPY4, COPY4), MLC_OK);
  const sch_intrin_t *in = sch_intrin_get("test_copy4");
  assert_non_null(in);
  int n;
  const char *const *names = sch_intrin_names(&n);
  assert_int_equal(n, n0 + 1);
  assert_string_equal(names[n - 1], "test_copy4");

  assert_int_equal(sch_intrin_register("test_copy4", COPY4, COPY4), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "intrinsic test_copy4 is already registered"));
  assert_int_equal(sch_intrin_register("avx512_fp32_fma_16x4", COPY4, COPY4), MLC_EINVAL);

  assert_int_equal(sch_intrin_register("test_bad", "@T.prim_func\ndef f(:\n", COPY4), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "<intrinsic test_bad description>:2:"));

  static const char *const ONE =
      "@T.prim_func\n"
      "def one(a: T.handle):\n"
      "    A = T.match_buffer(a, (4,))\n"
      "    with T.block(\"root\"):\n"
      "        T.reads()\n"
      "        T.writes(A[0:4])\n"
      "        A[0] = T.float32(0)\n";
  assert_int_equal(sch_intrin_register("test_params", COPY4, ONE), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "the description has 2 parameters, the implementation 1"));

  static const char *const NO_ROOT =
      "@T.prim_func\n"
      "def f(A: T.Buffer((4,), \"float32\")):\n"
      "    A[0] = T.float32(0)\n";
  assert_int_equal(sch_intrin_register("test_noroot", NO_ROOT, NO_ROOT), MLC_EINVAL);
  assert_non_null(strstr(mlc_error_last(), "the description's body is not a root block"));
  assert_null(sch_intrin_get("test_bad"));
  assert_null(sch_intrin_get("test_params"));
  sch_intrin_names(&n);
  assert_int_equal(n, n0 + 1);
  /* The name list handed out before is still valid. */
  assert_string_equal(names[n0], "test_copy4");
}

static sch_rv_t first_loop(sch_t *sch, const char *block, int index) {
  sch_rv_t b;
  const sch_rv_t *loops;
  int n;
  assert_int_equal(sch_get_block(sch, &b, block), MLC_OK);
  assert_int_equal(sch_get_loops(sch, &loops, &n, b), MLC_OK);
  assert_true(index < n);
  return loops[index];
}

static void wmma_sync_tensorizes_a_fragment_tile(void **state) {
  static const char *const FRAG =
      "@T.prim_func\n"
      "def main(C: T.Buffer((32, 32), \"float32\")):\n"
      "    Af = T.alloc_buffer((32, 32), \"float16\", scope=\"wmma.matrix_a\")\n"
      "    Bf = T.alloc_buffer((32, 32), \"float16\", scope=\"wmma.matrix_b\")\n"
      "    Cf = T.alloc_buffer((32, 32), scope=\"wmma.accumulator\")\n"
      "    for i_0, j_0, k_0, i_1, j_1, k_1 in T.grid(2, 2, 2, 16, 16, 16):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(32, i_0 * 16 + i_1)\n"
      "            vj = T.axis.spatial(32, j_0 * 16 + j_1)\n"
      "            vk = T.axis.reduce(32, k_0 * 16 + k_1)\n"
      "            Cf[vi, vj] = Cf[vi, vj] + T.Cast(\"float32\", Af[vi, vk]) * T.Cast(\"float32\", Bf[vk, vj])\n";
  sch_t *sch = st_schedule(FRAG);
  assert_int_equal(sch_tensorize(sch, first_loop(sch, "C", 3), "wmma_sync_16x16x16_f16f16f32", true), MLC_OK);
  st_assert_script(sch_func(sch),
                   "# from tvm.script import tir as T\n"
                   "\n"
                   "@T.prim_func\n"
                   "def main(C: T.Buffer((32, 32), \"float32\")):\n"
                   "    # with T.block(\"root\"):\n"
                   "    Af = T.alloc_buffer((32, 32), \"float16\", scope=\"wmma.matrix_a\")\n"
                   "    Bf = T.alloc_buffer((32, 32), \"float16\", scope=\"wmma.matrix_b\")\n"
                   "    Cf = T.alloc_buffer((32, 32), scope=\"wmma.accumulator\")\n"
                   "    for i_0, j_0, k_0 in T.grid(2, 2, 2):\n"
                   "        with T.block(\"C_o\"):\n"
                   "            vi_o, vj_o, vk_o = T.axis.remap(\"SSR\", [i_0, j_0, k_0])\n"
                   "            T.reads(Cf[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16], Af[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16], Bf[vk_o * 16:vk_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
                   "            T.writes(Cf[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
                   "            A = T.match_buffer(Af[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16], (16, 16), \"float16\", scope=\"wmma.matrix_a\", align=64, offset_factor=16)\n"
                   "            B = T.match_buffer(Bf[vk_o * 16:vk_o * 16 + 16, vj_o * 16:vj_o * 16 + 16], (16, 16), \"float16\", scope=\"wmma.matrix_b\", align=64, offset_factor=16)\n"
                   "            C_1 = T.match_buffer(Cf[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16], (16, 16), scope=\"wmma.accumulator\", align=64, offset_factor=16)\n"
                   "            T.call_extern(\"handle\", \"tvm_mma_sync\", C_1[0, 0], A[0, 0], B[0, 0], C_1[0, 0])\n");
  sch_free(sch);
}

/* The warp layout: a 16x16 shared tile loaded into a 32x8 warp buffer in
 * mma.sync's A-fragment order matches mma_ldmatrix_a_16x16_f16; so does the
 * fragment product with mma_sync_m16n8k16_f16f16f32. */
static void mma_ldmatrix_and_sync_tensorize_warp_layout_tiles(void **state) {
  static const char *const WARP =
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 16), \"float16\")):\n"
      "    A_shared = T.alloc_buffer((16, 16), \"float16\", scope=\"shared\")\n"
      "    A_warp = T.alloc_buffer((32, 8), \"float16\", scope=\"warp\")\n"
      "    B_warp = T.alloc_buffer((32, 4), \"float16\", scope=\"warp\")\n"
      "    C_warp = T.alloc_buffer((32, 4), scope=\"warp\")\n"
      "    for i, j in T.grid(16, 16):\n"
      "        with T.block(\"A_warp\"):\n"
      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "            A_warp[vi % 8 * 4 + vj % 8 // 2, vj // 8 * 4 + vi // 8 * 2 + vj % 2] = A_shared[vi, vj]\n"
      "    for i, j, k in T.grid(16, 8, 16):\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            C_warp[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2] = C_warp[vi % 8 * 4 + vj // 2, vi // 8 * 2 + vj % 2] + T.Cast(\"float32\", A_warp[vi % 8 * 4 + vk % 8 // 2, vk // 8 * 4 + vi // 8 * 2 + vk % 2]) * T.Cast(\"float32\", B_warp[vj * 4 + vk % 8 // 2, vk // 8 * 2 + vk % 2])\n";
  sch_t *sch = st_schedule(WARP);
  assert_int_equal(sch_tensorize(sch, first_loop(sch, "A_warp", 0), "mma_ldmatrix_a_16x16_f16", true), MLC_OK);
  assert_int_equal(sch_tensorize(sch, first_loop(sch, "C", 0), "mma_sync_m16n8k16_f16f16f32", true), MLC_OK);
  st_assert_script(sch_func(sch),
                   "# from tvm.script import tir as T\n"
                   "\n"
                   "@T.prim_func\n"
                   "def main(A: T.Buffer((16, 16), \"float16\")):\n"
                   "    # with T.block(\"root\"):\n"
                   "    A_shared = T.alloc_buffer((16, 16), \"float16\", scope=\"shared\")\n"
                   "    A_warp = T.alloc_buffer((32, 8), \"float16\", scope=\"warp\")\n"
                   "    B_warp = T.alloc_buffer((32, 4), \"float16\", scope=\"warp\")\n"
                   "    C_warp = T.alloc_buffer((32, 4), scope=\"warp\")\n"
                   "    with T.block(\"A_warp_o\"):\n"
                   "        vi_o = T.axis.spatial(1, 0)\n"
                   "        vj_o = T.axis.spatial(1, 0)\n"
                   "        T.reads(A_shared[0:16, 0:16])\n"
                   "        T.writes(A_warp[0:32, 0:8])\n"
                   "        s0 = T.int32()\n"
                   "        A_1 = T.match_buffer(A_shared[0:16, 0:16], (16, 16), \"float16\", strides=(s0, 1), scope=\"shared\", offset_factor=16)\n"
                   "        A_warp_1 = T.match_buffer(A_warp[0:32, 0:8], (32, 8), \"float16\", scope=\"warp\", offset_factor=16)\n"
                   "        for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
                   "            A_warp_1[tx, T.Ramp(0, 1, 8)] = T.call_extern(\"float16x8\", \"ptx_ldmatrix_x4\", A_1[tx % 16, T.Ramp(tx // 16 * 8, 1, 8)])\n"
                   "    with T.block(\"C_o\"):\n"
                   "        vi_o = T.axis.spatial(1, 0)\n"
                   "        vj_o = T.axis.spatial(1, 0)\n"
                   "        vk_o = T.axis.reduce(1, 0)\n"
                   "        T.reads(C_warp[0:32, 0:4], A_warp[0:32, 0:8], B_warp[0:32, 0:4])\n"
                   "        T.writes(C_warp[0:32, 0:4])\n"
                   "        A_2 = T.match_buffer(A_warp[0:32, 0:8], (32, 8), \"float16\", scope=\"warp\", offset_factor=16)\n"
                   "        B = T.match_buffer(B_warp[0:32, 0:4], (32, 4), \"float16\", scope=\"warp\", offset_factor=16)\n"
                   "        C = T.match_buffer(C_warp[0:32, 0:4], (32, 4), scope=\"warp\", offset_factor=16)\n"
                   "        for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
                   "            C[tx, T.Ramp(0, 1, 4)] = T.call_extern(\"float32x4\", \"ptx_mma_m16n8k16_row_col_f16f16f32\", A_2[tx, T.Ramp(0, 1, 8)], B[tx, T.Ramp(0, 1, 4)], C[tx, T.Ramp(0, 1, 4)])\n");
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(builtins_register_once_under_concurrent_first_use),
      cmocka_unit_test(builtins_are_well_formed_and_canonical),
      cmocka_unit_test(register_rejects_taken_names_bad_text_and_mismatched_params),
      cmocka_unit_test(wmma_sync_tensorizes_a_fragment_tile),
      cmocka_unit_test(mma_ldmatrix_and_sync_tensorize_warp_layout_tiles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
