/*
 * analysis.h - the analyses schedule primitives check their preconditions
 * with (TVM's src/tir/schedule/analysis): block kinds, affine bindings, loop
 * chains, producer/consumer dependences and regions. Private to schedule/.
 *
 * All functions take the block as a path (state.h) ending at its
 * BLOCK_REALIZE, so the scope (the enclosing block) and the loops in between
 * are at hand. Checks return MLC_OK or fail through sch_fail with the
 * primitive's name and the violated condition.
 */
#ifndef MLC_SCHEDULE_ANALYSIS_H
#define MLC_SCHEDULE_ANALYSIS_H

#include "schedule/state.h"

/* The BLOCK_REALIZE statements directly under `root` (not inside nested
 * blocks), in program order. Returns the count (at most cap written). */
int sch_child_blocks(tir_stmt_t *root, tir_stmt_t **out, int cap);

/* A complete block (TVM): every iter var spatial, the block is the only
 * writer of its written buffers in the scope, and it does not read what it
 * writes. A reduction block: spatial and reduce iter vars only, has init,
 * writes not read except by the reduction update itself, writes indexed by
 * spatial vars only. */
bool sch_is_complete_block(const sch_path_t *block_path);
bool sch_is_reduction_block(sch_t *sch, const sch_path_t *block_path);
int sch_check_complete_or_reduction(sch_t *sch, const char *prim, const sch_path_t *block_path);

/* TVM's compact dataflow of the subtree at path->stmts[depth] (a loop or a
 * block): each of its child blocks is complete or a reduction block, with
 * dominance judged among those child blocks. parallel/vectorize/bind need it. */
int sch_check_compact_dataflow(sch_t *sch, const char *prim, const sch_path_t *path, int depth);

/* The block's bindings are quasi-affine maps of the loops between its scope
 * and itself (tir_detect_iter_map, surjective, under the predicate). A
 * positive answer is remembered by the schedule while the block's realize
 * and those loops stay the same nodes (sch_affine_entry_t, state.h). */
bool sch_has_affine_binding(sch_t *sch, const sch_path_t *block_path);
int sch_check_affine_binding(sch_t *sch, const char *prim, const sch_path_t *block_path);

/* The loops at depths [from, to] form a chain where each loop's body is the
 * next loop directly (no siblings). */
int sch_check_single_child_chain(sch_t *sch, const char *prim, const sch_path_t *path, int from, int to);

/* How the blocks directly under a loop bind its variable (TVM's
 * GetLoopIterType, without its look at the loop's kind): DATA_PAR (only
 * spatial iter vars, or none), REDUCE, or OTHER (mixed, scan, opaque).
 * Blocks nested in those blocks are not looked at. */
typedef enum { SCH_LOOP_DATA_PAR, SCH_LOOP_REDUCE, SCH_LOOP_OTHER } sch_loop_type_t;
sch_loop_type_t sch_loop_binding_type(tir_stmt_t *loop);

/* Producers (blocks of the same scope, before this one, that write a buffer
 * this block reads or writes: TVM's RAW and WAW edges) and consumers (after
 * it, reading or writing a buffer it writes), in program order. Arrays in
 * the schedule's arena. Fails for the root block (no scope). */
int sch_block_producers(sch_t *sch, const sch_path_t *block_path, tir_stmt_t ***out, int *n);
int sch_block_consumers(sch_t *sch, const sch_path_t *block_path, tir_stmt_t ***out, int *n);

/* The region of buffer accesses `region` of the block at block_path, after
 * substituting the block's bindings and relaxing every loop below depth
 * `above` (exclusive) over its range: what one iteration of the loop at
 * `above` touches (above -1: every loop relaxed). A block predicate that
 * bounds a fused iterator (a split by a non-dividing factor) bounds the
 * region too, as TVM's EstimateRegionUpperBound does. Results in the
 * schedule's arena. MLC_OK, or tir_relax_range's MLC_EUNSUPPORTED (detail in
 * mlc_error_last, the schedule's error untouched) when a bound cannot be
 * derived; the caller turns that into its own error. */
int sch_relax_region(sch_t *sch, const sch_path_t *block_path, int above, const tir_region_t *region,
                     tir_range_t *out);

/* TVM's EstimateRegionUpperBound for one range under a block's predicate:
 * when the predicate bounds a fused iterator of the relaxed vars (a split
 * by a factor that does not divide the extent, `i_0 * 3 + i_1 < 16`), the
 * iteration map of r's min knows that iterator's true extent (16), where
 * interval relaxation sees the product of the loops (18). false when no map
 * applies (the predicate does not bound the relaxed vars used, r's extent
 * is not constant): the caller relaxes plainly. */
bool sch_relax_range_with_predicate(tir_analyzer_t *an, mlc_arena_t *a, const tir_range_t *r, tir_expr_t *pred,
                                    tir_var_t **vars, const tir_range_t *doms, int n, tir_range_t *out);

/* The coefficient of each of vars in e (coef[i] for vars[i], 0 when absent)
 * when e is a sum of constant multiples of them and terms free of them;
 * false otherwise. */
bool sch_linear_coefs(tir_expr_t *e, tir_var_t **vars, int n, int64_t *coef);

/* tir_relax_range's fast path for the common index, a sum of constant
 * multiples of relaxed vars (constant ranges) and terms free of them, with
 * a constant extent: the same simplified min and extent, found by putting
 * each var at the end of its range that minimizes the sum. false when r is
 * not of that form (call tir_relax_range). */
bool sch_relax_linear(tir_analyzer_t *an, mlc_arena_t *a, const tir_range_t *r, tir_var_t **vars,
                      const tir_range_t *doms, int n, tir_range_t *out);

#endif /* MLC_SCHEDULE_ANALYSIS_H */
