/*
 * test_interp_mma.c - the reference interpreter on the mma.sync calls of the
 * warp-layout tensor intrinsics (tir/interp_mma.c): ptx_ldmatrix_x4,
 * ptx_ldmatrix_x2 and ptx_mma_m16n8k16_row_col_f16f16f32, whose value for a
 * lane depends on the operands of the other lanes of its warp.
 *
 * - a GMM with B transposed (C = A B^T, float16 -> float32), scheduled by
 *   a trace that tensorizes it with all five mma intrinsics, agrees to the
 *   bit with the unscheduled program on random inputs; so does the program
 *   lowered for cuda (flat warp buffers, the lane variable inside flat
 *   indices);
 * - ldmatrix .x4 and .x2 distribute a matrix of distinct values over the
 *   lanes exactly as the intrinsics' descriptions index the warp buffer;
 * - a call outside a threadIdx.x loop, in one of 16 lanes, with a variable
 *   bound between the loop and the call, with the wrong dtypes or operand
 *   count, or whose operand is out of bounds for another lane fails with
 *   MLC_ERUNTIME naming the call.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"
#include "schedule/schedule.h"
#include "tir/tir.h"

#include "../compiler/gpu_test_helpers.h"
#include "../compiler/mma_gmm.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static tir_func_t *parse(const char *src) {
  tir_func_t *f = NULL;
  tir_parse_error_t err;
  if (tir_parse_func(&f, src, strlen(src), "<test>", &err) != MLC_OK) {
    fprintf(stderr, "parse failed: %s\n", mlc_error_last());
    fail();
  }
  return f;
}

/* A float16 or float32 host buffer argument of the given shape. */
static tir_arg_t arg_2d(void *data, int64_t rows, int64_t cols, tir_dtype_t t) {
  tir_arg_t a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.ndim = 2;
  a.shape[0] = rows;
  a.shape[1] = cols;
  a.dtype = t;
  return a;
}

/* Runs f on (A, B, C) and asserts MLC_OK. */
static void run3(const tir_func_t *f, tir_arg_t *args) {
  int rc = tir_interp_run(f, args, 3);
  if (rc != MLC_OK) fprintf(stderr, "interp: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
}

/* Runs f and asserts MLC_ERUNTIME with a detail containing each needle. */
static void expect_runtime_error(const tir_func_t *f, tir_arg_t *args, int nargs, const char *n1,
                                 const char *n2) {
  assert_int_equal(tir_interp_run(f, args, nargs), MLC_ERUNTIME);
  const char *msg = mlc_error_last();
  if (!strstr(msg, n1) || (n2 && !strstr(msg, n2))) {
    fprintf(stderr, "error was: %s\nexpected: %s%s%s\n", msg, n1, n2 ? " ... " : "", n2 ? n2 : "");
    fail();
  }
}

/* ------------------------------------------------------------------------ */
/* GMM-NT, tensorized                                                        */
/* ------------------------------------------------------------------------ */

typedef struct {
  int m, n, k;
  int wm, wn; /* warps per block along M and N */
} mma_shape_t;

static tir_func_t *gmm_nt(const mma_shape_t *s) {
  char src[2048];
  snprintf(src, sizeof src, MMA_GMM_NT_FMT, s->m, s->k, s->n, s->k, s->m, s->n, s->m, s->n, s->k);
  return parse(src);
}

/* The GMM-NT tensorized by the trace; the schedule is the caller's. */
static sch_t *gmm_nt_tensorized(const mma_shape_t *s) {
  tir_func_t *f = gmm_nt(s);
  char py[8192];
  int warps = s->wm * s->wn;
  snprintf(py, sizeof py, MMA_TRACE_FMT, s->wm, 1, s->wn, MMA_TENSORIZE, warps, warps);
  sch_t *sch = schedule_py(f, py);
  tir_func_free(f);
  return sch;
}

/* Random float16 bits in [-4, 4): products and sums of those round in
 * float32, so the order of the additions shows in the last bits. */
static uint16_t *random_f16(mlc_rng_t *rng, size_t n) {
  uint16_t *p = mlc_malloc(n * sizeof *p);
  assert_non_null(p);
  for (size_t i = 0; i < n; i++) p[i] = tir_f32_to_f16((float)(8.0 * mlc_rng_uniform(rng) - 4.0));
  return p;
}

/* C of f on the inputs a, b (C starts as NaN bits, so an element left
 * unwritten shows). The caller frees it. */
static float *run_gmm_nt(const tir_func_t *f, const mma_shape_t *s, uint16_t *a, uint16_t *b) {
  size_t nc = (size_t)s->m * (size_t)s->n;
  float *c = mlc_malloc(nc * sizeof *c);
  assert_non_null(c);
  memset(c, 0xFF, nc * sizeof *c);
  tir_arg_t args[3] = {arg_2d(a, s->m, s->k, tir_dt_FLOAT16()), arg_2d(b, s->n, s->k, tir_dt_FLOAT16()),
                       arg_2d(c, s->m, s->n, tir_dt_FLOAT32())};
  run3(f, args);
  return c;
}

static void assert_same_bits(const float *want, const float *got, size_t n, const char *what) {
  for (size_t i = 0; i < n; i++) {
    uint32_t x, y;
    memcpy(&x, &want[i], sizeof x);
    memcpy(&y, &got[i], sizeof y);
    if (x != y) {
      fprintf(stderr, "%s: C[%zu] is %.9g (0x%08x), unscheduled %.9g (0x%08x)\n", what, i, (double)got[i], y,
              (double)want[i], x);
      fail();
    }
  }
}

static const mma_shape_t mma_shapes[] = {
    {32, 16, 32, 2, 1}, /* /work/notes/mma: 2 blocks of 2 warps, 2 steps of k */
    {64, 32, 48, 2, 2}, /* 4 blocks of 2x2 warps, 3 steps of k */
};

/* The scheduled program really calls the three mma.sync functions, and it
 * and its lowering compute the unscheduled GMM-NT to the bit. */
static void test_tensorized_gmm_nt_and_its_lowering_agree_bitwise(void **state) {
  (void)state;
  mlc_target_t target;
  assert_int_equal(mlc_target_parse(&target, "cuda -arch=sm_80"), MLC_OK);
  for (size_t i = 0; i < sizeof mma_shapes / sizeof mma_shapes[0]; i++) {
    const mma_shape_t *s = &mma_shapes[i];
    tir_func_t *plain = gmm_nt(s), *low = NULL;
    sch_t *sch = gmm_nt_tensorized(s);
    char *text = tir_print_func(sch_func(sch));
    assert_non_null(text);
    assert_non_null(strstr(text, "\"ptx_ldmatrix_x4\""));
    assert_non_null(strstr(text, "\"ptx_ldmatrix_x2\""));
    assert_non_null(strstr(text, "\"ptx_mma_m16n8k16_row_col_f16f16f32\""));
    mlc_free(text);
    if (mlc_lower(&low, sch_func(sch), &target, NULL) != MLC_OK) {
      fprintf(stderr, "lower: %s\n", mlc_error_last());
      fail();
    }
    mlc_rng_t rng;
    mlc_rng_seed(&rng, 20 + i);
    uint16_t *a = random_f16(&rng, (size_t)s->m * (size_t)s->k);
    uint16_t *b = random_f16(&rng, (size_t)s->n * (size_t)s->k);
    float *want = run_gmm_nt(plain, s, a, b);
    float *got = run_gmm_nt(sch_func(sch), s, a, b);
    float *lowered = run_gmm_nt(low, s, a, b);
    size_t nc = (size_t)s->m * (size_t)s->n;
    assert_same_bits(want, got, nc, "tensorized");
    assert_same_bits(want, lowered, nc, "lowered");
    mlc_free(a);
    mlc_free(b);
    mlc_free(want);
    mlc_free(got);
    mlc_free(lowered);
    tir_func_free(low);
    sch_free(sch);
    tir_func_free(plain);
  }
}

/* ------------------------------------------------------------------------ */
/* ldmatrix distribution                                                     */
/* ------------------------------------------------------------------------ */

static const char *ldmatrix_x4_src =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 16), \"float16\"), W: T.Buffer((32, 8), \"float16\")):\n"
    "    for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
    "        W[tx, T.Ramp(0, 1, 8)] = T.call_extern(\"float16x8\", \"ptx_ldmatrix_x4\", "
    "A[tx % 16, T.Ramp(tx // 16 * 8, 1, 8)])\n";

static const char *ldmatrix_x2_src =
    "@T.prim_func\n"
    "def main(B: T.Buffer((8, 16), \"float16\"), W: T.Buffer((32, 4), \"float16\")):\n"
    "    for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
    "        W[tx, T.Ramp(0, 1, 4)] = T.call_extern(\"float16x4\", \"ptx_ldmatrix_x2\", "
    "B[tx % 8, T.Ramp(tx // 8 % 2 * 8, 1, 8)])\n";

/* Runs an ldmatrix program on the rows x 16 matrix with element (i, j) =
 * i * 16 + j; *w gets the (32, regs) warp buffer. */
static void run_ldmatrix(const char *src, int rows, int regs, uint16_t *w) {
  tir_func_t *f = parse(src);
  uint16_t m[16 * 16];
  for (int i = 0; i < rows * 16; i++) m[i] = tir_f32_to_f16((float)i);
  memset(w, 0xFF, 32 * (size_t)regs * sizeof *w);
  tir_arg_t args[2] = {arg_2d(m, rows, 16, tir_dt_FLOAT16()), arg_2d(w, 32, regs, tir_dt_FLOAT16())};
  int rc = tir_interp_run(f, args, 2);
  if (rc != MLC_OK) fprintf(stderr, "interp: %s\n", mlc_error_last());
  assert_int_equal(rc, MLC_OK);
  tir_func_free(f);
}

/* Every element lands where mma_ldmatrix_a_16x16_f16's description puts it:
 * A[i, j] -> W[i % 8 * 4 + j % 8 // 2, j // 8 * 4 + i // 8 * 2 + j % 2]. */
static void test_ldmatrix_x4_gives_the_fragment_layout_of_a(void **state) {
  (void)state;
  uint16_t w[32 * 8];
  run_ldmatrix(ldmatrix_x4_src, 16, 8, w);
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      int lane = i % 8 * 4 + j % 8 / 2, reg = j / 8 * 4 + i / 8 * 2 + j % 2;
      assert_int_equal((int)tir_f16_to_f32(w[lane * 8 + reg]), i * 16 + j);
    }
}

/* mma_ldmatrix_b_8x16_f16's description: B[i, j] -> W[i * 4 + j % 8 // 2,
 * j // 8 * 2 + j % 2]; the addresses of lanes 16..31 are not used. */
static void test_ldmatrix_x2_gives_the_fragment_layout_of_b(void **state) {
  (void)state;
  uint16_t w[32 * 4];
  run_ldmatrix(ldmatrix_x2_src, 8, 4, w);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 16; j++) {
      int lane = i * 4 + j % 8 / 2, reg = j / 8 * 2 + j % 2;
      assert_int_equal((int)tir_f16_to_f32(w[lane * 4 + reg]), i * 16 + j);
    }
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* An mma program: `loop` is the loop over tx, `between` what comes between
 * it and the store (lines indented by 6), `dtype` the call's result dtype
 * and `operands` its operands. */
static tir_func_t *mma_program(const char *loop, const char *between, const char *dtype, const char *operands) {
  char src[2048];
  snprintf(src, sizeof src,
           "@T.prim_func\n"
           "def main(A: T.Buffer((32, 8), \"float16\"), B: T.Buffer((32, 4), \"float16\"), "
           "C: T.Buffer((32, 4), \"float32\")):\n"
           "    %s\n%s"
           "        C[tx, T.Ramp(0, 1, 4)] = T.call_extern(\"%s\", \"ptx_mma_m16n8k16_row_col_f16f16f32\", %s)\n",
           loop, between, dtype, operands);
  return parse(src);
}

static const char *mma_operands = "A[tx, T.Ramp(0, 1, 8)], B[tx, T.Ramp(0, 1, 4)], C[tx, T.Ramp(0, 1, 4)]";
static const char *lanes32 = "for tx in T.thread_binding(32, thread=\"threadIdx.x\"):";

static void expect_mma_error(tir_func_t *f, const char *n1, const char *n2) {
  uint16_t a[32 * 8] = {0}, b[32 * 4] = {0};
  float c[32 * 4] = {0};
  tir_arg_t args[3] = {arg_2d(a, 32, 8, tir_dt_FLOAT16()), arg_2d(b, 32, 4, tir_dt_FLOAT16()),
                       arg_2d(c, 32, 4, tir_dt_FLOAT32())};
  expect_runtime_error(f, args, 3, n1, n2);
  tir_func_free(f);
}

static void test_mma_outside_a_warp_of_32_lanes_is_an_error(void **state) {
  (void)state;
  /* a serial loop: no threadIdx.x loop around the call */
  expect_mma_error(mma_program("for tx in range(32):", "", "float32x4", mma_operands),
                   "function \"main\": ptx_mma_m16n8k16_row_col_f16f16f32: a warp-collective call outside any "
                   "threadIdx.x loop",
                   NULL);
  /* threadIdx.y is not the lane */
  expect_mma_error(mma_program("for tx in T.thread_binding(32, thread=\"threadIdx.y\"):", "", "float32x4",
                               mma_operands),
                   "outside any threadIdx.x loop", NULL);
  expect_mma_error(mma_program("for tx in T.thread_binding(16, thread=\"threadIdx.x\"):", "", "float32x4",
                               mma_operands),
                   "ptx_mma_m16n8k16_row_col_f16f16f32: a warp-collective call in threadIdx.x loop tx of extent "
                   "16, not 32",
                   NULL);
  /* a loop between the lane loop and the call */
  expect_mma_error(mma_program(lanes32, "      for u in range(1):\n", "float32x4", mma_operands),
                   "variables are bound between threadIdx.x loop tx and the call", NULL);
}

static void test_mma_with_wrong_dtypes_or_operands_is_an_error(void **state) {
  (void)state;
  expect_mma_error(mma_program(lanes32, "", "float32x4", "A[tx, T.Ramp(0, 1, 8)], B[tx, T.Ramp(0, 1, 4)]"),
                   "ptx_mma_m16n8k16_row_col_f16f16f32 takes 3 operand(s), got 2", NULL);
  expect_mma_error(mma_program(lanes32, "", "float32x4", "A[tx, T.Ramp(0, 1, 4)], B[tx, T.Ramp(0, 1, 4)], C[tx, T.Ramp(0, 1, 4)]"),
                   "ptx_mma_m16n8k16_row_col_f16f16f32: operand 0 is float16x4, expected float16x8", NULL);
  /* .x2 gives 4 halves, not 8 */
  tir_func_t *f = parse("@T.prim_func\n"
                        "def main(B: T.Buffer((8, 16), \"float16\"), W: T.Buffer((32, 8), \"float16\")):\n"
                        "    for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
                        "        W[tx, T.Ramp(0, 1, 8)] = T.call_extern(\"float16x8\", \"ptx_ldmatrix_x2\", "
                        "B[tx % 8, T.Ramp(tx // 8 % 2 * 8, 1, 8)])\n");
  uint16_t b[8 * 16] = {0}, w[32 * 8];
  tir_arg_t args[2] = {arg_2d(b, 8, 16, tir_dt_FLOAT16()), arg_2d(w, 32, 8, tir_dt_FLOAT16())};
  expect_runtime_error(f, args, 2, "function \"main\": ptx_ldmatrix_x2: the result is float16x8, expected float16x4",
                       NULL);
  tir_func_free(f);
}

/* Lane 0 of ldmatrix .x4 reads the rows lanes 0, 8, 16 and 24 give; lane
 * 16's is outside a 16-row matrix: the error names the lane. */
static void test_ldmatrix_operand_out_of_bounds_for_another_lane_names_it(void **state) {
  (void)state;
  tir_func_t *f = parse("@T.prim_func\n"
                        "def main(A: T.Buffer((16, 16), \"float16\"), W: T.Buffer((32, 8), \"float16\")):\n"
                        "    for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
                        "        with T.block(\"ld\"):\n"
                        "            T.reads(A[0:16, 0:16])\n"
                        "            T.writes(W[0:32, 0:8])\n"
                        "            W[tx, T.Ramp(0, 1, 8)] = T.call_extern(\"float16x8\", \"ptx_ldmatrix_x4\", "
                        "A[tx, T.Ramp(0, 1, 8)])\n");
  uint16_t a[16 * 16] = {0}, w[32 * 8];
  tir_arg_t args[2] = {arg_2d(a, 16, 16, tir_dt_FLOAT16()), arg_2d(w, 32, 8, tir_dt_FLOAT16())};
  expect_runtime_error(f, args, 2, "block \"ld\": ptx_ldmatrix_x4: operand 0 evaluated for lane 16 (tx = 16): buffer A: "
                       "index [16, 0] out of bounds for shape (16, 16)", NULL);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tensorized_gmm_nt_and_its_lowering_agree_bitwise),
      cmocka_unit_test(test_ldmatrix_x4_gives_the_fragment_layout_of_a),
      cmocka_unit_test(test_ldmatrix_x2_gives_the_fragment_layout_of_b),
      cmocka_unit_test(test_mma_outside_a_warp_of_32_lanes_is_an_error),
      cmocka_unit_test(test_mma_with_wrong_dtypes_or_operands_is_an_error),
      cmocka_unit_test(test_ldmatrix_operand_out_of_bounds_for_another_lane_names_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
