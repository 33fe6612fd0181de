/*
 * cross_thread_reduce.h - lowering pass "lower-cross-thread-reduction"
 * (TVM's LowerCrossThreadReduction): a reduction whose loop is bound to
 * threadIdx.x becomes per-thread partial results and an allreduce the GPU
 * code generator emits with warp shuffles. A no-op on CPU targets.
 */
#ifndef MLC_COMPILER_LOWER_CROSS_THREAD_REDUCE_H
#define MLC_COMPILER_LOWER_CROSS_THREAD_REDUCE_H

#include "compiler/compiler.h"

int mlc_pass_lower_cross_thread_reduction(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
