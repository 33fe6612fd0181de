/*
 * lower_init_block.c - the "lower-init-block" pass (TVM's LowerInitBlock).
 *
 * A reduction block's T.init() runs when every reduction iterator is at its
 * domain minimum; after this pass that rule is spelled out in the block's
 * body, `if vk == 0: C[vi, vj] = 0` followed by the update, so the blocks
 * that remove-blocks dissolves later carry no special init semantics. A block
 * without reduction iterators runs its init every time, unguarded (as the
 * interpreter and TVM do).
 */
#include "compiler/lower/lower_init_block.h"

#include "compiler/lower/lower_util.h"

static tir_stmt_t *init_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  tir_stmt_t *r = tir_mutate_stmt_children(m, s);
  if (r->kind != TIR_BLOCK_REALIZE || !r->u.realize.block->init) return r;
  tir_block_t *b = tir_block_copy(m->arena, r->u.realize.block);
  tir_stmt_t *parts[2] = {lower_guarded_init(m->arena, b), b->body};
  b->body = tir_seq(m->arena, parts, 2);
  b->init = NULL;
  r = tir_stmt_copy(m->arena, r);
  r->u.realize.block = b;
  return r;
}

static int run(tir_func_t *f) {
  tir_mutator_t m = {.arena = f->arena, .stmt = init_stmt};
  f->body = tir_mutate_stmt(&m, f->body);
  return MLC_OK;
}

int mlc_pass_lower_init_block(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f));
  return rc;
}
