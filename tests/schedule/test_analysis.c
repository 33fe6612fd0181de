/*
 * test_analysis.c - the precondition analyses (schedule/analysis/): block
 * kinds, affine bindings, single-child chains, child blocks, dependences and
 * region relaxation (its fast linear path checked against the general one),
 * each on a case that holds and one that does not; and that remembered
 * affine answers follow the program.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "schedule/analysis/analysis.h"
#include "sched_testing.h"

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"

/* Blocks of every kind in one function: an elementwise block (complete), a
 * reduction, two blocks writing one buffer (not dominant), an opaque
 * read-modify-write, and split / scaled / non-affine bindings. */
static const char *KINDS =
    HEADER
    "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64,), \"float32\"), C: T.Buffer((64,), \"float32\"), D: T.Buffer((64,), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i_0, i_1 in T.grid(4, 16):\n"
    "        with T.block(\"split\"):\n"
    "            vi = T.axis.spatial(64, i_0 * 16 + i_1)\n"
    "            T.reads(A[vi, 0])\n"
    "            T.writes(C[vi])\n"
    "            C[vi] = A[vi, 0]\n"
    "    for i, k in T.grid(64, 64):\n"
    "        with T.block(\"sum\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            T.reads(B[vi], A[vi, vk])\n"
    "            T.writes(B[vi])\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0)\n"
    "            B[vi] = B[vi] + A[vi, vk]\n"
    "    for i in range(32):\n"
    "        with T.block(\"scaled\"):\n"
    "            vi = T.axis.spatial(64, i * 2)\n"
    "            T.reads(A[vi, 1])\n"
    "            T.writes(D[vi])\n"
    "            D[vi] = A[vi, 1]\n"
    "    for i in range(32):\n"
    "        with T.block(\"scaled_odd\"):\n"
    "            vi = T.axis.spatial(64, i * 2 + 1)\n"
    "            T.reads(A[vi, 2])\n"
    "            T.writes(D[vi])\n"
    "            D[vi] = A[vi, 2]\n"
    "    for i, k in T.grid(8, 8):\n"
    "        with T.block(\"square\"):\n"
    "            vi = T.axis.spatial(64, i * i)\n"
    "            vk = T.axis.reduce(64, k)\n"
    "            T.reads(C[vi], A[vi, vk])\n"
    "            T.writes(C[vi])\n"
    "            with T.init():\n"
    "                C[vi] = T.float32(0)\n"
    "            C[vi] = C[vi] + A[vi, vk]\n"
    "    for i, u, j_0, j_1 in T.grid(64, 1, 7, 10):\n"
    "        with T.block(\"pred\"):\n"
    "            vj = T.axis.spatial(64, j_0 * 10 + j_1)\n"
    "            T.where(j_0 * 10 + j_1 < 64)\n"
    "            T.reads(A[vj, 3])\n"
    "            T.writes(B[vj])\n"
    "            B[vj] = A[vj, 3]\n";

static sch_path_t path_of(sch_t *sch, const char *name) {
  sch_path_t path;
  assert_true(sch_find_block_by_name(sch, name, &path));
  return path;
}

static void complete_and_reduction_blocks(void **state) {
  sch_t *sch = st_schedule(KINDS);
  sch_path_t p = path_of(sch, "split");
  assert_false(sch_is_complete_block(&p)); /* C is also written by "square" */
  p = path_of(sch, "sum");
  assert_false(sch_is_complete_block(&p));
  assert_false(sch_is_reduction_block(sch, &p)); /* "pred" writes B too */
  p = path_of(sch, "scaled");
  assert_false(sch_is_complete_block(&p)); /* scaled_odd writes D too */
  sch_free(sch);

  sch = st_schedule(
      HEADER
      "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64,), \"float32\"), C: T.Buffer((64,), \"float32\")):\n"
      "    # with T.block(\"root\"):\n"
      "    for i in range(64):\n"
      "        with T.block(\"copy\"):\n"
      "            vi = T.axis.spatial(64, i)\n"
      "            T.reads(A[vi, 0])\n"
      "            T.writes(C[vi])\n"
      "            C[vi] = A[vi, 0]\n"
      "    for i, k in T.grid(64, 64):\n"
      "        with T.block(\"sum\"):\n"
      "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
      "            T.reads(B[vi], A[vi, vk])\n"
      "            T.writes(B[vi])\n"
      "            with T.init():\n"
      "                B[vi] = T.float32(0)\n"
      "            B[vi] = B[vi] + A[vi, vk]\n");
  p = path_of(sch, "copy");
  assert_true(sch_is_complete_block(&p));
  assert_false(sch_is_reduction_block(sch, &p)); /* no init */
  assert_int_equal(sch_check_complete_or_reduction(sch, "compute_at", &p), MLC_OK);
  p = path_of(sch, "sum");
  assert_false(sch_is_complete_block(&p));
  assert_true(sch_is_reduction_block(sch, &p));
  assert_int_equal(sch_check_complete_or_reduction(sch, "compute_at", &p), MLC_OK);
  sch_free(sch);
}

static void neither_complete_nor_reduction_names_both_reasons(void **state) {
  sch_t *sch = st_schedule(KINDS);
  sch_set_error_mode(sch, SCH_ERRORS_FAST);
  sch_path_t p = path_of(sch, "sum");
  assert_int_equal(sch_check_complete_or_reduction(sch, "compute_inline", &p), MLC_ESCHEDULE);
  assert_string_equal(sch_error(sch),
                      "compute_inline: block sum is neither a complete block (iter var vk is not data parallel) "
                      "nor a reduction block (another block of the scope also writes B)");
  p = path_of(sch, "square");
  assert_int_equal(sch_check_complete_or_reduction(sch, "rfactor", &p), MLC_ESCHEDULE);
  assert_non_null(strstr(sch_error(sch), "nor a reduction block (its binding is not affine: "));
  sch_free(sch);
}

static void affine_bindings_as_tvm_judges_them(void **state) {
  sch_t *sch = st_schedule(KINDS);
  sch_path_t p = path_of(sch, "split");
  assert_true(sch_has_affine_binding(sch, &p));
  p = path_of(sch, "sum");
  assert_true(sch_has_affine_binding(sch, &p));
  /* Unused loops (i), a unit loop (u) and a predicated split are fine. */
  p = path_of(sch, "pred");
  assert_true(sch_has_affine_binding(sch, &p));
  /* `i * 2` is one split with scale 2: not affine for TVM. */
  p = path_of(sch, "scaled");
  assert_false(sch_has_affine_binding(sch, &p));
  p = path_of(sch, "square");
  assert_false(sch_has_affine_binding(sch, &p));
  assert_int_equal(sch_check_affine_binding(sch, "blockize", &p), MLC_ESCHEDULE);
  assert_true(strncmp(sch_error(sch), "blockize: block square does not have an affine binding (", 56) == 0);
  p = path_of(sch, "root");
  assert_true(sch_has_affine_binding(sch, &p));
  sch_free(sch);
}

static const char *TWO_UNDER_ONE_LOOP =
    HEADER
    "def main(A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((16, 16))\n"
    "    for i in range(16):\n"
    "        for j in range(16):\n"
    "            with T.block(\"B\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                T.reads(A[vi, vj])\n"
    "                T.writes(B[vi, vj])\n"
    "                B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "        for j_0, j_1 in T.grid(4, 4):\n"
    "            with T.block(\"C\"):\n"
    "                vi = T.axis.spatial(16, i)\n"
    "                vj = T.axis.spatial(16, j_0 * 4 + j_1)\n"
    "                T.reads(B[vi, vj])\n"
    "                T.writes(C[vi, vj])\n"
    "                C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static void single_child_chain(void **state) {
  sch_t *sch = st_schedule(TWO_UNDER_ONE_LOOP);
  sch_set_error_mode(sch, SCH_ERRORS_FAST);
  sch_path_t p = path_of(sch, "C");
  /* root, i, seq, j_0, j_1, C */
  assert_int_equal(p.n, 6);
  assert_int_equal(sch_check_single_child_chain(sch, "fuse", &p, 3, 4), MLC_OK);
  assert_int_equal(sch_check_single_child_chain(sch, "fuse", &p, 1, 4), MLC_ESCHEDULE);
  assert_string_equal(sch_error(sch), "fuse: loop j_0 is not the only child of its parent loop i");
  sch_free(sch);
}

static void child_blocks_and_dependences(void **state) {
  sch_t *sch = st_schedule(TWO_UNDER_ONE_LOOP);
  sch_path_t p = path_of(sch, "C");
  tir_stmt_t *kids[4];
  assert_int_equal(sch_child_blocks(p.stmts[0], kids, 4), 2);
  assert_string_equal(kids[0]->u.realize.block->name, "B");
  assert_string_equal(kids[1]->u.realize.block->name, "C");
  assert_int_equal(sch_child_blocks(p.stmts[1], kids, 4), 2); /* under loop i */
  assert_int_equal(sch_child_blocks(p.stmts[3], kids, 4), 1); /* under loop j_0 */
  assert_int_equal(sch_child_blocks(p.stmts[0], kids, 1), 2); /* count beyond cap */
  tir_stmt_t **deps;
  int n;
  assert_int_equal(sch_block_producers(sch, &p, &deps, &n), MLC_OK);
  assert_int_equal(n, 1);
  assert_string_equal(deps[0]->u.realize.block->name, "B");
  assert_int_equal(sch_block_consumers(sch, &p, &deps, &n), MLC_OK);
  assert_int_equal(n, 0);
  /* Compact dataflow under loop i: B and C are complete among its blocks. */
  assert_int_equal(sch_check_compact_dataflow(sch, "parallel", &p, 1), MLC_OK);
  sch_free(sch);
}

/* What one iteration of loop i (or of j_0) touches of C's read of B. */
static void relax_region_under_a_loop(void **state) {
  sch_t *sch = st_schedule(TWO_UNDER_ONE_LOOP);
  sch_path_t p = path_of(sch, "C");
  const tir_block_t *c = p.stmts[p.n - 1]->u.realize.block;
  tir_range_t r[2];
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);

  assert_int_equal(sch_relax_region(sch, &p, 1, &c->reads[0], r), MLC_OK); /* above = loop i */
  for (int d = 0; d < 2; d++) {
    tir_print_expr(&sb, r[d].min);
    mlc_sb_append(&sb, ":");
    tir_print_expr(&sb, r[d].extent);
    mlc_sb_append(&sb, " ");
  }
  assert_string_equal(mlc_sb_str(&sb), "i:1 0:16 ");

  mlc_sb_reset(&sb);
  assert_int_equal(sch_relax_region(sch, &p, 3, &c->reads[0], r), MLC_OK); /* above = loop j_0 */
  for (int d = 0; d < 2; d++) {
    tir_print_expr(&sb, r[d].min);
    mlc_sb_append(&sb, ":");
    tir_print_expr(&sb, r[d].extent);
    mlc_sb_append(&sb, " ");
  }
  assert_string_equal(mlc_sb_str(&sb), "i:1 j_0 * 4:4 ");

  mlc_sb_reset(&sb);
  assert_int_equal(sch_relax_region(sch, &p, -1, &c->reads[0], r), MLC_OK); /* everything */
  for (int d = 0; d < 2; d++) {
    tir_print_expr(&sb, r[d].min);
    mlc_sb_append(&sb, ":");
    tir_print_expr(&sb, r[d].extent);
    mlc_sb_append(&sb, " ");
  }
  assert_string_equal(mlc_sb_str(&sb), "0:16 0:16 ");
  mlc_sb_free(&sb);
  sch_free(sch);
}

/* The remembered answers (sch_affine_entry_t) are the iteration map's:
 * kept through rewrites that leave the bindings and loop ranges alone,
 * redone when they change, never stale. */
static void affine_answers_are_remembered_until_the_binding_changes(void **state) {
  sch_t *sch = st_schedule(KINDS);
  sch_path_t p = path_of(sch, "pred");
  assert_true(sch_has_affine_binding(sch, &p));
  assert_int_equal(sch->naffine, 1);
  const void *values = sch->affine[0].values;
  /* Annotating a loop above copies it and the path, not the binding. */
  sch_rv_t b;
  const sch_rv_t *loops;
  int n;
  assert_int_equal(sch_get_block(sch, &b, "pred"), MLC_OK);
  assert_int_equal(sch_get_loops(sch, &loops, &n, b), MLC_OK);
  assert_int_equal(sch_annotate(sch, loops[2], "k", sch_arg_int(1)), MLC_OK);
  p = path_of(sch, "pred");
  assert_true(sch_has_affine_binding(sch, &p));
  assert_int_equal(sch->naffine, 1);
  assert_ptr_equal(sch->affine[0].values, values);
  /* A split rewrites the binding: the entry follows the new one. */
  const sch_rv_t *parts;
  sch_arg_t f[2] = {sch_arg_none(), sch_arg_int(4)};
  assert_int_equal(sch_split(sch, &parts, loops[3], f, 2, true), MLC_OK);
  p = path_of(sch, "pred");
  assert_true(sch_has_affine_binding(sch, &p));
  assert_int_equal(sch->naffine, 1);
  assert_ptr_equal(sch->affine[0].values, p.stmts[p.n - 1]->u.realize.iter_values);
  assert_true((const void *)sch->affine[0].values != values);
  /* Non-affine answers are not remembered, and a copy starts afresh. */
  p = path_of(sch, "square");
  assert_false(sch_has_affine_binding(sch, &p));
  assert_int_equal(sch->naffine, 1);
  sch_t *copy;
  assert_int_equal(sch_copy(&copy, sch), MLC_OK);
  assert_int_equal(copy->naffine, 0);
  sch_free(copy);
  sch_free(sch);
}

/* sch_relax_linear gives what tir_relax_range gives, on the sums it takes,
 * and declines the rest. */
static void linear_relaxation_matches_the_general_one(void **state) {
  mlc_arena_t *a = mlc_arena_new();
  tir_analyzer_t *an = tir_analyzer_new(a);
  tir_dtype_t t = tir_dt_INT32();
  tir_var_t *x = tir_var(a, "x", t), *y = tir_var(a, "y", t), *z = tir_var(a, "z", t), *o = tir_var(a, "o", t);
  tir_analyzer_bind_const(an, o, 0, 8);
  tir_var_t *vars[3] = {x, y, z};
  tir_range_t doms[3] = {{tir_int(a, t, 0), tir_int(a, t, 4)}, {tir_int(a, t, 1), tir_int(a, t, 8)},
                         {tir_int(a, t, 0), tir_int(a, t, 3)}};
  tir_expr_t *one = tir_int(a, t, 1);
  tir_expr_t *mins[] = {
      /* o * 64 + x * 16 + y * 2 - z + 3 */
      tir_binary(a, TIR_ADD,
                 tir_binary(a, TIR_SUB,
                            tir_binary(a, TIR_ADD,
                                       tir_binary(a, TIR_ADD, tir_binary(a, TIR_MUL, o, tir_int(a, t, 64)),
                                                  tir_binary(a, TIR_MUL, x, tir_int(a, t, 16))),
                                       tir_binary(a, TIR_MUL, tir_int(a, t, 2), y)),
                            z),
                 tir_int(a, t, 3)),
      o,
      tir_binary(a, TIR_MUL, tir_binary(a, TIR_ADD, x, o), tir_int(a, t, 4)),
  };
  for (size_t i = 0; i < sizeof mins / sizeof mins[0]; i++) {
    tir_range_t r = {mins[i], one}, fast, slow;
    assert_true(sch_relax_linear(an, a, &r, vars, doms, 3, &fast));
    assert_int_equal(tir_relax_range(&slow, an, &r, vars, doms, 3), MLC_OK);
    mlc_strbuf_t f, sl;
    mlc_sb_init(&f);
    mlc_sb_init(&sl);
    tir_print_expr(&f, fast.min);
    mlc_sb_append(&f, " : ");
    tir_print_expr(&f, fast.extent);
    tir_print_expr(&sl, slow.min);
    mlc_sb_append(&sl, " : ");
    tir_print_expr(&sl, slow.extent);
    assert_string_equal(mlc_sb_str(&f), mlc_sb_str(&sl));
    mlc_sb_free(&f);
    mlc_sb_free(&sl);
  }
  tir_range_t r = {tir_binary(a, TIR_FLOOR_DIV, x, tir_int(a, t, 2)), one}, out;
  assert_false(sch_relax_linear(an, a, &r, vars, doms, 3, &out)); /* not a sum */
  r.min = tir_binary(a, TIR_MUL, x, y);
  assert_false(sch_relax_linear(an, a, &r, vars, doms, 3, &out)); /* a product of relaxed vars */
  mlc_arena_free(a);
}

/* Under a predicate bounding the split (`j_0 * 10 + j_1 < 64`), the whole
 * region is the 64 points the block writes, not the 70 of its loops. */
static void relax_region_under_a_predicate(void **state) {
  sch_t *sch = st_schedule(KINDS);
  sch_path_t p = path_of(sch, "pred");
  const tir_block_t *b = p.stmts[p.n - 1]->u.realize.block;
  tir_range_t r[1];
  assert_int_equal(sch_relax_region(sch, &p, -1, &b->writes[0], r), MLC_OK);
  assert_true(tir_is_const_int(r[0].min, 0));
  assert_true(tir_is_const_int(r[0].extent, 64));
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(complete_and_reduction_blocks),
      cmocka_unit_test(neither_complete_nor_reduction_names_both_reasons),
      cmocka_unit_test(affine_bindings_as_tvm_judges_them),
      cmocka_unit_test(single_child_chain),
      cmocka_unit_test(child_blocks_and_dependences),
      cmocka_unit_test(relax_region_under_a_loop),
      cmocka_unit_test(affine_answers_are_remembered_until_the_binding_changes),
      cmocka_unit_test(linear_relaxation_matches_the_general_one),
      cmocka_unit_test(relax_region_under_a_predicate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
