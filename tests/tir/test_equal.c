/*
 * test_equal.c - structural equality up to renaming: clones and renamed
 * copies are equal; function names and global_symbol do not matter; every
 * other difference is found, and the first one is explained with a path
 * ("block \"C\": reads[1]: ..."); definitions pair one to one; free
 * variables compare by identity; symbolic shapes pair at first appearance.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "tir/tir.h"

/* "The usual choice" for a workload's dtypes (tir_workload_build). */
#define DEFAULT_DTYPE tir_dtype(0, 0, 0)

/* ------------------------------------------------------------------------ */
/* A matmul with every name and choice as an option                          */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char *names[9]; /* A B C i j k vi vj vk */
  const char *func, *block;
  int64_t m, n, k;
  tir_dtype_t dtype;
  tir_for_kind_t outer_kind;
  double init_value;
  bool init;
} mm_opts_t;

static mm_opts_t mm_defaults(void) {
  mm_opts_t o = {{"A", "B", "C", "i", "j", "k", "vi", "vj", "vk"}, "main", "C", 128, 128, 128,
                 tir_dt_FLOAT32(), TIR_FOR_SERIAL, 0.0, true};
  return o;
}

static tir_buffer_t *buffer2(mlc_arena_t *a, const char *name, tir_dtype_t t, int64_t x, int64_t y) {
  tir_expr_t *shape[2] = {tir_i32(a, x), tir_i32(a, y)};
  return tir_buffer_new(a, name, t, shape, 2, NULL);
}

static tir_region_t point2(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *x, tir_expr_t *y) {
  tir_range_t r[2] = {{x, tir_i32(a, 1)}, {y, tir_i32(a, 1)}};
  return (tir_region_t){b, 2, mlc_arena_memdup(a, r, sizeof r)};
}

static tir_expr_t *load2(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *x, tir_expr_t *y) {
  tir_expr_t *idx[2] = {x, y};
  return tir_load(a, b, idx, 2);
}

static tir_stmt_t *store2(mlc_arena_t *a, tir_buffer_t *b, tir_expr_t *v, tir_expr_t *x, tir_expr_t *y) {
  tir_expr_t *idx[2] = {x, y};
  return tir_store(a, b, v, idx, 2);
}

static void set_params(tir_func_t *f, tir_buffer_t **bufs, int n) {
  mlc_arena_t *a = f->arena;
  f->nparams = n;
  f->params = mlc_arena_alloc(a, sizeof(tir_var_t *) * (size_t)n);
  f->buffer_map = mlc_arena_memdup(a, bufs, sizeof(*bufs) * (size_t)n);
  for (int i = 0; i < n; i++) f->params[i] = bufs[i]->data;
  f->nattrs = 2;
  f->attrs = mlc_arena_alloc(a, 2 * sizeof(tir_annot_t));
  f->attrs[0] = (tir_annot_t){"global_symbol", tir_string(a, f->name)};
  f->attrs[1] = (tir_annot_t){"tir.noalias", tir_bool(a, true)};
}

static tir_block_t *mm_block(mlc_arena_t *a, const mm_opts_t *o, tir_buffer_t **bufs, tir_var_t **iv) {
  tir_buffer_t *A = bufs[0], *B = bufs[1], *C = bufs[2];
  tir_block_t *b = tir_block_new(a, o->block);
  int64_t ext[3] = {o->m, o->n, o->k};
  b->niter_vars = 3;
  b->iter_vars = mlc_arena_alloc(a, 3 * sizeof(tir_iter_var_t));
  for (int d = 0; d < 3; d++)
    b->iter_vars[d] = (tir_iter_var_t){iv[d], {tir_i32(a, 0), tir_i32(a, ext[d])},
                                       d == 2 ? TIR_ITER_REDUCE : TIR_ITER_SPATIAL};
  tir_region_t reads[2] = {point2(a, A, iv[0], iv[2]), point2(a, B, iv[1], iv[2])};
  tir_region_t write = point2(a, C, iv[0], iv[1]);
  b->nreads = 2, b->nwrites = 1;
  b->reads = mlc_arena_memdup(a, reads, sizeof reads);
  b->writes = mlc_arena_memdup(a, &write, sizeof write);
  if (o->init) b->init = store2(a, C, tir_float(a, o->dtype, o->init_value), iv[0], iv[1]);
  tir_expr_t *prod = tir_binary(a, TIR_MUL, load2(a, A, iv[0], iv[2]), load2(a, B, iv[1], iv[2]));
  b->body = store2(a, C, tir_binary(a, TIR_ADD, load2(a, C, iv[0], iv[1]), prod), iv[0], iv[1]);
  return b;
}

/* C[i, j] += A[i, k] * B[j, k] over for i, j, k with a block `o->block`. */
static tir_func_t *build_mm(const mm_opts_t *o) {
  tir_func_t *f = tir_func_new(o->func);
  mlc_arena_t *a = f->arena;
  const char *const *nm = o->names;
  tir_buffer_t *bufs[3] = {buffer2(a, nm[0], o->dtype, o->m, o->k), buffer2(a, nm[1], o->dtype, o->n, o->k),
                           buffer2(a, nm[2], o->dtype, o->m, o->n)};
  set_params(f, bufs, 3);
  tir_var_t *lv[3], *iv[3];
  for (int d = 0; d < 3; d++) {
    lv[d] = tir_var(a, nm[3 + d], tir_dt_INT32());
    iv[d] = tir_var(a, nm[6 + d], tir_dt_INT32());
  }
  tir_block_t *b = mm_block(a, o, bufs, iv);
  tir_expr_t *binds[3] = {lv[0], lv[1], lv[2]};
  tir_stmt_t *s = tir_block_realize(a, binds, 3, NULL, b);
  int64_t ext[3] = {o->m, o->n, o->k};
  for (int d = 2; d >= 0; d--)
    s = tir_for(a, lv[d], tir_i32(a, 0), tir_i32(a, ext[d]), d ? TIR_FOR_SERIAL : o->outer_kind, s);
  tir_block_t *root = tir_block_new(a, "root");
  root->body = s;
  f->body = tir_block_realize(a, NULL, 0, NULL, root);
  return f;
}

/* The For of loop depth d (0 = outermost) under the root block. */
static tir_stmt_t *loop_at(tir_func_t *f, int d) {
  tir_stmt_t *s = tir_func_root_block(f)->body;
  while (d--) s = s->u.loop.body;
  return s;
}

static tir_block_t *mm_block_of(tir_func_t *f) { return loop_at(f, 2)->u.loop.body->u.realize.block; }

/* Gives every variable the name "x" and every buffer the name "X". */
static bool rename_expr(tir_visitor_t *v, tir_expr_t *e) {
  (void)v;
  if (e->kind == TIR_VAR) e->u.var.name = "x";
  if (e->kind == TIR_BUFFER_LOAD) e->u.load.buffer->name = "X";
  return true;
}

static bool rename_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  (void)v;
  if (s->kind == TIR_FOR) s->u.loop.var->u.var.name = "x";
  if (s->kind == TIR_BUFFER_STORE) s->u.store.buffer->name = "X";
  return true;
}

static bool rename_block(tir_visitor_t *v, tir_block_t *b, tir_stmt_t *realize) {
  (void)v, (void)realize;
  for (int i = 0; i < b->niter_vars; i++) b->iter_vars[i].var->u.var.name = "x";
  for (int i = 0; i < b->nalloc_buffers; i++) b->alloc_buffers[i]->name = "X";
  return true;
}

static void rename_all(tir_func_t *f) {
  for (int i = 0; i < f->nparams; i++) {
    f->params[i]->u.var.name = "x";
    if (f->buffer_map && f->buffer_map[i]) f->buffer_map[i]->name = "X";
  }
  f->name = "renamed";
  tir_visitor_t v = {.expr = rename_expr, .stmt = rename_stmt, .block = rename_block};
  tir_visit_stmt(&v, f->body);
}

static char why[512];

/* Builds both, compares, frees; returns the equality and leaves `why`. */
static bool equal_mm(const mm_opts_t *x, const mm_opts_t *y) {
  tir_func_t *a = build_mm(x), *b = build_mm(y);
  bool eq = tir_func_equal(a, b, why, sizeof why);
  tir_func_free(a);
  tir_func_free(b);
  return eq;
}

/* ------------------------------------------------------------------------ */
/* Equal                                                                     */
/* ------------------------------------------------------------------------ */

static void test_clone_of_every_workload_is_equal(void **state) {
  (void)state;
  int n;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  for (int i = 0; i < n; i++) {
    tir_func_t *f = NULL;
    assert_int_equal(tir_workload_build(&f, descs[i].name, NULL, 0, DEFAULT_DTYPE, DEFAULT_DTYPE), MLC_OK);
    tir_func_t *c = tir_func_clone(f);
    assert_non_null(c);
    strcpy(why, "stale");
    if (!tir_func_equal(f, c, why, sizeof why)) fail_msg("%s: %s", descs[i].name, why);
    assert_string_equal(why, ""); /* cleared when equal */
    /* Alone, a statement's buffers are free: the clone's are other nodes. */
    assert_false(tir_stmt_equal(f->body, c->body));
    tir_func_free(f);
    tir_func_free(c);
  }
}

static void test_renamed_copy_of_every_workload_is_equal(void **state) {
  (void)state;
  int n;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  for (int i = 0; i < n; i++) {
    tir_func_t *f = NULL;
    assert_int_equal(tir_workload_build(&f, descs[i].name, NULL, 0, DEFAULT_DTYPE, DEFAULT_DTYPE), MLC_OK);
    tir_func_t *c = tir_func_clone(f);
    rename_all(c);
    if (!tir_func_equal(f, c, why, sizeof why)) fail_msg("%s: %s", descs[i].name, why);
    tir_func_free(f);
    tir_func_free(c);
  }
}

static void test_names_function_name_and_global_symbol_are_ignored(void **state) {
  (void)state;
  mm_opts_t x = mm_defaults(), y = mm_defaults();
  const char *other[9] = {"P", "Q", "R", "a", "b", "c", "va", "vb", "vc"};
  memcpy(y.names, other, sizeof other);
  y.func = "other_name"; /* global_symbol follows the name */
  assert_true(equal_mm(&x, &y));
}

static void test_loops_equal_up_to_loop_variable_names(void **state) {
  (void)state;
  /* Two nests over the same (free) buffer, with their own loop variables. */
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *S = buffer2(a, "S", tir_dt_FLOAT32(), 4, 4);
  tir_var_t *x = tir_var(a, "x", tir_dt_INT32()), *y = tir_var(a, "y", tir_dt_INT32());
  tir_stmt_t *s1 = tir_for(a, x, tir_i32(a, 0), tir_i32(a, 4), TIR_FOR_SERIAL,
                           store2(a, S, tir_float(a, tir_dt_FLOAT32(), 1), x, x));
  tir_stmt_t *s2 = tir_for(a, y, tir_i32(a, 0), tir_i32(a, 4), TIR_FOR_SERIAL,
                           store2(a, S, tir_float(a, tir_dt_FLOAT32(), 1), y, y));
  assert_true(tir_stmt_equal(s1, s2));
  s2->u.loop.var = tir_var(a, "y", tir_dt_INT64());
  assert_false(tir_stmt_equal(s1, s2)); /* a definition's dtype counts */
  mlc_arena_free(a);
}

/* ------------------------------------------------------------------------ */
/* Different, and why                                                        */
/* ------------------------------------------------------------------------ */

static void test_buffer_shape_difference_is_explained(void **state) {
  (void)state;
  mm_opts_t x = mm_defaults(), y = mm_defaults();
  y.n = 64;
  assert_false(equal_mm(&x, &y));
  assert_string_equal(why, "parameter 1 (B): buffer B: buffer shape differs: 128 vs 64");
}

static void test_dtype_difference_is_explained(void **state) {
  (void)state;
  mm_opts_t x = mm_defaults(), y = mm_defaults();
  y.dtype = tir_dt_FLOAT16();
  assert_false(equal_mm(&x, &y));
  assert_string_equal(why, "parameter 0 (A): buffer A: buffer dtype differs: float32 vs float16");
}

static void test_block_region_difference_is_explained(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults();
  tir_func_t *a = build_mm(&o), *b = build_mm(&o);
  tir_block_t *blk = mm_block_of(b);
  blk->reads[1].ranges[0].min = blk->iter_vars[2].var; /* B[vk, vk] instead of B[vj, vk] */
  assert_false(tir_func_equal(a, b, why, sizeof why));
  assert_string_equal(why, "block \"C\": reads[1]: variable differs: vj vs vk");
  tir_func_free(a);
  tir_func_free(b);
}

static void test_block_name_difference_is_explained(void **state) {
  (void)state;
  mm_opts_t x = mm_defaults(), y = mm_defaults();
  y.block = "D";
  assert_false(equal_mm(&x, &y));
  assert_string_equal(why, "block \"root\": for i: for j: for k: block name differs: \"C\" vs \"D\"");
}

static void test_loop_kind_difference_is_explained(void **state) {
  (void)state;
  mm_opts_t x = mm_defaults(), y = mm_defaults();
  y.outer_kind = TIR_FOR_PARALLEL;
  assert_false(equal_mm(&x, &y));
  assert_string_equal(why, "block \"root\": for i: loop kind differs: serial vs parallel");
}

static void test_init_presence_is_compared(void **state) {
  (void)state;
  mm_opts_t x = mm_defaults(), y = mm_defaults();
  y.init = false;
  assert_false(equal_mm(&x, &y));
  assert_string_equal(why, "block \"C\": init present on one side only");
}

static void test_float_immediates_compare_bit_for_bit(void **state) {
  (void)state;
  mm_opts_t x = mm_defaults(), y = mm_defaults();
  y.init_value = -0.0;
  assert_false(equal_mm(&x, &y));
  assert_string_equal(why, "block \"C\": init: value differs: 0 vs -0");
  x.init_value = y.init_value = NAN;
  assert_true(equal_mm(&x, &y));
  /* A NaN with another payload is another value. */
  mlc_arena_t *a = mlc_arena_new();
  tir_expr_t *n1 = tir_float(a, tir_dt_FLOAT64(), NAN), *n2 = tir_float(a, tir_dt_FLOAT64(), NAN);
  uint64_t bits;
  memcpy(&bits, &n2->u.float_value, sizeof bits);
  bits ^= 1;
  memcpy(&n2->u.float_value, &bits, sizeof bits);
  assert_true(tir_expr_equal(n1, tir_float(a, tir_dt_FLOAT64(), NAN)));
  assert_false(tir_expr_equal(n1, n2));
  mlc_arena_free(a);
}

static void test_operator_difference_is_found(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults();
  tir_func_t *a = build_mm(&o), *b = build_mm(&o);
  mm_block_of(b)->body->u.store.value->kind = TIR_SUB;
  assert_false(tir_func_equal(a, b, why, sizeof why));
  assert_string_equal(why, "block \"C\": expression differs: Add vs Sub");
  tir_func_free(a);
  tir_func_free(b);
}

static void test_annotations_are_compared_in_order(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults();
  tir_func_t *a = build_mm(&o), *b = build_mm(&o);
  tir_stmt_t *la = loop_at(a, 1), *lb = loop_at(b, 1);
  tir_annot_t ab[2] = {{"pragma_unroll", tir_i32(a->arena, 16)}, {"pragma_vec", tir_i32(a->arena, 1)}};
  tir_annot_t ba[2] = {{"pragma_vec", tir_i32(b->arena, 1)}, {"pragma_unroll", tir_i32(b->arena, 16)}};
  la->u.loop.nannots = lb->u.loop.nannots = 2;
  la->u.loop.annots = ab;
  lb->u.loop.annots = ba;
  assert_false(tir_func_equal(a, b, why, sizeof why));
  assert_string_equal(why, "block \"root\": for i: for j: "
                           "annotation key differs: \"pragma_unroll\" vs \"pragma_vec\"");
  lb->u.loop.annots = mlc_arena_memdup(b->arena, ab, sizeof ab);
  lb->u.loop.annots[0].value = tir_i32(b->arena, 8);
  assert_false(tir_func_equal(a, b, why, sizeof why));
  assert_string_equal(why, "block \"root\": for i: for j: "
                           "annotation \"pragma_unroll\": value differs: 16 vs 8");
  lb->u.loop.annots[0].value = tir_i32(b->arena, 16);
  assert_true(tir_func_equal(a, b, why, sizeof why));
  /* Other function attributes count; only global_symbol is ignored. */
  b->attrs[1].value = tir_bool(b->arena, false);
  assert_false(tir_func_equal(a, b, why, sizeof why));
  assert_string_equal(why, "annotation \"tir.noalias\": value differs: 1 vs 0");
  tir_func_free(a);
  tir_func_free(b);
}

static void test_scope_difference_is_found(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults();
  tir_func_t *a = build_mm(&o), *b = build_mm(&o);
  b->buffer_map[2]->scope = "shared";
  assert_false(tir_func_equal(a, b, why, sizeof why));
  assert_string_equal(why, "parameter 2 (C): buffer C: buffer scope differs: \"global\" vs \"shared\"");
  tir_func_free(a);
  tir_func_free(b);
}

static void test_why_may_be_omitted_or_tiny(void **state) {
  (void)state;
  mm_opts_t o = mm_defaults(), p = mm_defaults();
  p.m = 7;
  tir_func_t *a = build_mm(&o), *b = build_mm(&p);
  assert_false(tir_func_equal(a, b, NULL, 0));
  char small[8];
  assert_false(tir_func_equal(a, b, small, sizeof small));
  assert_int_equal(strlen(small), sizeof small - 1); /* truncated, terminated */
  tir_func_free(a);
  tir_func_free(b);
}

/* ------------------------------------------------------------------------ */
/* Definitions and free variables                                            */
/* ------------------------------------------------------------------------ */

/* for x in range(4): for y in range(4): S[x, y] = S[first, second] */
static tir_stmt_t *two_loops(mlc_arena_t *a, tir_buffer_t *S, bool same_twice) {
  tir_var_t *x = tir_var(a, "x", tir_dt_INT32()), *y = tir_var(a, "y", tir_dt_INT32());
  tir_stmt_t *st = store2(a, S, load2(a, S, x, same_twice ? x : y), x, y);
  return tir_for(a, x, tir_i32(a, 0), tir_i32(a, 4), TIR_FOR_SERIAL,
                 tir_for(a, y, tir_i32(a, 0), tir_i32(a, 4), TIR_FOR_SERIAL, st));
}

static void test_definitions_pair_one_to_one(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_buffer_t *S = buffer2(a, "S", tir_dt_FLOAT32(), 4, 4);
  assert_true(tir_stmt_equal(two_loops(a, S, false), two_loops(a, S, false)));
  assert_false(tir_stmt_equal(two_loops(a, S, false), two_loops(a, S, true)));
  assert_false(tir_stmt_equal(two_loops(a, S, true), two_loops(a, S, false)));
  /* A free buffer is compared by identity. */
  tir_buffer_t *S2 = buffer2(a, "S", tir_dt_FLOAT32(), 4, 4);
  assert_false(tir_stmt_equal(two_loops(a, S, false), two_loops(a, S2, false)));
  mlc_arena_free(a);
}

static void test_free_variables_compare_by_identity(void **state) {
  (void)state;
  mlc_arena_t *a = mlc_arena_new();
  tir_var_t *x = tir_var(a, "x", tir_dt_INT32()), *x2 = tir_var(a, "x", tir_dt_INT32());
  tir_expr_t *e1 = tir_binary(a, TIR_ADD, x, tir_i32(a, 1));
  assert_true(tir_expr_equal(e1, tir_binary(a, TIR_ADD, x, tir_i32(a, 1))));
  assert_false(tir_expr_equal(e1, tir_binary(a, TIR_ADD, x2, tir_i32(a, 1))));
  assert_false(tir_expr_equal(e1, tir_binary(a, TIR_ADD, x, tir_i32(a, 2))));
  assert_false(tir_expr_equal(e1, tir_binary(a, TIR_ADD, x, tir_int(a, tir_dt_INT64(), 1))));
  assert_false(tir_expr_equal(tir_string(a, "a"), tir_string(a, "b")));
  assert_true(tir_expr_equal(tir_string(a, "a"), tir_string(a, "a")));
  mlc_arena_free(a);
}

/* f(A: (d0, d1)) with A[0, 0] = 0, where d0/d1 are symbolic shape vars. */
static tir_func_t *symbolic(const char *d0, const char *d1) {
  tir_func_t *f = tir_func_new("sym");
  mlc_arena_t *a = f->arena;
  tir_var_t *n0 = tir_var(a, d0, tir_dt_INT32());
  tir_var_t *n1 = strcmp(d0, d1) == 0 ? n0 : tir_var(a, d1, tir_dt_INT32());
  tir_expr_t *shape[2] = {n0, n1};
  tir_buffer_t *A = tir_buffer_new(a, "A", tir_dt_FLOAT32(), shape, 2, NULL);
  set_params(f, &A, 1);
  tir_expr_t *last = tir_binary(a, TIR_SUB, n1, tir_i32(a, 1));
  f->body = store2(a, A, tir_float(a, tir_dt_FLOAT32(), 0), tir_i32(a, 0), last);
  return f;
}

static void test_symbolic_shapes_pair_at_first_appearance(void **state) {
  (void)state;
  struct {
    const char *a0, *a1, *b0, *b1;
    bool equal;
  } cases[] = {
      {"n", "m", "p", "q", true},  /* all renamed */
      {"n", "n", "m", "m", true},  /* square stays square */
      {"n", "n", "n", "m", false}, /* square vs not */
      {"n", "m", "n", "n", false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tir_func_t *a = symbolic(cases[i].a0, cases[i].a1), *b = symbolic(cases[i].b0, cases[i].b1);
    bool eq = tir_func_equal(a, b, why, sizeof why);
    if (eq != cases[i].equal) fail_msg("case %zu: %s", i, why);
    tir_func_free(a);
    tir_func_free(b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_clone_of_every_workload_is_equal),
      cmocka_unit_test(test_renamed_copy_of_every_workload_is_equal),
      cmocka_unit_test(test_names_function_name_and_global_symbol_are_ignored),
      cmocka_unit_test(test_loops_equal_up_to_loop_variable_names),
      cmocka_unit_test(test_buffer_shape_difference_is_explained),
      cmocka_unit_test(test_dtype_difference_is_explained),
      cmocka_unit_test(test_block_region_difference_is_explained),
      cmocka_unit_test(test_block_name_difference_is_explained),
      cmocka_unit_test(test_loop_kind_difference_is_explained),
      cmocka_unit_test(test_init_presence_is_compared),
      cmocka_unit_test(test_float_immediates_compare_bit_for_bit),
      cmocka_unit_test(test_operator_difference_is_found),
      cmocka_unit_test(test_annotations_are_compared_in_order),
      cmocka_unit_test(test_scope_difference_is_found),
      cmocka_unit_test(test_why_may_be_omitted_or_tiny),
      cmocka_unit_test(test_definitions_pair_one_to_one),
      cmocka_unit_test(test_free_variables_compare_by_identity),
      cmocka_unit_test(test_symbolic_shapes_pair_at_first_appearance),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
