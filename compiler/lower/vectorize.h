/*
 * vectorize.h - lowering pass "vectorize" (TVM's VectorizeLoop): loops marked
 * vectorized become vector operations (ramps, broadcasts, lanes = extent); a
 * loop that cannot becomes serial with a note saying why.
 */
#ifndef MLC_COMPILER_LOWER_VECTORIZE_H
#define MLC_COMPILER_LOWER_VECTORIZE_H

#include "compiler/compiler.h"

int mlc_pass_vectorize(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
