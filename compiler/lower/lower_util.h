/*
 * lower_util.h - private to compiler/lower: what several lowering passes
 * share. An out-of-memory guard for pass entry points, notes, index
 * arithmetic that folds the trivial cases (so a pass's output reads like
 * TVM's before the simplify pass runs), buffer strides and sizes, the init
 * statement of a block, and a copy of a statement with fresh definitions
 * (unrolled bodies must not define one variable twice).
 *
 * Passes allocate only in the function's arena, so an out-of-memory longjmp
 * leaks nothing: LOWER_GUARDED runs a pass body with the arena's handler set
 * and turns the jump into MLC_ENOMEM.
 */
#ifndef MLC_COMPILER_LOWER_UTIL_H
#define MLC_COMPILER_LOWER_UTIL_H

#include <setjmp.h>

#include "compiler/compiler.h"

/* rc = call, run with `arena`'s out-of-memory handler set; MLC_ENOMEM when
 * an allocation failed. The call must allocate only in `arena`. */
#define LOWER_GUARDED(rc, arena, call)                                          \
  do {                                                                          \
    jmp_buf lower_oom_;                                                         \
    jmp_buf *lower_prev_ = mlc_arena_set_oom_handler((arena), &lower_oom_);     \
    if (setjmp(lower_oom_) == 0)                                                \
      (rc) = (call);                                                            \
    else                                                                        \
      (rc) = mlc_error_set(MLC_ENOMEM, "out of memory while lowering");        \
    mlc_arena_set_oom_handler((arena), lower_prev_);                            \
  } while (0)

/* Appends "<pass>: <message>\n" to notes (NULL: nothing). */
void lower_note(mlc_strbuf_t *notes, const char *pass, const char *fmt, ...) MLC_PRINTF(3, 4);

/* Integer arithmetic that folds constants and the identities x + 0, x * 1,
 * x * 0; operands of different integer widths are widened to the wider. */
tir_expr_t *lower_add(mlc_arena_t *a, tir_expr_t *x, tir_expr_t *y);
tir_expr_t *lower_sub(mlc_arena_t *a, tir_expr_t *x, tir_expr_t *y);
tir_expr_t *lower_mul(mlc_arena_t *a, tir_expr_t *x, tir_expr_t *y);
/* x cast to t unless it already has dtype t (integer constants are rebuilt). */
tir_expr_t *lower_cast_int(mlc_arena_t *a, tir_dtype_t t, tir_expr_t *x);

/* The stride of every dimension of b (its strides, or compact row-major
 * products of its shape) into out[b->ndim]. */
void lower_buffer_strides(mlc_arena_t *a, const tir_buffer_t *b, tir_expr_t **out);
/* Elements b's storage spans: elem_offset + 1 + sum((shape_d - 1) * stride_d)
 * (the product of the shape when compact); folded when constant. */
tir_expr_t *lower_buffer_span(mlc_arena_t *a, const tir_buffer_t *b);
/* A 1-D buffer over b's storage (same data var, dtype, scope, align) of
 * `size` elements. */
tir_buffer_t *lower_flat_buffer(mlc_arena_t *a, const tir_buffer_t *b, tir_expr_t *size);

/* The block's init as lowered TIR runs it (TVM's LowerInitBlock): guarded by
 * `vk == min and ...` over the reduction iter vars, unguarded when there is
 * none. NULL when the block has no init. */
tir_stmt_t *lower_guarded_init(mlc_arena_t *a, const tir_block_t *b);

/* A copy of s in which every definition (loop and let variables, allocated
 * buffers and their data variables) is fresh; `map` holds the substitutions
 * to apply (e.g. an unrolled loop variable) and receives the renamings. */
tir_stmt_t *lower_copy_fresh(mlc_arena_t *a, tir_stmt_t *s, tir_var_map_t *map);

/* The constant value of e when it is an integer immediate, else -1. */
int64_t lower_const_or_neg(const tir_expr_t *e);

/* True when e (or s) reads or writes b, or mentions b's data variable. */
bool lower_expr_touches(tir_expr_t *e, const tir_buffer_t *b);
bool lower_stmt_touches(tir_stmt_t *s, const tir_buffer_t *b);

#endif /* MLC_COMPILER_LOWER_UTIL_H */
