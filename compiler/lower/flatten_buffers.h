/*
 * flatten_buffers.h - lowering pass "flatten-buffers" (TVM's FlattenBuffer):
 * every access becomes 1-D (strides and elem_offset folded into the index),
 * parameters through flat views sharing their data variable.
 */
#ifndef MLC_COMPILER_LOWER_FLATTEN_BUFFERS_H
#define MLC_COMPILER_LOWER_FLATTEN_BUFFERS_H

#include "compiler/compiler.h"

int mlc_pass_flatten_buffers(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
