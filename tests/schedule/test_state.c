/*
 * test_state.c - the schedule core (schedule/state.c, path.c, record.c):
 * uids and random variables, paths, copy-on-write replacement, copies,
 * errors and recording.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "schedule/state.h"
#include "sched_testing.h"

/* Two elementwise blocks: B = A * 2, C = B + 1. */
static const char *TWO_BLOCKS =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 8), \"float32\"), C: T.Buffer((16, 8), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    B = T.alloc_buffer((16, 8))\n"
    "    for i, j in T.grid(16, 8):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(A[vi, vj])\n"
    "            T.writes(B[vi, vj])\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(16, 8):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            T.reads(B[vi, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n";

static sch_rv_t block_rv(sch_t *sch, const char *name) {
  sch_path_t path;
  assert_true(sch_find_block_by_name(sch, name, &path));
  return sch_rv_for_block(sch, path.stmts[path.n - 1]->u.realize.block);
}

/* The outermost loop above a block. */
static tir_stmt_t *outer_loop(sch_t *sch, const char *block) {
  sch_path_t path;
  assert_true(sch_find_block_by_name(sch, block, &path));
  tir_stmt_t *loops[8];
  int n = sch_path_loops(&path, -1, path.n - 1, loops, 8);
  assert_true(n >= 1);
  return loops[0];
}

static void create_assigns_distinct_uids_and_keeps_caller_func(void **state) {
  tir_func_t *f = st_parse(TWO_BLOCKS);
  sch_t *sch = NULL;
  assert_int_equal(sch_create(&sch, f, 1, SCH_ERRORS_FAST), MLC_OK);
  assert_ptr_not_equal(sch_func(sch), f);
  assert_int_equal(tir_func_root_block(f)->uid, 0); /* the caller's copy is untouched */
  /* root, 2 blocks, 4 loops: uids 1..7, all distinct. */
  assert_int_equal(sch->next_uid, 8);
  bool seen[8] = {false};
  for (uint32_t uid = 1; uid < 8; uid++) {
    sch_path_t path;
    assert_true(sch_find_uid(sch, uid, &path));
    tir_stmt_t *s = path.stmts[path.n - 1];
    uint32_t got = s->kind == TIR_FOR ? s->u.loop.uid : s->u.realize.block->uid;
    assert_int_equal(got, uid);
    assert_false(seen[uid]);
    seen[uid] = true;
  }
  st_assert_script(sch_func(sch), TWO_BLOCKS);
  tir_func_free(f);
  sch_free(sch);
}

static void paths_give_scope_and_loops(void **state) {
  sch_t *sch = st_schedule(TWO_BLOCKS);
  sch_path_t path;
  assert_true(sch_find_block_by_name(sch, "C", &path));
  /* root realize, seq, for i, for j, realize C */
  assert_int_equal(path.n, 5);
  assert_int_equal(path.stmts[1]->kind, TIR_SEQ);
  assert_int_equal(sch_path_scope_depth(&path, path.n - 1), 0);
  assert_int_equal(sch_path_scope_depth(&path, 0), -1);
  tir_stmt_t *loops[4];
  assert_int_equal(sch_path_loops(&path, 0, path.n - 1, loops, 4), 2);
  assert_string_equal(sch_loop_name(loops[0]), "i");
  assert_string_equal(sch_loop_name(loops[1]), "j");
  assert_false(sch_find_block_by_name(sch, "D", &path));
  sch_free(sch);
}

/* Replacing block C's outer loop copies only the path: B's loop nest is the
 * very same node afterwards, and the uids of every loop survive. */
static void replace_copies_path_and_shares_the_rest(void **state) {
  sch_t *sch = st_schedule(TWO_BLOCKS);
  tir_stmt_t *b_loop = outer_loop(sch, "B");
  tir_stmt_t *c_loop = outer_loop(sch, "C");
  sch_rv_t l_c = sch_rv_for_loop(sch, c_loop);
  tir_stmt_t *old_body = sch_func(sch)->body;

  sch_path_t path;
  assert_true(sch_find_uid(sch, c_loop->u.loop.uid, &path));
  tir_stmt_t *par = tir_stmt_copy(sch_arena(sch), c_loop);
  par->u.loop.kind = TIR_FOR_PARALLEL;
  sch_replace(sch, &path, path.n - 1, par);

  assert_ptr_not_equal(sch_func(sch)->body, old_body);
  assert_ptr_equal(outer_loop(sch, "B"), b_loop);
  tir_stmt_t *now = NULL;
  assert_int_equal(sch_get_loop_node(sch, l_c, &now), MLC_OK);
  assert_ptr_equal(now, par);
  assert_int_equal(now->u.loop.kind, TIR_FOR_PARALLEL);
  /* The old tree is intact (nobody mutated it in place). */
  assert_int_equal(c_loop->u.loop.kind, TIR_FOR_SERIAL);
  char *text = tir_print_func(sch_func(sch));
  assert_non_null(strstr(text, "for i in T.parallel(16):"));
  mlc_free(text);
  sch_free(sch);
}

/* Removing one of two statements of a SEQ collapses the SEQ. */
static void replace_with_null_removes_and_collapses_seq(void **state) {
  sch_t *sch = st_schedule(TWO_BLOCKS);
  tir_stmt_t *b_loop = outer_loop(sch, "B");
  tir_stmt_t *c_loop = outer_loop(sch, "C");
  sch_path_t path;
  assert_true(sch_find_uid(sch, b_loop->u.loop.uid, &path));
  sch_replace(sch, &path, path.n - 1, NULL);
  tir_block_t *root = tir_func_root_block(sch_func(sch));
  assert_ptr_equal(root->body, c_loop);
  assert_false(sch_find_block_by_name(sch, "B", &path));
  sch_free(sch);
}

static void rv_of_removed_loop_fails_with_message(void **state) {
  sch_t *sch = st_schedule(TWO_BLOCKS);
  tir_stmt_t *b_loop = outer_loop(sch, "B");
  sch_rv_t l = sch_rv_for_loop(sch, b_loop);
  sch_rv_t b = block_rv(sch, "C");
  sch_path_t path;
  assert_true(sch_find_uid(sch, b_loop->u.loop.uid, &path));
  sch_replace(sch, &path, path.n - 1, NULL);
  tir_stmt_t *node = NULL;
  assert_int_equal(sch_get_loop_node(sch, l, &node), MLC_ESCHEDULE);
  assert_null(node);
  assert_non_null(strstr(sch_error(sch), "the loop of random variable 0 no longer exists"));
  assert_int_equal(mlc_error_last_code(), MLC_ESCHEDULE);
  /* Wrong kinds are errors too, not crashes. */
  assert_int_equal(sch_find_loop(sch, "split", b, &path), MLC_ESCHEDULE);
  assert_string_equal(sch_error(sch), "split: random variable 1 is a block variable, expected a loop");
  assert_int_equal(sch_find_block(sch, "compute_at", 99, &path), MLC_ESCHEDULE);
  assert_string_equal(sch_error(sch), "compute_at: random variable 99 is not defined");
  tir_block_t *blk = NULL;
  assert_int_equal(sch_get_block_node(sch, b, &blk), MLC_OK);
  assert_string_equal(blk->name, "C");
  sch_free(sch);
}

static void expression_rvs_hold_values(void **state) {
  sch_t *sch = st_schedule(TWO_BLOCKS);
  sch_rv_t v = sch_new_rv(sch, SCH_RV_EXPR, 0, 42);
  sch_rv_t b = block_rv(sch, "B");
  int64_t x = 0;
  assert_int_equal(sch_rv_value(sch, v, &x), MLC_OK);
  assert_int_equal(x, 42);
  assert_int_equal(sch_rv_kind(sch, v), SCH_RV_EXPR);
  assert_int_equal(sch_rv_kind(sch, b), SCH_RV_BLOCK);
  assert_int_equal(sch_rv_value(sch, b, &x), MLC_EINVAL);
  assert_int_equal(sch_get_trace(sch)->nrvs, 2);
  sch_free(sch);
}

/* A copy has its own program, variables, trace and RNG. */
static void copy_is_independent(void **state) {
  sch_t *a = st_schedule(TWO_BLOCKS);
  sch_rv_t l = sch_rv_for_loop(a, outer_loop(a, "C"));
  sch_arg_t in = sch_arg_rv(l);
  sch_record(a, SCH_INST_PARALLEL, &in, 1, NULL, 0, NULL, 0, NULL);
  mlc_rng_next(sch_rng(a));
  sch_t *b = NULL;
  assert_int_equal(sch_copy(&b, a), MLC_OK);
  assert_ptr_not_equal(sch_func(a), sch_func(b));
  assert_true(tir_func_equal(sch_func(a), sch_func(b), NULL, 0));
  assert_int_equal(mlc_rng_next(sch_rng(a)), mlc_rng_next(sch_rng(b)));
  assert_int_equal(sch_get_trace(b)->n, 1);
  assert_int_equal(sch_get_trace(b)->nrvs, 1);

  /* Rewriting b leaves a alone; the copied RV names b's loop. */
  sch_path_t path;
  assert_int_equal(sch_find_loop(b, "test", l, &path), MLC_OK);
  tir_stmt_t *par = tir_stmt_copy(sch_arena(b), path.stmts[path.n - 1]);
  par->u.loop.kind = TIR_FOR_PARALLEL;
  sch_replace(b, &path, path.n - 1, par);
  sch_record(b, SCH_INST_PARALLEL, &in, 1, NULL, 0, NULL, 0, NULL);
  st_assert_script(sch_func(a), TWO_BLOCKS);
  assert_int_equal(sch_get_trace(a)->n, 1);
  assert_int_equal(sch_get_trace(b)->n, 2);
  tir_stmt_t *la = NULL, *lb = NULL;
  assert_int_equal(sch_get_loop_node(a, l, &la), MLC_OK);
  assert_int_equal(sch_get_loop_node(b, l, &lb), MLC_OK);
  assert_int_equal(la->u.loop.kind, TIR_FOR_SERIAL);
  assert_int_equal(lb->u.loop.kind, TIR_FOR_PARALLEL);
  sch_free(a);
  sch_free(b);
}

/* Recorded arguments are deep copies: the caller's strings and lists may die. */
static void record_deep_copies_arguments(void **state) {
  sch_t *sch = st_schedule(TWO_BLOCKS);
  char name[8] = "C";
  sch_arg_t attrs[2] = {sch_arg_str(name), sch_arg_str("main")};
  sch_rv_t out = block_rv(sch, "C");
  sch_record(sch, SCH_INST_GET_BLOCK, NULL, 0, attrs, 2, &out, 1, NULL);
  sch_arg_t items[2] = {sch_arg_int(3), sch_arg_int(5)};
  sch_arg_t dec = {SCH_ARG_LIST, {0}};
  dec.u.list.n = 2;
  dec.u.list.items = items;
  sch_rv_t v = sch_new_rv(sch, SCH_RV_EXPR, 0, 5);
  sch_record(sch, SCH_INST_SAMPLE_CATEGORICAL, NULL, 0, NULL, 0, &v, 1, &dec);
  name[0] = 'X';
  items[1].u.i = 99;

  const sch_trace_t *t = sch_get_trace(sch);
  assert_int_equal(t->n, 2);
  assert_int_equal(t->nrvs, 2);
  assert_int_equal(t->insts[0].nattrs, 2);
  assert_string_equal(t->insts[0].attrs[0].u.s, "C");
  assert_int_equal(t->insts[0].outputs[0], out);
  assert_int_equal(t->decisions[0].kind, SCH_ARG_NONE);
  assert_int_equal(t->decisions[1].kind, SCH_ARG_LIST);
  assert_int_equal(t->decisions[1].u.list.items[1].u.i, 5);

  sch_trace_t *copy = sch_trace_copy(t);
  assert_non_null(copy);
  sch_free(sch);
  assert_int_equal(copy->n, 2);
  assert_string_equal(copy->insts[0].attrs[1].u.s, "main");
  assert_int_equal(copy->decisions[1].u.list.items[0].u.i, 3);
  sch_trace_free(copy);
}

static void fail_is_one_line_in_fast_mode_and_shows_ir_when_rich(void **state) {
  sch_t *sch = st_schedule(TWO_BLOCKS);
  tir_stmt_t *loop = outer_loop(sch, "B");
  sch_set_error_mode(sch, SCH_ERRORS_FAST);
  assert_int_equal(sch_fail_at(sch, "split", loop, "loop %s is bad", sch_loop_name(loop)), MLC_ESCHEDULE);
  assert_string_equal(sch_error(sch), "split: loop i is bad");
  assert_string_equal(mlc_error_last(), "split: loop i is bad");
  sch_set_error_mode(sch, SCH_ERRORS_RICH);
  assert_int_equal(sch_fail_at(sch, "split", loop, "loop %s is bad", sch_loop_name(loop)), MLC_ESCHEDULE);
  assert_true(strncmp(sch_error(sch), "split: loop i is bad\nfor i, j in T.grid(16, 8):\n", 47) == 0);
  assert_non_null(strstr(sch_error(sch), "with T.block(\"B\"):"));
  assert_string_equal(mlc_error_last(), "split: loop i is bad");
  assert_int_equal(sch_fail(sch, "fuse", "plain"), MLC_ESCHEDULE);
  assert_string_equal(sch_error(sch), "fuse: plain");
  sch_free(sch);
}

static void unique_block_names_count_up(void **state) {
  sch_t *sch = st_schedule(TWO_BLOCKS);
  assert_string_equal(sch_unique_block_name(sch, "B_shared"), "B_shared");
  assert_string_equal(sch_unique_block_name(sch, "B"), "B_1");
  tir_block_t *b = sch_new_block(sch, "x");
  tir_stmt_t *l = sch_new_loop(sch, tir_var(sch_arena(sch), "k", tir_dt_INT32()), tir_i32(sch_arena(sch), 0),
                               tir_i32(sch_arena(sch), 4), TIR_FOR_SERIAL, tir_evaluate(sch_arena(sch), tir_i32(sch_arena(sch), 0)));
  assert_int_equal(b->uid, 8);
  assert_int_equal(l->u.loop.uid, 9);
  assert_int_equal(sch_new_uid(sch), 10);
  sch_free(sch);
}

/* A failed primitive leaves the very same program, the same variables and
 * the same trace. */
static void failed_primitive_changes_nothing(void **state) {
  sch_t *sch = st_schedule(TWO_BLOCKS);
  sch_rv_t b;
  assert_int_equal(sch_get_block(sch, &b, "B"), MLC_OK);
  tir_stmt_t *body = sch_func(sch)->body;
  int nrvs = sch->nrvs, ninsts = sch_get_trace(sch)->n;
  assert_int_equal(sch_unannotate(sch, b, "missing"), MLC_ESCHEDULE);
  assert_int_equal(sch_bind(sch, sch_rv_for_loop(sch, outer_loop(sch, "B")), "warp.x"), MLC_ESCHEDULE);
  assert_int_equal(sch_get_block(sch, &b, "nope"), MLC_ESCHEDULE);
  assert_ptr_equal(sch_func(sch)->body, body);
  assert_int_equal(sch->nrvs, nrvs + 1); /* only the test's own sch_rv_for_loop */
  assert_int_equal(sch_get_trace(sch)->n, ninsts);
  st_assert_script(sch_func(sch), TWO_BLOCKS);
  sch_free(sch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(create_assigns_distinct_uids_and_keeps_caller_func),
      cmocka_unit_test(paths_give_scope_and_loops),
      cmocka_unit_test(replace_copies_path_and_shares_the_rest),
      cmocka_unit_test(replace_with_null_removes_and_collapses_seq),
      cmocka_unit_test(rv_of_removed_loop_fails_with_message),
      cmocka_unit_test(expression_rvs_hold_values),
      cmocka_unit_test(copy_is_independent),
      cmocka_unit_test(record_deep_copies_arguments),
      cmocka_unit_test(fail_is_one_line_in_fast_mode_and_shows_ir_when_rich),
      cmocka_unit_test(unique_block_names_count_up),
      cmocka_unit_test(failed_primitive_changes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
