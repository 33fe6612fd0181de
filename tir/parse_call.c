/*
 * parse_call.c - the T.* functions that may appear inside expressions:
 * constructors of IR nodes (T.Cast, T.Select, T.Ramp, T.max, T.floordiv, ...),
 * dtype-named immediates and casts (T.float32(0), T.int64(n)), intrinsic calls
 * looked up in TIR_CALL_OPS (T.exp, T.if_then_else, T.call_extern, ...), and
 * the annotation dictionaries of T.func_attr, T.block_attr and loops.
 *
 * The closed set of node constructors is the T_CALLS table; every spelling
 * TVM 0.13-0.20 prints (and the older lowercase ones) is a row.
 */
#include "tir/parse_internal.h"

#include <math.h>
#include <string.h>

typedef pexpr_t (*t_call_fn)(parser_t *p, const tok_t *t, const char *path, int arg);

/* Arguments: positional expressions up to the closing parenthesis. Reports a
 * count outside [min, max] (max < 0: any). */
static int parse_args(parser_t *p, const tok_t *t, const char *path, pexpr_t *out, int min, int max) {
  int n = 0;
  expect_op(p, "(");
  while (!tok_is_op(peek(p), ")")) {
    if (max >= 0 && n >= max) {
      parse_fail(p, t, "'T.%s' takes %d argument%s but more were given", path, max,
                 max == 1 ? "" : "s");
    }
    out[n++] = parse_pexpr(p);
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, ")");
  if (n < min)
    parse_fail(p, t, "'T.%s' takes %d argument%s but %d %s given", path, min, min == 1 ? "" : "s",
               n, n == 1 ? "was" : "were");
  return n;
}

static int max_h(int a, int b) { return a > b ? a : b; }

static pexpr_t call_binary(parser_t *p, const tok_t *t, const char *path, int kind) {
  pexpr_t a[2];
  parse_args(p, t, path, a, 2, 2);
  const char *op = mlc_arena_printf(p->tmp, "T.%s", path);
  return make_binary(p, t, op, (tir_expr_kind_t)kind, a[0], a[1]);
}

static pexpr_t call_not(parser_t *p, const tok_t *t, const char *path, int arg) {
  pexpr_t a;
  parse_args(p, t, path, &a, 1, 1);
  if (!tir_dtype_is_bool(tir_dtype_scalar(a.e->dtype))) {
    char buf[24];
    parse_fail(p, t, "operand of 'T.%s' must be bool, found %s", path, dtype_name(a.e->dtype, buf));
  }
  return pexpr_of(p, t, tir_not(p->arena, a.e), a.height + 1);
}

/* T.Cast("float32", x); the older T.cast(x, "float32") too. */
static pexpr_t call_cast(parser_t *p, const tok_t *t, const char *path, int value_first) {
  expect_op(p, "(");
  tir_dtype_t dt = {0};
  pexpr_t v;
  if (value_first) {
    v = parse_pexpr(p);
    expect_op(p, ",");
    dt = parse_dtype_string(p);
  } else {
    dt = parse_dtype_string(p);
    expect_op(p, ",");
    v = parse_pexpr(p);
  }
  accept_op(p, ",");
  expect_op(p, ")");
  return pexpr_of(p, t, tir_cast(p->arena, dt, v.e), v.height + 1);
}

static tir_expr_t *check_cond(parser_t *p, const tok_t *t, const char *path, pexpr_t c) {
  if (!tir_dtype_is_bool(tir_dtype_scalar(c.e->dtype))) {
    char buf[24];
    parse_fail(p, t, "condition of 'T.%s' must be bool, found %s", path, dtype_name(c.e->dtype, buf));
  }
  return c.e;
}

/* T.Select(c, t, f) is a node; T.if_then_else(c, t, f) a call (lazy). */
static pexpr_t call_select(parser_t *p, const tok_t *t, const char *path, int is_call) {
  pexpr_t a[3];
  parse_args(p, t, path, a, 3, 3);
  tir_expr_t *c = check_cond(p, t, path, a[0]);
  unify(p, t, mlc_arena_printf(p->tmp, "T.%s", path), &a[1], &a[2]);
  int h = max_h(a[0].height, max_h(a[1].height, a[2].height)) + 1;
  if (!is_call) return pexpr_of(p, t, tir_select(p->arena, c, a[1].e, a[2].e), h);
  tir_expr_t *args[3] = {c, a[1].e, a[2].e};
  return pexpr_of(p, t, tir_call(p->arena, a[1].e->dtype, TIR_OP_IF_THEN_ELSE, args, 3), h);
}

static int parse_lanes(parser_t *p) {
  const tok_t *t = peek(p);
  int64_t lanes = parse_int_literal(p, "the number of lanes");
  if (lanes < 1 || lanes > 65535) parse_fail(p, t, "bad number of lanes %lld", (long long)lanes);
  return (int)lanes;
}

static pexpr_t call_ramp(parser_t *p, const tok_t *t, const char *path, int arg) {
  expect_op(p, "(");
  pexpr_t base = parse_pexpr(p);
  expect_op(p, ",");
  pexpr_t stride = parse_pexpr(p);
  expect_op(p, ",");
  int lanes = parse_lanes(p);
  accept_op(p, ",");
  expect_op(p, ")");
  unify(p, t, "T.Ramp", &base, &stride);
  return pexpr_of(p, t, tir_ramp(p->arena, base.e, stride.e, lanes),
                  max_h(base.height, stride.height) + 1);
}

static pexpr_t call_broadcast(parser_t *p, const tok_t *t, const char *path, int arg) {
  expect_op(p, "(");
  pexpr_t v = parse_pexpr(p);
  expect_op(p, ",");
  int lanes = parse_lanes(p);
  accept_op(p, ",");
  expect_op(p, ")");
  return pexpr_of(p, t, tir_broadcast(p->arena, v.e, lanes), v.height + 1);
}

/* T.reinterpret("float32", x), or the older T.reinterpret(x, dtype="float32"). */
static pexpr_t call_reinterpret(parser_t *p, const tok_t *t, const char *path, int arg) {
  expect_op(p, "(");
  tir_dtype_t dt;
  pexpr_t v;
  if (peek(p)->kind == TK_STRING) {
    dt = parse_dtype_string(p);
    expect_op(p, ",");
    v = parse_pexpr(p);
  } else {
    v = parse_pexpr(p);
    expect_op(p, ",");
    if (at_kwarg(p)) {
      if (!tok_is_name(peek(p), "dtype")) parse_fail(p, peek(p), "unknown keyword argument '%s'", tok_desc(p, peek(p)));
      advance(p);
      advance(p);
    }
    dt = parse_dtype_string(p);
  }
  accept_op(p, ",");
  expect_op(p, ")");
  return pexpr_of(p, t, tir_call(p->arena, dt, TIR_OP_REINTERPRET, &v.e, 1), v.height + 1);
}

/* T.call_extern("float32", "name", args...): the dtype first, then the
 * callee's name and arguments as the call's arguments. */
static pexpr_t call_extern(parser_t *p, const tok_t *t, const char *path, int op) {
  PVEC(tir_expr_t *) args = {0};
  int h = 0;
  expect_op(p, "(");
  tir_dtype_t dt = parse_dtype_string(p);
  while (accept_op(p, ",") && !tok_is_op(peek(p), ")")) {
    pexpr_t a = parse_pexpr(p);
    pvec_push(p, &args, a.e);
    h = max_h(h, a.height);
  }
  expect_op(p, ")");
  if (args.len == 0) parse_fail(p, t, "'T.%s' needs the callee's name", path);
  return pexpr_of(p, t, tir_call(p->arena, dt, (tir_op_t)op, args.data, args.len), h + 1);
}

/*      spelling             handler            arg */
#define T_CALLS(X)                                        \
  X("Cast",                 call_cast,         0)         \
  X("cast",                 call_cast,         1)         \
  X("Select",               call_select,       0)         \
  X("if_then_else",         call_select,       1)         \
  X("max",                  call_binary,       TIR_MAX)   \
  X("Max",                  call_binary,       TIR_MAX)   \
  X("min",                  call_binary,       TIR_MIN)   \
  X("Min",                  call_binary,       TIR_MIN)   \
  X("floordiv",             call_binary,       TIR_FLOOR_DIV) \
  X("FloorDiv",             call_binary,       TIR_FLOOR_DIV) \
  X("floormod",             call_binary,       TIR_FLOOR_MOD) \
  X("FloorMod",             call_binary,       TIR_FLOOR_MOD) \
  X("truncdiv",             call_binary,       TIR_DIV)   \
  X("Div",                  call_binary,       TIR_DIV)   \
  X("truncmod",             call_binary,       TIR_MOD)   \
  X("Mod",                  call_binary,       TIR_MOD)   \
  X("Add",                  call_binary,       TIR_ADD)   \
  X("Sub",                  call_binary,       TIR_SUB)   \
  X("Mul",                  call_binary,       TIR_MUL)   \
  X("EQ",                   call_binary,       TIR_EQ)    \
  X("NE",                   call_binary,       TIR_NE)    \
  X("LT",                   call_binary,       TIR_LT)    \
  X("LE",                   call_binary,       TIR_LE)    \
  X("GT",                   call_binary,       TIR_GT)    \
  X("GE",                   call_binary,       TIR_GE)    \
  X("And",                  call_binary,       TIR_AND)   \
  X("Or",                   call_binary,       TIR_OR)    \
  X("Not",                  call_not,          0)         \
  X("Ramp",                 call_ramp,         0)         \
  X("ramp",                 call_ramp,         0)         \
  X("Broadcast",            call_broadcast,    0)         \
  X("broadcast",            call_broadcast,    0)         \
  X("reinterpret",          call_reinterpret,  0)         \
  X("call_extern",          call_extern,       TIR_OP_CALL_EXTERN) \
  X("call_pure_extern",     call_extern,       TIR_OP_CALL_PURE_EXTERN) \
  X("call_llvm_intrin",     call_extern,       TIR_OP_CALL_LLVM_INTRIN) \
  X("call_llvm_pure_intrin",call_extern,       TIR_OP_CALL_LLVM_PURE_INTRIN)

static const struct {
  const char *name;
  t_call_fn fn;
  int arg;
} t_calls[] = {
#define ROW_(name, fn, arg) {name, fn, arg},
    T_CALLS(ROW_)
#undef ROW_
};

/* Result dtype of an intrinsic call from its arguments. */
static tir_dtype_t op_result_dtype(tir_op_t op, pexpr_t *a, int n) {
  switch (op) {
  case TIR_OP_ISNAN: return tir_dtype(TIR_CODE_UINT, 1, n > 0 ? a[0].e->dtype.lanes : 1);
  case TIR_OP_ASSUME: return tir_dt_BOOL();
  case TIR_OP_TVM_STORAGE_SYNC: return tir_dt_INT32();
  default: return n > 0 ? a[0].e->dtype : tir_dt_INT32();
  }
}

/* T.exp(x), T.pow(x, y), T.tvm_storage_sync("shared"), ... */
static pexpr_t call_op(parser_t *p, const tok_t *t, const char *path, tir_op_t op) {
  int nargs = tir_op_nargs(op);
  PVEC(pexpr_t) a = {0};
  expect_op(p, "(");
  while (!tok_is_op(peek(p), ")")) {
    pvec_push(p, &a, parse_pexpr(p));
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, ")");
  if (nargs >= 0 && a.len != nargs)
    parse_fail(p, t, "'T.%s' takes %d argument%s but %d %s given", path, nargs,
               nargs == 1 ? "" : "s", a.len, a.len == 1 ? "was" : "were");
  if (op == TIR_OP_POW) unify(p, t, "T.pow", &a.data[0], &a.data[1]);
  tir_expr_t **args = mlc_arena_alloc(p->tmp, sizeof(*args) * (size_t)(a.len + 1));
  int h = 0;
  for (int i = 0; i < a.len; i++) {
    args[i] = a.data[i].e;
    h = max_h(h, a.data[i].height);
  }
  tir_dtype_t dt = op_result_dtype(op, a.data, a.len);
  return pexpr_of(p, t, tir_call(p->arena, dt, op, args, a.len), h + 1);
}

/* The values TVM prints as strings: T.float32("inf"), "-inf", "nan". */
static double special_float(parser_t *p, const tok_t *t) {
  if (strcmp(t->str, "inf") == 0) return INFINITY;
  if (strcmp(t->str, "-inf") == 0) return -INFINITY;
  if (strcmp(t->str, "nan") == 0) return NAN;
  parse_fail(p, t, "invalid float value %s", tok_desc(p, t));
}

/* T.float32(0), T.int64(n), T.bool(True), T.float32("inf"): an immediate for
 * a literal, the value itself when it already has the dtype, else a Cast. */
static pexpr_t call_dtype(parser_t *p, const tok_t *t, const char *path, tir_dtype_t dt) {
  expect_op(p, "(");
  if (tok_is_op(peek(p), ")"))
    parse_fail(p, peek(p), "'T.%s()' declares a variable: write 'name = T.%s()'", path, path);
  const tok_t *at = peek(p);
  pexpr_t v;
  if (at->kind == TK_STRING && tir_dtype_is_float(dt)) {
    advance(p);
    v = pexpr_of(p, at, tir_float(p->arena, dt, special_float(p, at)), 1);
  } else if (at->kind == TK_INT && at->ival > (uint64_t)INT64_MAX && tir_dtype_is_uint(dt) &&
             dt.bits == 64 && dt.lanes == 1) {
    /* T.uint64(18446744073709551615): beyond int64, so not an untyped
     * literal; kept as its bit pattern as every uint64 immediate is. */
    advance(p);
    v = pexpr_of(p, at, tir_int(p->arena, dt, (int64_t)at->ival), 1);
  } else {
    v = parse_pexpr(p);
  }
  accept_op(p, ",");
  expect_op(p, ")");
  const char *op = mlc_arena_printf(p->tmp, "T.%s", path);
  if (v.lit || tir_dtype_eq(v.e->dtype, dt)) return coerce(p, at, op, v, dt);
  return pexpr_of(p, t, tir_cast(p->arena, dt, v.e), v.height + 1);
}

pexpr_t parse_t_call(parser_t *p, const tok_t *t, const char *path) {
  if (!tok_is_op(peek(p), "("))
    parse_fail(p, peek(p), "expected '(' after 'T.%s' but found '%s'", path, tok_desc(p, peek(p)));
  for (size_t i = 0; i < sizeof t_calls / sizeof *t_calls; i++)
    if (strcmp(t_calls[i].name, path) == 0) return t_calls[i].fn(p, t, path, t_calls[i].arg);
  tir_op_t op;
  if (tir_op_lookup(&op, path, strlen(path)) == MLC_OK && op != TIR_OP_LIST)
    return call_op(p, t, path, op);
  tir_dtype_t dt;
  if (dtype_from_path(path, &dt) && !tir_dtype_is_handle(dt)) return call_dtype(p, t, path, dt);
  parse_fail(p, t, "unknown function 'T.%s'", path);
}

/* ------------------------------------------------------------------------ */
/* Dtypes, integer literals, annotations                                     */
/* ------------------------------------------------------------------------ */

bool dtype_from_path(const char *path, tir_dtype_t *out) {
  return tir_dtype_parse(out, path, strlen(path)) == MLC_OK;
}

tir_dtype_t parse_dtype_string(parser_t *p) {
  const tok_t *t = expect_string(p, "a dtype string");
  tir_dtype_t dt;
  if (tir_dtype_parse(&dt, t->str, strlen(t->str)) != MLC_OK)
    parse_fail(p, t, "unknown dtype '%s'", t->str);
  return dt;
}

int64_t parse_int_literal(parser_t *p, const char *what) {
  const tok_t *t = peek(p);
  bool neg = accept_op(p, "-");
  const tok_t *num = peek(p);
  if (num->kind != TK_INT)
    parse_fail(p, num, "expected an integer literal for %s but found '%s'", what, tok_desc(p, num));
  advance(p);
  if (num->ival > (uint64_t)INT64_MAX) parse_fail(p, t, "integer literal too large");
  return neg ? -(int64_t)num->ival : (int64_t)num->ival;
}

/* annot_value = "[" (annot_value ("," annot_value)* ","?)? "]" | expr */
static tir_expr_t *parse_annot_value(parser_t *p) {
  const tok_t *t = peek(p);
  if (tok_is_op(t, "{")) parse_fail(p, t, "nested dictionaries are not supported");
  if (!tok_is_op(t, "[")) return parse_expr(p);
  advance(p);
  parse_enter(p, t);
  PVEC(tir_expr_t *) items = {0};
  while (!tok_is_op(peek(p), "]")) {
    pvec_push(p, &items, parse_annot_value(p));
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, "]");
  parse_leave(p);
  return tir_call(p->arena, tir_dt_HANDLE(), TIR_OP_LIST, items.data, items.len);
}

/* annotations = "{" (STRING ":" annot_value ("," STRING ":" annot_value)* ","?)? "}" */
int parse_annotations(parser_t *p, tir_annot_t **out) {
  PVEC(tir_annot_t) v = {0};
  expect_op(p, "{");
  while (!tok_is_op(peek(p), "}")) {
    const tok_t *key = expect_string(p, "a string key");
    expect_op(p, ":");
    tir_annot_t a = {mlc_arena_strdup(p->arena, key->str), parse_annot_value(p)};
    pvec_push(p, &v, a);
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, "}");
  *out = parse_dup(p, v.data, v.len, sizeof(*v.data));
  return v.len;
}
