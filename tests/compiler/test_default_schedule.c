/*
 * test_default_schedule.c - mlc_default_schedule (compiler.h), what
 * mlc-compile uses for a function nobody tuned:
 * - every built-in workload (small shapes, float32): the default-scheduled
 *   function gives the unscheduled one's outputs in the reference
 *   interpreter, and the code built from it (mlc_build, JIT, DLPack call)
 *   gives the interpreter's result; the schedule is parallel and vectorized
 *   where the contract says it is;
 * - the exact TVMScript of the default schedule of a small GMM and of an
 *   element-wise function (AVX-512 target: 16 float32 lanes), and the
 *   vector length on an AVX2 target (8 lanes);
 * - GMM-256 (where the default pays off: not timed here) gets a parallel
 *   loop and a vectorized loop that lowering really turns into vectors;
 * - the schedule's trace replays (JSON round trip) to the same program;
 * - a non-llvm target is refused and leaves the schedule alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "e2e_helpers.h"

#define AVX512_TARGET "llvm -mcpu=skylake-avx512 -num-cores=4"

static mlc_target_t target_of(const char *text) {
  mlc_target_t t;
  assert_int_equal(mlc_target_parse(&t, text), MLC_OK);
  return t;
}

/* The default schedule of f for `target` (a fresh schedule; sch_free). */
static sch_t *default_of(const tir_func_t *f, const char *target) {
  mlc_target_t t = target_of(target);
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_RICH), MLC_OK);
  if (mlc_default_schedule(sch, &t) != MLC_OK) fail_msg("mlc_default_schedule: %s", mlc_error_last());
  return sch;
}

/* ------------------------------------------------------------------------ */
/* Loop kinds of a program                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  tir_visitor_t v;
  int parallel, vectorized, unrolled;
  int64_t vector_extent; /* of the first vectorized loop */
} kinds_t;

static bool count_loop(tir_visitor_t *v, tir_stmt_t *s) {
  kinds_t *k = v->payload;
  if (s->kind != TIR_FOR) return true;
  k->parallel += s->u.loop.kind == TIR_FOR_PARALLEL;
  k->unrolled += s->u.loop.kind == TIR_FOR_UNROLLED;
  if (s->u.loop.kind == TIR_FOR_VECTORIZED && k->vectorized++ == 0) tir_as_int(s->u.loop.extent, &k->vector_extent);
  return true;
}

static kinds_t kinds_of(const tir_func_t *f) {
  kinds_t k;
  memset(&k, 0, sizeof k);
  k.v.stmt = count_loop;
  k.v.payload = &k;
  tir_visit_stmt(&k.v, f->body);
  return k;
}

/* ------------------------------------------------------------------------ */
/* Every workload                                                            */
/* ------------------------------------------------------------------------ */

/* Runs the interpreter on `scheduled` with the case's inputs into c->got
 * and compares with the unscheduled function's result. */
static void check_interpreted(e2e_case_t *c, const tir_func_t *scheduled) {
  tir_arg_t args[E2E_MAX_ARGS];
  memset(args, 0, sizeof args);
  for (int i = 0; i < c->n; i++) {
    memcpy(c->got[i], c->init[i], c->bytes[i]);
    args[i] = (tir_arg_t){.data = c->got[i], .ndim = c->ndim[i], .dtype = c->dt[i]};
    memcpy(args[i].shape, c->shape[i], sizeof args[i].shape);
  }
  if (tir_interp_run(scheduled, args, c->n) != MLC_OK)
    fail_msg("%s: the interpreter failed on the default schedule: %s", c->workload, mlc_error_last());
  char msg[512];
  double dev;
  if (!e2e_compare(c, msg, sizeof msg, &dev)) fail_msg("%s [default, interpreted]: %s", c->workload, msg);
}

/* What the default schedule of each workload must contain: the row
 * reductions (GMV) get no vector loop; everything else has an element-wise
 * or matmul-like block that does. Every workload has a loop nest with at
 * least two iterations to run in parallel. */
static bool expects_vector(const char *workload) { return strcmp(workload, "GMV") != 0; }

static void test_every_workload_default_schedule_keeps_its_meaning(void **state) {
  (void)state;
  e2e_assert_every_workload_has_a_shape();
  for (size_t i = 0; i < sizeof e2e_shapes / sizeof *e2e_shapes; i++) {
    const char *name = e2e_shapes[i].name;
    e2e_case_t c;
    e2e_case_init(&c, name, "float32", e2e_workload(name, tir_dt_FLOAT32()), 2024 + i);
    e2e_case_reference(&c);
    sch_t *sch = default_of(c.f, E2E_TARGET);
    kinds_t k = kinds_of(sch_func(sch));
    if (getenv("E2E_VERBOSE")) {
      char *text = tir_print_func(sch_func(sch));
      printf("%s: default schedule:\n%s", name, text ? text : "(out of memory)\n");
      mlc_free(text);
    }
    if (k.parallel == 0 || (expects_vector(name) && k.vectorized == 0)) {
      e2e_print_trace(sch);
      fail_msg("%s: the default schedule has %d parallel and %d vectorized loops", name, k.parallel, k.vectorized);
    }
    check_interpreted(&c, sch_func(sch));
    e2e_case_check(&c, "default", sch_func(sch), sch);
    sch_free(sch);
    e2e_case_free(&c);
  }
}

/* ------------------------------------------------------------------------ */
/* Exact programs                                                            */
/* ------------------------------------------------------------------------ */

static void assert_script(const tir_func_t *f, const char *want) {
  char *got = tir_print_func(f);
  assert_non_null(got);
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "--- want\n%s--- got\n%s", want, got);
    mlc_free(got);
    fail();
  }
  mlc_free(got);
}

/* GMM 8x32x4: rows tiled by 4 (unrolled), columns by 16 lanes (vectorized),
 * k between the tile loops and the tile; the outer loops (2 x 2 = 4
 * iterations, the target's cores) fused and parallel; the init split off
 * at k with its column loop vectorized. */
static const char GMM_DEFAULT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def gmm(A: T.Buffer((8, 4), \"float32\"), B: T.Buffer((4, 32), \"float32\"), C: T.Buffer((8, 32), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"gmm\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    for i_0_j_0_fused in T.parallel(4):\n"
    "        for i_1_init in T.unroll(4):\n"
    "            for j_1_init in T.vectorized(16):\n"
    "                with T.block(\"C_init\"):\n"
    "                    v_i = T.axis.spatial(8, i_0_j_0_fused // 2 * 4 + i_1_init)\n"
    "                    v_j = T.axis.spatial(32, i_0_j_0_fused % 2 * 16 + j_1_init)\n"
    "                    T.reads()\n"
    "                    T.writes(C[v_i, v_j])\n"
    "                    C[v_i, v_j] = T.float32(0)\n"
    "        for k in range(4):\n"
    "            for i_1 in T.unroll(4):\n"
    "                for j_1 in T.vectorized(16):\n"
    "                    with T.block(\"C_update\"):\n"
    "                        v_i = T.axis.spatial(8, i_0_j_0_fused // 2 * 4 + i_1)\n"
    "                        v_j = T.axis.spatial(32, i_0_j_0_fused % 2 * 16 + j_1)\n"
    "                        v_k = T.axis.reduce(4, k)\n"
    "                        T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])\n"
    "                        T.writes(C[v_i, v_j])\n"
    "                        C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]\n";

static void test_default_schedule_of_a_small_gmm(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  int64_t shape[3] = {8, 32, 4};
  assert_int_equal(tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
  sch_t *sch = default_of(f, AVX512_TARGET);
  assert_script(sch_func(sch), GMM_DEFAULT);
  sch_free(sch);
  tir_func_free(f);
}

static const char RELU_SRC[] =
    "@T.prim_func\n"
    "def relu(A: T.Buffer((8, 64), \"float32\"), B: T.Buffer((8, 64), \"float32\")):\n"
    "    for i, j in T.grid(8, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            B[vi, vj] = T.max(A[vi, vj], T.float32(0))\n";

/* Element-wise: the inner loop split by 16 lanes and vectorized, the rest
 * (8 x 4 = 32 iterations) fused and parallel. */
static const char RELU_DEFAULT[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def relu(A: T.Buffer((8, 64), \"float32\"), B: T.Buffer((8, 64), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i_j_0_fused in T.parallel(32):\n"
    "        for j_1 in T.vectorized(16):\n"
    "            with T.block(\"B\"):\n"
    "                vi = T.axis.spatial(8, i_j_0_fused // 4)\n"
    "                vj = T.axis.spatial(64, i_j_0_fused % 4 * 16 + j_1)\n"
    "                T.reads(A[vi, vj])\n"
    "                T.writes(B[vi, vj])\n"
    "                B[vi, vj] = T.max(A[vi, vj], T.float32(0))\n";

static tir_func_t *parse(const char *src) {
  tir_func_t *f = NULL;
  tir_parse_error_t perr;
  if (tir_parse_func(&f, src, strlen(src), "test.py", &perr) != MLC_OK) fail_msg("parse: %s", mlc_error_last());
  return f;
}

static void test_default_schedule_of_an_elementwise_function(void **state) {
  (void)state;
  tir_func_t *f = parse(RELU_SRC);
  sch_t *sch = default_of(f, AVX512_TARGET);
  assert_script(sch_func(sch), RELU_DEFAULT);
  sch_free(sch);
  tir_func_free(f);
}

/* AVX2 has 8 float32 lanes: the vector loop is 8 long. */
static void test_vector_length_follows_the_target(void **state) {
  (void)state;
  tir_func_t *f = parse(RELU_SRC);
  sch_t *sch = default_of(f, "llvm -mcpu=haswell -num-cores=4");
  kinds_t k = kinds_of(sch_func(sch));
  assert_int_equal(k.vectorized, 1);
  assert_int_equal(k.vector_extent, 8);
  sch_free(sch);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* GMM-256, the trace, other targets                                         */
/* ------------------------------------------------------------------------ */

/* The default GMM-256 is much faster than the naive loop nest because it
 * is parallel and really vectorized (benchmarks time it; tests do not):
 * here, a parallel loop, a vectorized update and init, an unrolled row
 * tile, and lowering keeps every vector loop (no "kept scalar" note). */
static void test_default_gmm_256_is_parallel_and_vectorized(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  int64_t shape[3] = {256, 256, 256};
  assert_int_equal(tir_workload_build(&f, "GMM", shape, 3, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
  sch_t *sch = default_of(f, AVX512_TARGET);
  kinds_t k = kinds_of(sch_func(sch));
  assert_int_equal(k.parallel, 1);
  assert_int_equal(k.vectorized, 2); /* update and init */
  assert_int_equal(k.vector_extent, 16);
  assert_true(k.unrolled >= 1);
  mlc_target_t t = target_of(AVX512_TARGET);
  mlc_strbuf_t notes;
  mlc_sb_init(&notes);
  mlc_lower_options_t lo = {.notes = &notes};
  tir_func_t *lowered = NULL;
  assert_int_equal(mlc_lower(&lowered, sch_func(sch), &t, &lo), MLC_OK);
  if (strstr(mlc_sb_str(&notes), "kept scalar")) fail_msg("lowering kept a vector loop scalar:\n%s", mlc_sb_str(&notes));
  char *text = tir_print_func(lowered);
  assert_non_null(strstr(text, "T.Ramp("));
  mlc_free(text);
  tir_func_free(lowered);
  mlc_sb_free(&notes);
  sch_free(sch);
  tir_func_free(f);
}

/* The schedule is recorded like any other: its trace, through JSON,
 * replayed on a fresh schedule of the function, is the same program. */
static void test_default_schedule_trace_replays(void **state) {
  (void)state;
  tir_func_t *f = NULL;
  int64_t shape[9] = {1, 8, 8, 16, 16, 3, 3, 1, 1};
  assert_int_equal(tir_workload_build(&f, "C2D", shape, 9, tir_dt_FLOAT32(), (tir_dtype_t){0, 0, 0}), MLC_OK);
  sch_t *sch = default_of(f, AVX512_TARGET);
  json_t *json = NULL;
  assert_int_equal(sch_trace_to_json(&json, sch_get_trace(sch)), MLC_OK);
  sch_trace_t *trace = NULL;
  assert_int_equal(sch_trace_from_json(&trace, json), MLC_OK);
  json_decref(json);
  sch_t *again = NULL;
  assert_int_equal(sch_create(&again, f, 7, SCH_ERRORS_RICH), MLC_OK);
  assert_int_equal(sch_trace_apply(again, trace, true), MLC_OK);
  char why[256] = "";
  if (!tir_func_equal(sch_func(sch), sch_func(again), why, sizeof why)) fail_msg("replay differs: %s", why);
  sch_trace_free(trace);
  sch_free(again);
  sch_free(sch);
  tir_func_free(f);
}

/* GPU targets: the spatial loops bound to blockIdx.x / threadIdx.x. */
static void test_gpu_target_binds_blocks_and_threads(void **state) {
  (void)state;
  tir_func_t *f = parse(RELU_SRC);
  mlc_target_t t = target_of("cuda -arch=sm_80");
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_RICH), MLC_OK);
  assert_int_equal(mlc_default_schedule(sch, &t), MLC_OK);
  assert_true(sch_get_trace(sch)->n > 0);
  char *text = tir_print_func(sch_func(sch));
  assert_non_null(strstr(text, "thread=\"threadIdx.x\""));
  mlc_free(text);
  assert_int_equal(mlc_default_schedule(NULL, &t), MLC_EINVAL);
  sch_free(sch);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_workload_default_schedule_keeps_its_meaning),
      cmocka_unit_test(test_default_schedule_of_a_small_gmm),
      cmocka_unit_test(test_default_schedule_of_an_elementwise_function),
      cmocka_unit_test(test_vector_length_follows_the_target),
      cmocka_unit_test(test_default_gmm_256_is_parallel_and_vectorized),
      cmocka_unit_test(test_default_schedule_trace_replays),
      cmocka_unit_test(test_gpu_target_binds_blocks_and_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
