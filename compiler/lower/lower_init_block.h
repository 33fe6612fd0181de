/*
 * lower_init_block.h - lowering pass "lower-init-block" (TVM's LowerInitBlock):
 * a block's T.init() becomes `if vk == 0 and ...: init` at the start of its
 * body, guarded by the reduction iterators being at their minimum.
 */
#ifndef MLC_COMPILER_LOWER_LOWER_INIT_BLOCK_H
#define MLC_COMPILER_LOWER_LOWER_INIT_BLOCK_H

#include "compiler/compiler.h"

int mlc_pass_lower_init_block(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
