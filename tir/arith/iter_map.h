/*
 * iter_map.h - what the files of the iteration-map analysis share:
 * iter_map.c (entry point, predicate), iter_rewrite.c (expressions to iter
 * sums), iter_fuse.c (fusing sums into marks, predicate constraints),
 * iter_check.c (coverage) and iter_util.c (factor arithmetic). Mirrors
 * TVM's IterMapRewriter; see tir_detect_iter_map in tir.h.
 */
#ifndef MLC_TIR_ARITH_ITER_MAP_H
#define MLC_TIR_ARITH_ITER_MAP_H

#include "tir/arith/arith_internal.h"

/* A fused mark: its flattened form (the original splits, outermost first)
 * and the offset of the fused iterator's minimum (from a predicate's lower
 * bound; 0 otherwise). */
typedef struct {
  tir_iter_sum_t flat;
  tir_iter_mark_t *mark;
  tir_expr_t *offset;
} im_fused_t;

typedef struct {
  tir_analyzer_t *an;
  mlc_arena_t *arena;
  tir_iter_check_t check;
  int nvars;
  tir_var_t **vars;
  tir_expr_t **var_plain;     /* per var: its constant value when its extent is 1 */
  tir_iter_sum_t *var_sum;    /* per var otherwise: split of its mark + min */
  tir_iter_mark_t **marks;    /* per var: its mark, NULL when trivial */
  im_fused_t *fused;
  int nfused, capfused;
  tir_iter_sum_t *constrained;/* flattened forms bounded by the predicate */
  int nconstrained, capconstrained;
  bool failed;
  char why[512];              /* the first failure */
} im_ctx_t;

/* A rewritten expression: either free of iterators (plain) or an iter sum. */
typedef struct {
  bool iter;
  tir_expr_t *plain;
  tir_iter_sum_t sum;
} im_val_t;

/* Records the first failure (later ones are consequences). Returns false. */
bool im_fail(im_ctx_t *c, const char *fmt, ...) MLC_PRINTF(2, 3);
/* Text of an expression / of a mark, for messages (in the arena). */
const char *im_str(im_ctx_t *c, const tir_expr_t *e);
const char *im_mark_str(im_ctx_t *c, const tir_iter_mark_t *m);

/* Factor arithmetic: constants folded directly, otherwise simplified. */
bool im_is_const(const tir_expr_t *e, int64_t v);
tir_expr_t *im_int(im_ctx_t *c, const tir_expr_t *like, int64_t v);
tir_expr_t *im_mul(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b);
tir_expr_t *im_add(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b);
tir_expr_t *im_sub(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b);
tir_expr_t *im_floordiv(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b);
bool im_equal(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b);
bool im_divisible(im_ctx_t *c, tir_expr_t *a, tir_expr_t *b);

tir_iter_split_t im_split_of_mark(im_ctx_t *c, tir_iter_mark_t *m, tir_expr_t *scale);
bool im_split_equal(im_ctx_t *c, const tir_iter_split_t *a, const tir_iter_split_t *b,
                    bool check_scale);
bool im_sum_equal(im_ctx_t *c, const tir_iter_sum_t *a, const tir_iter_sum_t *b);
/* A sum with room for n args (nargs = n, args uninitialised). */
tir_iter_sum_t im_sum_new(im_ctx_t *c, int n, tir_expr_t *base);
im_fused_t *im_fused_of_mark(im_ctx_t *c, const tir_iter_mark_t *m);

/* ---- iter_rewrite.c ---- */

im_val_t im_rewrite(im_ctx_t *c, tir_expr_t *e);
int im_var_index(const im_ctx_t *c, const tir_expr_t *v); /* -1 when not an iterator */
bool im_uses_iter(const im_ctx_t *c, tir_expr_t *e);

/* ---- iter_check.c ---- */

/* Whether the splits of every mark used by sums[0..n) tile it as `level`
 * demands; the bijective level also wants every iterator of extent > 1 used.
 * On failure and !quiet, im_fail says which iterator and why. */
bool im_check_mapping(im_ctx_t *c, const tir_iter_sum_t *sums, int n, tir_iter_check_t level, bool quiet);

/* ---- iter_fuse.c ---- */

/* Fuses sum into one split of a (new or known) fused mark plus base; with
 * allow_early_skip a sum that is already a single split after combining
 * splits of one source is returned as is. False (with im_fail) when the
 * scales do not line up. */
bool im_try_fuse(im_ctx_t *c, const tir_iter_sum_t *sum, bool allow_early_skip, tir_iter_sum_t *out);
/* Registers lb <= sum < ub (either bound may be NULL). */
bool im_add_constraint(im_ctx_t *c, tir_iter_sum_t sum, tir_expr_t *lb, tir_expr_t *ub);
/* Two constraints must be nested or disjoint (TVM's CheckConstraints). */
bool im_check_constraints(im_ctx_t *c);

#endif /* MLC_TIR_ARITH_ITER_MAP_H */
