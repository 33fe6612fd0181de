/*
 * plan_allocations.h - lowering pass "plan-allocations" (TVM's
 * PlanAndUpdateBufferAllocationLocation): every T.alloc_buffer moves to the
 * lowest common ancestor (block, or a new opaque block under a loop) of the
 * places that use it.
 */
#ifndef MLC_COMPILER_LOWER_PLAN_ALLOCATIONS_H
#define MLC_COMPILER_LOWER_PLAN_ALLOCATIONS_H

#include "compiler/compiler.h"

int mlc_pass_plan_allocations(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
