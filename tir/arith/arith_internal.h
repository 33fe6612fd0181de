/*
 * arith_internal.h - what the files of tir/arith/ share: the analyzer's state
 * (variable bindings and constraints), constant folding, extended-integer
 * bound arithmetic, linear forms and the deterministic term order.
 *
 * Layout of the module:
 *   analyzer.c      bindings, constraint scopes, the deterministic variable order
 *   bound.c         tir_const_bound (TVM's ConstIntBound)
 *   fold.c          constant folding of every operator and dtype
 *   linear.c        linear forms (sum of coefficient * term + constant), term order
 *   simplify.c      tir_simplify / tir_prove: the rewrite rules
 *   simplify_stmt.c tir_simplify_stmt
 *   int_set.c       tir_relax_expr / tir_relax_range (symbolic intervals)
 *   iter_*.c        tir_detect_iter_map (TVM's DetectIterMap), see iter_map.h
 */
#ifndef MLC_TIR_ARITH_INTERNAL_H
#define MLC_TIR_ARITH_INTERNAL_H

#include "tir/ptrmap.h"
#include "tir/tir.h"

#define ARITH_NEG_INF INT64_MIN
#define ARITH_POS_INF INT64_MAX

/* Deepest expression the simplifier recurses into; deeper ones are returned
 * unchanged so hostile input cannot overflow the stack. */
#define ARITH_MAX_DEPTH 2000

/* What is known about one variable. */
typedef struct {
  tir_var_t *var;
  tir_expr_t *min, *extent; /* the bound range, NULL when only constrained */
  tir_bound_t bound;        /* inclusive constant bounds */
  int order;                /* bind order, the deterministic term order key;
                               -1 when only constrained, never bound */
} arith_var_info_t;

/* One saved state of a variable, restored when a constraint scope ends. */
typedef struct {
  int index;                /* into vars */
  tir_bound_t bound;
} arith_saved_t;

struct tir_analyzer {
  mlc_arena_t *arena;
  tir_ptrmap_t index;       /* var -> (index + 1) into vars */
  arith_var_info_t *vars;
  int nvars, capvars;
  int next_order;
  arith_saved_t *saved;     /* constraint stack */
  int nsaved, capsaved;
  int depth;                /* simplifier recursion depth */
};

/* ---- analyzer.c -------------------------------------------------------- */

/* The entry of v, or NULL when nothing is known about it. */
arith_var_info_t *arith_var_info(const tir_analyzer_t *an, const tir_var_t *v);
/* The entry of v, created unbound (dtype range) when absent; NULL on OOM. */
arith_var_info_t *arith_var_info_get_or_add(tir_analyzer_t *an, tir_var_t *v);
/* Tightens v's constant bound to [lo, hi] (replaces it when `replace`) within
 * the current constraint scope (restored by tir_analyzer_pop_constraint). */
void arith_var_tighten(tir_analyzer_t *an, tir_var_t *v, int64_t lo, int64_t hi, bool replace);
/* Constant bounds of [min, min + extent). */
tir_bound_t arith_range_bound(tir_analyzer_t *an, tir_expr_t *min, tir_expr_t *extent);

/* ---- bound.c ----------------------------------------------------------- */

/* Every value of dtype t (bool: [0, 1]; int64: unknown). */
tir_bound_t arith_dtype_bound(tir_dtype_t t);
/* Extended arithmetic on bounds where INT64_MIN/INT64_MAX are -inf/+inf; a
 * finite overflow sets *ovf. */
int64_t arith_ext_add(int64_t x, int64_t y, bool *ovf);
int64_t arith_ext_mul(int64_t x, int64_t y, bool *ovf);
int64_t arith_ext_neg(int64_t x);
/* The bound of coef * [b.min, b.max]. */
tir_bound_t arith_bound_scale(tir_bound_t b, int64_t coef, bool *ovf);
/* Clamps a computed bound to dtype t: anything outside t's range means the
 * value may have wrapped, so the answer is t's whole range. */
tir_bound_t arith_bound_clamp(tir_bound_t b, tir_dtype_t t, bool ovf);

/* ---- fold.c ------------------------------------------------------------ */

/* The canonical stored value of integer v in dtype t (wrapped to the width;
 * sign-extended for ints, zero-extended for uints, 0/1 for bool). */
int64_t arith_int_norm(tir_dtype_t t, int64_t v);
/* Coefficient arithmetic modulo 2^bits, kept sign-extended so negative
 * coefficients print as subtractions. */
int64_t arith_coef_wrap(tir_dtype_t t, uint64_t v);
bool arith_is_int_scalar(tir_dtype_t t); /* int or uint (not bool), 1 lane */
/* Floor division and modulo of int64 (b != 0; INT64_MIN / -1 wraps). */
int64_t arith_floordiv(int64_t a, int64_t b);
int64_t arith_floormod(int64_t a, int64_t b);
/* Folds a binary operator on two immediates; NULL when it cannot (not both
 * constant, division by zero, a float result that is not finite). */
tir_expr_t *arith_fold_binary(mlc_arena_t *a, tir_expr_kind_t kind, tir_expr_t *x, tir_expr_t *y);
/* Folds NOT / CAST of an immediate; NULL when it cannot. */
tir_expr_t *arith_fold_unary(mlc_arena_t *a, tir_expr_kind_t kind, tir_dtype_t t, tir_expr_t *x);
/* True and *out when e is a bool immediate (or an integer immediate). */
bool arith_as_bool(const tir_expr_t *e, bool *out);

/* ---- linear.c ---------------------------------------------------------- */

typedef struct {
  tir_expr_t *atom;         /* never an immediate, ADD, SUB or a MUL by a constant */
  int64_t coef;
} arith_term_t;

/* sum(coef * atom) + base, in dtype (an integer scalar dtype). Scratch
 * storage lives in the analyzer's arena. */
typedef struct {
  tir_dtype_t dtype;
  int n, cap;
  arith_term_t *terms;
  int64_t base;
} arith_lin_t;

void arith_lin_init(arith_lin_t *l, tir_dtype_t t);
/* l += scale * e, flattening ADD, SUB, MUL by constants and immediates. */
void arith_lin_add_expr(tir_analyzer_t *an, arith_lin_t *l, tir_expr_t *e, int64_t scale);
void arith_lin_add_term(tir_analyzer_t *an, arith_lin_t *l, tir_expr_t *atom, int64_t coef);
void arith_lin_add_lin(tir_analyzer_t *an, arith_lin_t *l, const arith_lin_t *o, int64_t scale);
/* Drops zero terms and merges floordiv(x, c) * c*s + floormod(x, c) * s into x * s. */
void arith_lin_normalize(tir_analyzer_t *an, arith_lin_t *l);
/* The canonical expression: terms by descending coefficient then by the term
 * order, positive terms first, then the constant, then subtracted terms. */
tir_expr_t *arith_lin_to_expr(tir_analyzer_t *an, arith_lin_t *l);
/* Constant bound of the linear form. */
tir_bound_t arith_lin_bound(tir_analyzer_t *an, const arith_lin_t *l);
/* Deterministic order of terms (never by address): variables first, by bind
 * order, then unbound ones by name; other terms by kind then children. 0 for
 * structurally equal terms and for distinct unbound variables of one name. */
int arith_expr_cmp(const tir_analyzer_t *an, const tir_expr_t *a, const tir_expr_t *b);
/* Structural equality with variables by identity. */
bool arith_expr_equal(const tir_expr_t *a, const tir_expr_t *b);

/* ---- simplify.c -------------------------------------------------------- */

/* The recursive simplifier (no out-of-memory guard; see tir_simplify). */
tir_expr_t *arith_simplify(tir_analyzer_t *an, tir_expr_t *e);
/* Simplified a - b, as an expression. */
tir_expr_t *arith_sub(tir_analyzer_t *an, tir_expr_t *a, tir_expr_t *b);
/* Simplified a + b, a * b, floordiv(a, b), min, max (builders + simplify). */
tir_expr_t *arith_make(tir_analyzer_t *an, tir_expr_kind_t kind, tir_expr_t *a, tir_expr_t *b);
/* True when a == b can be proven (structurally equal, or the simplified
 * difference is 0). */
bool arith_prove_equal(tir_analyzer_t *an, tir_expr_t *a, tir_expr_t *b);

#endif /* MLC_TIR_ARITH_INTERNAL_H */
