/*
 * test_verify.c - tir_verify: well-formed functions pass (every built-in
 * workload, a matmul built by hand); each kind of problem is reported with a
 * message that names the block and the buffer or variable; every problem is
 * listed, the first is the last error; out of memory is an error, not a crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tir/tir.h"

/* "The usual choice" for a workload's dtypes (tir_workload_build). */
#define DEFAULT_DTYPE tir_dtype(0, 0, 0)

/* ------------------------------------------------------------------------ */
/* Building functions by hand                                                */
/* ------------------------------------------------------------------------ */

static tir_func_t *F_;
static mlc_arena_t *A_;

static tir_expr_t *I(int64_t v) { return tir_i32(A_, v); }
static tir_var_t *V(const char *name) { return tir_var(A_, name, tir_dt_INT32()); }
static tir_expr_t *bin(tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) { return tir_binary(A_, k, x, y); }

static tir_buffer_t *buf2(const char *name, int64_t m, int64_t n) {
  tir_expr_t *shape[2] = {I(m), I(n)};
  return tir_buffer_new(A_, name, tir_dt_FLOAT32(), shape, 2, NULL);
}

static tir_buffer_t *buf1(const char *name, int64_t n) {
  tir_expr_t *shape[1] = {I(n)};
  return tir_buffer_new(A_, name, tir_dt_FLOAT32(), shape, 1, NULL);
}

static tir_expr_t *ld2(tir_buffer_t *b, tir_expr_t *x, tir_expr_t *y) {
  tir_expr_t *idx[2] = {x, y};
  return tir_load(A_, b, idx, 2);
}

static tir_expr_t *ld1(tir_buffer_t *b, tir_expr_t *x) { return tir_load(A_, b, &x, 1); }

static tir_stmt_t *st2(tir_buffer_t *b, tir_expr_t *v, tir_expr_t *x, tir_expr_t *y) {
  tir_expr_t *idx[2] = {x, y};
  return tir_store(A_, b, v, idx, 2);
}

static tir_stmt_t *st1(tir_buffer_t *b, tir_expr_t *v, tir_expr_t *x) { return tir_store(A_, b, v, &x, 1); }

static tir_stmt_t *loop(tir_var_t *v, int64_t extent, tir_stmt_t *body) {
  return tir_for(A_, v, I(0), I(extent), TIR_FOR_SERIAL, body);
}

static tir_stmt_t *seq2(tir_stmt_t *a, tir_stmt_t *b) {
  tir_stmt_t *s[2] = {a, b};
  return tir_seq(A_, s, 2);
}

static tir_region_t point2(tir_buffer_t *b, tir_expr_t *x, tir_expr_t *y) {
  tir_range_t r[2] = {{x, I(1)}, {y, I(1)}};
  return (tir_region_t){b, 2, mlc_arena_memdup(A_, r, sizeof r)};
}

static tir_region_t point1(tir_buffer_t *b, tir_expr_t *x) {
  tir_range_t r = {x, I(1)};
  return (tir_region_t){b, 1, mlc_arena_memdup(A_, &r, sizeof r)};
}

static void set_regions(tir_block_t *b, int nr, const tir_region_t *reads, int nw,
                        const tir_region_t *writes) {
  b->nreads = nr;
  b->reads = nr ? mlc_arena_memdup(A_, reads, sizeof(*reads) * (size_t)nr) : NULL;
  b->nwrites = nw;
  b->writes = nw ? mlc_arena_memdup(A_, writes, sizeof(*writes) * (size_t)nw) : NULL;
}

static void new_func(int nbufs, tir_buffer_t **bufs) {
  F_->nparams = nbufs;
  F_->params = mlc_arena_alloc(A_, sizeof(tir_var_t *) * (size_t)nbufs);
  F_->buffer_map = mlc_arena_memdup(A_, bufs, sizeof(*bufs) * (size_t)nbufs);
  for (int i = 0; i < nbufs; i++) F_->params[i] = bufs[i]->data;
}

static void set_root(tir_stmt_t *body) {
  tir_block_t *root = tir_block_new(A_, "root");
  root->body = body;
  F_->body = tir_block_realize(A_, NULL, 0, NULL, root);
}

/* A block with one spatial iter var over [0, extent). */
static tir_block_t *block1(const char *name, tir_var_t *v, int64_t extent) {
  tir_block_t *b = tir_block_new(A_, name);
  b->niter_vars = 1;
  b->iter_vars = mlc_arena_alloc(A_, sizeof(tir_iter_var_t));
  b->iter_vars[0] = (tir_iter_var_t){v, {I(0), I(extent)}, TIR_ITER_SPATIAL};
  return b;
}

/* for i in range(n): block name: vi = i; Out[vi] = In[vi] */
static tir_stmt_t *copy_nest(const char *name, tir_buffer_t *in, tir_buffer_t *out, int64_t n,
                             tir_block_t **blk) {
  tir_var_t *i = V("i"), *vi = V("vi");
  tir_block_t *b = block1(name, vi, n);
  b->body = st1(out, ld1(in, vi), vi);
  tir_region_t r = point1(in, vi), w = point1(out, vi);
  set_regions(b, 1, &r, 1, &w);
  if (blk) *blk = b;
  tir_expr_t *bind = i;
  return loop(i, n, tir_block_realize(A_, &bind, 1, NULL, b));
}

typedef struct {
  tir_buffer_t *A, *B, *C;
  tir_var_t *i, *j, *k, *vi, *vj, *vk;
  tir_block_t *block;
  tir_stmt_t *realize, *outer;
} mm_t;

/* The matmul of docs/tir.md, n x n. */
static mm_t build_matmul(int64_t n) {
  mm_t m;
  m.A = buf2("A", n, n), m.B = buf2("B", n, n), m.C = buf2("C", n, n);
  tir_buffer_t *bufs[3] = {m.A, m.B, m.C};
  new_func(3, bufs);
  m.i = V("i"), m.j = V("j"), m.k = V("k"), m.vi = V("vi"), m.vj = V("vj"), m.vk = V("vk");
  tir_block_t *b = tir_block_new(A_, "C");
  b->niter_vars = 3;
  b->iter_vars = mlc_arena_alloc(A_, 3 * sizeof(tir_iter_var_t));
  b->iter_vars[0] = (tir_iter_var_t){m.vi, {I(0), I(n)}, TIR_ITER_SPATIAL};
  b->iter_vars[1] = (tir_iter_var_t){m.vj, {I(0), I(n)}, TIR_ITER_SPATIAL};
  b->iter_vars[2] = (tir_iter_var_t){m.vk, {I(0), I(n)}, TIR_ITER_REDUCE};
  tir_region_t reads[2] = {point2(m.A, m.vi, m.vk), point2(m.B, m.vj, m.vk)};
  tir_region_t write = point2(m.C, m.vi, m.vj);
  set_regions(b, 2, reads, 1, &write);
  b->init = st2(m.C, tir_float(A_, tir_dt_FLOAT32(), 0), m.vi, m.vj);
  tir_expr_t *prod = bin(TIR_MUL, ld2(m.A, m.vi, m.vk), ld2(m.B, m.vj, m.vk));
  b->body = st2(m.C, bin(TIR_ADD, ld2(m.C, m.vi, m.vj), prod), m.vi, m.vj);
  tir_expr_t *binds[3] = {m.i, m.j, m.k};
  m.block = b;
  m.realize = tir_block_realize(A_, binds, 3, NULL, b);
  m.outer = loop(m.i, n, loop(m.j, n, loop(m.k, n, m.realize)));
  set_root(m.outer);
  return m;
}

static int setup(void **state) {
  (void)state;
  F_ = tir_func_new("f");
  if (!F_) return -1;
  A_ = F_->arena;
  mlc_error_clear();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tir_func_free(F_);
  return 0;
}

/* Runs the verifier; returns its status and leaves the listing in errs. */
static char errs[4096];

static int verify(void) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  int rc = tir_verify(F_, &sb);
  snprintf(errs, sizeof errs, "%s", mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return rc;
}

/* Fails with the listing when `line` is not one of the reported lines. */
static void assert_reported(const char *line) {
  if (!strstr(errs, line)) fail_msg("expected \"%s\" in:\n%s", line, errs);
}

/* ------------------------------------------------------------------------ */
/* Well-formed functions                                                     */
/* ------------------------------------------------------------------------ */

static void test_handwritten_matmul_verifies(void **state) {
  (void)state;
  build_matmul(64);
  assert_int_equal(verify(), MLC_OK);
  assert_string_equal(errs, "");
}

static void test_every_builtin_workload_verifies(void **state) {
  (void)state;
  int n;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  assert_true(n > 0);
  for (int i = 0; i < n; i++) {
    tir_func_t *f = NULL;
    assert_int_equal(tir_workload_build(&f, descs[i].name, NULL, 0, DEFAULT_DTYPE, DEFAULT_DTYPE), MLC_OK);
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    int rc = tir_verify(f, &sb);
    if (rc != MLC_OK) fail_msg("%s:\n%s", descs[i].name, mlc_sb_str(&sb));
    mlc_sb_free(&sb);
    tir_func_free(f);
  }
}

/* Lowered code reads parameters through flat views that share their storage
 * (`C_1 = T.Buffer((4096,), data=C.data)`): a view of defined storage is
 * defined; a view of storage nobody defines is not. */
static void test_view_of_parameter_storage_is_defined(void **state) {
  (void)state;
  build_matmul(8);
  tir_expr_t *flat[1] = {tir_i32(A_, 64)};
  tir_buffer_t *view = tir_buffer_new(A_, "C_1", tir_dt_FLOAT32(), flat, 1, NULL);
  view->data = F_->buffer_map[2]->data; /* C's storage */
  tir_expr_t *idx[1] = {tir_i32(A_, 0)};
  tir_stmt_t *store = tir_store(A_, view, tir_float(A_, tir_dt_FLOAT32(), 1), idx, 1);
  tir_stmt_t *body[2] = {tir_func_root_block(F_)->body, store};
  tir_func_root_block(F_)->body = tir_seq(A_, body, 2);
  assert_int_equal(verify(), MLC_OK);

  view->data = tir_var(A_, "orphan", tir_dt_HANDLE());
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("buffer C_1 is used but not defined");
}

static void test_binding_within_domain_is_accepted(void **state) {
  (void)state;
  /* for i in range(64): vi = i * 2 + 1 with vi in [0, 129): reaches 127 only. */
  tir_buffer_t *In = buf1("In", 129), *Out = buf1("Out", 129);
  tir_buffer_t *bufs[2] = {In, Out};
  new_func(2, bufs);
  tir_block_t *b;
  tir_stmt_t *nest = copy_nest("copy", In, Out, 129, &b);
  tir_var_t *i = nest->u.loop.var;
  nest->u.loop.extent = I(64);
  nest->u.loop.body->u.realize.iter_values[0] = bin(TIR_ADD, bin(TIR_MUL, i, I(2)), I(1));
  set_root(nest);
  assert_int_equal(verify(), MLC_OK);
}

/* ------------------------------------------------------------------------ */
/* Problems                                                                  */
/* ------------------------------------------------------------------------ */

static void test_undefined_variable_is_named_with_its_use(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  tir_var_t *q = V("q");
  m.block->body->u.store.indices[1] = q; /* C[vi, q] = ... */
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": variable q is used but not defined (in the store to C)\n");
  assert_string_equal(mlc_error_last(),
                      "block \"C\": variable q is used but not defined (in the store to C)");
  assert_int_equal(mlc_error_last_code(), MLC_EVERIFY);
}

static void test_loop_variable_used_outside_its_loop_is_undefined(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  /* A second nest binds its block to the first nest's loop var i. */
  tir_buffer_t *X = buf1("X", 64), *Y = buf1("Y", 64);
  tir_buffer_t *bufs[5] = {m.A, m.B, m.C, X, Y};
  new_func(5, bufs);
  tir_stmt_t *second = copy_nest("Y", X, Y, 64, NULL);
  second->u.loop.body->u.realize.iter_values[0] = m.i;
  set_root(seq2(m.outer, second));
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_string_equal(errs, "block \"Y\": variable i is used but not defined (in the binding of vi)\n");
}

static void test_binding_outside_its_domain(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.outer->u.loop.extent = I(128); /* i in [0, 128) bound to vi in [0, 64) */
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": binding of vi can reach 127, outside its domain [0, 64)");
}

static void test_binding_below_its_domain(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.realize->u.realize.iter_values[1] = bin(TIR_SUB, m.j, I(1));
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": binding of vj can reach -1, outside its domain [0, 64)");
}

static void test_binding_with_a_predicate_is_not_judged(void **state) {
  (void)state;
  /* i in [0, 128) with T.where(i < 64): the predicate guards the domain. */
  mm_t m = build_matmul(64);
  m.outer->u.loop.extent = I(128);
  m.realize->u.realize.predicate = bin(TIR_LT, m.i, I(64));
  assert_int_equal(verify(), MLC_OK);
}

static void test_operand_dtypes_must_agree(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  tir_expr_t *half = tir_float(A_, tir_dt_FLOAT16(), 1);
  m.block->body->u.store.value = bin(TIR_ADD, ld2(m.C, m.vi, m.vj), half);
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": operands of Add have different dtypes: float32 vs float16 "
                  "(in the store to C)");
}

static void test_stored_value_must_have_the_buffer_dtype(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.block->init->u.store.value = tir_float(A_, tir_dt_FLOAT16(), 0);
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": the value stored to C is float16 but the buffer holds float32");
}

static void test_vector_store_needs_vector_value(void **state) {
  (void)state;
  /* Out[T.Ramp(0, 1, 4)] = In[T.Ramp(0, 1, 4)] is fine; a scalar value is not. */
  tir_buffer_t *In = buf1("In", 4), *Out = buf1("Out", 4);
  tir_buffer_t *bufs[2] = {In, Out};
  new_func(2, bufs);
  tir_expr_t *ramp = tir_ramp(A_, I(0), I(1), 4);
  tir_stmt_t *good = st1(Out, ld1(In, ramp), ramp);
  F_->body = good;
  assert_int_equal(verify(), MLC_OK);
  F_->body = st1(Out, tir_float(A_, tir_dt_FLOAT32(), 0), ramp);
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("the value stored to Out is float32 but the buffer holds float32x4");
}

static void test_index_must_be_an_integer(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  tir_expr_t *idx[2] = {tir_float(A_, tir_dt_FLOAT32(), 1), m.vk};
  m.block->body->u.store.value = tir_load(A_, m.A, idx, 2);
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": index 0 of A is float32, not an integer");
}

static void test_predicate_and_conditions_must_be_bool(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.realize->u.realize.predicate = I(1);
  m.block->body = tir_if(A_, m.vi, m.block->body, NULL);
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": the predicate is int32, not bool");
  assert_reported("block \"C\": an if condition is int32, not bool");
}

static void test_wrong_number_of_indices(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.block->body->u.store.value = bin(TIR_MUL, ld1(m.A, m.vi), ld2(m.B, m.vj, m.vk));
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": A has 2 dimensions but is indexed with 1 index");
}

static void test_buffer_read_but_not_in_reads(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.block->nreads = 1; /* T.reads(A[vi, vk]) only */
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": buffer B is read but not in T.reads\n");
  /* One line per buffer, however often it is read. */
  assert_null(strstr(strstr(errs, "buffer B is read") + 1, "buffer B is read"));
}

static void test_buffer_written_but_not_in_writes(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.block->nwrites = 0;
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": buffer C is written but not in T.writes");
}

static void test_reduction_update_read_needs_init_or_reads(void **state) {
  (void)state;
  /* Without an init, reading C requires C in T.reads (TVM's update block). */
  mm_t m = build_matmul(64);
  m.block->init = NULL;
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": buffer C is read but not in T.reads");
}

static void test_access_outside_declared_region(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  tir_expr_t *shifted = bin(TIR_ADD, m.vk, I(1));
  m.block->body->u.store.value = bin(TIR_MUL, ld2(m.A, m.vi, shifted), ld2(m.B, m.vj, m.vk));
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": read of A is outside its T.reads region in dimension 1: 1 past its end");
}

static void test_relaxed_access_inside_declared_range_is_accepted(void **state) {
  (void)state;
  /* block S: vi; for k in range(16): S[vi] += In[vi * 16 + k]; reads In[vi*16 : vi*16 + 16] */
  tir_buffer_t *In = buf1("In", 1024), *S = buf1("S", 64);
  tir_buffer_t *bufs[2] = {In, S};
  new_func(2, bufs);
  tir_var_t *i = V("i"), *vi = V("vi"), *k = V("k");
  tir_block_t *b = block1("S", vi, 64);
  tir_expr_t *base = bin(TIR_MUL, vi, I(16));
  tir_range_t rr = {base, I(16)};
  tir_region_t r[2] = {{In, 1, mlc_arena_memdup(A_, &rr, sizeof rr)}, point1(S, vi)};
  tir_region_t w = point1(S, vi);
  set_regions(b, 2, r, 1, &w);
  b->body = loop(k, 16, st1(S, bin(TIR_ADD, ld1(S, vi), ld1(In, bin(TIR_ADD, base, k))), vi));
  tir_expr_t *bind = i;
  set_root(loop(i, 64, tir_block_realize(A_, &bind, 1, NULL, b)));
  assert_int_equal(verify(), MLC_OK);
  /* One more iteration of k walks past the region. */
  b->body->u.loop.extent = I(17);
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"S\": read of In is outside its T.reads region in dimension 0: 1 past its end");
}

static void test_nested_block_regions_must_be_declared_by_the_outer_block(void **state) {
  (void)state;
  /* outer (vo) { for ii in range(4): inner (vi = vo * 4 + ii) { Out[vi] = In[vi] } } */
  tir_buffer_t *In = buf1("In", 64), *Out = buf1("Out", 64);
  tir_buffer_t *bufs[2] = {In, Out};
  new_func(2, bufs);
  tir_var_t *o = V("o"), *vo = V("vo"), *ii = V("ii"), *vi = V("vi");
  tir_block_t *inner = block1("inner", vi, 64), *outer = block1("outer", vo, 16);
  inner->body = st1(Out, ld1(In, vi), vi);
  tir_region_t r = point1(In, vi), w = point1(Out, vi);
  set_regions(inner, 1, &r, 1, &w);
  tir_expr_t *bind_in = bin(TIR_ADD, bin(TIR_MUL, vo, I(4)), ii);
  outer->body = loop(ii, 4, tir_block_realize(A_, &bind_in, 1, NULL, inner));
  tir_range_t ro = {bin(TIR_MUL, vo, I(4)), I(4)};
  tir_region_t outer_w = {Out, 1, mlc_arena_memdup(A_, &ro, sizeof ro)};
  set_regions(outer, 0, NULL, 1, &outer_w);
  tir_expr_t *bind_out = o;
  set_root(loop(o, 16, tir_block_realize(A_, &bind_out, 1, NULL, outer)));
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"outer\": buffer In is read but not in T.reads");
  /* Declared with the wrong extent, the nested write leaves the region. */
  tir_region_t outer_r = {In, 1, mlc_arena_memdup(A_, &ro, sizeof ro)};
  tir_range_t small = {bin(TIR_MUL, vo, I(4)), I(2)};
  outer_w.ranges = mlc_arena_memdup(A_, &small, sizeof small);
  set_regions(outer, 1, &outer_r, 1, &outer_w);
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"outer\": write of Out is outside its T.writes region in dimension 0: "
                  "2 past its end");
  /* And correct regions pass. */
  outer_w.ranges = mlc_arena_memdup(A_, &ro, sizeof ro);
  set_regions(outer, 1, &outer_r, 1, &outer_w);
  assert_int_equal(verify(), MLC_OK);
}

static void test_duplicate_block_names(void **state) {
  (void)state;
  tir_buffer_t *In = buf1("In", 8), *Mid = buf1("Mid", 8), *Out = buf1("Out", 8);
  tir_buffer_t *bufs[3] = {In, Mid, Out};
  new_func(3, bufs);
  set_root(seq2(copy_nest("copy", In, Mid, 8, NULL), copy_nest("copy", Mid, Out, 8, NULL)));
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_string_equal(errs, "duplicate block name \"copy\"\n");
}

static void test_buffer_used_but_not_defined(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  F_->nparams = 2; /* C is no longer a parameter */
  (void)m;
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("buffer C is used but not defined");
}

static void test_iter_var_count_must_match_bindings(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.realize->u.realize.n = 2;
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_reported("block \"C\": 3 iter vars but 2 bindings");
}

static void test_every_problem_is_listed_once_per_line(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.outer->u.loop.extent = I(65);
  m.block->nreads = 1;
  assert_int_equal(verify(), MLC_EVERIFY);
  assert_string_equal(errs,
                      "block \"C\": binding of vi can reach 64, outside its domain [0, 64)\n"
                      "block \"C\": buffer B is read but not in T.reads\n");
  /* The first one is the last error. */
  assert_string_equal(mlc_error_last(),
                      "block \"C\": binding of vi can reach 64, outside its domain [0, 64)");
}

static void test_errors_listing_is_optional(void **state) {
  (void)state;
  mm_t m = build_matmul(64);
  m.block->nreads = 0;
  assert_int_equal(tir_verify(F_, NULL), MLC_EVERIFY);
  assert_string_equal(mlc_error_last(), "block \"C\": buffer A is read but not in T.reads");
}

static void test_out_of_memory_is_reported_not_crashed(void **state) {
  (void)state;
  build_matmul(64);
  bool saw_oom = false;
  for (long n = 0; n < 400; n++) {
    mlc_alloc_fail_after(n);
    int rc = tir_verify(F_, NULL);
    mlc_alloc_fail_after(-1);
    assert_true(rc == MLC_OK || rc == MLC_ENOMEM);
    saw_oom |= rc == MLC_ENOMEM;
    if (rc == MLC_OK) break;
  }
  assert_true(saw_oom);
  assert_int_equal(tir_verify(F_, NULL), MLC_OK);
}

int main(void) {
#define T_(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
  const struct CMUnitTest tests[] = {
      T_(test_handwritten_matmul_verifies),
      cmocka_unit_test(test_every_builtin_workload_verifies),
      T_(test_view_of_parameter_storage_is_defined),
      T_(test_binding_within_domain_is_accepted),
      T_(test_undefined_variable_is_named_with_its_use),
      T_(test_loop_variable_used_outside_its_loop_is_undefined),
      T_(test_binding_outside_its_domain),
      T_(test_binding_below_its_domain),
      T_(test_binding_with_a_predicate_is_not_judged),
      T_(test_operand_dtypes_must_agree),
      T_(test_stored_value_must_have_the_buffer_dtype),
      T_(test_vector_store_needs_vector_value),
      T_(test_index_must_be_an_integer),
      T_(test_predicate_and_conditions_must_be_bool),
      T_(test_wrong_number_of_indices),
      T_(test_buffer_read_but_not_in_reads),
      T_(test_buffer_written_but_not_in_writes),
      T_(test_reduction_update_read_needs_init_or_reads),
      T_(test_access_outside_declared_region),
      T_(test_relaxed_access_inside_declared_range_is_accepted),
      T_(test_nested_block_regions_must_be_declared_by_the_outer_block),
      T_(test_duplicate_block_names),
      T_(test_buffer_used_but_not_defined),
      T_(test_iter_var_count_must_match_bindings),
      T_(test_every_problem_is_listed_once_per_line),
      T_(test_errors_listing_is_optional),
      T_(test_out_of_memory_is_reported_not_crashed),
  };
#undef T_
  return cmocka_run_group_tests(tests, NULL, NULL);
}
