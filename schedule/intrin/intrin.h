/*
 * intrin.h - private to schedule/: what tensorize needs from the intrinsic
 * module besides the public registry (schedule.h): matching a block against
 * an intrinsic's description, and instantiating the implementation for the
 * buffers the match found.
 *
 * The registry (registry.c) holds each intrinsic as two parsed functions; the
 * built-in intrinsics are TVMScript texts (builtin_x86.c, builtin_cuda.c).
 * match.c is TVM's TensorizeComparator: a structural comparison up to
 * renaming of loop and iter variables, with buffer accesses compared after
 * subtracting each buffer's base (the minimums of its region in the block
 * being tensorized).
 */
#ifndef MLC_SCHEDULE_INTRIN_H
#define MLC_SCHEDULE_INTRIN_H

#include "schedule/state.h"

/* Most buffers an intrinsic may take (parameters of desc/impl). */
#define SCH_INTRIN_MAX_BUFFERS 16

/* The outcome of a successful match: for each desc parameter buffer, the
 * buffer of the program it stands for, and the base indices (one per
 * dimension of that buffer) where the intrinsic's tile starts. */
typedef struct {
  int nbuffers;                                  /* = desc->nparams */
  tir_buffer_t *cur[SCH_INTRIN_MAX_BUFFERS];     /* indexed like desc params */
  int nbase[SCH_INTRIN_MAX_BUFFERS];
  tir_expr_t **base[SCH_INTRIN_MAX_BUFFERS];
} sch_intrin_match_t;

/* Matches `realize` (the block to tensorize; its iter vars are free in the
 * comparison) against intrin->desc. On a mismatch returns false and writes a
 * short reason (no IR printing) to why. Expressions built go to `a`. */
bool sch_intrin_match(sch_intrin_match_t *m, mlc_arena_t *a, const tir_stmt_t *realize,
                      const sch_intrin_t *intrin, char *why, size_t why_len);

/* The block `realize` with its body replaced by a fresh copy of the impl's
 * body (new variables, buffers and block uids from sch), each impl parameter
 * buffer bound by T.match_buffer to its tile of the matched program buffer,
 * and the impl block's annotations added to the block's. */
tir_stmt_t *sch_intrin_instantiate(sch_t *sch, const tir_stmt_t *realize, const sch_intrin_t *intrin,
                                   const sch_intrin_match_t *m);

/* Registers the built-in intrinsics (called once, under the registry lock,
 * through `add`, which returns MLC_OK or an error). */
typedef int (*sch_intrin_add_fn)(const char *name, const char *desc, const char *impl);
int sch_intrin_register_x86(sch_intrin_add_fn add);
int sch_intrin_register_cuda(sch_intrin_add_fn add);

#endif /* MLC_SCHEDULE_INTRIN_H */
