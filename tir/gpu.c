/*
 * gpu.c - what GPU code in TIR looks like, told once for every reader
 * (tir.h, "GPU constructs"): the thread a loop's binding tag names, and the
 * tensor-core calls (WMMA, and mma.sync in the warp layout) and their
 * fragment and warp buffers. The interpreter, the
 * lowering passes and the GPU code generator all classify these; before,
 * each kept its own copy of the names and the parsing.
 */
#include "tir/tir.h"

#include <string.h>

tir_thread_kind_t tir_thread_tag(const char *tag, int *dim) {
  static const struct {
    const char *prefix;
    tir_thread_kind_t kind;
  } tags[] = {{"blockIdx.", TIR_THREAD_BLOCK}, {"threadIdx.", TIR_THREAD_THREAD}, {"vthread.", TIR_THREAD_VTHREAD}};
  *dim = 0;
  if (!tag) return TIR_THREAD_NONE;
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
    size_t n = strlen(tags[i].prefix);
    if (strncmp(tag, tags[i].prefix, n) == 0 && tag[n] >= 'x' && tag[n] <= 'z' && !tag[n + 1]) {
      *dim = tag[n] - 'x';
      return tags[i].kind;
    }
  }
  return strcmp(tag, "vthread") == 0 ? TIR_THREAD_VTHREAD : TIR_THREAD_NONE;
}

static const char *const wmma_names[] = {"tvm_fill_fragment", "tvm_load_matrix_sync", "tvm_mma_sync",
                                         "tvm_store_matrix_sync"};

/* The extern call's name, or NULL when e is no call_extern of a name. */
static const char *extern_name(const tir_expr_t *e) {
  if (e->kind != TIR_CALL || (e->u.call.op != TIR_OP_CALL_EXTERN && e->u.call.op != TIR_OP_CALL_PURE_EXTERN) ||
      e->u.call.nargs < 1 || e->u.call.args[0]->kind != TIR_STRING_IMM)
    return NULL;
  return e->u.call.args[0]->u.str_value;
}

/* The index in names[n] of e's extern call, or -1. */
static int extern_index(const tir_expr_t *e, const char *const *names, int n) {
  const char *name = extern_name(e);
  for (int i = 0; name && i < n; i++)
    if (strcmp(name, names[i]) == 0) return i;
  return -1;
}

tir_wmma_op_t tir_wmma_op(const tir_expr_t *e) {
  int i = extern_index(e, wmma_names, 4);
  return i < 0 ? TIR_WMMA_NONE : (tir_wmma_op_t)i;
}

const char *tir_wmma_name(tir_wmma_op_t op) { return op == TIR_WMMA_NONE ? "(none)" : wmma_names[op]; }

bool tir_wmma_is_fragment(const tir_buffer_t *b) { return b->scope && strncmp(b->scope, "wmma.", 5) == 0; }

static const char *const ptx_names[] = {"ptx_ldmatrix_x4", "ptx_ldmatrix_x2", "ptx_mma_m16n8k16_row_col_f16f16f32"};

tir_ptx_op_t tir_ptx_op(const tir_expr_t *e) {
  int i = extern_index(e, ptx_names, 3);
  return i < 0 ? TIR_PTX_NONE : (tir_ptx_op_t)i;
}

const char *tir_ptx_name(tir_ptx_op_t op) { return op == TIR_PTX_NONE ? "(none)" : ptx_names[op]; }

bool tir_is_warp_buffer(const tir_buffer_t *b) { return b->scope && strcmp(b->scope, "warp") == 0; }
