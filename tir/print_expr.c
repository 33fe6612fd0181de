/*
 * print_expr.c - expressions in TVMScript: Python operators with the fewest
 * parentheses Python's precedence allows, T.* calls for everything else,
 * immediates with their dtypes, and the shortest float text that reads back.
 *
 * Parentheses: a left operand gets them when it binds looser than its
 * operator, a right operand also at the same level (all operators here are
 * left-associative, and the parser builds left-leaning trees). Comparisons
 * chain in Python, so a comparison operand that is itself a comparison is
 * always parenthesised. The operand of `not` is parenthesised unless it is an
 * atom (`not (a < b)`, `not x`): Python would read `not a < b` right, but
 * people misread it. There is no negation node, so no unary minus except in
 * negative integer literals, which bind tighter than any operator printed.
 */
#include "tir/print_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python precedence levels, loosest first. */
enum { PREC_OR = 1, PREC_AND, PREC_NOT, PREC_CMP, PREC_ADD, PREC_MUL, PREC_ATOM };

static int expr_prec(const tir_expr_t *e) {
  switch (e->kind) {
  case TIR_OR: return PREC_OR;
  case TIR_AND: return PREC_AND;
  case TIR_NOT: return PREC_NOT;
  case TIR_EQ: case TIR_NE: case TIR_LT: case TIR_LE: case TIR_GT: case TIR_GE: return PREC_CMP;
  case TIR_ADD: case TIR_SUB: return PREC_ADD;
  case TIR_MUL: case TIR_FLOOR_DIV: case TIR_FLOOR_MOD: return PREC_MUL;
  case TIR_DIV: return tir_dtype_is_float(e->dtype) ? PREC_MUL : PREC_ATOM;
  default: return PREC_ATOM;
  }
}

static void put_expr(tir_printer_t *p, const tir_expr_t *e);

/* e, in parentheses when it binds looser than `need`. */
static void put_operand(tir_printer_t *p, const tir_expr_t *e, int need) {
  if (expr_prec(e) < need) {
    mlc_sb_putc(p->sb, '(');
    put_expr(p, e);
    mlc_sb_putc(p->sb, ')');
  } else {
    put_expr(p, e);
  }
}

static void put_infix(tir_printer_t *p, const char *op, int prec, const tir_expr_t *a,
                      const tir_expr_t *b) {
  put_operand(p, a, prec == PREC_CMP ? prec + 1 : prec);
  mlc_sb_printf(p->sb, " %s ", op);
  put_operand(p, b, prec + 1);
}

/* `T.name(a, b, ...)` */
static void put_call_args(tir_printer_t *p, const char *name, const tir_expr_t *const *args,
                          int n) {
  mlc_sb_printf(p->sb, "T.%s(", name);
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_append(p->sb, ", ");
    put_expr(p, args[i]);
  }
  mlc_sb_putc(p->sb, ')');
}

static void put_call2(tir_printer_t *p, const char *name, const tir_expr_t *a, const tir_expr_t *b) {
  const tir_expr_t *args[2] = {a, b};
  put_call_args(p, name, args, 2);
}

/* ------------------------------------------------------------------------ */
/* Immediates                                                                */
/* ------------------------------------------------------------------------ */

void tir_printer_dtype_str(mlc_strbuf_t *sb, tir_dtype_t t) {
  char buf[24];
  mlc_sb_printf(sb, "\"%s\"", tir_dtype_str(t, buf));
}

void tir_printer_dtype_annot(mlc_strbuf_t *sb, tir_dtype_t t) {
  char buf[24];
  mlc_sb_printf(sb, "T.%s", tir_dtype_str(t, buf));
}

static void put_int(mlc_strbuf_t *sb, tir_dtype_t t, int64_t v) {
  if (tir_dtype_is_bool(t) && t.lanes == 1) {
    mlc_sb_append(sb, v ? "T.bool(True)" : "T.bool(False)");
    return;
  }
  bool bare = t.code == TIR_CODE_INT && t.bits == 32 && t.lanes == 1;
  if (!bare) tir_printer_dtype_annot(sb, t), mlc_sb_putc(sb, '(');
  if (t.code == TIR_CODE_UINT) {
    uint64_t u = (uint64_t)v;
    if (t.bits < 64) u &= (UINT64_C(1) << t.bits) - 1;
    mlc_sb_printf(sb, "%llu", (unsigned long long)u);
  } else {
    mlc_sb_printf(sb, "%lld", (long long)v);
  }
  if (!bare) mlc_sb_putc(sb, ')');
}

/* What the builders keep of v for a value of dtype t (tir_float's rounding). */
static double round_to(tir_dtype_t t, double v) {
  if (t.code == TIR_CODE_BFLOAT) return tir_bf16_to_f32(tir_f32_to_bf16((float)v));
  switch (t.bits) {
  case 16: return tir_f16_to_f32(tir_f32_to_f16((float)v));
  case 32: return (double)(float)v;
  default: return v;
  }
}

void tir_print_float_text(char *buf, size_t len, double v, tir_dtype_t t) {
  if (isnan(v)) {
    snprintf(buf, len, "\"nan\"");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, len, v > 0 ? "\"inf\"" : "\"-inf\"");
    return;
  }
  if (v == 0) {
    snprintf(buf, len, signbit(v) ? "-0.0" : "0");
    return;
  }
  double want = round_to(t, v);
  char sci[40];
  int digits = 1;
  /* The fewest significant digits that read back to the same value. */
  for (; digits <= 17; digits++) {
    snprintf(sci, sizeof(sci), "%.*e", digits - 1, v);
    if (round_to(t, strtod(sci, NULL)) == want) break;
  }
  if (digits > 17) digits = 17;
  snprintf(sci, sizeof(sci), "%.*e", digits - 1, v);
  /* Python's repr layout: positional for exponents -4..15, else scientific. */
  int exp10 = atoi(strchr(sci, 'e') + 1);
  if (exp10 >= -4 && exp10 < 16) {
    int decimals = digits - 1 - exp10;
    snprintf(buf, len, "%.*f", decimals > 0 ? decimals : 0, v);
  } else {
    snprintf(buf, len, "%s", sci);
  }
}

static void put_float(mlc_strbuf_t *sb, tir_dtype_t t, double v) {
  char text[48];
  tir_print_float_text(text, sizeof(text), v, t);
  tir_printer_dtype_annot(sb, t);
  mlc_sb_printf(sb, "(%s)", text);
}

void tir_printer_string(mlc_strbuf_t *sb, const char *s) {
  mlc_sb_putc(sb, '"');
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    switch (*c) {
    case '\\': mlc_sb_append(sb, "\\\\"); break;
    case '"': mlc_sb_append(sb, "\\\""); break;
    case '\n': mlc_sb_append(sb, "\\n"); break;
    case '\t': mlc_sb_append(sb, "\\t"); break;
    case '\r': mlc_sb_append(sb, "\\r"); break;
    default:
      /* Other control characters as \xNN; bytes >= 0x80 pass (UTF-8 text). */
      if (*c < 0x20 || *c == 0x7f)
        mlc_sb_printf(sb, "\\x%02x", *c);
      else
        mlc_sb_putc(sb, (char)*c);
    }
  }
  mlc_sb_putc(sb, '"');
}

/* ------------------------------------------------------------------------ */
/* Expressions                                                               */
/* ------------------------------------------------------------------------ */

/* Calls whose result dtype the arguments do not give print it first:
 * T.call_extern("float32", "f", x), T.reinterpret("float32", x). */
static bool op_takes_dtype(tir_op_t op) {
  return op == TIR_OP_CALL_EXTERN || op == TIR_OP_CALL_PURE_EXTERN ||
         op == TIR_OP_CALL_LLVM_INTRIN || op == TIR_OP_CALL_LLVM_PURE_INTRIN ||
         op == TIR_OP_REINTERPRET;
}

static void put_list(tir_printer_t *p, const tir_expr_t *const *items, int n, char open,
                     char close) {
  mlc_sb_putc(p->sb, open);
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_append(p->sb, ", ");
    put_expr(p, items[i]);
  }
  mlc_sb_putc(p->sb, close);
}

static void put_call(tir_printer_t *p, const tir_expr_t *e) {
  tir_op_t op = e->u.call.op;
  const tir_expr_t *const *args = (const tir_expr_t *const *)e->u.call.args;
  if (op == TIR_OP_LIST) {
    put_list(p, args, e->u.call.nargs, '[', ']');
    return;
  }
  mlc_sb_printf(p->sb, "T.%s(", tir_op_name(op));
  if (op_takes_dtype(op)) {
    tir_printer_dtype_str(p->sb, e->dtype);
    if (e->u.call.nargs) mlc_sb_append(p->sb, ", ");
  }
  for (int i = 0; i < e->u.call.nargs; i++) {
    if (i) mlc_sb_append(p->sb, ", ");
    put_expr(p, args[i]);
  }
  mlc_sb_putc(p->sb, ')');
}

static void put_load(tir_printer_t *p, const tir_expr_t *e) {
  tir_printer_put_buffer(p, e->u.load.buffer);
  if (e->u.load.nindices == 0) {
    mlc_sb_append(p->sb, "[()]");
    return;
  }
  put_list(p, (const tir_expr_t *const *)e->u.load.indices, e->u.load.nindices, '[', ']');
}

static void put_binary(tir_printer_t *p, const tir_expr_t *e) {
  const tir_expr_t *a = e->u.bin.a, *b = e->u.bin.b;
  switch (e->kind) {
  case TIR_MIN: put_call2(p, "min", a, b); return;
  case TIR_MAX: put_call2(p, "max", a, b); return;
  case TIR_MOD: put_call2(p, "truncmod", a, b); return;
  case TIR_DIV:
    if (!tir_dtype_is_float(e->dtype)) {
      put_call2(p, "truncdiv", a, b);
      return;
    }
    break;
  default: break;
  }
  put_infix(p, tir_expr_kind_pyop(e->kind), expr_prec(e), a, b);
}

static void put_expr(tir_printer_t *p, const tir_expr_t *e) {
  mlc_strbuf_t *sb = p->sb;
  if (!e) {
    mlc_sb_append(sb, "None");
    return;
  }
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM:
    if (e->kind == TIR_INT_IMM) put_int(sb, e->dtype, e->u.int_value);
    else if (e->kind == TIR_FLOAT_IMM) put_float(sb, e->dtype, e->u.float_value);
    else tir_printer_string(sb, e->u.str_value ? e->u.str_value : "");
    return;
  case TIR_SHAPE_LEAF: tir_printer_put_var(p, e); return;
  case TIR_SHAPE_BINARY: put_binary(p, e); return;
  case TIR_SHAPE_UNARY:
    if (e->kind == TIR_NOT) {
      mlc_sb_append(sb, "not ");
      put_operand(p, e->u.un.a, PREC_ATOM);
    } else {
      mlc_sb_append(sb, "T.Cast(");
      tir_printer_dtype_str(sb, e->dtype);
      mlc_sb_append(sb, ", ");
      put_expr(p, e->u.un.a);
      mlc_sb_putc(sb, ')');
    }
    return;
  case TIR_SHAPE_SELECT: {
    const tir_expr_t *args[3] = {e->u.select.cond, e->u.select.t, e->u.select.f};
    put_call_args(p, "Select", args, 3);
    return;
  }
  case TIR_SHAPE_LOAD: put_load(p, e); return;
  case TIR_SHAPE_RAMP:
    mlc_sb_append(sb, "T.Ramp(");
    put_expr(p, e->u.ramp.base);
    mlc_sb_append(sb, ", ");
    put_expr(p, e->u.ramp.stride);
    mlc_sb_printf(sb, ", %d)", e->u.ramp.lanes);
    return;
  case TIR_SHAPE_BROADCAST:
    mlc_sb_append(sb, "T.Broadcast(");
    put_expr(p, e->u.broadcast.value);
    mlc_sb_printf(sb, ", %d)", e->u.broadcast.lanes);
    return;
  case TIR_SHAPE_CALL: put_call(p, e); return;
  }
}

void tir_printer_expr(tir_printer_t *p, const tir_expr_t *e) { put_expr(p, e); }

/* Two constants fold; anything else prints as the sum, which the parser
 * takes apart again (`i:i + 4` has extent 4, whatever the min). */
/* TVM prints the stop as the expression `min + extent`, which its operator+
 * folds when both are constants or either is 0: `0:n`, `a:a`, `a:a + e`. The
 * parser takes each form back to the same extent. */
void tir_printer_stop(tir_printer_t *p, const tir_expr_t *min, const tir_expr_t *extent) {
  int64_t lo, n;
  if (tir_as_int(min, &lo) && tir_as_int(extent, &n))
    put_int(p->sb, extent->dtype, (int64_t)((uint64_t)lo + (uint64_t)n));
  else if (tir_is_const_int(min, 0))
    put_expr(p, extent);
  else if (tir_is_const_int(extent, 0))
    put_expr(p, min);
  else
    put_infix(p, "+", PREC_ADD, min, extent);
}

void tir_printer_annots(tir_printer_t *p, const tir_annot_t *annots, int n) {
  mlc_sb_putc(p->sb, '{');
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_append(p->sb, ", ");
    tir_printer_string(p->sb, annots[i].key);
    mlc_sb_append(p->sb, ": ");
    put_expr(p, annots[i].value);
  }
  mlc_sb_putc(p->sb, '}');
}
