/*
 * unroll.h - lowering pass "unroll" (TVM's UnrollLoop): loops marked unrolled
 * are replicated, and under pragma_auto_unroll_max_step small loop nests too.
 */
#ifndef MLC_COMPILER_LOWER_UNROLL_H
#define MLC_COMPILER_LOWER_UNROLL_H

#include "compiler/compiler.h"

int mlc_pass_unroll(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);
/* The same decisions, but a loop it would copy is marked unroll instead,
 * with pragma_unroll_explicit = 1 kept on it (mlc_lower_options_t's
 * keep_unrolled_loops). */
int mlc_pass_unroll_mark(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
