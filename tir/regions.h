/*
 * regions.h - private to tir/: symbolic bounds of index expressions, shared
 * by region derivation (regions.c) and the verifier (verify.c).
 *
 * An index such as `vi * 16 + k`, with k a loop inside the block running over
 * [0, 16), is bounded by linear forms over the variables that stay symbolic
 * (block iter vars, parameters): here [vi*16, vi*16 + 15]. Linear forms make
 * the extent (hi - lo + 1) fold to a constant without a general simplifier,
 * and make "is this access inside that region" a constant comparison.
 *
 * An environment says which variables are relaxed: loop variables over their
 * range (min, extent), and variables bound to a value (a nested block's iter
 * vars to their bindings, let variables) which are replaced by that value.
 * Every other variable is an atom.
 *
 * Everything is allocated in the environment's arena, which must not return
 * NULL: callers set an out-of-memory handler on it (mlc_arena_set_oom_handler).
 */
#ifndef MLC_TIR_REGIONS_H
#define MLC_TIR_REGIONS_H

#include "tir/tir.h"

/* c + sum(coef_i * atom_i). Atoms are expressions free of relaxed variables
 * (or relaxed loop variables themselves, inside a bound's exact form). */
typedef struct {
  tir_expr_t *atom;
  int64_t coef; /* never 0 */
} tir_lin_term_t;

typedef struct {
  bool known; /* false: no bound (not analysable or unbounded) */
  int n;
  tir_lin_term_t *terms;
  int64_t c;
} tir_lin_t;

/* Inclusive bounds of an expression's value; `point` is an expression equal
 * to the value when it does not depend on any relaxed loop variable (the
 * expression itself when nothing was substituted). */
typedef struct {
  tir_lin_t lo, hi;
  tir_lin_t exact; /* the value as a linear form over atoms and relaxed loop vars */
  tir_expr_t *point;
} tir_lin_bound_t;

typedef struct {
  const tir_var_t *var;
  tir_expr_t *min, *extent; /* a loop: var in [min, min + extent) */
  tir_expr_t *value;        /* else: var == value */
} tir_lin_binding_t;

typedef struct {
  mlc_arena_t *arena;
  tir_lin_binding_t *binds;
  int n, cap;
  int depth; /* recursion guard through variable ranges */
} tir_lin_env_t;

void tir_lin_env_init(tir_lin_env_t *env, mlc_arena_t *arena);
void tir_lin_env_push_range(tir_lin_env_t *env, const tir_var_t *v, tir_expr_t *min, tir_expr_t *extent);
void tir_lin_env_push_value(tir_lin_env_t *env, const tir_var_t *v, tir_expr_t *value);
/* Bindings pushed after `mark` (env->n at that time) are dropped. */
static inline void tir_lin_env_reset(tir_lin_env_t *env, int mark) { env->n = mark; }

/* Bounds of an integer expression under env. */
tir_lin_bound_t tir_lin_relax(tir_lin_env_t *env, tir_expr_t *e);
/* Bounds of a range [min, min + extent) of a region under env, as lo/hi of
 * its elements. */
tir_lin_bound_t tir_lin_relax_range(tir_lin_env_t *env, tir_expr_t *min, tir_expr_t *extent);
/* Hull of two bounds. */
tir_lin_bound_t tir_lin_union(tir_lin_env_t *env, const tir_lin_bound_t *a, const tir_lin_bound_t *b);

/* *d = a - b when that difference is a constant. */
bool tir_lin_diff_const(const tir_lin_t *a, const tir_lin_t *b, int64_t *d);
bool tir_lin_as_const(const tir_lin_t *a, int64_t *c);
/* a - b + k (unknown when either is). */
tir_lin_t tir_lin_sub_plus(tir_lin_env_t *env, const tir_lin_t *a, const tir_lin_t *b, int64_t k);
/* The form as an expression; constants get dtype t. */
tir_expr_t *tir_lin_to_expr(mlc_arena_t *a, const tir_lin_t *l, tir_dtype_t t);

#endif /* MLC_TIR_REGIONS_H */
