/*
 * test_regions.c - tir_block_derive_regions: what the parser fills in when a
 * block omits T.reads / T.writes, checked against TVM's
 * GetBlockReadWriteRegion on the same programs: order of first access,
 * reduction blocks (writes left out of reads when there is an init), inner
 * loops relaxed into ranges, allocated buffers left out, nested blocks
 * through their declared regions, hulls, and the whole-dimension fallback.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tir/tir.h"

/* "The usual choice" for a workload's dtypes (tir_workload_build). */
#define DEFAULT_DTYPE tir_dtype(0, 0, 0)

/* ------------------------------------------------------------------------ */
/* A small vocabulary for building blocks by hand                            */
/* ------------------------------------------------------------------------ */

static mlc_arena_t *A_;

static tir_expr_t *I(int64_t v) { return tir_i32(A_, v); }
static tir_var_t *V(const char *name) { return tir_var(A_, name, tir_dt_INT32()); }
static tir_expr_t *bin(tir_expr_kind_t k, tir_expr_t *x, tir_expr_t *y) { return tir_binary(A_, k, x, y); }
static tir_expr_t *add(tir_expr_t *x, tir_expr_t *y) { return bin(TIR_ADD, x, y); }
static tir_expr_t *mul(tir_expr_t *x, tir_expr_t *y) { return bin(TIR_MUL, x, y); }

static tir_buffer_t *buf(const char *name, int ndim, ...) {
  tir_expr_t *shape[TIR_MAX_DIMS];
  va_list ap;
  va_start(ap, ndim);
  for (int i = 0; i < ndim; i++) shape[i] = I(va_arg(ap, int));
  va_end(ap);
  return tir_buffer_new(A_, name, tir_dt_FLOAT32(), shape, ndim, NULL);
}

static tir_expr_t *ld(tir_buffer_t *b, ...) {
  tir_expr_t *idx[TIR_MAX_DIMS];
  va_list ap;
  va_start(ap, b);
  for (int i = 0; i < b->ndim; i++) idx[i] = va_arg(ap, tir_expr_t *);
  va_end(ap);
  return tir_load(A_, b, idx, b->ndim);
}

static tir_stmt_t *st(tir_buffer_t *b, tir_expr_t *value, ...) {
  tir_expr_t *idx[TIR_MAX_DIMS];
  va_list ap;
  va_start(ap, value);
  for (int i = 0; i < b->ndim; i++) idx[i] = va_arg(ap, tir_expr_t *);
  va_end(ap);
  return tir_store(A_, b, value, idx, b->ndim);
}

static tir_stmt_t *loop(tir_var_t *v, int64_t extent, tir_stmt_t *body) {
  return tir_for(A_, v, I(0), I(extent), TIR_FOR_SERIAL, body);
}

static tir_stmt_t *seq2(tir_stmt_t *a, tir_stmt_t *b) {
  tir_stmt_t *s[2] = {a, b};
  return tir_seq(A_, s, 2);
}

/* A block with spatial iter vars over [0, extent). */
static tir_block_t *block(const char *name, int n, tir_var_t **vars, const int64_t *extents) {
  tir_block_t *b = tir_block_new(A_, name);
  b->niter_vars = n;
  b->iter_vars = mlc_arena_alloc(A_, sizeof(tir_iter_var_t) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++)
    b->iter_vars[i] = (tir_iter_var_t){vars[i], {I(0), I(extents[i])}, TIR_ITER_SPATIAL};
  return b;
}

/* ------------------------------------------------------------------------ */
/* Regions as text: "A[vi:+1, (vk * 4):+4]"                                  */
/* ------------------------------------------------------------------------ */

static void fmt_expr(mlc_strbuf_t *sb, const tir_expr_t *e) {
  const char *op = NULL;
  switch (e->kind) {
  case TIR_INT_IMM: mlc_sb_printf(sb, "%" PRId64, e->u.int_value); return;
  case TIR_VAR: mlc_sb_append(sb, e->u.var.name); return;
  case TIR_ADD: op = "+"; break;
  case TIR_SUB: op = "-"; break;
  case TIR_MUL: op = "*"; break;
  case TIR_FLOOR_DIV: op = "//"; break;
  case TIR_FLOOR_MOD: op = "%"; break;
  default: mlc_sb_printf(sb, "<%s>", tir_expr_kind_name(e->kind)); return;
  }
  mlc_sb_putc(sb, '(');
  fmt_expr(sb, e->u.bin.a);
  mlc_sb_printf(sb, " %s ", op);
  fmt_expr(sb, e->u.bin.b);
  mlc_sb_putc(sb, ')');
}

static char text[1024];

static const char *fmt_regions(const tir_region_t *rs, int n) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  for (int i = 0; i < n; i++) {
    mlc_sb_printf(&sb, "%s%s[", i ? " " : "", rs[i].buffer->name);
    for (int d = 0; d < rs[i].ndim; d++) {
      if (d) mlc_sb_append(&sb, ", ");
      fmt_expr(&sb, rs[i].ranges[d].min);
      mlc_sb_append(&sb, ":+");
      fmt_expr(&sb, rs[i].ranges[d].extent);
    }
    mlc_sb_putc(&sb, ']');
  }
  snprintf(text, sizeof text, "%s", mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return text;
}

typedef struct {
  tir_region_t *reads, *writes;
  int nreads, nwrites;
} derived_t;

static derived_t derive(tir_block_t *b) {
  derived_t d;
  tir_block_derive_regions(A_, b, &d.reads, &d.nreads, &d.writes, &d.nwrites);
  return d;
}

static int setup(void **state) {
  (void)state;
  A_ = mlc_arena_new();
  return A_ ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  mlc_arena_free(A_);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

/* The matmul block: C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk] with an
 * init. TVM leaves C out of the reads of a block with an init. */
static tir_block_t *matmul_block(bool with_init, tir_buffer_t **C_out) {
  tir_buffer_t *Ab = buf("A", 2, 64, 64), *Bb = buf("B", 2, 64, 64);
  tir_buffer_t *Cb = buf("C", 2, 64, 64);
  tir_var_t *vs[3] = {V("vi"), V("vj"), V("vk")};
  int64_t ext[3] = {64, 64, 64};
  tir_block_t *b = block("C", 3, vs, ext);
  b->iter_vars[2].type = TIR_ITER_REDUCE;
  if (with_init) b->init = st(Cb, tir_float(A_, tir_dt_FLOAT32(), 0), vs[0], vs[1]);
  b->body = st(Cb, add(ld(Cb, vs[0], vs[1]), mul(ld(Ab, vs[0], vs[2]), ld(Bb, vs[1], vs[2]))), vs[0], vs[1]);
  if (C_out) *C_out = Cb;
  return b;
}

static void test_matmul_with_init_reads_a_b_and_writes_c(void **state) {
  (void)state;
  derived_t d = derive(matmul_block(true, NULL));
  assert_string_equal(fmt_regions(d.reads, d.nreads), "A[vi:+1, vk:+1] B[vj:+1, vk:+1]");
  assert_string_equal(fmt_regions(d.writes, d.nwrites), "C[vi:+1, vj:+1]");
}

static void test_update_block_without_init_reads_c_first(void **state) {
  (void)state;
  /* The value of the store is visited left to right: C, then A, then B. */
  derived_t d = derive(matmul_block(false, NULL));
  assert_string_equal(fmt_regions(d.reads, d.nreads), "C[vi:+1, vj:+1] A[vi:+1, vk:+1] B[vj:+1, vk:+1]");
  assert_string_equal(fmt_regions(d.writes, d.nwrites), "C[vi:+1, vj:+1]");
}

static void test_point_access_keeps_the_index_expression(void **state) {
  (void)state;
  tir_block_t *b = matmul_block(true, NULL);
  derived_t d = derive(b);
  /* The very iter var node, not a rebuilt copy. */
  assert_ptr_equal(d.reads[0].ranges[0].min, b->iter_vars[0].var);
  assert_true(tir_is_const_int(d.reads[0].ranges[0].extent, 1));
}

static void test_inner_loop_is_relaxed_into_a_range(void **state) {
  (void)state;
  /* for k in range(16): S[vi] = S[vi] + A[vi * 16 + k] */
  tir_buffer_t *Ab = buf("A", 1, 1024), *Sb = buf("S", 1, 64);
  tir_var_t *vi = V("vi"), *k = V("k");
  int64_t ext = 64;
  tir_block_t *b = block("S", 1, &vi, &ext);
  b->body = loop(k, 16, st(Sb, add(ld(Sb, vi), ld(Ab, add(mul(vi, I(16)), k))), vi));
  derived_t d = derive(b);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "S[vi:+1] A[(vi * 16):+16]");
  assert_string_equal(fmt_regions(d.writes, d.nwrites), "S[vi:+1]");
}

static void test_two_inner_loops_relax_independently(void **state) {
  (void)state;
  /* for x, y in grid(4, 8): O[vi * 4 + x, y] = I[vi * 4 + x + y] */
  tir_buffer_t *In = buf("I", 1, 1024), *Out = buf("O", 2, 256, 8);
  tir_var_t *vi = V("vi"), *x = V("x"), *y = V("y");
  int64_t ext = 64;
  tir_block_t *b = block("O", 1, &vi, &ext);
  tir_expr_t *row = add(mul(vi, I(4)), x);
  b->body = loop(x, 4, loop(y, 8, st(Out, ld(In, add(row, y)), row, y)));
  derived_t d = derive(b);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "I[(vi * 4):+11]");
  assert_string_equal(fmt_regions(d.writes, d.nwrites), "O[(vi * 4):+4, 0:+8]");
}

static void test_division_and_modulo_are_relaxed(void **state) {
  (void)state;
  /* for k in range(16): O[vi] += I[(vi * 16 + k) // 4] + J[k % 4] + K[k // 4 % 2] */
  tir_buffer_t *In = buf("I", 1, 256), *J = buf("J", 1, 8), *K = buf("K", 1, 8);
  tir_buffer_t *Out = buf("O", 1, 64);
  tir_var_t *vi = V("vi"), *k = V("k");
  int64_t ext = 64;
  tir_block_t *b = block("O", 1, &vi, &ext);
  tir_expr_t *i1 = bin(TIR_FLOOR_DIV, add(mul(vi, I(16)), k), I(4));
  tir_expr_t *j1 = bin(TIR_FLOOR_MOD, k, I(4));
  tir_expr_t *k1 = bin(TIR_FLOOR_MOD, bin(TIR_FLOOR_DIV, k, I(4)), I(2));
  b->body = loop(k, 16, st(Out, add(add(ld(In, i1), ld(J, j1)), ld(K, k1)), vi));
  derived_t d = derive(b);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "I[(vi * 4):+4] J[0:+4] K[0:+2]");
}

static void test_hull_of_two_accesses_to_one_buffer(void **state) {
  (void)state;
  /* O[vi] = A[vi] + A[vi + 2]: one region A[vi:+3] */
  tir_buffer_t *Ab = buf("A", 1, 66), *Out = buf("O", 1, 64);
  tir_var_t *vi = V("vi");
  int64_t ext = 64;
  tir_block_t *b = block("O", 1, &vi, &ext);
  b->body = st(Out, add(ld(Ab, vi), ld(Ab, add(vi, I(2)))), vi);
  derived_t d = derive(b);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "A[vi:+3]");
}

static void test_unanalysable_index_covers_the_whole_dimension(void **state) {
  (void)state;
  /* for k in range(8): O[vi] = A[vi, k * k] */
  tir_buffer_t *Ab = buf("A", 2, 64, 100), *Out = buf("O", 1, 64);
  tir_var_t *vi = V("vi"), *k = V("k");
  int64_t ext = 64;
  tir_block_t *b = block("O", 1, &vi, &ext);
  b->body = loop(k, 8, st(Out, ld(Ab, vi, mul(k, k)), vi));
  derived_t d = derive(b);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "A[vi:+1, 0:+100]");
}

static void test_allocated_buffers_are_left_out(void **state) {
  (void)state;
  /* T = alloc_buffer((16,)); for k: T[k] = A[vi, k]; for k: O[vi] = T[k]; and a
   * decl_buffer D inside the body. */
  tir_buffer_t *Ab = buf("A", 2, 64, 16), *Out = buf("O", 1, 64);
  tir_buffer_t *T = buf("T", 1, 16), *D = buf("D", 1, 1);
  tir_var_t *vi = V("vi"), *k = V("k"), *k2 = V("k2");
  int64_t ext = 64;
  tir_block_t *b = block("O", 1, &vi, &ext);
  b->nalloc_buffers = 1;
  b->alloc_buffers = mlc_arena_memdup(A_, &T, sizeof T);
  tir_stmt_t *fill = loop(k, 16, st(T, ld(Ab, vi, k), k));
  tir_stmt_t *use = tir_allocate(A_, D, seq2(st(D, ld(T, k2), I(0)), st(Out, ld(D, I(0)), vi)));
  b->body = seq2(fill, loop(k2, 16, use));
  derived_t d = derive(b);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "A[vi:+1, 0:+16]");
  assert_string_equal(fmt_regions(d.writes, d.nwrites), "O[vi:+1]");
}

/* outer block (vo in [0, 16)) holds: for ii in range(4): inner block with
 * vi = vo * 4 + ii reading A[vi], writing B[vi], allocating its own L. */
static void test_nested_block_contributes_its_declared_regions(void **state) {
  (void)state;
  tir_buffer_t *Ab = buf("A", 1, 64), *Bb = buf("B", 1, 64), *L = buf("L", 1, 1);
  tir_var_t *vo = V("vo"), *ii = V("ii"), *vi = V("vi");
  int64_t e_out = 16, e_in = 64;
  tir_block_t *inner = block("inner", 1, &vi, &e_in);
  inner->nalloc_buffers = 1;
  inner->alloc_buffers = mlc_arena_memdup(A_, &L, sizeof L);
  inner->body = seq2(st(L, ld(Ab, vi), I(0)), st(Bb, ld(L, I(0)), vi));
  inner->reads = mlc_arena_alloc(A_, sizeof(tir_region_t));
  inner->writes = mlc_arena_alloc(A_, sizeof(tir_region_t));
  tir_range_t ra = {vi, I(1)}, rb = {vi, I(1)};
  inner->reads[0] = (tir_region_t){Ab, 1, mlc_arena_memdup(A_, &ra, sizeof ra)};
  inner->writes[0] = (tir_region_t){Bb, 1, mlc_arena_memdup(A_, &rb, sizeof rb)};
  inner->nreads = inner->nwrites = 1;
  tir_expr_t *binding = add(mul(vo, I(4)), ii);
  tir_block_t *outer = block("outer", 1, &vo, &e_out);
  outer->body = loop(ii, 4, tir_block_realize(A_, &binding, 1, NULL, inner));
  derived_t d = derive(outer);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "A[(vo * 4):+4]");
  assert_string_equal(fmt_regions(d.writes, d.nwrites), "B[(vo * 4):+4]");
}

static void test_vector_index_covers_its_lanes(void **state) {
  (void)state;
  /* O[vi * 4:vi * 4 + 4] = A[T.Ramp(vi * 4 + 1, 1, 4)] + B[T.Broadcast(vi, 4)] */
  tir_buffer_t *Ab = buf("A", 1, 260), *Bb = buf("B", 1, 64), *Out = buf("O", 1, 256);
  tir_var_t *vi = V("vi");
  int64_t ext = 64;
  tir_block_t *b = block("O", 1, &vi, &ext);
  tir_expr_t *base = mul(vi, I(4));
  tir_expr_t *value = add(ld(Ab, tir_ramp(A_, add(base, I(1)), I(1), 4)), ld(Bb, tir_broadcast(A_, vi, 4)));
  b->body = st(Out, value, tir_ramp(A_, base, I(1), 4));
  derived_t d = derive(b);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "A[((vi * 4) + 1):+4] B[vi:+1]");
  assert_string_equal(fmt_regions(d.writes, d.nwrites), "O[(vi * 4):+4]");
}

static void test_let_values_are_substituted(void **state) {
  (void)state;
  /* x = vi * 2; for k in range(4): O[vi] = A[x + k] */
  tir_buffer_t *Ab = buf("A", 1, 200), *Out = buf("O", 1, 64);
  tir_var_t *vi = V("vi"), *x = V("x"), *k = V("k");
  int64_t ext = 64;
  tir_block_t *b = block("O", 1, &vi, &ext);
  b->body = tir_let_stmt(A_, x, mul(vi, I(2)), loop(k, 4, st(Out, ld(Ab, add(x, k)), vi)));
  derived_t d = derive(b);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "A[(vi * 2):+4]");
}

static void test_match_buffer_access_counts_as_its_source_region(void **state) {
  (void)state;
  /* Sub = match_buffer(A[vi * 4:vi * 4 + 4]); O[vi] = Sub[1] */
  tir_buffer_t *Ab = buf("A", 1, 256), *Sub = buf("Sub", 1, 4), *Out = buf("O", 1, 64);
  tir_var_t *vi = V("vi");
  int64_t ext = 64;
  tir_block_t *b = block("O", 1, &vi, &ext);
  tir_range_t r = {mul(vi, I(4)), I(4)};
  b->nmatch_buffers = 1;
  b->match_buffers = mlc_arena_alloc(A_, sizeof(tir_match_buffer_t));
  b->match_buffers[0] = (tir_match_buffer_t){Sub, {Ab, 1, mlc_arena_memdup(A_, &r, sizeof r)}};
  b->body = st(Out, ld(Sub, I(1)), vi);
  derived_t d = derive(b);
  assert_string_equal(fmt_regions(d.reads, d.nreads), "A[(vi * 4):+4]");
}

static void test_every_workload_block_derives_its_declared_regions(void **state) {
  (void)state;
  /* The built-in workloads declare regions the way TVM derives them. */
  int n;
  const tir_workload_desc_t *descs = tir_workloads(&n);
  for (int w = 0; w < n; w++) {
    tir_func_t *f = NULL;
    assert_int_equal(tir_workload_build(&f, descs[w].name, NULL, 0, DEFAULT_DTYPE, DEFAULT_DTYPE), MLC_OK);
    tir_block_t *root = tir_func_root_block(f);
    assert_non_null(root);
    /* Walk the root's children: blocks under loops (or a sequence of them). */
    tir_stmt_t *stack[64];
    int top = 0, nblocks = 0;
    stack[top++] = root->body;
    while (top) {
      tir_stmt_t *s = stack[--top];
      if (s->kind == TIR_SEQ) {
        for (int i = s->u.seq.n - 1; i >= 0; i--) stack[top++] = s->u.seq.stmts[i];
      } else if (s->kind == TIR_FOR) {
        stack[top++] = s->u.loop.body;
      } else if (s->kind == TIR_BLOCK_REALIZE) {
        tir_block_t *b = s->u.realize.block;
        tir_region_t *r, *wr;
        int nr, nw;
        tir_block_derive_regions(f->arena, b, &r, &nr, &wr, &nw);
        char want[1024];
        snprintf(want, sizeof want, "%s", fmt_regions(b->reads, b->nreads));
        assert_string_equal(fmt_regions(r, nr), want);
        snprintf(want, sizeof want, "%s", fmt_regions(b->writes, b->nwrites));
        assert_string_equal(fmt_regions(wr, nw), want);
        nblocks++;
      }
    }
    assert_true(nblocks >= 1);
    tir_func_free(f);
  }
}

/* The parser derives the regions of a block that omits them. */
static void test_parser_derives_omitted_regions(void **state) {
  (void)state;
  static const char src[] =
      "@T.prim_func\n"
      "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"),\n"
      "         C: T.Buffer((64, 64), \"float32\")):\n"
      "    for i, j, k in T.grid(64, 64, 64):\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0)\n"
      "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]\n";
  tir_func_t *f = NULL;
  tir_parse_error_t err;
  if (tir_parse_func(&f, src, strlen(src), "matmul.py", &err) != MLC_OK) fail_msg("%s", mlc_error_last());
  tir_stmt_t *s = tir_func_root_block(f)->body;
  while (s->kind == TIR_FOR) s = s->u.loop.body;
  assert_int_equal(s->kind, TIR_BLOCK_REALIZE);
  tir_block_t *b = s->u.realize.block;
  assert_string_equal(fmt_regions(b->reads, b->nreads), "A[vi:+1, vk:+1] B[vj:+1, vk:+1]");
  assert_string_equal(fmt_regions(b->writes, b->nwrites), "C[vi:+1, vj:+1]");
  assert_int_equal(tir_verify(f, NULL), MLC_OK);
  tir_func_free(f);
}

static void test_out_of_memory_gives_no_regions_and_an_error(void **state) {
  (void)state;
  tir_block_t *b = matmul_block(true, NULL);
  bool saw_oom = false, saw_ok = false;
  for (long n = 0; n < 64 && !saw_ok; n++) {
    mlc_arena_t *scratch = mlc_arena_new();
    assert_non_null(scratch);
    derived_t d;
    mlc_error_clear();
    mlc_alloc_fail_after(n);
    tir_block_derive_regions(scratch, b, &d.reads, &d.nreads, &d.writes, &d.nwrites);
    mlc_alloc_fail_after(-1);
    if (mlc_error_last_code() == MLC_ENOMEM) {
      saw_oom = true;
      assert_int_equal(d.nreads + d.nwrites, 0);
      assert_null(d.reads);
    } else {
      saw_ok = true;
      assert_string_equal(fmt_regions(d.reads, d.nreads), "A[vi:+1, vk:+1] B[vj:+1, vk:+1]");
    }
    mlc_arena_free(scratch);
  }
  assert_true(saw_oom);
  assert_true(saw_ok);
}

/* With the caller's own out-of-memory handler (the parser's), the failure
 * is handed on to it. */
static void test_out_of_memory_reaches_the_callers_handler(void **state) {
  (void)state;
  tir_block_t *b = matmul_block(true, NULL);
  mlc_arena_t *scratch = mlc_arena_new();
  assert_non_null(scratch);
  static jmp_buf jb;
  static volatile bool handed_on;
  handed_on = false;
  mlc_arena_set_oom_handler(scratch, &jb);
  if (setjmp(jb) == 0) {
    derived_t d;
    mlc_alloc_fail_after(0);
    tir_block_derive_regions(scratch, b, &d.reads, &d.nreads, &d.writes, &d.nwrites);
  } else {
    handed_on = true;
  }
  mlc_alloc_fail_after(-1);
  assert_true(handed_on);
  assert_ptr_equal(mlc_arena_set_oom_handler(scratch, NULL), &jb); /* restored */
  mlc_arena_free(scratch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_matmul_with_init_reads_a_b_and_writes_c, setup, teardown),
      cmocka_unit_test_setup_teardown(test_update_block_without_init_reads_c_first, setup, teardown),
      cmocka_unit_test_setup_teardown(test_point_access_keeps_the_index_expression, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inner_loop_is_relaxed_into_a_range, setup, teardown),
      cmocka_unit_test_setup_teardown(test_two_inner_loops_relax_independently, setup, teardown),
      cmocka_unit_test_setup_teardown(test_division_and_modulo_are_relaxed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hull_of_two_accesses_to_one_buffer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unanalysable_index_covers_the_whole_dimension, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocated_buffers_are_left_out, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nested_block_contributes_its_declared_regions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_vector_index_covers_its_lanes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_let_values_are_substituted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_match_buffer_access_counts_as_its_source_region, setup, teardown),
      cmocka_unit_test(test_every_workload_block_derives_its_declared_regions),
      cmocka_unit_test(test_parser_derives_omitted_regions),
      cmocka_unit_test_setup_teardown(test_out_of_memory_gives_no_regions_and_an_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_out_of_memory_reaches_the_callers_handler, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
