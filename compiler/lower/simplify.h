/*
 * simplify.h - lowering pass "simplify": tir_simplify_stmt over the body, then
 * statements that do nothing are dropped.
 */
#ifndef MLC_COMPILER_LOWER_SIMPLIFY_H
#define MLC_COMPILER_LOWER_SIMPLIFY_H

#include "compiler/compiler.h"

int mlc_pass_simplify(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
