/*
 * postproc.h - private to search/postproc/: what the postprocessors share.
 *
 * A postprocessor reads the current program (sch_func) to decide what to
 * do, then acts only through traced primitives, reaching blocks and loops
 * through recorded lookups (get_block by name, get_loops, get_child_blocks)
 * as MetaSchedule's postprocessors do, so the recorded trace replays to the
 * same program on a fresh schedule. This header has the program-side
 * analyses (blocks with their loops, a loop's iterator type) and the error
 * helpers that give every rejection the "Name: what" form of search.h.
 */
#ifndef MLC_SEARCH_POSTPROC_H
#define MLC_SEARCH_POSTPROC_H

#include "search/search.h"


/* The packing layout of RewriteLayout: axis `axis` of an ndim-dimensional
 * buffer in strips of w, moved innermost:
 *   (x0, ..., xa, ..., xn-1) -> (xa // w, x0, ..., xn-1 without xa, xa % w)
 * Variables and expressions in `a` (MLC_ENOMEM when it fails). */
int pp_strip_index_map(mlc_arena_t *a, int ndim, int axis, int64_t w, sch_index_map_t *map);

/* The postprocessors (one file each). */
extern const ms_postproc_t ms_postproc_disallow_dynamic_loop;
extern const ms_postproc_t ms_postproc_rewrite_parallel_vectorize_unroll;
extern const ms_postproc_t ms_postproc_rewrite_reduction_block;
extern const ms_postproc_t ms_postproc_rewrite_layout;
extern const ms_postproc_t ms_postproc_rewrite_tensorize;
/* GPU (docs/search/gpu.md). */
extern const ms_postproc_t ms_postproc_rewrite_cooperative_fetch;
extern const ms_postproc_t ms_postproc_rewrite_unbound_block;
extern const ms_postproc_t ms_postproc_verify_gpu_code;

/* A block of the current program with the loops between its enclosing
 * block and itself. Pointers are into the program (valid until the next
 * primitive) or the arena given to pp_collect_blocks. */
typedef struct {
  tir_stmt_t *realize;  /* its BLOCK_REALIZE */
  tir_block_t *block;
  tir_block_t *parent;  /* the enclosing block; NULL for the root */
  bool in_init;         /* inside some block's T.init() */
  int nloops;
  tir_stmt_t **loops;   /* outermost first */
} pp_block_t;

/* Every block of f in program order (pre-order: a block before the blocks
 * nested in it; a block's init before its body), the root first. Arrays in
 * `a`. MLC_OK or MLC_ENOMEM. */
int pp_collect_blocks(mlc_arena_t *a, const tir_func_t *f, pp_block_t **out, int *n);
/* The entry of `blocks` for the block with uid `uid`, or NULL. */
pp_block_t *pp_find_block(pp_block_t *blocks, int n, uint32_t uid);

/* TVM's GetLoopIterType: how the blocks directly under `loop` (the first
 * block met on each path, not the blocks nested in those) use its variable:
 * SPATIAL when only in data-parallel bindings (or nowhere), REDUCE when only
 * in reduction bindings, OPAQUE otherwise. */
tir_iter_type_t pp_loop_iter_type(const tir_stmt_t *loop);
/* A loop whose body is one statement (TVM's IsSingleStmt). */
bool pp_loop_single_child(const tir_stmt_t *loop);
/* The coefficient of v in e (0 when e does not use v), or PP_COEF_UNKNOWN
 * when v appears other than in a sum of constant multiples (under a
 * floordiv, a product of variables, a load...). */
#define PP_COEF_UNKNOWN INT64_MIN
int64_t pp_linear_coef(const tir_expr_t *e, const tir_var_t *v);
/* The annotation value of a block as an integer / a string (false if the
 * key is absent or of another kind). */
bool pp_block_ann_int(const tir_block_t *b, const char *key, int64_t *out);
bool pp_block_ann_str(const tir_block_t *b, const char *key, const char **out);

/* Rejections: MLC_ESCHEDULE with "<postproc>: <what>" in mlc_error_last();
 * pp_fail_sch appends ": <the failed primitive's error>". */
int pp_fail(const char *postproc, const char *fmt, ...) MLC_PRINTF(2, 3);
int pp_fail_sch(const char *postproc, const sch_t *sch, const char *fmt, ...) MLC_PRINTF(3, 4);

#endif /* MLC_SEARCH_POSTPROC_H */
