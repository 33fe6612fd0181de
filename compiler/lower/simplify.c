/*
 * simplify.c - the "simplify" pass: every expression through the arithmetic
 * simplifier with what the enclosing loops, lets and ifs say about the
 * variables (tir_simplify_stmt), then statements that do nothing removed,
 * as TVM's Simplify + RemoveNoOp leave lowered code: an `if` whose condition
 * folded and had no else, a loop or allocation around nothing, a
 * T.evaluate of a constant inside a sequence.
 *
 * This is where the index arithmetic the earlier passes wrote plainly
 * (`(i_0 * 4 + i_1 - i_0 * 4) * 16 + j`) gets its canonical form.
 */
#include "compiler/lower/simplify.h"

#include "compiler/lower/lower_util.h"

static bool is_noop(const tir_stmt_t *s) {
  if (!s) return true;
  if (s->kind == TIR_SEQ) return s->u.seq.n == 0;
  if (s->kind != TIR_EVALUATE) return false;
  tir_expr_kind_t k = s->u.evaluate.value->kind;
  return k == TIR_INT_IMM || k == TIR_FLOAT_IMM || k == TIR_STRING_IMM;
}

static tir_stmt_t *noop_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  tir_stmt_t *r = tir_mutate_stmt_children(m, s);
  switch (r->kind) {
  case TIR_SEQ: { /* drop no-ops between the statements that do something */
    int n = 0;
    tir_stmt_t **xs = mlc_arena_alloc(m->arena, sizeof(*xs) * (size_t)(r->u.seq.n > 0 ? r->u.seq.n : 1));
    for (int i = 0; i < r->u.seq.n; i++)
      if (!is_noop(r->u.seq.stmts[i])) xs[n++] = r->u.seq.stmts[i];
    if (n == r->u.seq.n) return r;
    return n ? tir_seq(m->arena, xs, n) : tir_evaluate(m->arena, tir_i32(m->arena, 0));
  }
  case TIR_FOR: return is_noop(r->u.loop.body) ? r->u.loop.body : r;
  case TIR_ALLOCATE: return is_noop(r->u.allocate.body) ? r->u.allocate.body : r;
  case TIR_IF:
    if (is_noop(r->u.if_.then_case) && is_noop(r->u.if_.else_case)) return r->u.if_.then_case;
    return r;
  default: return r;
  }
}

static int run(tir_func_t *f) {
  tir_analyzer_t *an = tir_analyzer_new(f->arena);
  tir_stmt_t *body = tir_simplify_stmt(an, f->body);
  tir_mutator_t m = {.arena = f->arena, .stmt = noop_stmt};
  f->body = tir_mutate_stmt(&m, body);
  return MLC_OK;
}

int mlc_pass_simplify(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f));
  return rc;
}
