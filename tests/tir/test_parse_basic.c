/*
 * test_parse_basic.c - the TVMScript parser builds the IR a TVM user expects:
 * loop kinds and extents, block iterators and their domains, the implicit root
 * block, literal typing, the range(a, a + e) extent rule, let/decl_buffer
 * bodies, scopes, symbolic variables, modules, and derived regions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tir/tir.h"

#define BUF16 "@T.prim_func\ndef f(A: T.Buffer((16,), \"float32\")):\n"

static tir_module_t *parse_ok(const char *src) {
  tir_module_t *m = NULL;
  tir_parse_error_t err;
  int rc = tir_parse(&m, src, strlen(src), "test.py", &err);
  if (rc != MLC_OK) fail_msg("parse failed: %s", mlc_error_last());
  return m;
}

static tir_func_t *parse_func_ok(const char *src) {
  tir_func_t *f = NULL;
  tir_parse_error_t err;
  int rc = tir_parse_func(&f, src, strlen(src), "test.py", &err);
  if (rc != MLC_OK) fail_msg("parse failed: %s", mlc_error_last());
  return f;
}

/* The body under the implicit root block. */
static tir_stmt_t *root_body(const tir_func_t *f) {
  tir_block_t *root = tir_func_root_block(f);
  assert_non_null(root);
  return root->body;
}

static tir_stmt_t *nth(tir_stmt_t *s, int i) {
  assert_int_equal(s->kind, TIR_SEQ);
  assert_true(i < s->u.seq.n);
  return s->u.seq.stmts[i];
}

static void assert_const(const tir_expr_t *e, tir_dtype_t t, int64_t v) {
  assert_int_equal(e->kind, TIR_INT_IMM);
  assert_true(tir_dtype_eq(e->dtype, t));
  assert_int_equal(e->u.int_value, v);
}

static const char matmul[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((128, 64), \"float32\"), B: T.Buffer((64, 32), \"float32\"),\n"
    "         C: T.Buffer((128, 32), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"main\", \"tir.noalias\": T.bool(True)})\n"
    "    for i, j, k in T.grid(128, 32, 64):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[vi, vk], B[vk, vj])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static void test_matmul_grid_remap_and_implicit_root(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(matmul);
  assert_string_equal(f->name, "main");
  assert_true(f->owns_arena);
  assert_int_equal(f->nparams, 3);
  assert_non_null(f->buffer_map[0]);
  assert_string_equal(f->buffer_map[0]->name, "A");
  assert_int_equal(f->buffer_map[0]->ndim, 2);
  assert_const(f->buffer_map[0]->shape[1], tir_dt_INT32(), 64);
  assert_string_equal(f->buffer_map[0]->scope, "global");
  assert_int_equal(f->nattrs, 2);
  assert_string_equal(f->attrs[1].key, "tir.noalias");
  assert_const(f->attrs[1].value, tir_dt_BOOL(), 1);

  /* Implicit root: a predicate-true realize of a block "root" without iterators. */
  assert_int_equal(f->body->kind, TIR_BLOCK_REALIZE);
  assert_const(f->body->u.realize.predicate, tir_dt_BOOL(), 1);
  tir_block_t *root = f->body->u.realize.block;
  assert_string_equal(root->name, "root");
  assert_int_equal(root->niter_vars, 0);
  assert_int_equal(root->nreads + root->nwrites, 0);

  /* T.grid: three nested serial loops. */
  int64_t extents[3] = {128, 32, 64};
  tir_stmt_t *s = root->body;
  tir_var_t *loop_vars[3];
  for (int d = 0; d < 3; d++) {
    assert_int_equal(s->kind, TIR_FOR);
    assert_int_equal(s->u.loop.kind, TIR_FOR_SERIAL);
    assert_const(s->u.loop.min, tir_dt_INT32(), 0);
    assert_const(s->u.loop.extent, tir_dt_INT32(), extents[d]);
    loop_vars[d] = s->u.loop.var;
    s = s->u.loop.body;
  }
  assert_int_equal(s->kind, TIR_BLOCK_REALIZE);
  tir_block_t *b = s->u.realize.block;
  assert_string_equal(b->name, "C");
  assert_int_equal(b->niter_vars, 3);
  const tir_iter_type_t types[3] = {TIR_ITER_SPATIAL, TIR_ITER_SPATIAL, TIR_ITER_REDUCE};
  for (int d = 0; d < 3; d++) {
    assert_int_equal(b->iter_vars[d].type, types[d]);
    /* remap takes the domain from the loop and binds the loop variable */
    assert_const(b->iter_vars[d].dom.extent, tir_dt_INT32(), extents[d]);
    assert_ptr_equal(s->u.realize.iter_values[d], loop_vars[d]);
  }
  assert_int_equal(b->nreads, 2);
  assert_int_equal(b->nwrites, 1);
  assert_ptr_equal(b->writes[0].buffer, f->buffer_map[2]);
  assert_ptr_equal(b->writes[0].ranges[0].min, b->iter_vars[0].var);
  assert_non_null(b->init);
  assert_int_equal(b->init->kind, TIR_BUFFER_STORE);
  tir_func_free(f);
}

static void test_literals_take_the_other_operands_dtype(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(BUF16
                                "    for i in range(T.int64(16)):\n"
                                "        A[i] = A[i] * 2\n"
                                "        A[i + 1] = A[0]\n"
                                "        A[0] = 2.5\n");
  tir_stmt_t *loop = f->body;
  assert_int_equal(loop->kind, TIR_FOR);
  /* The loop variable takes the extent's dtype; 0 became int64 too. */
  assert_true(tir_dtype_eq(loop->u.loop.var->dtype, tir_dt_INT64()));
  assert_const(loop->u.loop.min, tir_dt_INT64(), 0);
  tir_stmt_t *st = nth(loop->u.loop.body, 0);
  tir_expr_t *mul = st->u.store.value;
  assert_int_equal(mul->kind, TIR_MUL);
  assert_int_equal(mul->u.bin.b->kind, TIR_FLOAT_IMM);
  assert_true(tir_dtype_eq(mul->u.bin.b->dtype, tir_dt_FLOAT32()));
  assert_true(mul->u.bin.b->u.float_value == 2.0);
  /* i64 + 1: the literal is int64 */
  tir_expr_t *idx = nth(loop->u.loop.body, 1)->u.store.indices[0];
  assert_int_equal(idx->kind, TIR_ADD);
  assert_const(idx->u.bin.b, tir_dt_INT64(), 1);
  tir_func_free(f);

  /* Bare literals alone: int32 and float32; too big for int32: int64. */
  f = parse_func_ok(BUF16 "    x = 7\n    y = 5000000000\n    z = 1e-05\n    A[0] = z\n");
  tir_stmt_t *x = f->body;
  assert_int_equal(x->kind, TIR_LET);
  assert_const(x->u.let.value, tir_dt_INT32(), 7);
  tir_stmt_t *y = x->u.let.body;
  assert_const(y->u.let.value, tir_dt_INT64(), 5000000000LL);
  tir_stmt_t *z = y->u.let.body;
  assert_true(tir_dtype_eq(z->u.let.var->dtype, tir_dt_FLOAT32()));
  assert_true(z->u.let.value->u.float_value == (double)1e-05f);
  tir_func_free(f);
}

static void test_integer_widths_widen_with_a_cast(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok("@T.prim_func\n"
                                "def f(A: T.Buffer((4,), \"int64\"), a: T.int8, b: T.int32, c: T.int64):\n"
                                "    A[0] = c + b\n"
                                "    A[1] = T.Cast(\"int64\", a + b)\n"
                                "    A[2] = -c\n"
                                "    A[3] = -3\n");
  tir_expr_t *v0 = nth(f->body, 0)->u.store.value;
  assert_int_equal(v0->kind, TIR_ADD);
  assert_int_equal(v0->u.bin.b->kind, TIR_CAST);
  assert_true(tir_dtype_eq(v0->u.bin.b->dtype, tir_dt_INT64()));
  tir_expr_t *sum = nth(f->body, 1)->u.store.value->u.un.a;
  assert_true(tir_dtype_eq(sum->dtype, tir_dt_INT32()));
  assert_int_equal(sum->u.bin.a->kind, TIR_CAST); /* int8 a widened to int32 */
  /* Unary minus: 0 - x for a variable (as TVM's neg), folded for a literal. */
  tir_expr_t *neg = nth(f->body, 2)->u.store.value;
  assert_int_equal(neg->kind, TIR_SUB);
  assert_const(neg->u.bin.a, tir_dt_INT64(), 0);
  assert_const(nth(f->body, 3)->u.store.value, tir_dt_INT64(), -3);
  tir_func_free(f);
}

static void test_range_extent_rule(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok("@T.prim_func\n"
                                "def f(A: T.Buffer((64,), \"float32\"), n: T.int32):\n"
                                "    for i in range(2, 10):\n"
                                "        for j in range(i, i + (n - i)):\n"
                                "            for k in T.serial(j, n):\n"
                                "                for l in range(n):\n"
                                "                    A[l] = T.float32(0)\n");
  tir_stmt_t *i = f->body, *j = i->u.loop.body, *k = j->u.loop.body, *l = k->u.loop.body;
  assert_const(i->u.loop.min, tir_dt_INT32(), 2);
  assert_const(i->u.loop.extent, tir_dt_INT32(), 8); /* folded */
  /* stop = start + e: the extent is e exactly */
  assert_ptr_equal(j->u.loop.min, i->u.loop.var);
  assert_int_equal(j->u.loop.extent->kind, TIR_SUB);
  assert_ptr_equal(j->u.loop.extent->u.bin.a, f->params[1]);
  assert_ptr_equal(j->u.loop.extent->u.bin.b, i->u.loop.var);
  /* anything else: stop - start */
  assert_int_equal(k->u.loop.extent->kind, TIR_SUB);
  assert_ptr_equal(k->u.loop.extent->u.bin.a, f->params[1]);
  assert_ptr_equal(k->u.loop.extent->u.bin.b, j->u.loop.var);
  assert_ptr_equal(l->u.loop.extent, f->params[1]);
  tir_func_free(f);
}

static void test_region_slices_follow_the_extent_rule(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok("@T.prim_func\n"
                                "def f(A: T.Buffer((16, 16), \"float32\"), n: T.int32):\n"
                                "    with T.block(\"b\"):\n"
                                "        T.reads(A[0:0 + n, 2:10], A[:n, 3:], A[0:n, n:n])\n"
                                "        T.writes(A[n:n + 4, 1])\n"
                                "        A[0, 0] = T.float32(0)\n");
  tir_block_t *b = root_body(f)->u.realize.block;
  tir_var_t *n = f->params[1];
  assert_const(b->reads[0].ranges[0].min, tir_dt_INT32(), 0);
  assert_ptr_equal(b->reads[0].ranges[0].extent, n); /* 0 + n: the extent is n */
  assert_const(b->reads[0].ranges[1].min, tir_dt_INT32(), 2);
  assert_const(b->reads[0].ranges[1].extent, tir_dt_INT32(), 8);
  assert_ptr_equal(b->reads[1].ranges[0].extent, n); /* :n */
  assert_const(b->reads[1].ranges[1].min, tir_dt_INT32(), 3);
  assert_const(b->reads[1].ranges[1].extent, tir_dt_INT32(), 13); /* 3: up to the shape */
  assert_const(b->reads[2].ranges[0].min, tir_dt_INT32(), 0);
  assert_ptr_equal(b->reads[2].ranges[0].extent, n); /* 0:n, as the printer writes it */
  assert_ptr_equal(b->reads[2].ranges[1].min, n);
  assert_const(b->reads[2].ranges[1].extent, tir_dt_INT32(), 0); /* n:n is empty */
  assert_ptr_equal(b->writes[0].ranges[0].min, n);
  assert_const(b->writes[0].ranges[0].extent, tir_dt_INT32(), 4);
  assert_const(b->writes[0].ranges[1].min, tir_dt_INT32(), 1);
  assert_const(b->writes[0].ranges[1].extent, tir_dt_INT32(), 1);
  tir_func_free(f);
}

static void test_loop_kinds_threads_and_annotations(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(BUF16
                                "    for a in T.parallel(2):\n"
                                "        for b in T.vectorized(2):\n"
                                "            for c in T.unroll(2):\n"
                                "                for d in T.thread_binding(0, 2, thread=\"threadIdx.x\"):\n"
                                "                    for e in T.serial(2, annotations={\"pragma_auto_unroll_max_step\": 16, \"k\": [1, \"x\"]}):\n"
                                "                        A[a + b + c + d + e] = T.float32(1)\n");
  tir_stmt_t *s = f->body;
  const tir_for_kind_t kinds[5] = {TIR_FOR_PARALLEL, TIR_FOR_VECTORIZED, TIR_FOR_UNROLLED,
                                   TIR_FOR_THREAD_BINDING, TIR_FOR_SERIAL};
  for (int d = 0; d < 5; d++) {
    assert_int_equal(s->u.loop.kind, kinds[d]);
    assert_const(s->u.loop.extent, tir_dt_INT32(), 2);
    if (d == 3) assert_string_equal(s->u.loop.thread_tag, "threadIdx.x");
    if (d < 4) s = s->u.loop.body;
  }
  assert_int_equal(s->u.loop.nannots, 2);
  assert_string_equal(s->u.loop.annots[0].key, "pragma_auto_unroll_max_step");
  assert_const(s->u.loop.annots[0].value, tir_dt_INT32(), 16);
  tir_expr_t *list = s->u.loop.annots[1].value;
  assert_int_equal(list->kind, TIR_CALL);
  assert_int_equal(list->u.call.op, TIR_OP_LIST);
  assert_int_equal(list->u.call.nargs, 2);
  assert_string_equal(list->u.call.args[1]->u.str_value, "x");
  tir_func_free(f);
}

static void test_iter_var_kinds_domains_and_where(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(BUF16
                                "    for i in range(4):\n"
                                "        with T.sblock(\"b\"):\n"
                                "            v0 = T.axis.spatial((4, 12), i + 4)\n"
                                "            v1 = T.axis.reduce(4, i)\n"
                                "            v2 = T.axis.S(T.int64(4), T.Cast(\"int64\", i))\n"
                                "            v3 = T.axis.scan(4, i)\n"
                                "            v4 = T.axis.opaque(4, i)\n"
                                "            T.where(i < 3)\n"
                                "            A[v0 + v1 + v3 + v4] = T.float32(0)\n");
  tir_stmt_t *r = root_body(f)->u.loop.body;
  tir_block_t *b = r->u.realize.block;
  assert_int_equal(b->niter_vars, 5);
  assert_int_equal(b->iter_vars[0].type, TIR_ITER_SPATIAL);
  assert_const(b->iter_vars[0].dom.min, tir_dt_INT32(), 4);
  assert_const(b->iter_vars[0].dom.extent, tir_dt_INT32(), 8);
  assert_int_equal(r->u.realize.iter_values[0]->kind, TIR_ADD);
  assert_int_equal(b->iter_vars[1].type, TIR_ITER_REDUCE);
  assert_true(tir_dtype_eq(b->iter_vars[2].var->dtype, tir_dt_INT64()));
  assert_const(b->iter_vars[2].dom.min, tir_dt_INT64(), 0);
  assert_int_equal(b->iter_vars[3].type, TIR_ITER_SCAN);
  assert_int_equal(b->iter_vars[4].type, TIR_ITER_OPAQUE);
  assert_int_equal(r->u.realize.predicate->kind, TIR_LT);
  /* Regions omitted: derived from the body. */
  assert_int_equal(b->nreads, 0);
  assert_int_equal(b->nwrites, 1);
  assert_ptr_equal(b->writes[0].buffer, f->buffer_map[0]);
  tir_func_free(f);
}

static void test_derived_regions_and_block_allocations(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok("@T.prim_func\n"
                                "def f(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
                                "    X = T.alloc_buffer((16,))\n"
                                "    for i in range(16):\n"
                                "        with T.block(\"b\"):\n"
                                "            vi = T.axis.spatial(16, i)\n"
                                "            S = T.alloc_buffer((16,), \"float16\", scope=\"shared\")\n"
                                "            for k in range(16):\n"
                                "                S[k] = T.Cast(\"float16\", A[vi, k])\n"
                                "            B[vi] = T.Cast(\"float32\", S[0]) + X[vi]\n");
  tir_block_t *root = tir_func_root_block(f);
  assert_int_equal(root->nalloc_buffers, 1);
  tir_buffer_t *X = root->alloc_buffers[0];
  assert_string_equal(X->name, "X");
  assert_true(tir_dtype_eq(X->dtype, tir_dt_FLOAT32())); /* the default */
  tir_block_t *b = root->body->u.loop.body->u.realize.block;
  assert_int_equal(b->nalloc_buffers, 1);
  assert_string_equal(b->alloc_buffers[0]->scope, "shared");
  assert_true(tir_dtype_eq(b->alloc_buffers[0]->dtype, tir_dt_FLOAT16()));
  /* Reads of A and X (not of S, allocated inside), a write of B. */
  assert_int_equal(b->nreads, 2);
  assert_int_equal(b->nwrites, 1);
  assert_ptr_equal(b->writes[0].buffer, f->buffer_map[1]);
  bool saw_a = false, saw_x = false;
  for (int i = 0; i < b->nreads; i++) {
    saw_a |= b->reads[i].buffer == f->buffer_map[0];
    saw_x |= b->reads[i].buffer == X;
  }
  assert_true(saw_a && saw_x);
  tir_func_free(f);
}

static void test_explicit_root_block_is_kept(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(BUF16
                                "    with T.block(\"root\"):\n"
                                "        T.block_attr({\"meta_schedule.unroll_explicit\": 64})\n"
                                "        for i in range(16):\n"
                                "            with T.block(\"b\"):\n"
                                "                vi = T.axis.spatial(16, i)\n"
                                "                A[vi] = T.float32(0)\n");
  tir_block_t *root = tir_func_root_block(f);
  assert_string_equal(root->name, "root");
  assert_int_equal(root->nannots, 1);
  assert_int_equal(root->body->kind, TIR_FOR); /* not wrapped again */
  assert_int_equal(root->nreads + root->nwrites, 0);
  tir_func_free(f);
}

static void test_let_assert_and_decl_buffer_take_the_rest(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(BUF16
                                "    x: T.float32 = A[0] + 1\n"
                                "    assert x > T.float32(0), \"positive\"\n"
                                "    C = T.decl_buffer((4,), \"float16\", scope=\"local\")\n"
                                "    C[0] = T.float16(1)\n"
                                "    A[1] = x\n");
  tir_stmt_t *let = f->body;
  assert_int_equal(let->kind, TIR_LET);
  assert_true(tir_dtype_eq(let->u.let.var->dtype, tir_dt_FLOAT32()));
  assert_string_equal(let->u.let.var->u.var.name, "x");
  tir_stmt_t *as = let->u.let.body;
  assert_int_equal(as->kind, TIR_ASSERT);
  assert_string_equal(as->u.assert_.message->u.str_value, "positive");
  tir_stmt_t *al = as->u.assert_.body;
  assert_int_equal(al->kind, TIR_ALLOCATE);
  assert_string_equal(al->u.allocate.buffer->scope, "local");
  tir_stmt_t *rest = al->u.allocate.body;
  assert_int_equal(rest->kind, TIR_SEQ);
  assert_int_equal(rest->u.seq.n, 2);
  assert_ptr_equal(rest->u.seq.stmts[0]->u.store.buffer, al->u.allocate.buffer);
  assert_ptr_equal(rest->u.seq.stmts[1]->u.store.value, let->u.let.var);
  tir_func_free(f);
}

static void test_if_elif_else_and_augmented_store(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(BUF16
                                "    for i in range(16):\n"
                                "        if i < 4:\n"
                                "            A[i] += 1\n"
                                "        elif i < 8 and not i == 5:\n"
                                "            A[i] = T.Select(i < 6, T.float32(1), T.float32(2))\n"
                                "        else:\n"
                                "            A[i] = T.if_then_else(i < 10, T.exp(A[i]), T.max(A[i], 0))\n");
  tir_stmt_t *top = f->body->u.loop.body;
  assert_int_equal(top->kind, TIR_IF);
  tir_stmt_t *aug = top->u.if_.then_case;
  assert_int_equal(aug->u.store.value->kind, TIR_ADD);
  assert_int_equal(aug->u.store.value->u.bin.a->kind, TIR_BUFFER_LOAD);
  tir_stmt_t *elif = top->u.if_.else_case;
  assert_int_equal(elif->kind, TIR_IF);
  assert_int_equal(elif->u.if_.cond->kind, TIR_AND);
  assert_int_equal(elif->u.if_.cond->u.bin.b->kind, TIR_NOT);
  assert_int_equal(elif->u.if_.then_case->u.store.value->kind, TIR_SELECT);
  tir_expr_t *ite = elif->u.if_.else_case->u.store.value;
  assert_int_equal(ite->kind, TIR_CALL);
  assert_int_equal(ite->u.call.op, TIR_OP_IF_THEN_ELSE);
  assert_int_equal(ite->u.call.args[1]->u.call.op, TIR_OP_EXP);
  assert_int_equal(ite->u.call.args[2]->kind, TIR_MAX);
  tir_func_free(f);
}

static void test_symbolic_vars_and_match_buffer(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok("@T.prim_func\n"
                                "def f(var_A: T.handle, k: T.int32):\n"
                                "    n = T.int32()\n"
                                "    m = T.var(\"int64\")\n"
                                "    A = T.match_buffer(var_A, (n, 4), \"float16\", strides=(8, 1), elem_offset=k, scope=\"shared\", align=64, offset_factor=1)\n"
                                "    for i in range(n):\n"
                                "        A[i, 0] = T.float16(0)\n");
  assert_int_equal(f->nparams, 2);
  assert_true(tir_dtype_is_handle(f->params[0]->dtype));
  tir_buffer_t *A = f->buffer_map[0];
  assert_non_null(A);
  assert_null(f->buffer_map[1]);
  assert_int_equal(A->shape[0]->kind, TIR_VAR);
  assert_string_equal(A->shape[0]->u.var.name, "n");
  assert_ptr_equal(f->body->u.loop.extent, A->shape[0]);
  assert_non_null(A->strides);
  assert_const(A->strides[0], tir_dt_INT32(), 8);
  assert_ptr_equal(A->elem_offset, f->params[1]);
  assert_string_equal(A->scope, "shared");
  assert_int_equal(A->align, 64);
  assert_int_equal(A->offset_factor, 1);
  tir_func_free(f);
}

static void test_block_level_symbolic_vars_belong_to_the_block(void **state) {
  (void)state;
  /* Tensorized code as TVM prints it: the match buffer's stride variable is
   * declared in the block; the sibling block declares its own. */
  tir_func_t *f = parse_func_ok("@T.prim_func\n"
                                "def f(A: T.Buffer((16, 16), \"float32\")):\n"
                                "    for i in range(16):\n"
                                "        with T.block(\"a\"):\n"
                                "            vi = T.axis.spatial(16, i)\n"
                                "            T.reads(A[vi, 0:16])\n"
                                "            T.writes(A[vi, 0:16])\n"
                                "            A_s0 = T.int32()\n"
                                "            A_1 = T.match_buffer(A[vi, 0:16], (16,), strides=(A_s0,), offset_factor=1)\n"
                                "            A_1[0] = T.float32(A_s0)\n"
                                "    for i in range(16):\n"
                                "        with T.block(\"b\"):\n"
                                "            vi = T.axis.spatial(16, i)\n"
                                "            T.reads(A[vi, 0:16])\n"
                                "            T.writes(A[vi, 0:16])\n"
                                "            A_s0 = T.int32()\n"
                                "            A_1 = T.match_buffer(A[vi, 0:16], (16,), strides=(A_s0,), offset_factor=1)\n"
                                "            A_1[0] = T.float32(0)\n");
  tir_block_t *a = nth(root_body(f), 0)->u.loop.body->u.realize.block;
  tir_block_t *b = nth(root_body(f), 1)->u.loop.body->u.realize.block;
  assert_int_equal(a->nmatch_buffers, 1);
  tir_expr_t *stride = a->match_buffers[0].buffer->strides[0];
  assert_int_equal(stride->kind, TIR_VAR);
  assert_string_equal(stride->u.var.name, "A_s0");
  assert_ptr_equal(a->body->u.store.value->u.un.a, stride);
  assert_ptr_not_equal(b->match_buffers[0].buffer->strides[0], stride);
  tir_func_free(f);

  /* Outside its block the name is gone. */
  tir_module_t *m = NULL;
  tir_parse_error_t err;
  const char *src = "@T.prim_func\n"
                    "def f(A: T.Buffer((16, 16), \"float32\")):\n"
                    "    with T.block(\"a\"):\n"
                    "        A_s0 = T.int32()\n"
                    "        A_1 = T.match_buffer(A[0, 0:16], (16,), strides=(A_s0,))\n"
                    "        A_1[0] = T.float32(0)\n"
                    "    A[0, 0] = T.float32(A_s0)\n";
  assert_int_equal(tir_parse(&m, src, strlen(src), "s.py", &err), MLC_EPARSE);
  assert_string_equal(err.message, "unknown name 'A_s0'");
}

static void test_uint64_literals_and_buffer_data(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok("@T.prim_func\n"
                                "def f(A: T.Buffer((4,), \"uint64\"), B: T.Buffer((4,), \"int64\")):\n"
                                "    A[0] = T.uint64(18446744073709551615)\n"
                                "    A[1] = T.uint64(0x8000000000000000)\n"
                                "    B[0] = T.int64(-9223372036854775808)\n"
                                "    with T.attr(A.data, \"storage_alignment\", 128):\n"
                                "        T.call_extern(\"int32\", \"f\", B.data)\n");
  tir_buffer_t *A = f->buffer_map[0], *B = f->buffer_map[1];
  assert_const(nth(f->body, 0)->u.store.value, tir_dt_UINT64(), -1); /* the bit pattern */
  assert_const(nth(f->body, 1)->u.store.value, tir_dt_UINT64(), INT64_MIN);
  assert_const(nth(f->body, 2)->u.store.value, tir_dt_INT64(), INT64_MIN);
  tir_stmt_t *attr = nth(f->body, 3);
  assert_ptr_equal(attr->u.attr.node, A->data);
  assert_ptr_equal(attr->u.attr.body->u.evaluate.value->u.call.args[1], B->data);
  tir_func_free(f);
}

/* `X = T.Buffer(..., data=Y.data)` in a body is a view: a new buffer over
 * Y's storage (its data var), with no statement of its own. */
static void test_buffer_views_share_their_storage(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok("@T.prim_func\n"
                                "def f(A: T.Buffer((4, 4), \"float16\"), p: T.handle):\n"
                                "    A_1 = T.Buffer((16,), \"float16\", data=A.data, strides=(1,), "
                                "elem_offset=2, align=16)\n"
                                "    P = T.Buffer(shape=(8,), dtype=\"int32\", data=p)\n"
                                "    for i in range(16):\n"
                                "        A_1[i] = T.float16(0)\n"
                                "    P[0] = 1\n"
                                "    X = T.decl_buffer((32,), scope=\"local\")\n"
                                "    X_1 = T.Buffer((2, 16), data=X.data, scope=\"local\")\n"
                                "    X_1[1, 0] = T.float32(2)\n");
  tir_stmt_t *loop = nth(f->body, 0), *alloc = nth(f->body, 2);
  assert_int_equal(loop->kind, TIR_FOR); /* the views added no statement */
  tir_buffer_t *A1 = loop->u.loop.body->u.store.buffer;
  assert_string_equal(A1->name, "A_1");
  assert_ptr_not_equal(A1, f->buffer_map[0]);
  assert_ptr_equal(A1->data, f->buffer_map[0]->data);
  assert_true(tir_dtype_eq(A1->dtype, tir_dt_FLOAT16()));
  assert_int_equal(A1->ndim, 1);
  assert_const(A1->shape[0], tir_dt_INT32(), 16);
  assert_non_null(A1->strides);
  assert_const(A1->strides[0], tir_dt_INT32(), 1);
  assert_const(A1->elem_offset, tir_dt_INT32(), 2);
  assert_int_equal(A1->align, 16);
  tir_buffer_t *P = nth(f->body, 1)->u.store.buffer;
  assert_ptr_equal(P->data, f->params[1]);
  assert_true(tir_dtype_eq(P->dtype, tir_dt_INT32()));
  assert_int_equal(alloc->kind, TIR_ALLOCATE);
  tir_buffer_t *X1 = alloc->u.allocate.body->u.store.buffer;
  assert_ptr_equal(X1->data, alloc->u.allocate.buffer->data);
  assert_string_equal(X1->scope, "local");
  assert_int_equal(X1->ndim, 2);
  tir_func_free(f);
}

/* Derived regions leave out a view of the block's own storage (declared
 * after the header, like the allocation), not a view of outer storage. */
static void test_derived_regions_leave_out_views_of_block_storage(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(BUF16
                                "    with T.block(\"b\"):\n"
                                "        S = T.alloc_buffer((4,))\n"
                                "        V = T.Buffer((2, 2), data=S.data)\n"
                                "        W = T.Buffer((4, 4), data=A.data)\n"
                                "        V[0, 1] = A[3]\n"
                                "        W[1, 2] = V[0, 1]\n");
  tir_block_t *b = root_body(f)->u.realize.block;
  assert_int_equal(b->nreads, 1);
  assert_ptr_equal(b->reads[0].buffer, f->buffer_map[0]);
  assert_int_equal(b->nwrites, 1);
  assert_string_equal(b->writes[0].buffer->name, "W");
  assert_ptr_equal(b->writes[0].buffer->data, f->buffer_map[0]->data);
  tir_func_free(f);
}

/* A view is paired at its first use: equal up to its name, not equal when
 * it views other storage. */
static void test_views_are_equal_only_over_paired_storage(void **state) {
  (void)state;
  const char *head = "@T.prim_func\n"
                     "def f(A: T.Buffer((4, 4), \"float32\"), B: T.Buffer((4, 4), \"float32\")):\n";
  char src[3][512];
  snprintf(src[0], sizeof src[0], "%s    V = T.Buffer((16,), data=A.data)\n    V[0] = B[0, 0]\n", head);
  snprintf(src[1], sizeof src[1], "%s    W = T.Buffer((16,), data=A.data)\n    W[0] = B[0, 0]\n", head);
  snprintf(src[2], sizeof src[2], "%s    V = T.Buffer((16,), data=B.data)\n    V[0] = B[0, 0]\n", head);
  tir_func_t *f[3];
  for (int i = 0; i < 3; i++) f[i] = parse_func_ok(src[i]);
  char why[256];
  assert_true(tir_func_equal(f[0], f[1], why, sizeof why));
  assert_false(tir_func_equal(f[0], f[2], why, sizeof why));
  assert_non_null(strstr(why, "view V"));
  /* Alone, a statement's views are free buffers: compared by identity. */
  assert_false(tir_stmt_equal(f[0]->body, f[1]->body));
  for (int i = 0; i < 3; i++) tir_func_free(f[i]);
}

static void test_legacy_spellings(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok("from tvm.script import tir as T\n"
                                "@T.prim_func\n"
                                "def f(a: T.handle, B: T.Buffer[(8,), \"int8\"]) -> None:\n"
                                "    A = T.match_buffer(a, [8], dtype=\"float32\")\n"
                                "    for i in T.serial(0, 8):\n"
                                "        with T.block(\"b\"):\n"
                                "            vi = T.axis.S(8, i)\n"
                                "            T.reads([A[vi]])\n"
                                "            T.writes([B[vi]])\n"
                                "            B[vi] = T.cast(A[vi], \"int8\")\n");
  assert_true(tir_dtype_eq(f->buffer_map[1]->dtype, tir_dt_INT8()));
  assert_true(tir_dtype_eq(f->buffer_map[0]->dtype, tir_dt_FLOAT32()));
  tir_block_t *b = root_body(f)->u.loop.body->u.realize.block;
  assert_int_equal(b->nreads, 1);
  assert_int_equal(b->body->u.store.value->kind, TIR_CAST);
  tir_func_free(f);
}

static void test_scalar_params_may_follow_the_buffers_using_them(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok("@T.prim_func\n"
                                "def f(A: T.Buffer((n,), \"float32\"), n: T.int32):\n"
                                "    A[0] = T.float32(0)\n");
  assert_ptr_equal(f->buffer_map[0]->shape[0], f->params[1]);
  tir_func_free(f);
}

static void test_vector_slices_and_calls(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(BUF16
                                "    A[0:8] = A[8:16] + T.Broadcast(T.float32(1), 8)\n"
                                "    T.evaluate(T.call_extern(\"int32\", \"puts\", 1))\n"
                                "    T.tvm_storage_sync(\"shared\")\n");
  tir_stmt_t *st = nth(f->body, 0);
  assert_int_equal(st->u.store.indices[0]->kind, TIR_RAMP);
  assert_int_equal(st->u.store.indices[0]->u.ramp.lanes, 8);
  assert_int_equal(st->u.store.value->dtype.lanes, 8);
  tir_expr_t *ext = nth(f->body, 1)->u.evaluate.value;
  assert_int_equal(ext->u.call.op, TIR_OP_CALL_EXTERN);
  assert_true(tir_dtype_eq(ext->dtype, tir_dt_INT32()));
  assert_string_equal(ext->u.call.args[0]->u.str_value, "puts");
  assert_int_equal(nth(f->body, 2)->u.evaluate.value->u.call.op, TIR_OP_TVM_STORAGE_SYNC);
  tir_func_free(f);
}

static void test_ir_module_with_two_functions(void **state) {
  (void)state;
  tir_module_t *m = parse_ok("# from tvm.script import ir as I\n"
                             "@I.ir_module(check_well_formed=False)\n"
                             "class Mod:\n"
                             "    @T.prim_func(private=True)\n"
                             "    def f(A: T.Buffer((4,), \"float32\")):\n"
                             "        A[0] = T.float32(1)\n"
                             "\n"
                             "    @T.prim_func(s_tir=True)\n"
                             "    def g(A: T.Buffer((4,), \"float32\")):\n"
                             "        A[1] = T.float32(2)\n");
  assert_string_equal(m->name, "Mod");
  assert_false(m->bare_func);
  assert_int_equal(m->nfuncs, 2);
  assert_string_equal(m->funcs[0]->name, "f");
  assert_ptr_equal(tir_module_find(m, "g"), m->funcs[1]);
  assert_ptr_equal(m->funcs[1]->arena, m->arena);
  assert_false(m->funcs[1]->owns_arena);
  tir_module_free(m);

  m = parse_ok(BUF16 "    A[0] = T.float32(0)\n");
  assert_true(m->bare_func);
  assert_int_equal(m->nfuncs, 1);
  tir_module_free(m);

  /* tir_parse_func wants exactly one. */
  tir_func_t *f = NULL;
  tir_parse_error_t err;
  const char *two = "@tvm.script.ir_module\nclass M:\n    @T.prim_func\n    def a():\n        T.evaluate(0)\n"
                    "    @T.prim_func\n    def b():\n        T.evaluate(0)\n";
  assert_int_equal(tir_parse_func(&f, two, strlen(two), "two.py", &err), MLC_EPARSE);
  assert_null(f);
  assert_string_equal(mlc_error_last(), "two.py: expected exactly one function, found 2");
}

static void test_scopes_end_with_their_statement_list(void **state) {
  (void)state;
  /* The same names in sibling loops are different variables. */
  tir_func_t *f = parse_func_ok(BUF16
                                "    for i in range(4):\n        A[i] = T.float32(0)\n"
                                "    for i in range(8):\n        A[i] = T.float32(1)\n");
  tir_stmt_t *a = nth(f->body, 0), *b = nth(f->body, 1);
  assert_ptr_not_equal(a->u.loop.var, b->u.loop.var);
  assert_ptr_equal(b->u.loop.body->u.store.indices[0], b->u.loop.var);
  tir_func_free(f);

  tir_module_t *m = NULL;
  tir_parse_error_t err;
  const char *src = BUF16 "    for i in range(4):\n        x = i\n    A[x] = T.float32(0)\n";
  assert_int_equal(tir_parse(&m, src, strlen(src), "s.py", &err), MLC_EPARSE);
  assert_string_equal(err.message, "unknown name 'x'");
}

/* The input need not be NUL-terminated: only len bytes are read. */
static void test_reads_only_len_bytes(void **state) {
  (void)state;
  const char *text = BUF16 "    A[0] = T.float32(0)\n";
  size_t len = strlen(text);
  char *exact = malloc(len + 8);
  assert_non_null(exact);
  memcpy(exact, text, len);
  memcpy(exact + len, "garbage", 8); /* beyond len: must be ignored */
  tir_module_t *m = NULL;
  tir_parse_error_t err;
  assert_int_equal(tir_parse(&m, exact, len, "x.py", &err), MLC_OK);
  tir_module_free(m);
  /* Cut inside a string literal. */
  size_t cut = (size_t)(strstr(text, "float32\"") - text) + 3;
  assert_int_equal(tir_parse(&m, exact, cut, "x.py", &err), MLC_EPARSE);
  assert_string_equal(err.message, "unterminated string");
  free(exact);
}

static void test_printed_module_parses_back_equal(void **state) {
  (void)state;
  tir_func_t *f = parse_func_ok(matmul);
  char *text = tir_print_func(f);
  assert_non_null(text);
  tir_func_t *g = parse_func_ok(text);
  char why[256];
  assert_true(tir_func_equal(f, g, why, sizeof why));
  char *again = tir_print_func(g);
  assert_string_equal(text, again);
  mlc_free(again);
  mlc_free(text);
  tir_func_free(g);
  tir_func_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul_grid_remap_and_implicit_root),
      cmocka_unit_test(test_literals_take_the_other_operands_dtype),
      cmocka_unit_test(test_integer_widths_widen_with_a_cast),
      cmocka_unit_test(test_range_extent_rule),
      cmocka_unit_test(test_region_slices_follow_the_extent_rule),
      cmocka_unit_test(test_loop_kinds_threads_and_annotations),
      cmocka_unit_test(test_iter_var_kinds_domains_and_where),
      cmocka_unit_test(test_derived_regions_and_block_allocations),
      cmocka_unit_test(test_explicit_root_block_is_kept),
      cmocka_unit_test(test_let_assert_and_decl_buffer_take_the_rest),
      cmocka_unit_test(test_if_elif_else_and_augmented_store),
      cmocka_unit_test(test_symbolic_vars_and_match_buffer),
      cmocka_unit_test(test_block_level_symbolic_vars_belong_to_the_block),
      cmocka_unit_test(test_uint64_literals_and_buffer_data),
      cmocka_unit_test(test_buffer_views_share_their_storage),
      cmocka_unit_test(test_views_are_equal_only_over_paired_storage),
      cmocka_unit_test(test_derived_regions_leave_out_views_of_block_storage),
      cmocka_unit_test(test_legacy_spellings),
      cmocka_unit_test(test_scalar_params_may_follow_the_buffers_using_them),
      cmocka_unit_test(test_vector_slices_and_calls),
      cmocka_unit_test(test_ir_module_with_two_functions),
      cmocka_unit_test(test_scopes_end_with_their_statement_list),
      cmocka_unit_test(test_reads_only_len_bytes),
      cmocka_unit_test(test_printed_module_parses_back_equal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
