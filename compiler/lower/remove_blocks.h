/*
 * remove_blocks.h - lowering pass "remove-blocks" (TVM's
 * ConvertBlocksToOpaque + LowerOpaqueBlock + LowerMatchBuffer): iter vars are
 * replaced by their bindings, predicates become ifs, allocations decl_buffer
 * statements, match buffers index arithmetic on their source; unit loops go.
 */
#ifndef MLC_COMPILER_LOWER_REMOVE_BLOCKS_H
#define MLC_COMPILER_LOWER_REMOVE_BLOCKS_H

#include "compiler/compiler.h"

int mlc_pass_remove_blocks(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
