/*
 * compact_buffers.h - lowering pass "compact-buffers" (TVM's
 * CompactBufferAllocation): each allocation shrinks to the region its uses
 * touch, indices shifted by the region's minimum; storage_align pads strides.
 */
#ifndef MLC_COMPILER_LOWER_COMPACT_BUFFERS_H
#define MLC_COMPILER_LOWER_COMPACT_BUFFERS_H

#include "compiler/compiler.h"

int mlc_pass_compact_buffers(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
