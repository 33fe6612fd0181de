/*
 * test_compute_inline.c - sch_compute_inline and sch_reverse_compute_inline
 * (schedule/primitive/compute_inline.c), after TVM's
 * test_tir_schedule_compute_inline.py: exact TVMScript after inlining an
 * elementwise producer (indices substituted, its buffer's allocation gone,
 * consumer regions derived again), a padding block into a convolution, a
 * producer with two consumers, into a nested block; a relu, a transposed
 * and a floordiv/floormod consumer inlined into their producers, a consumer
 * smaller than its producer (predicate); the interpreter giving the same
 * outputs; what is recorded; one negative test per precondition.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_testing.h"

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"
#define ROOT "    # with T.block(\"root\"):\n"
#define I12 "            "
#define I16 "                "
#define I20 "                    "

/* ------------------------------------------------------------------------ */
/* Programs                                                                  */
/* ------------------------------------------------------------------------ */

#define SIG2 "def main(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
#define B_BLOCK(ind)                                   \
  ind "with T.block(\"B\"):\n"                          \
  ind "    vi, vj = T.axis.remap(\"SS\", [i, j])\n"     \
  ind "    T.reads(A[vi, vj])\n"                        \
  ind "    T.writes(B[vi, vj])\n"                       \
  ind "    B[vi, vj] = A[vi, vj] * T.float32(2)\n"
#define C_BLOCK(ind)                                   \
  ind "with T.block(\"C\"):\n"                          \
  ind "    vi, vj = T.axis.remap(\"SS\", [i, j])\n"     \
  ind "    T.reads(B[vi, vj])\n"                        \
  ind "    T.writes(C[vi, vj])\n"                       \
  ind "    C[vi, vj] = B[vi, vj] + T.float32(1)\n"
#define GRID "    for i, j in T.grid(128, 128):\n"

/* TVM's elementwise: B = A * 2; C = B + 1. */
static const char *TWO =
    HEADER SIG2 ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    GRID B_BLOCK("        ")
    GRID C_BLOCK("        ");

/* C reads B transposed and mirrored. */
static const char *TWO_MIRROR =
    HEADER SIG2 ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    GRID B_BLOCK("        ")
    GRID
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vj, 127 - vi])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vj, 127 - vi] + T.float32(1)\n";

/* TVM's elementwise_multi_consumer-like: B feeds C and D. */
#define SIG3                                                                                       \
  "def main(A: T.Buffer((128, 128), \"float32\"), C: T.Buffer((128, 128), \"float32\"), "          \
  "D: T.Buffer((128, 128), \"float32\")):\n"
#define D_BLOCK(ind)                                   \
  ind "with T.block(\"D\"):\n"                          \
  ind "    vi, vj = T.axis.remap(\"SS\", [i, j])\n"     \
  ind "    T.reads(B[vi, vj])\n"                        \
  ind "    T.writes(D[vi, vj])\n"                       \
  ind "    D[vi, vj] = T.exp(B[vi, vj])\n"
static const char *TWO_CONSUMERS =
    HEADER SIG3 ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    GRID B_BLOCK("        ")
    GRID C_BLOCK("        ")
    GRID D_BLOCK("        ");

/* A 3x3 convolution (NHWC, pad 1) with its padding block. */
#define CONV_SIG                                                                                \
  "def main(X: T.Buffer((1, 8, 8, 4), \"float32\"), W: T.Buffer((3, 3, 4, 8), \"float32\"), "  \
  "Y: T.Buffer((1, 8, 8, 8), \"float32\")):\n"
#define CONV_LOOPS                                                                                         \
  "    for n, h, w, co, rh, rw, rc in T.grid(1, 8, 8, 8, 3, 3, 4):\n"                                      \
  "        with T.block(\"conv\"):\n"                                                                      \
  "            v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap(\"SSSSRRR\", [n, h, w, co, rh, rw, rc])\n"
static const char *CONV =
    HEADER CONV_SIG ROOT
    "    PadInput = T.alloc_buffer((1, 10, 10, 4))\n"
    "    for i0, i1, i2, i3 in T.grid(1, 10, 10, 4):\n"
    "        with T.block(\"PadInput\"):\n"
    "            v_i0, v_i1, v_i2, v_i3 = T.axis.remap(\"SSSS\", [i0, i1, i2, i3])\n"
    "            T.reads(X[v_i0, v_i1 - 1, v_i2 - 1, v_i3])\n"
    "            T.writes(PadInput[v_i0, v_i1, v_i2, v_i3])\n"
    "            PadInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 9 and 1 <= v_i2 and "
    "v_i2 < 9, X[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0))\n"
    CONV_LOOPS
    "            T.reads(PadInput[v_n, v_h + v_rh, v_w + v_rw, v_rc], W[v_rh, v_rw, v_rc, v_co])\n"
    "            T.writes(Y[v_n, v_h, v_w, v_co])\n"
    "            with T.init():\n"
    "                Y[v_n, v_h, v_w, v_co] = T.float32(0)\n"
    "            Y[v_n, v_h, v_w, v_co] = Y[v_n, v_h, v_w, v_co] + PadInput[v_n, v_h + v_rh, v_w + v_rw, v_rc] "
    "* W[v_rh, v_rw, v_rc, v_co]\n";

/* TVM's blockized_1: C is an outer block over 16 x 16 inner blocks. */
#define C_OUTER                                                                          \
  "    for i, j in T.grid(8, 8):\n"                                                      \
  "        with T.block(\"C_outer\"):\n"                                                 \
  "            vi_o, vj_o = T.axis.remap(\"SS\", [i, j])\n"
#define C_INNER                                                                          \
  "            for i_i, j_i in T.grid(16, 16):\n"                                        \
  "                with T.block(\"C_inner\"):\n"                                         \
  "                    vi = T.axis.spatial(128, vi_o * 16 + i_i)\n"                      \
  "                    vj = T.axis.spatial(128, vj_o * 16 + j_i)\n"
static const char *BLOCKIZED =
    HEADER SIG2 ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    GRID B_BLOCK("        ")
    C_OUTER
    "            T.reads(B[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
    "            T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
    C_INNER
    "                    T.reads(B[vi, vj])\n"
    "                    T.writes(C[vi, vj])\n"
    "                    C[vi, vj] = B[vi, vj] + T.float32(1)\n";

/* B tiled, then relu reading B transposed. */
#define TILED_B                                                                   \
  "    for i_0, j_0, i_1, j_1 in T.grid(8, 8, 16, 16):\n"                         \
  "        with T.block(\"B\"):\n"                                                \
  "            vi = T.axis.spatial(128, i_0 * 16 + i_1)\n"                        \
  "            vj = T.axis.spatial(128, j_0 * 16 + j_1)\n"
static const char *RELU =
    HEADER SIG2 ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    TILED_B
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    GRID
    "        with T.block(\"relu\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vj, vi])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = T.max(B[vj, vi], T.float32(0))\n";

/* TVM's floordiv_and_floormod_indices. */
#define FDM_SIG "def main(X: T.Buffer((16, 16), \"float32\"), Y: T.Buffer((256,), \"float32\")):\n"
#define TEMP_LOOPS                                             \
  "    for i, j in T.grid(16, 16):\n"                          \
  "        with T.block(\"A\"):\n"                             \
  "            v_i, v_j = T.axis.remap(\"SS\", [i, j])\n"      \
  "            T.reads(X[v_j, v_i])\n"
static const char *FLOORDIV_MOD =
    HEADER FDM_SIG ROOT
    "    temp = T.alloc_buffer((16, 16))\n"
    TEMP_LOOPS
    "            T.writes(temp[v_i, v_j])\n"
    "            temp[v_i, v_j] = X[v_j, v_i] + T.float32(1)\n"
    "    for i in range(256):\n"
    "        with T.block(\"B\"):\n"
    "            v_i = T.axis.spatial(256, i)\n"
    "            T.reads(temp[v_i // 16, v_i % 16])\n"
    "            T.writes(Y[v_i])\n"
    "            Y[v_i] = temp[v_i // 16, v_i % 16]\n";

/* A consumer that reads only the first half of its producer's output. */
#define HALF_SIG "def main(A: T.Buffer((128,), \"float32\"), C: T.Buffer((64,), \"float32\")):\n"
static const char *HALF =
    HEADER HALF_SIG ROOT
    "    B = T.alloc_buffer((128,))\n"
    "    for i in range(128):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(128, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = A[vi] * T.float32(2)\n"
    "    for i in range(64):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(64, i)\n"
    "            T.reads(B[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = B[vi] + T.float32(1)\n";

/* Negative-test programs: B is the block under test, C its consumer. */
#define VEC_SIG "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
#define VEC_C                                          \
  "    for i in range(16):\n"                          \
  "        with T.block(\"C\"):\n"                     \
  "            vi = T.axis.spatial(16, i)\n"           \
  "            T.reads(B[vi])\n"                       \
  "            T.writes(C[vi])\n"                      \
  "            C[vi] = B[vi] + T.float32(1)\n"
#define VEC_B_HEAD                                     \
  "    B = T.alloc_buffer((16,))\n"                    \
  "    for i in range(16):\n"                          \
  "        with T.block(\"B\"):\n"                     \
  "            vi = T.axis.spatial(16, i)\n"

/* B accumulates into itself: it reads what it writes. */
static const char *NOT_COMPLETE =
    HEADER VEC_SIG ROOT VEC_B_HEAD
    "            T.reads(B[vi], A[vi])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = B[vi] + A[vi]\n"
    VEC_C;

/* B's body is an if, not one store. */
static const char *IF_BODY =
    HEADER VEC_SIG ROOT VEC_B_HEAD
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi])\n"
    "            if vi < 8:\n"
    "                B[vi] = A[vi]\n"
    "            else:\n"
    "                B[vi] = A[vi] * T.float32(2)\n"
    VEC_C;

/* B stores at a constant column: the index is not an iteration variable. */
#define MAT_SIG "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
static const char *CONST_INDEX =
    HEADER MAT_SIG ROOT
    "    B = T.alloc_buffer((16, 2))\n"
    "    for i in range(16):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi, 0])\n"
    "            B[vi, 0] = A[vi]\n"
    "    for i in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(B[vi, 0])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = B[vi, 0]\n";

/* B's value uses vj, which is not one of its store's indices. */
static const char *EXTRA_VAR =
    HEADER VEC_SIG ROOT
    "    B = T.alloc_buffer((16,))\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vj])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = A[vj]\n"
    VEC_C;

/* B writes two buffers. */
#define TWO_OUT_SIG                                                                                \
  "def main(A: T.Buffer((16,), \"float32\"), C: T.Buffer((16,), \"float32\"), "                    \
  "E: T.Buffer((16,), \"float32\")):\n"
static const char *TWO_OUTPUTS =
    HEADER TWO_OUT_SIG ROOT VEC_B_HEAD
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi], E[vi])\n"
    "            B[vi] = A[vi]\n"
    "            E[vi] = A[vi]\n"
    VEC_C;

/* B is the only block of its scope: nothing would be left. */
static const char *ONLY_LEAF =
    HEADER "def main(A: T.Buffer((16,), \"float32\")):\n" ROOT VEC_B_HEAD
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = A[vi]\n";

/* B is a reduction (it has an init). */
#define MR_SIG "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
static const char *REDUCTION =
    HEADER MR_SIG ROOT
    "    B = T.alloc_buffer((16,))\n"
    "    for i, k in T.grid(16, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(A[vi, vk])\n"
    "            T.writes(B[vi])\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0)\n"
    "            B[vi] = B[vi] + A[vi, vk]\n"
    "    for i in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(B[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = T.max(B[vi], T.float32(0))\n";

/* C reads two buffers produced in the scope. */
#define FP_SIG "def main(A: T.Buffer((16,), \"float32\"), D: T.Buffer((16,), \"float32\")):\n"
static const char *TWO_PRODUCERS =
    HEADER FP_SIG ROOT
    "    B = T.alloc_buffer((16,))\n"
    "    C = T.alloc_buffer((16,))\n"
    "    for i in range(16):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = A[vi]\n"
    "    for i in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A[vi] * T.float32(2)\n"
    "    for i in range(16):\n"
    "        with T.block(\"D\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(B[vi], C[vi])\n"
    "            T.writes(D[vi])\n"
    "            D[vi] = B[vi] + C[vi]\n";

/* C reads one column of B: the load index map is not bijective. */
static const char *NOT_BIJECTIVE =
    HEADER SIG2 ROOT
    "    B = T.alloc_buffer((128, 128))\n"
    GRID B_BLOCK("        ")
    GRID
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, 0])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi, 0]\n";

/* C runs under a split with a predicate. */
static const char *PREDICATED =
    HEADER VEC_SIG ROOT VEC_B_HEAD
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = A[vi]\n"
    "    for i_0, i_1 in T.grid(6, 3):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i_0 * 3 + i_1)\n"
    "            T.where(i_0 * 3 + i_1 < 16)\n"
    "            T.reads(B[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = B[vi] + T.float32(1)\n";

/* B writes the function's output A2, which C also reads. */
#define OUT_SIG                                                                                    \
  "def main(A: T.Buffer((16,), \"float32\"), B: T.Buffer((16,), \"float32\"), "                    \
  "C: T.Buffer((16,), \"float32\")):\n"
static const char *PRODUCER_IS_OUTPUT =
    HEADER OUT_SIG ROOT
    "    for i in range(16):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi])\n"
    "            B[vi] = A[vi]\n"
    VEC_C;

/* C reads B through a matched sub-buffer: B cannot be inlined. */
static const char *MATCHED =
    HEADER "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n" ROOT
    "    B = T.alloc_buffer((16, 16))\n"
    "    for i, j in T.grid(16, 16):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i in range(16):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            T.reads(B[vi, 0:16])\n"
    "            T.writes(C[vi, 0:16])\n"
    "            Bs = T.match_buffer(B[vi, 0:16], (16,))\n"
    "            for j in range(16):\n"
    "                C[vi, j] = Bs[j] + T.float32(1)\n";

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* B accumulates (an init on an all-spatial block, as rfactor leaves C_rf). */
static const char *ACCUM_PRODUCER =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((8,))\n"
    "    for i in range(8):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(8, i)\n"
    "            T.reads(A[vi])\n"
    "            T.writes(B[vi])\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0)\n"
    "            B[vi] = B[vi] + A[vi]\n"
    "    for i in range(8):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.spatial(8, i)\n"
    "            T.reads(B[vi])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = B[vi] + T.float32(1)\n";

static sch_rv_t block_of(sch_t *sch, const char *name) {
  sch_rv_t b;
  assert_int_equal(sch_get_block(sch, &b, name), MLC_OK);
  return b;
}

typedef int (*inline_fn)(sch_t *, sch_rv_t);

static void inline_ok(sch_t *sch, inline_fn fn, const char *block) {
  int rc = fn(sch, block_of(sch, block));
  if (rc != MLC_OK) fprintf(stderr, "%s\n", sch_error(sch));
  assert_int_equal(rc, MLC_OK);
}

/* A failing inline: the error contains `needle`; program and trace unchanged. */
static void assert_inline_fails(const char *src, inline_fn fn, const char *block, const char *needle) {
  sch_t *sch = st_schedule(src);
  sch_rv_t b = block_of(sch, block);
  int ninsts = sch_get_trace(sch)->n;
  st_assert_fails(sch, fn(sch, b), needle, src);
  assert_int_equal(sch_get_trace(sch)->n, ninsts);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* compute_inline                                                            */
/* ------------------------------------------------------------------------ */

/* TVM's test_compute_inline_elementwise. */
static void compute_inline_substitutes_the_producer_into_its_consumer(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  inline_ok(sch, sch_compute_inline, "B");
  st_check(sch, TWO,
           HEADER SIG2 ROOT GRID
           "        with T.block(\"C\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "            T.reads(A[vi, vj])\n"
           "            T.writes(C[vi, vj])\n"
           "            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)\n");
  sch_free(sch);
}

/* The producer's iter vars become the load's index expressions. */
static void compute_inline_substitutes_the_load_indices(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO_MIRROR);
  inline_ok(sch, sch_compute_inline, "B");
  st_check(sch, TWO_MIRROR,
           HEADER SIG2 ROOT GRID
           "        with T.block(\"C\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "            T.reads(A[vj, 127 - vi])\n"
           "            T.writes(C[vi, vj])\n"
           "            C[vi, vj] = A[vj, 127 - vi] * T.float32(2) + T.float32(1)\n");
  sch_free(sch);
}

static void compute_inline_into_every_consumer(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO_CONSUMERS);
  inline_ok(sch, sch_compute_inline, "B");
  st_check(sch, TWO_CONSUMERS,
           HEADER SIG3 ROOT GRID
           "        with T.block(\"C\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "            T.reads(A[vi, vj])\n"
           "            T.writes(C[vi, vj])\n"
           "            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)\n"
           GRID
           "        with T.block(\"D\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "            T.reads(A[vi, vj])\n"
           "            T.writes(D[vi, vj])\n"
           "            D[vi, vj] = T.exp(A[vi, vj] * T.float32(2))\n");
  sch_free(sch);
}

/* The padding becomes an if_then_else inside the convolution; the reads
 * are derived again (the accumulator Y is not listed: the block has an init). */
static void compute_inline_of_padding_into_a_conv(void **state) {
  (void)state;
  sch_t *sch = st_schedule(CONV);
  inline_ok(sch, sch_compute_inline, "PadInput");
  st_check(sch, CONV,
           HEADER CONV_SIG ROOT CONV_LOOPS
           "            T.reads(X[v_n, v_h + v_rh - 1, v_w + v_rw - 1, v_rc], W[v_rh, v_rw, v_rc, v_co])\n"
           "            T.writes(Y[v_n, v_h, v_w, v_co])\n"
           "            with T.init():\n"
           "                Y[v_n, v_h, v_w, v_co] = T.float32(0)\n"
           "            Y[v_n, v_h, v_w, v_co] = Y[v_n, v_h, v_w, v_co] + T.if_then_else(1 <= v_h + v_rh and "
           "v_h + v_rh < 9 and 1 <= v_w + v_rw and v_w + v_rw < 9, X[v_n, v_h + v_rh - 1, v_w + v_rw - 1, "
           "v_rc], T.float32(0)) * W[v_rh, v_rw, v_rc, v_co]\n");
  sch_free(sch);
}

/* The outer block's region over B becomes one over A. */
static void compute_inline_into_a_nested_block_updates_both_signatures(void **state) {
  (void)state;
  sch_t *sch = st_schedule(BLOCKIZED);
  inline_ok(sch, sch_compute_inline, "B");
  st_check(sch, BLOCKIZED,
           HEADER SIG2 ROOT C_OUTER
           "            T.reads(A[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
           "            T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])\n"
           C_INNER
           "                    T.reads(A[vi, vj])\n"
           "                    T.writes(C[vi, vj])\n"
           "                    C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)\n");
  sch_free(sch);
}

static void compute_inline_records_the_block(void **state) {
  (void)state;
  sch_t *sch = st_schedule(TWO);
  sch_rv_t b = block_of(sch, "B");
  assert_int_equal(sch_compute_inline(sch, b), MLC_OK);
  const sch_trace_t *t = sch_get_trace(sch);
  const sch_inst_t *inst = &t->insts[t->n - 1];
  assert_ptr_equal(inst->kind, sch_inst_kind_find("ComputeInline"));
  assert_int_equal(inst->ninputs, 1);
  assert_int_equal(inst->inputs[0].u.rv, b);
  assert_int_equal(inst->nattrs, 0);
  assert_int_equal(inst->noutputs, 0);
  /* The inlined block is gone: its RV names nothing now. */
  tir_block_t *node;
  assert_int_equal(sch_get_block_node(sch, b, &node), MLC_ESCHEDULE);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* reverse_compute_inline                                                    */
/* ------------------------------------------------------------------------ */

/* relu reads B transposed: the tiled producer now stores relu(A * 2) at the
 * transposed position of C directly. */
static void reverse_compute_inline_of_relu_into_the_producer(void **state) {
  (void)state;
  sch_t *sch = st_schedule(RELU);
  inline_ok(sch, sch_reverse_compute_inline, "relu");
  st_check(sch, RELU,
           HEADER SIG2 ROOT TILED_B
           "            T.reads(A[vi, vj])\n"
           "            T.writes(C[vj, vi])\n"
           "            C[vj, vi] = T.max(A[vi, vj] * T.float32(2), T.float32(0))\n");
  sch_free(sch);
}

/* TVM's floordiv/floormod consumer: Y[v] = temp[v // 16, v % 16] inverts to
 * Y[v_i * 16 + v_j]. */
static void reverse_compute_inline_inverts_a_floordiv_floormod_read(void **state) {
  (void)state;
  sch_t *sch = st_schedule(FLOORDIV_MOD);
  inline_ok(sch, sch_reverse_compute_inline, "B");
  st_check(sch, FLOORDIV_MOD,
           HEADER FDM_SIG ROOT TEMP_LOOPS
           "            T.writes(Y[v_i * 16 + v_j])\n"
           "            Y[v_i * 16 + v_j] = X[v_j, v_i] + T.float32(1)\n");
  sch_free(sch);
}

/* The consumer covers half of the producer's domain: the producer keeps
 * only that half, with a predicate. */
static void reverse_compute_inline_predicates_the_producer_to_the_consumer_domain(void **state) {
  (void)state;
  sch_t *sch = st_schedule(HALF);
  inline_ok(sch, sch_reverse_compute_inline, "C");
  st_check(sch, HALF,
           HEADER HALF_SIG ROOT
           "    for i in range(128):\n"
           "        with T.block(\"B\"):\n"
           "            vi = T.axis.spatial(128, i)\n"
           "            T.where(i < 64)\n"
           "            T.reads(A[vi])\n"
           "            T.writes(C[vi])\n"
           "            C[vi] = A[vi] * T.float32(2) + T.float32(1)\n");
  sch_free(sch);
}

static void reverse_compute_inline_records_the_block(void **state) {
  (void)state;
  sch_t *sch = st_schedule(RELU);
  sch_rv_t b = block_of(sch, "relu");
  assert_int_equal(sch_reverse_compute_inline(sch, b), MLC_OK);
  const sch_trace_t *t = sch_get_trace(sch);
  const sch_inst_t *inst = &t->insts[t->n - 1];
  assert_ptr_equal(inst->kind, sch_inst_kind_find("ReverseComputeInline"));
  assert_int_equal(inst->ninputs, 1);
  assert_int_equal(inst->inputs[0].u.rv, b);
  sch_free(sch);
}

/* ------------------------------------------------------------------------ */
/* Preconditions                                                             */
/* ------------------------------------------------------------------------ */

static void compute_inline_rejects_an_output_block(void **state) {
  (void)state;
  assert_inline_fails(TWO, sch_compute_inline, "C",
                      "compute_inline: block C is an output block: it writes buffer C");
}

static void compute_inline_rejects_a_block_with_init(void **state) {
  (void)state;
  assert_inline_fails(REDUCTION, sch_compute_inline, "B", "compute_inline: block B has an init statement");
}

static void compute_inline_rejects_an_incomplete_block(void **state) {
  (void)state;
  assert_inline_fails(NOT_COMPLETE, sch_compute_inline, "B", "compute_inline: block B is not a complete block");
}

static void compute_inline_rejects_a_body_that_is_not_one_store(void **state) {
  (void)state;
  assert_inline_fails(IF_BODY, sch_compute_inline, "B",
                      "compute_inline: the body of block B is not a single store");
}

static void compute_inline_rejects_a_store_index_that_is_not_a_variable(void **state) {
  (void)state;
  assert_inline_fails(CONST_INDEX, sch_compute_inline, "B",
                      "compute_inline: the body of block B is not a single store");
}

static void compute_inline_rejects_a_value_using_other_variables(void **state) {
  (void)state;
  assert_inline_fails(EXTRA_VAR, sch_compute_inline, "B",
                      "compute_inline: the body of block B is not a single store");
}

static void compute_inline_rejects_a_block_writing_two_buffers(void **state) {
  (void)state;
  assert_inline_fails(TWO_OUTPUTS, sch_compute_inline, "B",
                      "compute_inline: block B writes 2 buffer regions, expected exactly one");
}

static void compute_inline_rejects_the_only_leaf_of_a_scope(void **state) {
  (void)state;
  assert_inline_fails(ONLY_LEAF, sch_compute_inline, "B",
                      "compute_inline: block B is the only leaf of the scope of block root");
}

static void compute_inline_rejects_a_buffer_matched_by_a_consumer(void **state) {
  (void)state;
  assert_inline_fails(MATCHED, sch_compute_inline, "B",
                      "compute_inline: buffer B is accessed opaquely or matched by T.match_buffer in block C");
}

static void reverse_compute_inline_rejects_an_incomplete_producer(void **state) {
  (void)state;
  assert_inline_fails(REDUCTION, sch_reverse_compute_inline, "C",
                      "reverse_compute_inline: block C must have a single producer, a complete block");
}

static void reverse_compute_inline_rejects_a_producer_with_two_consumers(void **state) {
  (void)state;
  assert_inline_fails(TWO_CONSUMERS, sch_reverse_compute_inline, "C",
                      "reverse_compute_inline: block C must have a single producer");
}

static void reverse_compute_inline_rejects_two_produced_inputs(void **state) {
  (void)state;
  assert_inline_fails(TWO_PRODUCERS, sch_reverse_compute_inline, "D",
                      "reverse_compute_inline: block D reads 2 buffers produced in its scope, expected exactly one");
}

static void reverse_compute_inline_rejects_a_read_that_is_not_bijective(void **state) {
  (void)state;
  assert_inline_fails(NOT_BIJECTIVE, sch_reverse_compute_inline, "C",
                      "reverse_compute_inline: the body of block C is not a store");
}

static void reverse_compute_inline_rejects_a_predicated_consumer(void **state) {
  (void)state;
  assert_inline_fails(PREDICATED, sch_reverse_compute_inline, "C",
                      "reverse_compute_inline: the body of block C is not a store");
}

static void reverse_compute_inline_rejects_a_block_with_init(void **state) {
  (void)state;
  assert_inline_fails(REDUCTION, sch_reverse_compute_inline, "B",
                      "reverse_compute_inline: block B has an init statement");
}

static void reverse_compute_inline_rejects_an_accumulating_producer(void **state) {
  (void)state;
  /* B's update reads B: storing into C instead would leave that read of B
   * with nothing writing it. */
  assert_inline_fails(ACCUM_PRODUCER, sch_reverse_compute_inline, "C",
                      "reverse_compute_inline: producer block B accumulates into buffer B (it has an init or reads "
                      "what it stores)");
}

static void reverse_compute_inline_rejects_a_producer_that_writes_an_output(void **state) {
  (void)state;
  assert_inline_fails(PRODUCER_IS_OUTPUT, sch_reverse_compute_inline, "C",
                      "reverse_compute_inline: block B is an output block");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compute_inline_substitutes_the_producer_into_its_consumer),
      cmocka_unit_test(compute_inline_substitutes_the_load_indices),
      cmocka_unit_test(compute_inline_into_every_consumer),
      cmocka_unit_test(compute_inline_of_padding_into_a_conv),
      cmocka_unit_test(compute_inline_into_a_nested_block_updates_both_signatures),
      cmocka_unit_test(compute_inline_records_the_block),
      cmocka_unit_test(reverse_compute_inline_of_relu_into_the_producer),
      cmocka_unit_test(reverse_compute_inline_inverts_a_floordiv_floormod_read),
      cmocka_unit_test(reverse_compute_inline_predicates_the_producer_to_the_consumer_domain),
      cmocka_unit_test(reverse_compute_inline_records_the_block),
      cmocka_unit_test(compute_inline_rejects_an_output_block),
      cmocka_unit_test(compute_inline_rejects_a_block_with_init),
      cmocka_unit_test(compute_inline_rejects_an_incomplete_block),
      cmocka_unit_test(compute_inline_rejects_a_body_that_is_not_one_store),
      cmocka_unit_test(compute_inline_rejects_a_store_index_that_is_not_a_variable),
      cmocka_unit_test(compute_inline_rejects_a_value_using_other_variables),
      cmocka_unit_test(compute_inline_rejects_a_block_writing_two_buffers),
      cmocka_unit_test(compute_inline_rejects_the_only_leaf_of_a_scope),
      cmocka_unit_test(compute_inline_rejects_a_buffer_matched_by_a_consumer),
      cmocka_unit_test(reverse_compute_inline_rejects_an_incomplete_producer),
      cmocka_unit_test(reverse_compute_inline_rejects_a_producer_with_two_consumers),
      cmocka_unit_test(reverse_compute_inline_rejects_two_produced_inputs),
      cmocka_unit_test(reverse_compute_inline_rejects_a_read_that_is_not_bijective),
      cmocka_unit_test(reverse_compute_inline_rejects_a_predicated_consumer),
      cmocka_unit_test(reverse_compute_inline_rejects_a_block_with_init),
      cmocka_unit_test(reverse_compute_inline_rejects_a_producer_that_writes_an_output),
      cmocka_unit_test(reverse_compute_inline_rejects_an_accumulating_producer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
