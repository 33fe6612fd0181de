/*
 * test_lower_buffers.c - the passes that reshape storage: compact-buffers
 * (allocations shrink to the region used, storage_align pads strides),
 * flatten-buffers (every access 1-D) and storage-rewrite (allocations whose
 * lifetimes do not overlap share storage). Exact TVMScript after each pass
 * (earlier passes run first, as in the driver) and the interpreter's
 * outputs equal to the unlowered function's on random inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_lower_helpers.h"

static const char COMPUTEAT_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    B = T.alloc_buffer((16, 16))\n"
    "    for i_0 in range(4):\n"
    "        for ax0, ax1 in T.grid(4, 16):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 4 + ax0)\n"
    "                vj = T.axis.spatial(16, ax1)\n"
    "                B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "        for i_1, j in T.grid(4, 16):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 4 + i_1)\n"
    "                vj = T.axis.spatial(16, j)\n"
    "                C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static const char ALIGN_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    B = T.alloc_buffer((16, 16))\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.block_attr({\"buffer_dim_align\": [[0, 0, 16, 1]]})\n"
    "            B[vi, vj] = A[vi, vj] + T.float32(1)\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            C[vi, vj] = B[vj, vi]\n";

static const char OPAQUE_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    B = T.alloc_buffer((16, 16))\n"
    "    for i_0 in range(4):\n"
    "        for ax0, ax1 in T.grid(4, 16):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 4 + ax0)\n"
    "                vj = T.axis.spatial(16, ax1)\n"
    "                B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "        for i_1, j in T.grid(4, 16):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(16, i_0 * 4 + i_1)\n"
    "                vj = T.axis.spatial(16, j)\n"
    "                with T.attr(B.data, \"opaque_hint\", 0):\n"
    "                    C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static const char NARROW_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    B = T.alloc_buffer((16,))\n"
    "    for i in range(16):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.where(i < 6)\n"
    "            B[vi] = A[vi] + T.float32(1)\n"
    "    for i in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.where(i < 6)\n"
    "            C[vi] = B[vi] * T.float32(3)\n";

static const char SPLIT_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((10,), \"float32\"), C: T.Buffer((10,), \"float32\")):\n"
    "    B = T.alloc_buffer((10,))\n"
    "    for i_0 in range(3):\n"
    "        for ax0 in range(4):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(10, i_0 * 4 + ax0)\n"
    "                T.where(i_0 * 4 + ax0 < 10)\n"
    "                B[vi] = A[vi] * T.float32(2)\n"
    "        for i_1 in range(4):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(10, i_0 * 4 + i_1)\n"
    "                T.where(i_0 * 4 + i_1 < 10)\n"
    "                C[vi] = B[vi] + T.float32(1)\n";

static const char OVERFLOW_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), C: T.Buffer((4, 8), \"float32\")):\n"
    "    B = T.alloc_buffer((4, 4))\n"
    "    for i in range(2):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(2, i)\n"
    "            T.reads(A[vi * 2, 0:8])\n"
    "            T.writes(B[vi * 2, 0:4])\n"
    "            B[vi * 2, T.Ramp(0, 1, 8)] = A[vi * 2, T.Ramp(0, 1, 8)]\n"
    "    for i in range(2):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(2, i)\n"
    "            T.reads(B[vi * 2, 0:4])\n"
    "            T.writes(C[vi * 2, 0:8])\n"
    "            C[vi * 2, T.Ramp(0, 1, 8)] = B[vi * 2, T.Ramp(0, 1, 8)]\n";

static const char STRIDED_SRC[] =
    "@T.prim_func\n"
    "def main(a: T.handle, B: T.Buffer((4, 4), \"float32\")):\n"
    "    s0 = T.int32()\n"
    "    off = T.int32()\n"
    "    A = T.match_buffer(a, (4, 4), strides=(s0, 1), elem_offset=off)\n"
    "    for i, j in T.grid(4, 4):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            B[vi, vj] = A[vj, vi]\n";

static const char RAMPS_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((8, 4), \"float32\")):\n"
    "    for i in range(4):\n"
    "        B[T.Ramp(0, 1, 8), i] = A[i, T.Ramp(0, 1, 8)] + T.Broadcast(A[i, 0], 8)\n";

static const char REUSE_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    for i_0 in range(4):\n"
    "        X = T.decl_buffer((4,), scope=\"local\")\n"
    "        for j in range(4):\n"
    "            X[j] = A[i_0 * 4 + j] * T.float32(2)\n"
    "        Y = T.decl_buffer((4,), scope=\"local\")\n"
    "        for j in range(4):\n"
    "            Y[j] = X[j] + T.float32(1)\n"
    "        Z = T.decl_buffer((3,), scope=\"local\")\n"
    "        for j in range(3):\n"
    "            Z[j] = Y[j] * Y[j + 1]\n"
    "        W = T.decl_buffer((4,), \"int32\", scope=\"local\")\n"
    "        for j in range(4):\n"
    "            W[j] = T.Cast(\"int32\", Y[j])\n"
    "        for j in range(3):\n"
    "            C[i_0 * 4 + j] = Z[j] + T.Cast(\"float32\", W[j])\n"
    "        C[i_0 * 4 + 3] = Y[3]\n";

static const char MM_SRC[] =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    for i, j, k in T.grid(16, 16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char COMPUTEAT_COMPACT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    for i_0 in range(4):\n"
    "        B = T.decl_buffer((4, 16))\n"
    "        for ax0, ax1 in T.grid(4, 16):\n"
    "            B[ax0, ax1] = A[i_0 * 4 + ax0, ax1] * T.float32(2)\n"
    "        for i_1, j in T.grid(4, 16):\n"
    "            C[i_0 * 4 + i_1, j] = B[i_1, j] + T.float32(1)\n";

static const char ALIGN_COMPACT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    B = T.decl_buffer((16, 16), strides=(17, 1))\n"
    "    for i, j in T.grid(16, 16):\n"
    "        B[i, j] = A[i, j] + T.float32(1)\n"
    "    for i, j in T.grid(16, 16):\n"
    "        C[i, j] = B[j, i]\n";

static const char NARROW_COMPACT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    B = T.decl_buffer((6,))\n"
    "    for i in range(16):\n"
    "        if i < 6:\n"
    "            B[i] = A[i] + T.float32(1)\n"
    "    for i in range(16):\n"
    "        if i < 6:\n"
    "            C[i] = B[i] * T.float32(3)\n";

static const char SPLIT_COMPACT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((10,), \"float32\"), C: T.Buffer((10,), \"float32\")):\n"
    "    for i_0 in range(3):\n"
    "        B = T.decl_buffer((4,))\n"
    "        for ax0 in range(4):\n"
    "            if i_0 * 4 + ax0 < 10:\n"
    "                B[ax0] = A[i_0 * 4 + ax0] * T.float32(2)\n"
    "        for i_1 in range(4):\n"
    "            if i_0 * 4 + i_1 < 10:\n"
    "                C[i_0 * 4 + i_1] = B[i_1] + T.float32(1)\n";

static const char MM_FLAT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    C_1 = T.Buffer((256,), data=C.data)\n"
    "    A_1 = T.Buffer((256,), data=A.data)\n"
    "    B_1 = T.Buffer((256,), data=B.data)\n"
    "    for i, j, k in T.grid(16, 16, 16):\n"
    "        if k == 0:\n"
    "            C_1[i * 16 + j] = T.float32(0)\n"
    "        C_1[i * 16 + j] = C_1[i * 16 + j] + A_1[i * 16 + k] * B_1[k * 16 + j]\n";

static const char COMPUTEAT_FLAT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    A_1 = T.Buffer((256,), data=A.data)\n"
    "    C_1 = T.Buffer((256,), data=C.data)\n"
    "    for i_0 in range(4):\n"
    "        B = T.decl_buffer((64,))\n"
    "        for ax0, ax1 in T.grid(4, 16):\n"
    "            B[ax0 * 16 + ax1] = A_1[(i_0 * 4 + ax0) * 16 + ax1] * T.float32(2)\n"
    "        for i_1, j in T.grid(4, 16):\n"
    "            C_1[(i_0 * 4 + i_1) * 16 + j] = B[i_1 * 16 + j] + T.float32(1)\n";

static const char ALIGN_FLAT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    A_1 = T.Buffer((256,), data=A.data)\n"
    "    C_1 = T.Buffer((256,), data=C.data)\n"
    "    B = T.decl_buffer((271,))\n"
    "    for i, j in T.grid(16, 16):\n"
    "        B[i * 17 + j] = A_1[i * 16 + j] + T.float32(1)\n"
    "    for i, j in T.grid(16, 16):\n"
    "        C_1[i * 16 + j] = B[j * 17 + i]\n";

static const char STRIDED_FLAT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(a: T.handle, B: T.Buffer((4, 4), \"float32\")):\n"
    "    s0 = T.int32()\n"
    "    off = T.int32()\n"
    "    A = T.match_buffer(a, (4, 4), strides=(s0, 1), elem_offset=off)\n"
    "    B_1 = T.Buffer((16,), data=B.data)\n"
    "    A_1 = T.Buffer((off + (1 + 3 * s0 + 3),), data=A.data)\n"
    "    for i, j in T.grid(4, 4):\n"
    "        B_1[i * 4 + j] = A_1[j * s0 + i + off]\n";

static const char RAMPS_FLAT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((8, 4), \"float32\")):\n"
    "    B_1 = T.Buffer((32,), data=B.data)\n"
    "    A_1 = T.Buffer((32,), data=A.data)\n"
    "    for i in range(4):\n"
    "        B_1[T.Ramp(i, 4, 8)] = A_1[T.Ramp(i * 8, 1, 8)] + T.Broadcast(A_1[i * 8], 8)\n";

static const char REUSE_REWRITE[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
    "    for i_0 in range(4):\n"
    "        X = T.decl_buffer((4,), scope=\"local\")\n"
    "        Y = T.decl_buffer((4,), scope=\"local\")\n"
    "        W = T.decl_buffer((4,), \"int32\", scope=\"local\")\n"
    "        for j in range(4):\n"
    "            X[j] = A[i_0 * 4 + j] * T.float32(2)\n"
    "        for j in range(4):\n"
    "            Y[j] = X[j] + T.float32(1)\n"
    "        for j in range(3):\n"
    "            X[j] = Y[j] * Y[j + 1]\n"
    "        for j in range(4):\n"
    "            W[j] = T.Cast(\"int32\", Y[j])\n"
    "        for j in range(3):\n"
    "            C[i_0 * 4 + j] = X[j] + T.Cast(\"float32\", W[j])\n"
    "        C[i_0 * 4 + 3] = Y[3]\n";


/* ------------------------------------------------------------------------ */
/* compact-buffers                                                           */
/* ------------------------------------------------------------------------ */

static void allocation_shrinks_to_one_tile(void **state) {
  assert_null(lt_check(COMPUTEAT_SRC, MLC_PASS_COMPACT_BUFFERS, COMPUTEAT_COMPACT));
}

static void storage_align_pads_the_stride(void **state) {
  /* Stride of dimension 0 rounded up from 16 to 17 (1 modulo 16). */
  assert_null(lt_check(ALIGN_SRC, MLC_PASS_COMPACT_BUFFERS, ALIGN_COMPACT));
}

static void enclosing_if_narrows_the_region(void **state) {
  assert_null(lt_check(NARROW_SRC, MLC_PASS_COMPACT_BUFFERS, NARROW_COMPACT));
}

static void guarded_tail_of_a_non_dividing_split_keeps_a_constant_tile(void **state) {
  /* The last tile is partial (i_0 * 4 + ax0 < 10): the region is still 4. */
  assert_null(lt_check(SPLIT_SRC, MLC_PASS_COMPACT_BUFFERS, SPLIT_COMPACT));
}

/* The program after `id` prints as it did before. */
static void assert_pass_changes_nothing(const char *src, mlc_pass_id_t id) {
  tir_func_t *f = st_parse(src);
  tir_func_t *g = lt_before(f, id);
  char *before = tir_print_func(g);
  lt_run(g, id, NULL);
  st_assert_script(g, before);
  mlc_free(before);
  tir_func_free(g);
  tir_func_free(f);
}

static void buffer_whose_data_pointer_escapes_is_not_compacted(void **state) {
  assert_pass_changes_nothing(OPAQUE_SRC, MLC_PASS_COMPACT_BUFFERS);
  assert_null(lt_check_through(OPAQUE_SRC, MLC_PASS_STORAGE_REWRITE));
}

static void vector_access_past_a_dimension_keeps_the_layout(void **state) {
  /* B[i, Ramp(0, 1, 8)] on a (4, 4) buffer relies on the row-major layout
   * (a tensor intrinsic's trick): compacting dimension 1 would break it. */
  assert_pass_changes_nothing(OVERFLOW_SRC, MLC_PASS_COMPACT_BUFFERS);
}

static void buffer_used_everywhere_keeps_its_shape(void **state) {
  assert_pass_changes_nothing(MM_SRC, MLC_PASS_COMPACT_BUFFERS);
}

/* ------------------------------------------------------------------------ */
/* flatten-buffers                                                           */
/* ------------------------------------------------------------------------ */

static void parameters_are_accessed_through_flat_views(void **state) {
  assert_null(lt_check(MM_SRC, MLC_PASS_FLATTEN_BUFFERS, MM_FLAT));
  tir_func_t *orig = st_parse(MM_SRC);
  tir_func_t *f = lt_before(orig, MLC_PASS_FLATTEN_BUFFERS);
  lt_run(f, MLC_PASS_FLATTEN_BUFFERS, NULL);
  /* C_1[i * 16 + j] = ...: a 1-D buffer over C's data, buffer_map kept. */
  tir_stmt_t *s = f->body;
  while (s->kind == TIR_FOR) s = s->u.loop.body;
  assert_int_equal(s->kind, TIR_SEQ);
  tir_stmt_t *update = s->u.seq.stmts[1];
  assert_int_equal(update->kind, TIR_BUFFER_STORE);
  tir_buffer_t *flat = update->u.store.buffer;
  assert_int_equal(flat->ndim, 1);
  assert_int_equal(update->u.store.nindices, 1);
  assert_true(tir_is_const_int(flat->shape[0], 256));
  assert_ptr_equal(flat->data, f->buffer_map[2]->data);
  assert_int_equal(f->buffer_map[2]->ndim, 2);
  tir_func_free(f);
  tir_func_free(orig);
}

static void allocations_become_one_dimensional(void **state) {
  assert_null(lt_check(COMPUTEAT_SRC, MLC_PASS_FLATTEN_BUFFERS, COMPUTEAT_FLAT));
}

static void padded_strides_are_folded_into_the_index(void **state) {
  /* 1 + 15 * 17 + 15 = 271 elements. */
  assert_null(lt_check(ALIGN_SRC, MLC_PASS_FLATTEN_BUFFERS, ALIGN_FLAT));
}

static void symbolic_strides_and_elem_offset_are_folded(void **state) {
  assert_null(lt_check(STRIDED_SRC, MLC_PASS_FLATTEN_BUFFERS, STRIDED_FLAT));
}

static void ramps_stay_ramps_over_the_flat_index(void **state) {
  /* Last dimension: stride 1; first dimension: stride 4 (B's row). */
  assert_null(lt_check(RAMPS_SRC, MLC_PASS_FLATTEN_BUFFERS, RAMPS_FLAT));
}

static void flatten_refuses_blocks(void **state) {
  tir_func_t *f = st_parse(MM_SRC);
  mlc_target_t t = lt_target();
  assert_int_equal(mlc_pass_fn_of(MLC_PASS_FLATTEN_BUFFERS)(f, &t, NULL), MLC_EINVAL);
  lt_assert_contains(mlc_error_last(), "block root is still there: run remove-blocks first");
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* storage-rewrite                                                           */
/* ------------------------------------------------------------------------ */

static void dead_buffer_storage_is_reused_by_a_later_one(void **state) {
  /* Z (3 floats) takes X's storage (X is dead after Y is computed); Y is
   * alive meanwhile and W is int32: they keep their own. */
  assert_null(lt_check(REUSE_SRC, MLC_PASS_STORAGE_REWRITE, REUSE_REWRITE));
}

static void multi_dimensional_allocations_are_left_alone(void **state) {
  /* Before flattening the buffers are 2-D: nothing is shared. */
  static const char src[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((4, 4), \"float32\"), C: T.Buffer((4, 4), \"float32\")):\n"
      "    X = T.decl_buffer((4, 4))\n"
      "    for i, j in T.grid(4, 4):\n"
      "        X[i, j] = A[i, j] + T.float32(1)\n"
      "    Y = T.decl_buffer((4, 4))\n"
      "    for i, j in T.grid(4, 4):\n"
      "        Y[i, j] = X[j, i]\n"
      "    Z = T.decl_buffer((4, 4))\n"
      "    for i, j in T.grid(4, 4):\n"
      "        Z[i, j] = Y[i, j] * T.float32(2)\n"
      "    for i, j in T.grid(4, 4):\n"
      "        C[i, j] = Z[i, j]\n";
  tir_func_t *f = st_parse(src);
  char *before = tir_print_func(f);
  assert_null(lt_check_only(src, MLC_PASS_STORAGE_REWRITE, before));
  mlc_free(before);
  tir_func_free(f);
}

static void whole_pipeline_keeps_the_results(void **state) {
  const char *const srcs[] = {COMPUTEAT_SRC, ALIGN_SRC, NARROW_SRC, SPLIT_SRC, STRIDED_SRC, RAMPS_SRC, REUSE_SRC, MM_SRC};
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) assert_null(lt_check_through(srcs[i], MLC_PASS_STORAGE_REWRITE));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(allocation_shrinks_to_one_tile),
      cmocka_unit_test(storage_align_pads_the_stride),
      cmocka_unit_test(enclosing_if_narrows_the_region),
      cmocka_unit_test(guarded_tail_of_a_non_dividing_split_keeps_a_constant_tile),
      cmocka_unit_test(buffer_whose_data_pointer_escapes_is_not_compacted),
      cmocka_unit_test(vector_access_past_a_dimension_keeps_the_layout),
      cmocka_unit_test(buffer_used_everywhere_keeps_its_shape),
      cmocka_unit_test(parameters_are_accessed_through_flat_views),
      cmocka_unit_test(allocations_become_one_dimensional),
      cmocka_unit_test(padded_strides_are_folded_into_the_index),
      cmocka_unit_test(symbolic_strides_and_elem_offset_are_folded),
      cmocka_unit_test(ramps_stay_ramps_over_the_flat_index),
      cmocka_unit_test(flatten_refuses_blocks),
      cmocka_unit_test(dead_buffer_storage_is_reused_by_a_later_one),
      cmocka_unit_test(multi_dimensional_allocations_are_left_alone),
      cmocka_unit_test(whole_pipeline_keeps_the_results),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
