/*
 * flop.c - ms_func_flop: the arithmetic one call of a PrimFunc performs, for
 * the GFLOP/s mlc-tune reports (as TVM's EstimateTIRFlops does).
 *
 * Counted: the operations on the data path of each stored value (what is
 * computed and written, not the index arithmetic that addresses it): + - *
 * / mod min max, comparisons of floats, selects and math calls, times the
 * lanes of vector operations, times the iterations of every enclosing loop
 * with a constant extent. A multiply-add `C = C + A * B` is two. A block's
 * init runs once per reduction, so it is divided by the extent of the
 * block's reduction iterators. Of an if/else the larger branch counts.
 *
 * Floating-point operations are what is reported; a program without any (an
 * int8 matmul) reports its integer data operations instead, so its "GFLOP/s"
 * are GOP/s and still compare candidates.
 */
#include "search/tune/tune_internal.h"

typedef struct {
  double flt, integer;
} ops_t;

static void ops_add(ops_t *acc, ops_t x, double times) {
  acc->flt += x.flt * times;
  acc->integer += x.integer * times;
}

static void count_op(ops_t *o, tir_dtype_t t) {
  if (tir_dtype_is_float(t)) o->flt += t.lanes;
  else if (tir_dtype_is_integer(t)) o->integer += t.lanes;
}

static bool is_arith(tir_expr_kind_t k) {
  switch (k) {
  case TIR_ADD: case TIR_SUB: case TIR_MUL: case TIR_DIV: case TIR_MOD:
  case TIR_FLOOR_DIV: case TIR_FLOOR_MOD: case TIR_MIN: case TIR_MAX:
    return true;
  default:
    return false;
  }
}

static bool is_compare(tir_expr_kind_t k) { return k >= TIR_EQ && k <= TIR_GE; }

static void count_expr(ops_t *o, const tir_expr_t *e);

static void count_call(ops_t *o, const tir_expr_t *e) {
  int first = 0;
  switch (e->u.call.op) {
  case TIR_OP_IF_THEN_ELSE:
    first = 1; /* the condition is control, not data */
    if (tir_dtype_is_float(e->dtype)) o->flt += e->dtype.lanes;
    break;
  case TIR_OP_LIKELY: case TIR_OP_REINTERPRET: case TIR_OP_ASSUME: case TIR_OP_TVM_STORAGE_SYNC:
  case TIR_OP_LIST:
    break;
  default:
    if (tir_dtype_is_float(e->dtype)) o->flt += e->dtype.lanes; /* exp, sqrt, fma, ... */
    break;
  }
  for (int i = first; i < e->u.call.nargs; i++) count_expr(o, e->u.call.args[i]);
}

/* Operations on the data path of e: load indices and select conditions are
 * not descended into. */
static void count_expr(ops_t *o, const tir_expr_t *e) {
  if (!e) return;
  if (is_arith(e->kind)) {
    count_op(o, e->dtype);
    count_expr(o, e->u.bin.a);
    count_expr(o, e->u.bin.b);
  } else if (is_compare(e->kind)) {
    if (tir_dtype_is_float(e->u.bin.a->dtype)) o->flt += e->u.bin.a->dtype.lanes;
    count_expr(o, e->u.bin.a);
    count_expr(o, e->u.bin.b);
  } else if (e->kind == TIR_CAST) {
    count_expr(o, e->u.un.a);
  } else if (e->kind == TIR_SELECT) {
    if (tir_dtype_is_float(e->dtype)) o->flt += e->dtype.lanes;
    count_expr(o, e->u.select.t);
    count_expr(o, e->u.select.f);
  } else if (e->kind == TIR_BROADCAST) {
    count_expr(o, e->u.broadcast.value);
  } else if (e->kind == TIR_CALL) {
    count_call(o, e);
  }
}

static ops_t count_stmt(const tir_stmt_t *s);

/* Product of the constant extents of b's reduction iterators (1 if none). */
static double reduce_extent(const tir_block_t *b) {
  double n = 1;
  for (int i = 0; i < b->niter_vars; i++) {
    int64_t ext;
    if (b->iter_vars[i].type == TIR_ITER_REDUCE && tir_as_int(b->iter_vars[i].dom.extent, &ext) && ext > 0)
      n *= (double)ext;
  }
  return n;
}

static ops_t count_block(const tir_block_t *b) {
  ops_t o = count_stmt(b->body);
  if (b->init) ops_add(&o, count_stmt(b->init), 1.0 / reduce_extent(b));
  return o;
}

static ops_t count_stmt(const tir_stmt_t *s) {
  ops_t o = {0, 0};
  if (!s) return o;
  switch (s->kind) {
  case TIR_BUFFER_STORE:
    count_expr(&o, s->u.store.value);
    break;
  case TIR_LET:
    count_expr(&o, s->u.let.value);
    ops_add(&o, count_stmt(s->u.let.body), 1);
    break;
  case TIR_ATTR: return count_stmt(s->u.attr.body);
  case TIR_ASSERT: return count_stmt(s->u.assert_.body);
  case TIR_ALLOCATE: return count_stmt(s->u.allocate.body);
  case TIR_FOR: {
    int64_t ext;
    double times = tir_as_int(s->u.loop.extent, &ext) && ext > 0 ? (double)ext : 1;
    ops_add(&o, count_stmt(s->u.loop.body), times);
    break;
  }
  case TIR_IF: {
    ops_t a = count_stmt(s->u.if_.then_case), b = count_stmt(s->u.if_.else_case);
    return a.flt + a.integer >= b.flt + b.integer ? a : b;
  }
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) ops_add(&o, count_stmt(s->u.seq.stmts[i]), 1);
    break;
  case TIR_EVALUATE:
    count_expr(&o, s->u.evaluate.value);
    break;
  case TIR_BLOCK_REALIZE:
    return count_block(s->u.realize.block);
  default:
    break;
  }
  return o;
}

double ms_func_flop(const tir_func_t *f) {
  if (!f) return 0;
  ops_t o = count_stmt(f->body);
  return o.flt > 0 ? o.flt : o.integer;
}
