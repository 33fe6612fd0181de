/*
 * storage_rewrite.h - lowering pass "storage-rewrite" (TVM's StorageRewrite,
 * simplified): allocations of one scope and dtype whose live ranges in one
 * statement list do not overlap share one buffer.
 */
#ifndef MLC_COMPILER_LOWER_STORAGE_REWRITE_H
#define MLC_COMPILER_LOWER_STORAGE_REWRITE_H

#include "compiler/compiler.h"

int mlc_pass_storage_rewrite(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes);

#endif
