/*
 * test_print.c - the TVMScript printer on IR built with the builders: each
 * test states the exact canonical text of docs/tir.md ("Canonical
 * TVMScript") for one feature: the docs' matmul byte for byte, loops and
 * T.grid folding, names, precedence, immediates, blocks, statements, modules.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tir/tir.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* cmocka's print_error formats into a small fixed buffer: long texts go out
 * in pieces. */
static void print_long(const char *s) {
  for (size_t n = strlen(s); n > 0;) {
    int piece = n > 512 ? 512 : (int)n;
    print_error("%.*s", piece, s);
    s += piece, n -= (size_t)piece;
  }
}

/* Fails with both texts and the first differing line when they differ. */
static void expect_text(const char *got, const char *want) {
  assert_non_null(got);
  if (strcmp(got, want) == 0) return;
  int line = 1;
  const char *g = got, *w = want;
  while (*g && *g == *w) {
    if (*g == '\n') line++;
    g++, w++;
  }
  const char *gl = g, *wl = w;
  while (gl > got && gl[-1] != '\n') gl--;
  while (wl > want && wl[-1] != '\n') wl--;
  print_error("--- expected ---\n");
  print_long(want);
  print_error("--- got ---\n");
  print_long(got);
  print_error("--- first difference, line %d ---\nexpected: %.*s\ngot:      %.*s\n", line,
              (int)strcspn(wl, "\n"), wl, (int)strcspn(gl, "\n"), gl);
  fail();
}

static char *expr_text(const tir_expr_t *e) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_print_expr(&sb, e);
  return mlc_sb_take(&sb);
}

static void expect_expr(const tir_expr_t *e, const char *want) {
  char *got = expr_text(e);
  expect_text(got, want);
  mlc_free(got);
}

static void expect_stmt(const tir_stmt_t *s, const char *want) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  tir_print_stmt(&sb, s, 0);
  char *got = mlc_sb_take(&sb);
  expect_text(got, want);
  mlc_free(got);
}

static void expect_func(const tir_func_t *f, const char *want) {
  char *got = tir_print_func(f);
  expect_text(got, want);
  mlc_free(got);
}

static tir_expr_t *I(mlc_arena_t *a, int64_t v) { return tir_i32(a, v); }
static tir_expr_t *F32(mlc_arena_t *a, double v) { return tir_float(a, tir_dt_FLOAT32(), v); }
static tir_var_t *ivar(mlc_arena_t *a, const char *name) { return tir_var(a, name, tir_dt_INT32()); }
static tir_expr_t *bin(mlc_arena_t *a, tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) {
  return tir_binary(a, k, x, y);
}

static tir_buffer_t *buffer(mlc_arena_t *a, const char *name, tir_dtype_t t, const int64_t *shape,
                            int ndim) {
  tir_expr_t *dims[TIR_MAX_DIMS];
  for (int i = 0; i < ndim; i++) dims[i] = I(a, shape[i]);
  return tir_buffer_new(a, name, t, dims, ndim, NULL);
}

static tir_buffer_t *buf2(mlc_arena_t *a, const char *name, int64_t m, int64_t n) {
  int64_t shape[2] = {m, n};
  return buffer(a, name, tir_dt_FLOAT32(), shape, 2);
}

static tir_buffer_t *buf1(mlc_arena_t *a, const char *name, int64_t n) {
  return buffer(a, name, tir_dt_FLOAT32(), &n, 1);
}

/* Buffer parameters, each passed through its data var. */
static void set_buffer_params(tir_func_t *f, tir_buffer_t **bufs, int n) {
  f->nparams = n;
  f->params = mlc_arena_alloc(f->arena, sizeof(*f->params) * (size_t)n);
  f->buffer_map = mlc_arena_alloc(f->arena, sizeof(*f->buffer_map) * (size_t)n);
  for (int i = 0; i < n; i++) {
    f->params[i] = bufs[i]->data;
    f->buffer_map[i] = bufs[i];
  }
}

static tir_expr_t *load2(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *x, tir_expr_t *y) {
  tir_expr_t *idx[2] = {x, y};
  return tir_load(a, b, idx, 2);
}

static tir_stmt_t *store2(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *x, tir_expr_t *y,
                          tir_expr_t *v) {
  tir_expr_t *idx[2] = {x, y};
  return tir_store(a, b, v, idx, 2);
}

static tir_stmt_t *store1(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *x, tir_expr_t *v) {
  return tir_store(a, b, v, &x, 1);
}

/* A region of single points. */
static tir_region_t point(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *x, tir_expr_t *y) {
  tir_region_t r = {b, y ? 2 : 1, mlc_arena_alloc(a, sizeof(tir_range_t) * 2)};
  r.ranges[0] = (tir_range_t){x, I(a, 1)};
  if (y) r.ranges[1] = (tir_range_t){y, I(a, 1)};
  return r;
}

static tir_region_t *regions(mlc_arena_t *a, const tir_region_t *rs, int n) {
  return mlc_arena_memdup(a, rs, sizeof(*rs) * (size_t)n);
}

static tir_stmt_t *loop(mlc_arena_t *a, tir_var_t *v, int64_t extent, tir_stmt_t *body) {
  return tir_for(a, v, I(a, 0), I(a, extent), TIR_FOR_SERIAL, body);
}

static void add_iter(mlc_arena_t *a, tir_block_t *b, tir_var_t *v, tir_expr_t *min,
                     tir_expr_t *extent, tir_iter_type_t type) {
  b->iter_vars = mlc_arena_grow(a, b->iter_vars, (size_t)b->niter_vars, (size_t)b->niter_vars + 1,
                                sizeof(*b->iter_vars));
  b->iter_vars[b->niter_vars++] = (tir_iter_var_t){v, {min, extent}, type};
}

static tir_annot_t *annots1(mlc_arena_t *a, const char *key, tir_expr_t *v) {
  tir_annot_t *an = mlc_arena_alloc(a, sizeof(*an));
  an->key = key;
  an->value = v;
  return an;
}

static tir_stmt_t *root(mlc_arena_t *a, tir_stmt_t *body) {
  tir_block_t *r = tir_block_new(a, "root");
  r->body = body;
  return tir_block_realize(a, NULL, 0, NULL, r);
}

/* ------------------------------------------------------------------------ */
/* The docs' example                                                         */
/* ------------------------------------------------------------------------ */

static tir_func_t *make_matmul(void) {
  tir_func_t *f = tir_func_new("main");
  mlc_arena_t *a = f->arena;
  tir_buffer_t *A = buf2(a, "A", 128, 128), *B = buf2(a, "B", 128, 128), *C = buf2(a, "C", 128, 128);
  tir_buffer_t *bufs[3] = {A, B, C};
  set_buffer_params(f, bufs, 3);
  f->nattrs = 2;
  f->attrs = mlc_arena_alloc(a, sizeof(tir_annot_t) * 2);
  f->attrs[0] = (tir_annot_t){"global_symbol", tir_string(a, "main")};
  f->attrs[1] = (tir_annot_t){"tir.noalias", tir_bool(a, true)};

  tir_var_t *i = ivar(a, "i"), *j = ivar(a, "j"), *k = ivar(a, "k");
  tir_var_t *vi = ivar(a, "vi"), *vj = ivar(a, "vj"), *vk = ivar(a, "vk");
  tir_block_t *blk = tir_block_new(a, "C");
  add_iter(a, blk, vi, I(a, 0), I(a, 128), TIR_ITER_SPATIAL);
  add_iter(a, blk, vj, I(a, 0), I(a, 128), TIR_ITER_SPATIAL);
  add_iter(a, blk, vk, I(a, 0), I(a, 128), TIR_ITER_REDUCE);
  tir_region_t reads[2] = {point(a, A, vi, vk), point(a, B, vj, vk)};
  tir_region_t writes[1] = {point(a, C, vi, vj)};
  blk->nreads = 2, blk->reads = regions(a, reads, 2);
  blk->nwrites = 1, blk->writes = regions(a, writes, 1);
  blk->init = store2(a, C, vi, vj, F32(a, 0));
  tir_expr_t *prod = bin(a, TIR_MUL, load2(a, A, vi, vk), load2(a, B, vj, vk));
  blk->body = store2(a, C, vi, vj, bin(a, TIR_ADD, load2(a, C, vi, vj), prod));
  tir_expr_t *vals[3] = {i, j, k};
  tir_stmt_t *nest = loop(a, i, 128, loop(a, j, 128, loop(a, k, 128,
                         tir_block_realize(a, vals, 3, NULL, blk))));
  f->body = root(a, nest);
  return f;
}

static const char matmul_text[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\"), "
    "C: T.Buffer((128, 128), \"float32\")):\n"
    "    T.func_attr({\"global_symbol\": \"main\", \"tir.noalias\": T.bool(True)})\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j, k in T.grid(128, 128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            T.reads(A[vi, vk], B[vj, vk])\n"
    "            T.writes(C[vi, vj])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]\n";

static void test_matmul_prints_as_the_docs_example(void **state) {
  (void)state;
  tir_func_t *f = make_matmul();
  expect_func(f, matmul_text);
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Loops                                                                     */
/* ------------------------------------------------------------------------ */

static void test_loop_kinds_print_their_tvmscript_form(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *A = buf1(a, "A", 64);
  tir_var_t *i = ivar(a, "i"), *j = ivar(a, "j"), *k = ivar(a, "k"), *t = ivar(a, "t"),
            *s = ivar(a, "s");
  tir_stmt_t *body = store1(a, A, i, F32(a, 1));
  tir_stmt_t *ls = tir_for(a, s, I(a, 0), I(a, 2), TIR_FOR_SERIAL, body);
  ls->u.loop.nannots = 1;
  ls->u.loop.annots = annots1(a, "pragma_auto_unroll_max_step", I(a, 16));
  tir_stmt_t *lt = tir_for(a, t, I(a, 0), I(a, 32), TIR_FOR_THREAD_BINDING, ls);
  lt->u.loop.thread_tag = "threadIdx.x";
  tir_stmt_t *lk = tir_for(a, k, I(a, 0), I(a, 4), TIR_FOR_UNROLLED, lt);
  tir_stmt_t *lj = tir_for(a, j, I(a, 0), I(a, 8), TIR_FOR_VECTORIZED, lk);
  tir_stmt_t *li = tir_for(a, i, I(a, 0), I(a, 16), TIR_FOR_PARALLEL, lj);
  expect_stmt(li, "for i in T.parallel(16):\n"
                  "    for j in T.vectorized(8):\n"
                  "        for k in T.unroll(4):\n"
                  "            for t in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
                  "                for s in T.serial(2, annotations={\"pragma_auto_unroll_max_step\": 16}):\n"
                  "                    A[i] = T.float32(1)\n");
  /* A thread binding with annotations: thread first. */
  lt->u.loop.nannots = 1;
  lt->u.loop.annots = annots1(a, "k", tir_string(a, "v"));
  lt->u.loop.body = body;
  expect_stmt(lt, "for t in T.thread_binding(32, thread=\"threadIdx.x\", annotations={\"k\": \"v\"}):\n"
                  "    A[i] = T.float32(1)\n");
  mlc_arena_free(a);
}

static void test_nonzero_min_prints_start_and_stop(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *A = buf1(a, "A", 64);
  tir_var_t *i = ivar(a, "i"), *j = ivar(a, "j"), *k = ivar(a, "k"), *n = ivar(a, "n"),
            *m = ivar(a, "m");
  tir_stmt_t *body = store1(a, A, k, F32(a, 1));
  tir_stmt_t *lm = tir_for(a, m, I(a, 1), bin(a, TIR_SUB, n, I(a, 1)), TIR_FOR_SERIAL, body);
  tir_stmt_t *lk = tir_for(a, k, I(a, 1), I(a, 32), TIR_FOR_THREAD_BINDING, lm);
  lk->u.loop.thread_tag = "blockIdx.x";
  tir_stmt_t *lj = tir_for(a, j, i, I(a, 4), TIR_FOR_PARALLEL, lk);
  tir_stmt_t *li = tir_for(a, i, I(a, 2), I(a, 8), TIR_FOR_SERIAL, lj);
  expect_stmt(li, "for i in range(2, 10):\n"
                  "    for j in T.parallel(i, i + 4):\n"
                  "        for k in T.thread_binding(1, 33, thread=\"blockIdx.x\"):\n"
                  "            for m in range(1, 1 + (n - 1)):\n"
                  "                A[k] = T.float32(1)\n");
  /* int64 loops keep their dtype in the folded stop. */
  tir_var_t *w = tir_var(a, "w", tir_dt_INT64());
  tir_stmt_t *lw = tir_for(a, w, tir_int(a, tir_dt_INT64(), 3), tir_int(a, tir_dt_INT64(), 5),
                           TIR_FOR_UNROLLED, body);
  expect_stmt(lw, "for w in T.unroll(T.int64(3), T.int64(8)):\n"
                  "    A[k] = T.float32(1)\n");
  mlc_arena_free(a);
}

static void test_perfect_serial_nests_fold_into_grid(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *A = buf2(a, "A", 64, 64);
  tir_var_t *i = ivar(a, "i"), *j = ivar(a, "j"), *k = ivar(a, "k");
  tir_stmt_t *body = store2(a, A, i, j, F32(a, 1));
  /* serial, serial, parallel: the two serial loops fold, the parallel does not. */
  tir_stmt_t *lk = tir_for(a, k, I(a, 0), I(a, 2), TIR_FOR_PARALLEL, body);
  expect_stmt(loop(a, i, 4, loop(a, j, 8, lk)),
              "for i, j in T.grid(4, 8):\n"
              "    for k in T.parallel(2):\n"
              "        A[i, j] = T.float32(1)\n");
  /* int64 extents print with their dtype. */
  tir_var_t *x = tir_var(a, "x", tir_dt_INT64()), *y = tir_var(a, "y", tir_dt_INT64());
  tir_stmt_t *ly = tir_for(a, y, tir_int(a, tir_dt_INT64(), 0), tir_int(a, tir_dt_INT64(), 8),
                           TIR_FOR_SERIAL, body);
  expect_stmt(tir_for(a, x, tir_int(a, tir_dt_INT64(), 0), tir_int(a, tir_dt_INT64(), 4),
                      TIR_FOR_SERIAL, ly),
              "for x, y in T.grid(T.int64(4), T.int64(8)):\n"
              "    A[i, j] = T.float32(1)\n");
  mlc_arena_free(a);
}

static void test_grid_folding_stops_where_the_spec_says(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *A = buf2(a, "A", 64, 64);
  tir_var_t *i = ivar(a, "i"), *j = ivar(a, "j");
  tir_stmt_t *body = store2(a, A, i, j, F32(a, 1));
  /* The inner extent uses the outer variable. */
  tir_stmt_t *lj = tir_for(a, j, I(a, 0), bin(a, TIR_ADD, i, I(a, 1)), TIR_FOR_SERIAL, body);
  expect_stmt(loop(a, i, 4, lj), "for i in range(4):\n"
                                 "    for j in range(i + 1):\n"
                                 "        A[i, j] = T.float32(1)\n");
  /* The inner loop is annotated. */
  lj = loop(a, j, 8, body);
  lj->u.loop.nannots = 1;
  lj->u.loop.annots = annots1(a, "pragma_unroll_explicit", I(a, 1));
  expect_stmt(loop(a, i, 4, lj),
              "for i in range(4):\n"
              "    for j in T.serial(8, annotations={\"pragma_unroll_explicit\": 1}):\n"
              "        A[i, j] = T.float32(1)\n");
  /* The inner loop starts at 1. */
  lj = tir_for(a, j, I(a, 1), I(a, 8), TIR_FOR_SERIAL, body);
  expect_stmt(loop(a, i, 4, lj), "for i in range(4):\n"
                                 "    for j in range(1, 9):\n"
                                 "        A[i, j] = T.float32(1)\n");
  /* Not perfectly nested. */
  tir_stmt_t *two[2] = {loop(a, j, 8, body), store2(a, A, i, I(a, 0), F32(a, 2))};
  expect_stmt(loop(a, i, 4, tir_seq(a, two, 2)), "for i in range(4):\n"
                                                 "    for j in range(8):\n"
                                                 "        A[i, j] = T.float32(1)\n"
                                                 "    A[i, 0] = T.float32(2)\n");
  mlc_arena_free(a);
}

/* ------------------------------------------------------------------------ */
/* Names                                                                     */
/* ------------------------------------------------------------------------ */

static void test_clashing_names_get_numbered_suffixes(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *A = buf2(a, "A", 64, 64);
  tir_var_t *i = ivar(a, "i"), *i2 = ivar(a, "i"), *i_1 = ivar(a, "i_1"), *i3 = ivar(a, "i");
  tir_stmt_t *inner = loop(a, i_1, 2, store2(a, A, bin(a, TIR_ADD, i, i_1), i2, F32(a, 0)));
  tir_stmt_t *nest = loop(a, i, 4, tir_for(a, i2, I(a, 0), I(a, 8), TIR_FOR_PARALLEL, inner));
  /* Names are scoped: a nested `i` clashes with the live outer one, a sibling
   * loop reuses the name once the first loop has ended. */
  tir_stmt_t *sibling = loop(a, i3, 3, store2(a, A, i3, i3, F32(a, 1)));
  tir_stmt_t *both[2] = {nest, sibling};
  expect_stmt(tir_seq(a, both, 2), "for i in range(4):\n"
                                   "    for i_1 in T.parallel(8):\n"
                                   "        for i_1_1 in range(2):\n"
                                   "            A[i + i_1_1, i_1] = T.float32(0)\n"
                                   "for i in range(3):\n"
                                   "    A[i, i] = T.float32(1)\n");
  /* Buffers and variables share one namespace; the first printed keeps the name. */
  tir_var_t *x = ivar(a, "A");
  expect_stmt(loop(a, x, 2, store2(a, A, x, x, F32(a, 0))), "for A in range(2):\n"
                                                            "    A_1[A, A] = T.float32(0)\n");
  mlc_arena_free(a);
}

/* A block "name" over 16 x 16 with iter vars v_i, v_j remapped from loops
 * named i, j, storing into X. */
static tir_stmt_t *elementwise_nest(mlc_arena_t *a, const char *name, tir_buffer_t *X) {
  tir_var_t *i = ivar(a, "i"), *j = ivar(a, "j"), *vi = ivar(a, "v_i"), *vj = ivar(a, "v_j");
  tir_block_t *blk = tir_block_new(a, name);
  add_iter(a, blk, vi, I(a, 0), I(a, 16), TIR_ITER_SPATIAL);
  add_iter(a, blk, vj, I(a, 0), I(a, 16), TIR_ITER_SPATIAL);
  tir_region_t writes[1] = {point(a, X, vi, vj)};
  blk->nwrites = 1, blk->writes = regions(a, writes, 1);
  blk->body = store2(a, X, vi, vj, F32(a, 1));
  tir_expr_t *vals[2] = {i, j};
  return loop(a, i, 16, loop(a, j, 16, tir_block_realize(a, vals, 2, NULL, blk)));
}

static void test_sibling_blocks_reuse_loop_and_iter_var_names(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *X = buf2(a, "X", 16, 16), *Y = buf2(a, "Y", 16, 16);
  tir_stmt_t *both[2] = {elementwise_nest(a, "X", X), elementwise_nest(a, "Y", Y)};
  expect_stmt(tir_seq(a, both, 2), "for i, j in T.grid(16, 16):\n"
                                   "    with T.block(\"X\"):\n"
                                   "        v_i, v_j = T.axis.remap(\"SS\", [i, j])\n"
                                   "        T.reads()\n"
                                   "        T.writes(X[v_i, v_j])\n"
                                   "        X[v_i, v_j] = T.float32(1)\n"
                                   "for i, j in T.grid(16, 16):\n"
                                   "    with T.block(\"Y\"):\n"
                                   "        v_i, v_j = T.axis.remap(\"SS\", [i, j])\n"
                                   "        T.reads()\n"
                                   "        T.writes(Y[v_i, v_j])\n"
                                   "        Y[v_i, v_j] = T.float32(1)\n");
  mlc_arena_free(a);
}

static void test_let_names_end_with_the_let_body_and_buffer_names_never_end(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *A = buf1(a, "A", 8), *B = buf1(a, "x", 8);
  tir_var_t *x1 = ivar(a, "x"), *x2 = ivar(a, "x"), *i = ivar(a, "i"), *A_var = ivar(a, "A");
  /* for i: (x = i + 1; A[x] = 0); then x = 2 (sibling let, same name); then a
   * decl_buffer named x: the let's name has ended, so it takes `x`, and a
   * loop variable called like a buffer is suffixed even after the buffer's
   * statement. */
  tir_stmt_t *let1 = tir_let_stmt(a, x1, bin(a, TIR_ADD, i, I(a, 1)), store1(a, A, x1, F32(a, 0)));
  tir_stmt_t *in_loop = loop(a, i, 4, let1);
  tir_stmt_t *let2 = tir_let_stmt(a, x2, I(a, 2), store1(a, A, x2, F32(a, 2)));
  tir_stmt_t *after = loop(a, A_var, 2, store1(a, A, A_var, F32(a, 3)));
  tir_stmt_t *decl_body[2] = {store1(a, B, I(a, 0), F32(a, 4)), after};
  tir_stmt_t *decl = tir_allocate(a, B, tir_seq(a, decl_body, 2));
  tir_stmt_t *all[3] = {in_loop, let2, decl};
  expect_stmt(tir_seq(a, all, 3), "for i in range(4):\n"
                                  "    x: T.int32 = i + 1\n"
                                  "    A[x] = T.float32(0)\n"
                                  "x: T.int32 = 2\n"
                                  "A[x] = T.float32(2)\n"
                                  "x = T.decl_buffer((8,))\n"
                                  "x[0] = T.float32(4)\n"
                                  "for A_1 in range(2):\n"
                                  "    A[A_1] = T.float32(3)\n");
  mlc_arena_free(a);
}

static void test_keywords_and_invalid_identifiers_are_mangled(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  const char *hints[] = {"in", "lambda", "for", "range", "T", "A.shared", "0x", "", "None"};
  const char *want[] = {"in_1", "lambda_1", "for_1", "range_1", "T_1", "A_shared", "v_0x", "v",
                        "None_1"};
  for (size_t n = 0; n < sizeof(hints) / sizeof(hints[0]); n++) {
    tir_var_t *v = ivar(a, hints[n]);
    char expected[64];
    snprintf(expected, sizeof(expected), "%s + 1", want[n]);
    expect_expr(bin(a, TIR_ADD, v, I(a, 1)), expected);
  }
  /* A buffer named like a scope. */
  tir_buffer_t *S = buf1(a, "A.shared", 4);
  tir_expr_t *zero = I(a, 0);
  expect_expr(tir_load(a, S, &zero, 1), "A_shared[0]");
  mlc_arena_free(a);
}

/* ------------------------------------------------------------------------ */
/* Expressions                                                               */
/* ------------------------------------------------------------------------ */

static void test_operators_get_the_fewest_parentheses(void **state) {
  (void)state;
  mlc_arena_t *m = mlc_arena_new();
  tir_var_t *a = ivar(m, "a"), *b = ivar(m, "b"), *c = ivar(m, "c"), *d = ivar(m, "d");
  tir_var_t *p = tir_var(m, "p", tir_dt_BOOL()), *q = tir_var(m, "q", tir_dt_BOOL()),
            *r = tir_var(m, "r", tir_dt_BOOL());
  expect_expr(bin(m, TIR_MUL, bin(m, TIR_ADD, a, b), c), "(a + b) * c");
  expect_expr(bin(m, TIR_ADD, a, bin(m, TIR_MUL, b, c)), "a + b * c");
  expect_expr(bin(m, TIR_SUB, a, bin(m, TIR_SUB, b, c)), "a - (b - c)");
  expect_expr(bin(m, TIR_SUB, bin(m, TIR_SUB, a, b), c), "a - b - c");
  expect_expr(bin(m, TIR_MUL, bin(m, TIR_FLOOR_DIV, a, b), c), "a // b * c");
  expect_expr(bin(m, TIR_MUL, a, bin(m, TIR_FLOOR_DIV, b, c)), "a * (b // c)");
  expect_expr(bin(m, TIR_ADD, bin(m, TIR_FLOOR_MOD, a, b), c), "a % b + c");
  expect_expr(bin(m, TIR_FLOOR_MOD, bin(m, TIR_ADD, a, b), c), "(a + b) % c");
  expect_expr(tir_not(m, bin(m, TIR_LT, a, b)), "not (a < b)");
  expect_expr(tir_not(m, p), "not p");
  expect_expr(tir_not(m, bin(m, TIR_AND, p, q)), "not (p and q)");
  expect_expr(bin(m, TIR_AND, tir_not(m, p), q), "not p and q");
  expect_expr(bin(m, TIR_EQ, tir_not(m, p), q), "(not p) == q");
  expect_expr(bin(m, TIR_EQ, bin(m, TIR_LT, a, b), bin(m, TIR_LT, c, d)), "(a < b) == (c < d)");
  expect_expr(bin(m, TIR_LT, bin(m, TIR_ADD, a, b), c), "a + b < c");
  expect_expr(bin(m, TIR_AND, bin(m, TIR_LT, a, b), bin(m, TIR_GE, c, d)), "a < b and c >= d");
  expect_expr(bin(m, TIR_AND, bin(m, TIR_OR, p, q), r), "(p or q) and r");
  expect_expr(bin(m, TIR_OR, p, bin(m, TIR_AND, q, r)), "p or q and r");
  expect_expr(bin(m, TIR_AND, p, bin(m, TIR_AND, q, r)), "p and (q and r)");
  expect_expr(bin(m, TIR_AND, bin(m, TIR_AND, p, q), r), "p and q and r");
  expect_expr(bin(m, TIR_NE, a, bin(m, TIR_MUL, b, I(m, -3))), "a != b * -3");
  expect_expr(bin(m, TIR_SUB, a, I(m, -3)), "a - -3");
  mlc_arena_free(m);
}

static void test_division_and_calls_print_as_tvmscript_functions(void **state) {
  (void)state;
  mlc_arena_t *m = mlc_arena_new();
  tir_var_t *a = ivar(m, "a"), *b = ivar(m, "b");
  tir_var_t *x = tir_var(m, "x", tir_dt_FLOAT32()), *y = tir_var(m, "y", tir_dt_FLOAT32());
  expect_expr(bin(m, TIR_DIV, x, bin(m, TIR_ADD, y, x)), "x / (y + x)");
  expect_expr(bin(m, TIR_MUL, bin(m, TIR_DIV, a, b), a), "T.truncdiv(a, b) * a");
  expect_expr(bin(m, TIR_MOD, a, bin(m, TIR_ADD, a, b)), "T.truncmod(a, a + b)");
  expect_expr(bin(m, TIR_MIN, a, b), "T.min(a, b)");
  expect_expr(bin(m, TIR_MAX, x, F32(m, 0)), "T.max(x, T.float32(0))");
  expect_expr(tir_cast(m, tir_dt_FLOAT32(), bin(m, TIR_ADD, a, b)), "T.Cast(\"float32\", a + b)");
  expect_expr(tir_select(m, bin(m, TIR_LT, a, b), x, y), "T.Select(a < b, x, y)");
  expect_expr(tir_ramp(m, a, I(m, 1), 4), "T.Ramp(a, 1, 4)");
  expect_expr(tir_broadcast(m, F32(m, 0), 8), "T.Broadcast(T.float32(0), 8)");
  tir_expr_t *one[1] = {x};
  expect_expr(tir_call(m, tir_dt_FLOAT32(), TIR_OP_EXP, one, 1), "T.exp(x)");
  tir_expr_t *ite[3] = {bin(m, TIR_LT, a, b), x, F32(m, 0.5)};
  expect_expr(tir_call(m, tir_dt_FLOAT32(), TIR_OP_IF_THEN_ELSE, ite, 3),
              "T.if_then_else(a < b, x, T.float32(0.5))");
  tir_expr_t *ext[2] = {tir_string(m, "my_fn"), x};
  expect_expr(tir_call(m, tir_dt_FLOAT32(), TIR_OP_CALL_EXTERN, ext, 2),
              "T.call_extern(\"float32\", \"my_fn\", x)");
  tir_expr_t *ri[1] = {a};
  expect_expr(tir_call(m, tir_dt_FLOAT32(), TIR_OP_REINTERPRET, ri, 1),
              "T.reinterpret(\"float32\", a)");
  tir_expr_t *items[2] = {I(m, 1), tir_string(m, "b")};
  expect_expr(tir_call(m, tir_dt_INT32(), TIR_OP_LIST, items, 2), "[1, \"b\"]");
  tir_buffer_t *S = tir_buffer_new(m, "S", tir_dt_FLOAT32(), NULL, 0, NULL);
  expect_expr(tir_load(m, S, NULL, 0), "S[()]");
  mlc_arena_free(m);
}

static void test_immediates_print_with_their_dtype(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  expect_expr(I(a, 5), "5");
  expect_expr(I(a, -3), "-3");
  expect_expr(tir_int(a, tir_dt_INT64(), 5), "T.int64(5)");
  expect_expr(tir_int(a, tir_dt_INT64(), INT64_MIN), "T.int64(-9223372036854775808)");
  expect_expr(tir_int(a, tir_dt_INT8(), -1), "T.int8(-1)");
  expect_expr(tir_int(a, tir_dt_INT16(), 300), "T.int16(300)");
  expect_expr(tir_int(a, tir_dt_UINT8(), 7), "T.uint8(7)");
  expect_expr(tir_int(a, tir_dt_UINT8(), 255), "T.uint8(255)");
  expect_expr(tir_int(a, tir_dt_UINT16(), 65535), "T.uint16(65535)");
  expect_expr(tir_int(a, tir_dt_UINT32(), 4294967295), "T.uint32(4294967295)");
  expect_expr(tir_int(a, tir_dt_UINT64(), -1), "T.uint64(18446744073709551615)");
  expect_expr(tir_bool(a, true), "T.bool(True)");
  expect_expr(tir_bool(a, false), "T.bool(False)");
  expect_expr(tir_float(a, tir_dt_FLOAT16(), 0.5), "T.float16(0.5)");
  expect_expr(tir_float(a, tir_dt_BFLOAT16(), 1.5), "T.bfloat16(1.5)");
  expect_expr(tir_float(a, tir_dt_FLOAT64(), 2), "T.float64(2)");
  expect_expr(F32(a, 0), "T.float32(0)");
  expect_expr(tir_string(a, "plain"), "\"plain\"");
  mlc_arena_free(a);
}

static void expect_float(mlc_arena_t *a, tir_dtype_t t, double v, const char *want) {
  expect_expr(tir_float(a, t, v), want);
}

static void test_floats_print_the_shortest_text_that_reads_back(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_dtype_t f16 = tir_dt_FLOAT16(), bf16 = tir_dt_BFLOAT16(), f32 = tir_dt_FLOAT32(),
              f64 = tir_dt_FLOAT64();
  expect_float(a, f32, 0.1, "T.float32(0.1)");
  expect_float(a, f32, 1.0 / 3, "T.float32(0.33333334)");
  expect_float(a, f64, 1.0 / 3, "T.float64(0.3333333333333333)");
  expect_float(a, f64, 1e-05, "T.float64(1e-05)");
  expect_float(a, f32, 1e-05, "T.float32(1e-05)");
  expect_float(a, f64, 0.0001, "T.float64(0.0001)");
  expect_float(a, f64, 3.4028234663852886e+38, "T.float64(3.4028234663852886e+38)");
  expect_float(a, f32, -FLT_MAX, "T.float32(-3.4028235e+38)");
  expect_float(a, f32, 100, "T.float32(100)");
  expect_float(a, f64, 123456789, "T.float64(123456789)");
  expect_float(a, f64, 1e16, "T.float64(1e+16)");
  expect_float(a, f64, 1234567890123456789.0, "T.float64(1.2345678901234568e+18)");
  expect_float(a, f32, -2.25, "T.float32(-2.25)");
  expect_float(a, f16, 0.1, "T.float16(0.1)");
  expect_float(a, bf16, 0.1, "T.bfloat16(0.1)");
  expect_float(a, f32, INFINITY, "T.float32(\"inf\")");
  expect_float(a, f32, -INFINITY, "T.float32(\"-inf\")");
  expect_float(a, f64, NAN, "T.float64(\"nan\")");
  /* Random values of every float dtype read back exactly from their text. */
  mlc_rng_t rng;
  mlc_rng_seed(&rng, 42);
  tir_dtype_t types[4] = {f16, bf16, f32, f64};
  for (int n = 0; n < 2000; n++) {
    tir_dtype_t t = types[n % 4];
    uint64_t bits = mlc_rng_next(&rng);
    double v;
    memcpy(&v, &bits, sizeof(v));
    if (!isfinite(v) || v == 0) continue;
    if (t.bits < 64) v = ldexp(frexp(v, &(int){0}), (int)mlc_rng_range(&rng, -20, 20));
    tir_expr_t *e = tir_float(a, t, v);
    if (!isfinite(e->u.float_value)) continue; /* overflowed the dtype */
    char *text = expr_text(e);
    char *open = strchr(text, '(');
    assert_non_null(open);
    double back = tir_float(a, t, strtod(open + 1, NULL))->u.float_value;
    if (back != e->u.float_value) {
      print_error("%s does not read back to %.17g\n", text, e->u.float_value);
      fail();
    }
    mlc_free(text);
  }
  mlc_arena_free(a);
}

static void test_strings_use_python_escapes(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  expect_expr(tir_string(a, "say \"hi\"\\\n\tend\r\x01"), "\"say \\\"hi\\\"\\\\\\n\\tend\\r\\x01\"");
  expect_expr(tir_string(a, "caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  mlc_arena_free(a);
}

/* ------------------------------------------------------------------------ */
/* Blocks and regions                                                        */
/* ------------------------------------------------------------------------ */

static void test_iter_vars_use_remap_only_when_all_are_plain_loop_vars(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *A = buf2(a, "A", 64, 64);
  tir_var_t *i = ivar(a, "i"), *j = ivar(a, "j"), *vi = ivar(a, "vi"), *vj = ivar(a, "vj");
  tir_block_t *blk = tir_block_new(a, "B");
  add_iter(a, blk, vi, I(a, 0), I(a, 64), TIR_ITER_SPATIAL);
  add_iter(a, blk, vj, I(a, 0), I(a, 16), TIR_ITER_REDUCE);
  tir_region_t w[1] = {point(a, A, vi, vj)};
  blk->nwrites = 1, blk->writes = regions(a, w, 1);
  blk->body = store2(a, A, vi, vj, F32(a, 0));
  /* vj's domain (16) is not its loop's range (64): one line per iter var. */
  tir_expr_t *vals[2] = {i, j};
  tir_stmt_t *nest = loop(a, i, 64, loop(a, j, 64, tir_block_realize(a, vals, 2, NULL, blk)));
  const char *per_axis = "for i, j in T.grid(64, 64):\n"
                         "    with T.block(\"B\"):\n"
                         "        vi = T.axis.spatial(64, i)\n"
                         "        vj = T.axis.reduce(16, j)\n"
                         "        T.reads()\n"
                         "        T.writes(A[vi, vj])\n"
                         "        A[vi, vj] = T.float32(0)\n";
  expect_stmt(nest, per_axis);
  /* Matching domains: remap. */
  blk->iter_vars[1].dom.extent = I(a, 64);
  expect_stmt(nest, "for i, j in T.grid(64, 64):\n"
                    "    with T.block(\"B\"):\n"
                    "        vi, vj = T.axis.remap(\"SR\", [i, j])\n"
                    "        T.reads()\n"
                    "        T.writes(A[vi, vj])\n"
                    "        A[vi, vj] = T.float32(0)\n");
  /* A binding that is an expression, a domain with a nonzero min, a scan
   * iter var and a predicate. */
  blk->iter_vars[0].dom = (tir_range_t){I(a, 2), I(a, 8)};
  blk->iter_vars[1].type = TIR_ITER_SCAN;
  tir_expr_t *vals2[2] = {bin(a, TIR_ADD, bin(a, TIR_MUL, i, I(a, 4)), j), j};
  tir_expr_t *pred = bin(a, TIR_LT, bin(a, TIR_ADD, bin(a, TIR_MUL, i, I(a, 4)), j), I(a, 10));
  nest = loop(a, i, 64, loop(a, j, 64, tir_block_realize(a, vals2, 2, pred, blk)));
  expect_stmt(nest, "for i, j in T.grid(64, 64):\n"
                    "    with T.block(\"B\"):\n"
                    "        vi = T.axis.spatial((2, 10), i * 4 + j)\n"
                    "        vj = T.axis.scan(64, j)\n"
                    "        T.where(i * 4 + j < 10)\n"
                    "        T.reads()\n"
                    "        T.writes(A[vi, vj])\n"
                    "        A[vi, vj] = T.float32(0)\n");
  /* A single iter var prints per axis, as TVM does. */
  tir_block_t *one = tir_block_new(a, "one");
  add_iter(a, one, vi, I(a, 0), I(a, 64), TIR_ITER_SPATIAL);
  one->body = store2(a, A, vi, vi, F32(a, 0));
  tir_expr_t *v1[1] = {i};
  expect_stmt(loop(a, i, 64, tir_block_realize(a, v1, 1, NULL, one)),
              "for i in range(64):\n"
              "    with T.block(\"one\"):\n"
              "        vi = T.axis.spatial(64, i)\n"
              "        T.reads()\n"
              "        T.writes()\n"
              "        A[vi, vi] = T.float32(0)\n");
  mlc_arena_free(a);
}

static void test_regions_print_indices_and_slices(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *A = buf2(a, "A", 64, 64);
  tir_var_t *k = ivar(a, "k"), *n = ivar(a, "n");
  tir_block_t *blk = tir_block_new(a, "R");
  tir_region_t r = {A, 2, mlc_arena_alloc(a, sizeof(tir_range_t) * 2)};
  r.ranges[0] = (tir_range_t){k, I(a, 1)};
  r.ranges[1] = (tir_range_t){I(a, 0), I(a, 16)};
  tir_region_t r2 = {A, 2, mlc_arena_alloc(a, sizeof(tir_range_t) * 2)};
  r2.ranges[0] = (tir_range_t){k, I(a, 4)};
  r2.ranges[1] = (tir_range_t){I(a, 2), n};
  tir_region_t rs[2] = {r, r2};
  blk->nreads = 2, blk->reads = regions(a, rs, 2);
  tir_region_t r3 = {A, 2, mlc_arena_alloc(a, sizeof(tir_range_t) * 2)};
  r3.ranges[0] = (tir_range_t){I(a, 0), n};
  r3.ranges[1] = (tir_range_t){bin(a, TIR_MUL, k, I(a, 2)), bin(a, TIR_SUB, n, k)};
  blk->nwrites = 1, blk->writes = regions(a, &r3, 1);
  blk->body = tir_evaluate(a, I(a, 0));
  expect_stmt(tir_block_realize(a, NULL, 0, NULL, blk),
              "with T.block(\"R\"):\n"
              "    T.reads(A[k, 0:16], A[k:k + 4, 2:2 + n])\n"
              "    T.writes(A[0:n, k * 2:k * 2 + (n - k)])\n"
              "    T.evaluate(0)\n");
  mlc_arena_free(a);
}

static void test_block_lines_follow_the_spec_order(void **state) {
  (void)state;
  tir_func_t *f = tir_func_new("main");
  mlc_arena_t *a = f->arena;
  tir_buffer_t *A = buf2(a, "A", 16, 16);
  set_buffer_params(f, &A, 1);
  tir_var_t *vi = ivar(a, "vi"), *i = ivar(a, "i");
  int64_t shape16[1] = {16};
  tir_buffer_t *X = buffer(a, "X", tir_dt_FLOAT16(), shape16, 1);
  X->scope = "local";
  tir_buffer_t *sub = buffer(a, "A_sub", tir_dt_FLOAT32(), shape16, 1);
  sub->offset_factor = 1;
  /* Its symbolic stride and offset are declared in the block, before it. */
  sub->strides = mlc_arena_alloc(a, sizeof(tir_expr_t *));
  sub->strides[0] = ivar(a, "A_s0");
  sub->elem_offset = ivar(a, "A_elem_offset");
  tir_block_t *blk = tir_block_new(a, "inner");
  add_iter(a, blk, vi, I(a, 0), I(a, 16), TIR_ITER_SPATIAL);
  tir_region_t row = {A, 2, mlc_arena_alloc(a, sizeof(tir_range_t) * 2)};
  row.ranges[0] = (tir_range_t){vi, I(a, 1)};
  row.ranges[1] = (tir_range_t){I(a, 0), I(a, 16)};
  blk->nreads = 1, blk->reads = regions(a, &row, 1);
  blk->nwrites = 1, blk->writes = regions(a, &row, 1);
  blk->nannots = 1;
  blk->annots = annots1(a, "meta_schedule.auto_tensorize", tir_string(a, "dot"));
  blk->nalloc_buffers = 1;
  blk->alloc_buffers = mlc_arena_memdup(a, &X, sizeof(X));
  blk->nmatch_buffers = 1;
  blk->match_buffers = mlc_arena_alloc(a, sizeof(tir_match_buffer_t));
  blk->match_buffers[0] = (tir_match_buffer_t){sub, row};
  blk->init = store1(a, X, I(a, 0), tir_float(a, tir_dt_FLOAT16(), 0));
  blk->body = store1(a, sub, I(a, 0), F32(a, 1));
  tir_expr_t *vals[1] = {i};
  tir_stmt_t *inner = loop(a, i, 16, tir_block_realize(a, vals, 1, NULL, blk));
  /* A root with an annotation prints explicitly. */
  tir_block_t *r = tir_block_new(a, "root");
  r->nannots = 1;
  r->annots = annots1(a, "k", I(a, 1));
  int64_t shape4[1] = {4};
  tir_buffer_t *S = buffer(a, "S", tir_dt_FLOAT32(), shape4, 1);
  S->scope = "shared";
  r->nalloc_buffers = 1;
  r->alloc_buffers = mlc_arena_memdup(a, &S, sizeof(S));
  r->body = inner;
  f->body = tir_block_realize(a, NULL, 0, NULL, r);
  expect_func(f, "# from tvm.script import tir as T\n"
                 "\n"
                 "@T.prim_func\n"
                 "def main(A: T.Buffer((16, 16), \"float32\")):\n"
                 "    with T.block(\"root\"):\n"
                 "        T.reads()\n"
                 "        T.writes()\n"
                 "        T.block_attr({\"k\": 1})\n"
                 "        S = T.alloc_buffer((4,), scope=\"shared\")\n"
                 "        for i in range(16):\n"
                 "            with T.block(\"inner\"):\n"
                 "                vi = T.axis.spatial(16, i)\n"
                 "                T.reads(A[vi, 0:16])\n"
                 "                T.writes(A[vi, 0:16])\n"
                 "                T.block_attr({\"meta_schedule.auto_tensorize\": \"dot\"})\n"
                 "                X = T.alloc_buffer((16,), \"float16\", scope=\"local\")\n"
                 "                A_s0 = T.int32()\n"
                 "                A_elem_offset = T.int32()\n"
                 "                A_sub = T.match_buffer(A[vi, 0:16], (16,), strides=(A_s0,), "
                 "elem_offset=A_elem_offset, offset_factor=1)\n"
                 "                with T.init():\n"
                 "                    X[0] = T.float16(0)\n"
                 "                A_sub[0] = T.float32(1)\n");
  /* Without the annotation, the allocation keeps the root implicit. */
  r->nannots = 0;
  expect_func(f, "# from tvm.script import tir as T\n"
                 "\n"
                 "@T.prim_func\n"
                 "def main(A: T.Buffer((16, 16), \"float32\")):\n"
                 "    # with T.block(\"root\"):\n"
                 "    S = T.alloc_buffer((4,), scope=\"shared\")\n"
                 "    for i in range(16):\n"
                 "        with T.block(\"inner\"):\n"
                 "            vi = T.axis.spatial(16, i)\n"
                 "            T.reads(A[vi, 0:16])\n"
                 "            T.writes(A[vi, 0:16])\n"
                 "            T.block_attr({\"meta_schedule.auto_tensorize\": \"dot\"})\n"
                 "            X = T.alloc_buffer((16,), \"float16\", scope=\"local\")\n"
                 "            A_s0 = T.int32()\n"
                 "            A_elem_offset = T.int32()\n"
                 "            A_sub = T.match_buffer(A[vi, 0:16], (16,), strides=(A_s0,), "
                 "elem_offset=A_elem_offset, offset_factor=1)\n"
                 "            with T.init():\n"
                 "                X[0] = T.float16(0)\n"
                 "            A_sub[0] = T.float32(1)\n");
  tir_func_free(f);
}

static void test_root_without_blocks_prints_explicitly(void **state) {
  (void)state;
  tir_func_t *f = tir_func_new("f");
  mlc_arena_t *a = f->arena;
  tir_buffer_t *A = buf1(a, "A", 8);
  set_buffer_params(f, &A, 1);
  tir_var_t *i = ivar(a, "i");
  /* The parser would not wrap a body without blocks in a root block. */
  f->body = root(a, loop(a, i, 8, store1(a, A, i, F32(a, 0))));
  expect_func(f, "# from tvm.script import tir as T\n"
                 "\n"
                 "@T.prim_func\n"
                 "def f(A: T.Buffer((8,), \"float32\")):\n"
                 "    with T.block(\"root\"):\n"
                 "        T.reads()\n"
                 "        T.writes()\n"
                 "        for i in range(8):\n"
                 "            A[i] = T.float32(0)\n");
  /* Nor take a lone block with no iter vars for anything but the root. */
  tir_block_t *only = tir_block_new(a, "only");
  only->body = store1(a, A, I(a, 0), F32(a, 0));
  f->body = root(a, tir_block_realize(a, NULL, 0, NULL, only));
  expect_func(f, "# from tvm.script import tir as T\n"
                 "\n"
                 "@T.prim_func\n"
                 "def f(A: T.Buffer((8,), \"float32\")):\n"
                 "    with T.block(\"root\"):\n"
                 "        T.reads()\n"
                 "        T.writes()\n"
                 "        with T.block(\"only\"):\n"
                 "            T.reads()\n"
                 "            T.writes()\n"
                 "            A[0] = T.float32(0)\n");
  tir_func_free(f);
}

/* ------------------------------------------------------------------------ */
/* Statements                                                                */
/* ------------------------------------------------------------------------ */

static void test_statements_print_their_python_forms(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_var_t *n = ivar(a, "n"), *x = ivar(a, "x");
  int64_t shape16[1] = {16};
  tir_buffer_t *X = buffer(a, "X", tir_dt_FLOAT16(), shape16, 1);
  X->scope = "local";
  tir_expr_t *sync_arg[1] = {tir_string(a, "shared")};
  tir_stmt_t *else_body[2] = {
      tir_evaluate(a, x),
      tir_evaluate(a, tir_call(a, tir_dt_INT32(), TIR_OP_TVM_STORAGE_SYNC, sync_arg, 1))};
  tir_stmt_t *ifs = tir_if(a, bin(a, TIR_LT, x, I(a, 5)),
                           store1(a, X, x, tir_float(a, tir_dt_FLOAT16(), 0)),
                           tir_seq(a, else_body, 2));
  tir_stmt_t *alloc = tir_allocate(a, X, ifs);
  tir_stmt_t *attr_in = tir_attr_stmt(a, x, "pragma_key", I(a, 1), alloc);
  tir_stmt_t *attr = tir_attr_stmt(a, NULL, "pragma", tir_string(a, "v"), attr_in);
  tir_stmt_t *as = tir_assert_stmt(a, bin(a, TIR_LT, x, I(a, 10)), tir_string(a, "x too big"), attr);
  tir_stmt_t *let = tir_let_stmt(a, x, bin(a, TIR_ADD, n, I(a, 1)), as);
  expect_stmt(let, "x: T.int32 = n + 1\n"
                   "assert x < 10, \"x too big\"\n"
                   "with T.attr(0, \"pragma\", \"v\"):\n"
                   "    with T.attr(x, \"pragma_key\", 1):\n"
                   "        X = T.decl_buffer((16,), \"float16\", scope=\"local\")\n"
                   "        if x < 5:\n"
                   "            X[x] = T.float16(0)\n"
                   "        else:\n"
                   "            T.evaluate(x)\n"
                   "            T.tvm_storage_sync(\"shared\")\n");
  /* A float32 decl_buffer omits the dtype; an empty body is T.evaluate(0). */
  tir_buffer_t *Y = buffer(a, "Y", tir_dt_FLOAT32(), shape16, 1);
  expect_stmt(tir_allocate(a, Y, tir_seq(a, NULL, 0)), "Y = T.decl_buffer((16,))\n"
                                                       "T.evaluate(0)\n");
  mlc_arena_free(a);
}

/* ------------------------------------------------------------------------ */
/* Functions and modules                                                     */
/* ------------------------------------------------------------------------ */

static void test_non_plain_params_use_match_buffer_after_their_vars(void **state) {
  (void)state;
  tir_func_t *f = tir_func_new("main");
  mlc_arena_t *a = f->arena;
  tir_var_t *n = ivar(a, "n"), *s0 = ivar(a, "s0"), *off = ivar(a, "off"), *m = ivar(a, "m"),
            *q = ivar(a, "q");
  tir_expr_t *shapeA[2] = {n, I(a, 4)};
  tir_buffer_t *A = tir_buffer_new(a, "A", tir_dt_FLOAT16(), shapeA, 2, "shared");
  A->strides = mlc_arena_alloc(a, sizeof(tir_expr_t *) * 2);
  A->strides[0] = s0, A->strides[1] = I(a, 1);
  A->elem_offset = off;
  A->align = 64;
  A->offset_factor = 1;
  tir_buffer_t *C = tir_buffer_new(a, "C", tir_dt_FLOAT32(), &m, 1, NULL);
  tir_expr_t *shapeB[2] = {m, I(a, 8)};
  tir_buffer_t *B = tir_buffer_new(a, "B", tir_dt_FLOAT32(), shapeB, 2, NULL);
  tir_buffer_t *D = buf1(a, "D", 4);
  tir_var_t *var_A = tir_var(a, "var_A", tir_dt_HANDLE()), *var_C = tir_var(a, "var_C", tir_dt_HANDLE());
  tir_var_t *var_D = tir_var(a, "var_D", tir_dt_HANDLE()), *var_B = tir_var(a, "var_B", tir_dt_HANDLE());
  tir_var_t *params[5] = {var_A, var_C, m, var_B, var_D};
  tir_buffer_t *bmap[5] = {A, C, NULL, B, D};
  f->nparams = 5;
  f->params = mlc_arena_memdup(a, params, sizeof(params));
  f->buffer_map = mlc_arena_memdup(a, bmap, sizeof(bmap));
  /* The body uses a free variable q, B's data pointer and D's handle. */
  tir_stmt_t *body[3] = {store2(a, B, q, I(a, 0), F32(a, 0)), tir_evaluate(a, B->data),
                         tir_evaluate(a, var_D)};
  f->body = tir_seq(a, body, 3);
  expect_func(f, "# from tvm.script import tir as T\n"
                 "\n"
                 "@T.prim_func\n"
                 "def main(var_A: T.handle, var_C: T.handle, m: T.int32, "
                 "B: T.Buffer((m, 8), \"float32\"), var_D: T.handle):\n"
                 "    n = T.int32()\n"
                 "    s0 = T.int32()\n"
                 "    off = T.int32()\n"
                 "    A = T.match_buffer(var_A, (n, 4), \"float16\", strides=(s0, 1), "
                 "elem_offset=off, scope=\"shared\", align=64, offset_factor=1)\n"
                 "    C = T.match_buffer(var_C, (m,))\n"
                 "    D = T.match_buffer(var_D, (4,))\n"
                 "    q = T.int32()\n"
                 "    B[q, 0] = T.float32(0)\n"
                 "    T.evaluate(B.data)\n"
                 "    T.evaluate(var_D)\n");
  tir_func_free(f);
}

/* Views (buffers nothing declares, such as lowering's flat buffers over a
 * parameter) of every kind of storage: parameters' data, a handle parameter,
 * a decl_buffer, a block's alloc_buffer and a handle let. */
static tir_func_t *make_views(void) {
  tir_func_t *f = tir_func_new("main");
  mlc_arena_t *a = f->arena;
  int64_t s44[2] = {4, 4}, s16 = 16, s8 = 8, s2 = 2, s22[2] = {2, 2};
  tir_buffer_t *A = buffer(a, "A", tir_dt_FLOAT16(), s44, 2), *B = buf2(a, "B", 4, 4);
  tir_var_t *p = tir_var(a, "p", tir_dt_HANDLE()), *q = tir_var(a, "q", tir_dt_HANDLE());
  tir_var_t *params[3] = {A->data, B->data, p};
  tir_buffer_t *bmap[3] = {A, B, NULL};
  f->nparams = 3;
  f->params = mlc_arena_memdup(a, params, sizeof(params));
  f->buffer_map = mlc_arena_memdup(a, bmap, sizeof(bmap));
  tir_buffer_t *Bf = buf1(a, "B", 16), *Af = buffer(a, "A", tir_dt_FLOAT16(), &s16, 1);
  tir_buffer_t *P = buffer(a, "P", tir_dt_INT32(), &s8, 1), *Q = buffer(a, "Q", tir_dt_INT32(), &s2, 1);
  Bf->data = B->data, Af->data = A->data, P->data = p, Q->data = q;
  tir_buffer_t *X = buf1(a, "X", 32), *Xv = buf2(a, "X", 4, 4);
  X->scope = Xv->scope = "local";
  Xv->data = X->data;
  Xv->strides = mlc_arena_alloc(a, sizeof(tir_expr_t *) * 2);
  Xv->strides[0] = I(a, 8), Xv->strides[1] = I(a, 1);
  Xv->elem_offset = I(a, 2);
  Xv->align = 64, Xv->offset_factor = 1;
  tir_buffer_t *S = buf1(a, "S", 4), *Sv = buffer(a, "S", tir_dt_FLOAT32(), s22, 2);
  Sv->data = S->data;
  tir_block_t *blk = tir_block_new(a, "blk");
  blk->nalloc_buffers = 1;
  blk->alloc_buffers = mlc_arena_memdup(a, &S, sizeof(S));
  blk->body = store2(a, Sv, I(a, 0), I(a, 1), tir_load(a, X, (tir_expr_t *[]){I(a, 0)}, 1));
  tir_var_t *i = ivar(a, "i"), *j = ivar(a, "j"), *k = ivar(a, "k");
  tir_expr_t *flat = bin(a, TIR_ADD, bin(a, TIR_MUL, i, I(a, 4)), j);
  tir_stmt_t *in_x[2] = {loop(a, i, 4, loop(a, j, 4, store2(a, Xv, i, j, tir_load(a, Bf, &flat, 1)))),
                         tir_block_realize(a, NULL, 0, NULL, blk)};
  tir_stmt_t *body[4] = {
      loop(a, k, 16, store1(a, Bf, k, tir_cast(a, tir_dt_FLOAT32(), tir_load(a, Af, &k, 1)))),
      store1(a, P, I(a, 0), I(a, 1)), tir_allocate(a, X, tir_seq(a, in_x, 2)),
      tir_let_stmt(a, q, p, store1(a, Q, I(a, 1), I(a, 2)))};
  f->body = root(a, tir_seq(a, body, 4));
  return f;
}

static const char views_text[] =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((4, 4), \"float16\"), B: T.Buffer((4, 4), \"float32\"), p: T.handle):\n"
    "    B_1 = T.Buffer((16,), data=B.data)\n"
    "    A_1 = T.Buffer((16,), \"float16\", data=A.data)\n"
    "    P = T.Buffer((8,), \"int32\", data=p)\n"
    "    # with T.block(\"root\"):\n"
    "    for k in range(16):\n"
    "        B_1[k] = T.Cast(\"float32\", A_1[k])\n"
    "    P[0] = 1\n"
    "    X = T.decl_buffer((32,), scope=\"local\")\n"
    "    X_1 = T.Buffer((4, 4), data=X.data, strides=(8, 1), elem_offset=2, scope=\"local\", "
    "align=64, offset_factor=1)\n"
    "    for i, j in T.grid(4, 4):\n"
    "        X_1[i, j] = B_1[i * 4 + j]\n"
    "    with T.block(\"blk\"):\n"
    "        T.reads()\n"
    "        T.writes()\n"
    "        S = T.alloc_buffer((4,))\n"
    "        S_1 = T.Buffer((2, 2), data=S.data)\n"
    "        S_1[0, 1] = X[0]\n"
    "    q: T.handle = p\n"
    "    Q = T.Buffer((2,), \"int32\", data=q)\n"
    "    Q[1] = 2\n";

static void test_views_are_declared_where_their_storage_is_defined(void **state) {
  (void)state;
  tir_func_t *f = make_views();
  expect_func(f, views_text);
  tir_func_free(f);
}

static tir_func_t *module_func(tir_module_t *m, const char *name, int64_t n) {
  tir_func_t *f = mlc_arena_alloc(m->arena, sizeof(*f));
  f->arena = m->arena;
  f->name = name;
  tir_buffer_t *A = buf1(m->arena, "A", n);
  set_buffer_params(f, &A, 1);
  tir_var_t *i = ivar(m->arena, "i");
  f->body = loop(m->arena, i, n, store1(m->arena, A, i, F32(m->arena, 0)));
  return f;
}

static void test_module_prints_its_functions_in_a_class(void **state) {
  (void)state;
  tir_module_t *m = tir_module_new("Module");
  tir_func_t *funcs[2] = {module_func(m, "zero8", 8), module_func(m, "zero16", 16)};
  m->nfuncs = 2;
  m->funcs = mlc_arena_memdup(m->arena, funcs, sizeof(funcs));
  char *got = tir_print_module(m);
  expect_text(got, "# from tvm.script import ir as I\n"
                   "# from tvm.script import tir as T\n"
                   "\n"
                   "@I.ir_module\n"
                   "class Module:\n"
                   "    @T.prim_func\n"
                   "    def zero8(A: T.Buffer((8,), \"float32\")):\n"
                   "        for i in range(8):\n"
                   "            A[i] = T.float32(0)\n"
                   "\n"
                   "    @T.prim_func\n"
                   "    def zero16(A: T.Buffer((16,), \"float32\")):\n"
                   "        for i in range(16):\n"
                   "            A[i] = T.float32(0)\n");
  mlc_free(got);
  /* A module parsed from a lone function prints as that function. */
  m->nfuncs = 1;
  m->bare_func = true;
  got = tir_print_module(m);
  expect_text(got, "# from tvm.script import tir as T\n"
                   "\n"
                   "@T.prim_func\n"
                   "def zero8(A: T.Buffer((8,), \"float32\")):\n"
                   "    for i in range(8):\n"
                   "        A[i] = T.float32(0)\n");
  mlc_free(got);
  tir_module_free(m);
}

/* Every allocation of printing f fails in turn: NULL each time, no leak. */
static void expect_clean_failures(tir_func_t *f, const char *want) {
  long before = mlc_alloc_count();
  char *text = tir_print_func(f);
  long needed = mlc_alloc_count() - before;
  mlc_free(text);
  for (long n = 0; n < needed; n++) {
    mlc_alloc_fail_after(n);
    text = tir_print_func(f);
    mlc_alloc_fail_after(-1);
    assert_null(text);
  }
  text = tir_print_func(f);
  expect_text(text, want);
  mlc_free(text);
  tir_func_free(f);
}

static void test_printing_fails_cleanly_when_memory_runs_out(void **state) {
  (void)state;
  expect_clean_failures(make_matmul(), matmul_text);
  expect_clean_failures(make_views(), views_text); /* with its extra dry run */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul_prints_as_the_docs_example),
      cmocka_unit_test(test_loop_kinds_print_their_tvmscript_form),
      cmocka_unit_test(test_nonzero_min_prints_start_and_stop),
      cmocka_unit_test(test_perfect_serial_nests_fold_into_grid),
      cmocka_unit_test(test_grid_folding_stops_where_the_spec_says),
      cmocka_unit_test(test_clashing_names_get_numbered_suffixes),
      cmocka_unit_test(test_sibling_blocks_reuse_loop_and_iter_var_names),
      cmocka_unit_test(test_let_names_end_with_the_let_body_and_buffer_names_never_end),
      cmocka_unit_test(test_keywords_and_invalid_identifiers_are_mangled),
      cmocka_unit_test(test_operators_get_the_fewest_parentheses),
      cmocka_unit_test(test_division_and_calls_print_as_tvmscript_functions),
      cmocka_unit_test(test_immediates_print_with_their_dtype),
      cmocka_unit_test(test_floats_print_the_shortest_text_that_reads_back),
      cmocka_unit_test(test_strings_use_python_escapes),
      cmocka_unit_test(test_iter_vars_use_remap_only_when_all_are_plain_loop_vars),
      cmocka_unit_test(test_regions_print_indices_and_slices),
      cmocka_unit_test(test_block_lines_follow_the_spec_order),
      cmocka_unit_test(test_root_without_blocks_prints_explicitly),
      cmocka_unit_test(test_statements_print_their_python_forms),
      cmocka_unit_test(test_non_plain_params_use_match_buffer_after_their_vars),
      cmocka_unit_test(test_views_are_declared_where_their_storage_is_defined),
      cmocka_unit_test(test_module_prints_its_functions_in_a_class),
      cmocka_unit_test(test_printing_fails_cleanly_when_memory_runs_out),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
