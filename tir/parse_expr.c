/*
 * parse_expr.c - TVMScript expressions: Python operator precedence, literal
 * typing, buffer loads and regions.
 *
 * Literal typing follows TVM's script parser: a bare int literal is int32
 * (int64 when it does not fit), a bare float literal float32, and in a binary
 * operation an untyped literal takes the other operand's dtype (`A[i] * 2` is
 * float32 * float32(2), `n64 + 1` is int64). Integer operands of different
 * widths are widened with a Cast to the wider; any other mismatch is an error
 * naming both dtypes. Constant subexpressions are not folded (only unary minus
 * on an immediate), so what the printer writes reads back node for node.
 */
#include "tir/parse_internal.h"

#include <string.h>

const char *dtype_name(tir_dtype_t t, char buf[24]) { return tir_dtype_str(t, buf); }

pexpr_t pexpr_of(parser_t *p, const tok_t *t, tir_expr_t *e, int height) {
  if (height > PARSE_MAX_HEIGHT) parse_fail(p, t, "nesting too deep");
  pexpr_t v = {e, height, false, 0};
  return v;
}

static int max_int(int a, int b) { return a > b ? a : b; }

MLC_NORETURN static void mismatch(parser_t *p, const tok_t *t, const char *op, tir_dtype_t a,
                                  tir_dtype_t b) {
  char x[24], y[24];
  parse_fail(p, t, "dtype mismatch in '%s': %s vs %s", op, dtype_name(a, x), dtype_name(b, y));
}

/* ------------------------------------------------------------------------ */
/* Literal typing                                                            */
/* ------------------------------------------------------------------------ */

static bool int_fits(tir_dtype_t t, int64_t v) {
  if (t.bits >= 64) return t.code == TIR_CODE_INT || v >= 0;
  if (t.code == TIR_CODE_INT) {
    int64_t lim = INT64_C(1) << (t.bits - 1);
    return v >= -lim && v < lim;
  }
  return v >= 0 && v < (INT64_C(1) << t.bits);
}

pexpr_t pexpr_lit_int(parser_t *p, const tok_t *t, int64_t v) {
  tir_dtype_t dt = int_fits(tir_dt_INT32(), v) ? tir_dt_INT32() : tir_dt_INT64();
  pexpr_t r = pexpr_of(p, t, tir_int(p->arena, dt, v), 1);
  r.lit = true;
  return r;
}

static pexpr_t lit_float(parser_t *p, const tok_t *t, double v) {
  pexpr_t r = pexpr_of(p, t, tir_float(p->arena, tir_dt_FLOAT32(), v), 1);
  r.lit = true;
  r.fval = v;
  return r;
}

/* The literal v as an immediate of dtype `to` (broadcast for vectors); false
 * when the kinds do not mix (a float literal for an integer dtype). */
static bool lit_convert(parser_t *p, const tok_t *t, pexpr_t *v, tir_dtype_t to) {
  tir_dtype_t scalar = tir_dtype_scalar(to);
  tir_expr_t *imm;
  if (v->e->kind == TIR_INT_IMM && tir_dtype_is_integer(to)) {
    int64_t x = v->e->u.int_value;
    char buf[24];
    if (!int_fits(scalar, x))
      parse_fail(p, t, "literal %lld does not fit in %s", (long long)x, dtype_name(scalar, buf));
    imm = tir_int(p->arena, scalar, x);
  } else if (v->e->kind == TIR_INT_IMM && tir_dtype_is_float(to)) {
    imm = tir_float(p->arena, scalar, (double)v->e->u.int_value);
  } else if (v->e->kind == TIR_FLOAT_IMM && tir_dtype_is_float(to)) {
    imm = tir_float(p->arena, scalar, v->fval);
  } else {
    return false;
  }
  if (to.lanes > 1) imm = tir_broadcast(p->arena, imm, to.lanes);
  *v = pexpr_of(p, t, imm, to.lanes > 1 ? 2 : 1);
  return true;
}

static bool is_plain_integer(tir_dtype_t t) {
  return (t.code == TIR_CODE_INT || t.code == TIR_CODE_UINT) && t.bits > 1;
}

/* Widens an integer value to `to` when that is what TVM does implicitly. */
static bool widen(parser_t *p, const tok_t *t, pexpr_t *v, tir_dtype_t to) {
  tir_dtype_t from = v->e->dtype;
  if (!is_plain_integer(from) || !is_plain_integer(to) || from.lanes != to.lanes ||
      from.bits >= to.bits)
    return false;
  *v = pexpr_of(p, t, tir_cast(p->arena, to, v->e), v->height + 1);
  return true;
}

pexpr_t coerce(parser_t *p, const tok_t *t, const char *op, pexpr_t v, tir_dtype_t to) {
  if (tir_dtype_eq(v.e->dtype, to)) {
    v.lit = false;
    return v;
  }
  if (v.lit ? lit_convert(p, t, &v, to) : widen(p, t, &v, to)) return v;
  mismatch(p, t, op, to, v.e->dtype);
}

void unify(parser_t *p, const tok_t *t, const char *op, pexpr_t *a, pexpr_t *b) {
  tir_dtype_t ta = a->e->dtype, tb = b->e->dtype;
  if (a->lit && b->lit) {
    /* Python arithmetic on two literals: an int meets a float as a float. */
    if (a->e->kind == TIR_FLOAT_IMM || b->e->kind == TIR_FLOAT_IMM) {
      lit_convert(p, t, a, tir_dt_FLOAT32());
      lit_convert(p, t, b, tir_dt_FLOAT32());
    } else if (!tir_dtype_eq(ta, tb)) {
      lit_convert(p, t, a, tir_dt_INT64());
      lit_convert(p, t, b, tir_dt_INT64());
    }
  } else if (a->lit) {
    if (!lit_convert(p, t, a, tb)) mismatch(p, t, op, ta, tb);
  } else if (b->lit) {
    if (!lit_convert(p, t, b, ta)) mismatch(p, t, op, ta, tb);
  } else if (!tir_dtype_eq(ta, tb)) {
    if (!widen(p, t, a, tb) && !widen(p, t, b, ta)) mismatch(p, t, op, ta, tb);
  }
  a->lit = b->lit = false;
}

pexpr_t make_binary(parser_t *p, const tok_t *t, const char *op, tir_expr_kind_t kind, pexpr_t a,
                    pexpr_t b) {
  unify(p, t, op, &a, &b);
  if ((kind == TIR_AND || kind == TIR_OR) && !tir_dtype_is_bool(tir_dtype_scalar(a.e->dtype))) {
    char buf[24];
    parse_fail(p, t, "operands of '%s' must be bool, found %s", op, dtype_name(a.e->dtype, buf));
  }
  return pexpr_of(p, t, tir_binary(p->arena, kind, a.e, b.e), max_int(a.height, b.height) + 1);
}

tir_expr_t *range_extent(parser_t *p, const tok_t *t, const char *op, pexpr_t *start,
                         pexpr_t *stop) {
  unify(p, t, op, start, stop);
  tir_expr_t *a = start->e, *b = stop->e;
  int64_t x, y, d;
  if (tir_as_int(a, &x) && tir_as_int(b, &y)) {
    if (__builtin_sub_overflow(y, x, &d)) parse_fail(p, t, "range too large");
    return tir_int(p->arena, a->dtype, d);
  }
  /* `stop` printed as `start + extent`: take the extent back exactly. */
  if (b->kind == TIR_ADD && tir_expr_equal(b->u.bin.a, a)) return b->u.bin.b;
  /* range(n), A[:n], A[0:n]: stop - 0 is folded to stop, as TVM's operator-
   * does; A[a:a] (an extent 0 printed as `a + 0` folded) is empty. */
  if (tir_is_const_int(a, 0)) return b;
  if (tir_expr_equal(a, b)) return tir_int(p->arena, a->dtype, 0);
  return tir_binary(p->arena, TIR_SUB, b, a);
}

/* ------------------------------------------------------------------------ */
/* Operators, loosest first                                                  */
/* ------------------------------------------------------------------------ */

static pexpr_t parse_arith(parser_t *p);

/* Binary operators of one precedence level: spelling, kind. */
typedef struct {
  const char *op;
  tir_expr_kind_t kind;
} binop_t;

static const binop_t compare_ops[] = {
    {"==", TIR_EQ}, {"!=", TIR_NE}, {"<", TIR_LT}, {"<=", TIR_LE}, {">", TIR_GT}, {">=", TIR_GE}};
static const binop_t add_ops[] = {{"+", TIR_ADD}, {"-", TIR_SUB}};
static const binop_t mul_ops[] = {
    {"*", TIR_MUL}, {"/", TIR_DIV}, {"//", TIR_FLOOR_DIV}, {"%", TIR_FLOOR_MOD}};

static const binop_t *match_op(const tok_t *t, const binop_t *ops, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (tok_is_op(t, ops[i].op)) return &ops[i];
  return NULL;
}

static void reject_unsupported_op(parser_t *p) {
  static const char *const ops[] = {"&", "|", "^", "<<", ">>", "**", "~", NULL};
  for (int i = 0; ops[i]; i++)
    if (tok_is_op(peek(p), ops[i])) parse_fail(p, peek(p), "operator '%s' is not supported", ops[i]);
  if (tok_is_name(peek(p), "is") || tok_is_name(peek(p), "in"))
    parse_fail(p, peek(p), "operator '%s' is not supported", tok_desc(p, peek(p)));
}

/* comparison = arith (("==" | "!=" | "<" | "<=" | ">" | ">=") arith)? */
static pexpr_t parse_comparison(parser_t *p) {
  pexpr_t a = parse_arith(p);
  reject_unsupported_op(p);
  const binop_t *op = match_op(peek(p), compare_ops, sizeof compare_ops / sizeof *compare_ops);
  if (!op) return a;
  const tok_t *t = advance(p);
  pexpr_t b = parse_arith(p);
  reject_unsupported_op(p);
  if (match_op(peek(p), compare_ops, sizeof compare_ops / sizeof *compare_ops))
    parse_fail(p, peek(p), "chained comparisons are not supported");
  return make_binary(p, t, op->op, op->kind, a, b);
}

/* not_test = "not" not_test | comparison */
static pexpr_t parse_not(parser_t *p) {
  if (!tok_is_name(peek(p), "not")) return parse_comparison(p);
  const tok_t *t = advance(p);
  parse_enter(p, t);
  pexpr_t a = parse_not(p);
  parse_leave(p);
  if (!tir_dtype_is_bool(tir_dtype_scalar(a.e->dtype))) {
    char buf[24];
    parse_fail(p, t, "operand of 'not' must be bool, found %s", dtype_name(a.e->dtype, buf));
  }
  return pexpr_of(p, t, tir_not(p->arena, a.e), a.height + 1);
}

/* and_test = not_test ("and" not_test)* */
static pexpr_t parse_and(parser_t *p) {
  pexpr_t a = parse_not(p);
  while (tok_is_name(peek(p), "and")) {
    const tok_t *t = advance(p);
    a = make_binary(p, t, "and", TIR_AND, a, parse_not(p));
  }
  return a;
}

/* expr = and_test ("or" and_test)* */
pexpr_t parse_pexpr(parser_t *p) {
  parse_enter(p, peek(p));
  pexpr_t a = parse_and(p);
  while (tok_is_name(peek(p), "or")) {
    const tok_t *t = advance(p);
    a = make_binary(p, t, "or", TIR_OR, a, parse_and(p));
  }
  parse_leave(p);
  return a;
}

static pexpr_t parse_factor(parser_t *p);

/* term = factor (("*" | "/" | "//" | "%") factor)* */
static pexpr_t parse_term(parser_t *p) {
  pexpr_t a = parse_factor(p);
  const binop_t *op;
  while ((op = match_op(peek(p), mul_ops, sizeof mul_ops / sizeof *mul_ops))) {
    const tok_t *t = advance(p);
    a = make_binary(p, t, op->op, op->kind, a, parse_factor(p));
  }
  return a;
}

/* arith = term (("+" | "-") term)* */
static pexpr_t parse_arith(parser_t *p) {
  pexpr_t a = parse_term(p);
  const binop_t *op;
  while ((op = match_op(peek(p), add_ops, sizeof add_ops / sizeof *add_ops))) {
    const tok_t *t = advance(p);
    a = make_binary(p, t, op->op, op->kind, a, parse_term(p));
  }
  return a;
}

/* Unary minus folds into immediates (as TVM's neg does); otherwise 0 - x. */
static pexpr_t negate(parser_t *p, const tok_t *t, pexpr_t v) {
  tir_expr_t *e = v.e;
  if (v.lit && e->kind == TIR_FLOAT_IMM) return lit_float(p, t, -v.fval);
  if (v.lit) {
    if (e->u.int_value == INT64_MIN) parse_fail(p, t, "integer literal too large");
    return pexpr_lit_int(p, t, -e->u.int_value);
  }
  if (e->kind == TIR_INT_IMM && e->dtype.code == TIR_CODE_INT)
    return pexpr_of(p, t, tir_int(p->arena, e->dtype, (int64_t)(0 - (uint64_t)e->u.int_value)), 1);
  if (e->kind == TIR_FLOAT_IMM) return pexpr_of(p, t, tir_float(p->arena, e->dtype, -e->u.float_value), 1);
  return make_binary(p, t, "-", TIR_SUB, pexpr_lit_int(p, t, 0), v);
}

static pexpr_t parse_atom(parser_t *p);

/* factor = ("-" | "+") factor | atom */
static pexpr_t parse_factor(parser_t *p) {
  const tok_t *t = peek(p);
  if (tok_is_op(t, "-") && peek_at(p, 1)->kind == TK_INT && peek_at(p, 1)->ival == (UINT64_C(1) << 63)) {
    advance(p); /* -9223372036854775808: the one literal that only fits negated */
    advance(p);
    return pexpr_lit_int(p, t, INT64_MIN);
  }
  if (!tok_is_op(t, "-") && !tok_is_op(t, "+")) {
    reject_unsupported_op(p);
    pexpr_t a = parse_atom(p);
    if (tok_is_op(peek(p), "**")) parse_fail(p, peek(p), "operator '**' is not supported");
    return a;
  }
  advance(p);
  parse_enter(p, t);
  pexpr_t v = parse_factor(p);
  parse_leave(p);
  if (tok_is_op(t, "+")) return v;
  return negate(p, t, v);
}

/* ------------------------------------------------------------------------ */
/* Atoms                                                                     */
/* ------------------------------------------------------------------------ */

tir_var_t *parse_buffer_data(parser_t *p, const tok_t *name, tir_buffer_t *b) {
  expect_op(p, ".");
  const tok_t *attr = expect_name(p, "a buffer attribute");
  if (!tok_is_name(attr, "data"))
    parse_fail(p, attr, "buffer '%s' has no attribute '%s' (only '.data' is supported)",
               tok_desc(p, name), tok_desc(p, attr));
  if (!b->data) parse_fail(p, attr, "buffer '%s' has no data variable", tok_desc(p, name));
  return b->data;
}

static pexpr_t parse_name_atom(parser_t *p) {
  const tok_t *t = advance(p);
  if (tok_is_op(peek(p), "(")) {
    sym_t *s = scope_lookup(p, t->text, t->len);
    if (!s) parse_fail(p, t, "unknown function '%s'", tok_desc(p, t));
    parse_fail(p, peek(p), "'%s' is not a function", tok_desc(p, t));
  }
  sym_t *s = scope_lookup(p, t->text, t->len);
  if (!s) parse_fail(p, t, "unknown name '%s'", tok_desc(p, t));
  if (s->kind == SYM_BUFFER) {
    check_header_buffer(p, t, s);
    if (tok_is_op(peek(p), ".")) return pexpr_of(p, t, parse_buffer_data(p, t, s->buffer), 1);
    if (!tok_is_op(peek(p), "[")) parse_fail(p, t, "buffer '%s' used as a value", tok_desc(p, t));
    return parse_load(p, t, s->buffer);
  }
  if (tok_is_op(peek(p), "[")) parse_fail(p, t, "'%s' is not a buffer", tok_desc(p, t));
  return pexpr_of(p, t, s->var, 1);
}

/* atom = INT | FLOAT | STRING | "True" | "False" | "(" expr ")"
 *      | NAME | NAME "[" indices "]" | "T" ("." NAME)+ "(" args ")" */
static pexpr_t parse_atom(parser_t *p) {
  const tok_t *t = peek(p);
  switch (t->kind) {
  case TK_INT:
    advance(p);
    if (t->ival > (uint64_t)INT64_MAX) parse_fail(p, t, "integer literal too large");
    return pexpr_lit_int(p, t, (int64_t)t->ival);
  case TK_FLOAT:
    advance(p);
    return lit_float(p, t, t->fval);
  case TK_STRING:
    advance(p);
    return pexpr_of(p, t, tir_string(p->arena, t->str), 1);
  case TK_NAME:
    if (tok_is_name(t, "True") || tok_is_name(t, "False")) {
      advance(p);
      return pexpr_of(p, t, tir_bool(p->arena, tok_is_name(t, "True")), 1);
    }
    if (at_t_attr(p, NULL)) {
      const tok_t *first;
      const char *path = parse_t_path(p, &first);
      return parse_t_call(p, first, path);
    }
    if (!tok_is_keyword(t)) return parse_name_atom(p);
    break;
  default:
    if (tok_is_op(t, "(")) {
      advance(p);
      pexpr_t v = parse_pexpr(p);
      if (tok_is_op(peek(p), ",")) parse_fail(p, peek(p), "a tuple is not a value here");
      expect_op(p, ")");
      return v;
    }
    break;
  }
  parse_fail(p, t, "expected an expression but found '%s'", tok_desc(p, t));
}

tir_expr_t *parse_expr(parser_t *p) { return parse_pexpr(p).e; }

tir_expr_t *parse_cond(parser_t *p, const char *what) {
  const tok_t *t = peek(p);
  tir_expr_t *e = parse_expr(p);
  if (!tir_dtype_is_bool(e->dtype)) {
    char buf[24];
    parse_fail(p, t, "%s must be bool, found %s", what, dtype_name(e->dtype, buf));
  }
  return e;
}

pexpr_t parse_index_pexpr(parser_t *p, const char *what) {
  const tok_t *t = peek(p);
  pexpr_t v = parse_pexpr(p);
  if (!is_plain_integer(tir_dtype_scalar(v.e->dtype))) {
    char buf[24];
    parse_fail(p, t, "%s must be an integer, found %s", what, dtype_name(v.e->dtype, buf));
  }
  return v;
}

/* ------------------------------------------------------------------------ */
/* Subscripts: loads and regions                                             */
/* ------------------------------------------------------------------------ */

/* A slice index `start? ":" stop? (":" step?)?` (after `start`, if any, was
 * parsed into *start). */
typedef struct {
  bool is_slice;
  pexpr_t start, stop, step;
  bool has_start, has_stop, has_step;
  const tok_t *colon;
} index_t;

static bool at_index_end(parser_t *p) { return tok_is_op(peek(p), ",") || tok_is_op(peek(p), "]"); }

static index_t parse_index(parser_t *p) {
  index_t ix = {0};
  if (!tok_is_op(peek(p), ":")) {
    ix.start = parse_index_pexpr(p, "buffer index");
    ix.has_start = true;
  }
  if (!tok_is_op(peek(p), ":")) return ix;
  ix.is_slice = true;
  ix.colon = advance(p);
  if (!at_index_end(p) && !tok_is_op(peek(p), ":")) {
    ix.stop = parse_index_pexpr(p, "buffer index");
    ix.has_stop = true;
  }
  if (accept_op(p, ":") && !at_index_end(p)) {
    ix.step = parse_index_pexpr(p, "slice step");
    ix.has_step = true;
  }
  return ix;
}

/* Reads `[ index ("," index)* ","? ]` (or `[()]` for a 0-d buffer) and checks
 * the count against the buffer. */
static int parse_index_list(parser_t *p, const tok_t *name, tir_buffer_t *b, index_t **out) {
  PVEC(index_t) v = {0};
  expect_op(p, "[");
  if (tok_is_op(peek(p), "(") && tok_is_op(peek_at(p, 1), ")")) {
    advance(p);
    advance(p);
  } else {
    do {
      if (tok_is_op(peek(p), "]")) break;
      pvec_push(p, &v, parse_index(p));
    } while (accept_op(p, ","));
  }
  expect_op(p, "]");
  if (v.len != b->ndim)
    parse_fail(p, name, "buffer '%s' has %d dimension%s but %d ind%s given", b->name, b->ndim,
               b->ndim == 1 ? "" : "s", v.len, v.len == 1 ? "ex was" : "ices were");
  *out = v.data;
  return v.len;
}

/* Slice bounds with defaults: start 0, stop the dimension's size. */
static void slice_bounds(parser_t *p, const index_t *ix, tir_buffer_t *b, int d, pexpr_t *start,
                         pexpr_t *stop) {
  *stop = ix->has_stop ? ix->stop : pexpr_of(p, ix->colon, b->shape[d], 1);
  *start = ix->has_start ? ix->start : pexpr_lit_int(p, ix->colon, 0);
}

/* A slice in a load or store is a vector access: Ramp(start, step, lanes). */
static pexpr_t slice_to_ramp(parser_t *p, const index_t *ix, tir_buffer_t *b, int d) {
  pexpr_t start, stop;
  slice_bounds(p, ix, b, d, &start, &stop);
  tir_expr_t *extent = range_extent(p, ix->colon, "slice", &start, &stop);
  pexpr_t step = ix->has_step ? coerce(p, ix->colon, "slice", ix->step, start.e->dtype)
                              : pexpr_of(p, ix->colon, tir_int(p->arena, start.e->dtype, 1), 1);
  int64_t n, s;
  if (!tir_as_int(extent, &n) || !tir_as_int(step.e, &s) || s <= 0 || n <= 0 || n % s != 0 ||
      n / s > 65535)
    parse_fail(p, ix->colon, "a vector slice needs a constant length");
  int h = max_int(start.height, step.height) + 1;
  return pexpr_of(p, ix->colon, tir_ramp(p->arena, start.e, step.e, (int)(n / s)), h);
}

int parse_indices(parser_t *p, tir_buffer_t *b, const tok_t *name, tir_expr_t ***out, int *height) {
  index_t *ix;
  int n = parse_index_list(p, name, b, &ix);
  tir_expr_t **idx = mlc_arena_alloc(p->tmp, sizeof(*idx) * (size_t)(n + 1));
  *height = 0;
  for (int d = 0; d < n; d++) {
    pexpr_t v = ix[d].is_slice ? slice_to_ramp(p, &ix[d], b, d) : ix[d].start;
    idx[d] = v.e;
    *height = max_int(*height, v.height);
  }
  *out = idx;
  return n;
}

pexpr_t parse_load(parser_t *p, const tok_t *name, tir_buffer_t *b) {
  tir_expr_t **idx;
  int h;
  int n = parse_indices(p, b, name, &idx, &h);
  return pexpr_of(p, name, tir_load(p->arena, b, idx, n), h + 1);
}

tir_region_t parse_region(parser_t *p, const tok_t *name, tir_buffer_t *b) {
  if (!tok_is_op(peek(p), "[")) return tir_region_full(p->arena, b);
  index_t *ix;
  int n = parse_index_list(p, name, b, &ix);
  tir_region_t r = {b, n, mlc_arena_alloc(p->arena, sizeof(tir_range_t) * (size_t)(n + 1))};
  for (int d = 0; d < n; d++) {
    if (!ix[d].is_slice) {
      r.ranges[d].min = ix[d].start.e;
      r.ranges[d].extent = tir_int(p->arena, ix[d].start.e->dtype, 1);
      continue;
    }
    if (ix[d].has_step) parse_fail(p, ix[d].colon, "a region slice takes no step");
    pexpr_t start, stop;
    slice_bounds(p, &ix[d], b, d, &start, &stop);
    r.ranges[d].extent = range_extent(p, ix[d].colon, "slice", &start, &stop);
    r.ranges[d].min = start.e;
  }
  return r;
}
