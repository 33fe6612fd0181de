/*
 * simplify_stmt.c - tir_simplify_stmt: simplifies every expression of a
 * statement with what the enclosing scopes say about variables.
 *
 * A small mutator (visit.c) whose statement hook binds variables before the
 * default walk reaches the body: loop variables to their ranges, block iter
 * vars to their domains, let variables to their values' bounds. An `if`
 * assumes its condition in the then branch and its negation in the else
 * branch, and collapses when the condition folds to a constant. Loops are kept
 * even when their extent is 1: removing them is lowering's business.
 */
#include "tir/arith/arith_internal.h"

static tir_expr_t *simplify_hook(tir_mutator_t *m, tir_expr_t *e) {
  return arith_simplify(m->payload, e);
}

static tir_stmt_t *mutate_if(tir_mutator_t *m, tir_stmt_t *s) {
  tir_analyzer_t *an = m->payload;
  tir_expr_t *cond = arith_simplify(an, s->u.if_.cond);
  bool v;
  if (arith_as_bool(cond, &v)) {
    tir_stmt_t *branch = v ? s->u.if_.then_case : s->u.if_.else_case;
    if (branch) return tir_mutate_stmt(m, branch);
    return tir_evaluate(m->arena, tir_i32(m->arena, 0));
  }
  int mark = tir_analyzer_push_constraint(an, cond);
  tir_stmt_t *then_case = tir_mutate_stmt(m, s->u.if_.then_case);
  tir_analyzer_pop_constraint(an, mark);
  tir_stmt_t *else_case = NULL;
  if (s->u.if_.else_case) {
    tir_expr_t *neg = tir_not(m->arena, cond);
    mark = tir_analyzer_push_constraint(an, neg);
    else_case = tir_mutate_stmt(m, s->u.if_.else_case);
    tir_analyzer_pop_constraint(an, mark);
  }
  if (cond == s->u.if_.cond && then_case == s->u.if_.then_case && else_case == s->u.if_.else_case)
    return s;
  return tir_if(m->arena, cond, then_case, else_case);
}

static void bind_block_iters(tir_analyzer_t *an, tir_block_t *b) {
  for (int i = 0; i < b->niter_vars; i++)
    tir_analyzer_bind(an, b->iter_vars[i].var, b->iter_vars[i].dom.min, b->iter_vars[i].dom.extent);
}

static tir_stmt_t *stmt_hook(tir_mutator_t *m, tir_stmt_t *s) {
  tir_analyzer_t *an = m->payload;
  switch (s->kind) {
  case TIR_FOR:
    tir_analyzer_bind(an, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
    break;
  case TIR_BLOCK_REALIZE: bind_block_iters(an, s->u.realize.block); break;
  case TIR_LET:
    if (arith_is_int_scalar(s->u.let.var->dtype) && tir_dtype_eq(s->u.let.var->dtype, s->u.let.value->dtype))
      tir_analyzer_bind(an, s->u.let.var, s->u.let.value, tir_int(m->arena, s->u.let.value->dtype, 1));
    break;
  case TIR_IF: return mutate_if(m, s);
  default: break;
  }
  return tir_mutate_stmt_children(m, s);
}

tir_stmt_t *tir_simplify_stmt(tir_analyzer_t *an, tir_stmt_t *s) {
  if (!an || !s) return s;
  tir_mutator_t m = {.arena = an->arena, .expr = simplify_hook, .stmt = stmt_hook, .payload = an};
  jmp_buf jb;
  jmp_buf *prev = mlc_arena_set_oom_handler(an->arena, &jb);
  if (prev) {
    mlc_arena_set_oom_handler(an->arena, prev);
    return tir_mutate_stmt(&m, s);
  }
  int depth = an->depth, nsaved = an->nsaved;
  if (setjmp(jb)) { /* out of memory: the input is still a valid answer */
    mlc_arena_set_oom_handler(an->arena, NULL);
    an->depth = depth;
    tir_analyzer_pop_constraint(an, nsaved);
    return s;
  }
  tir_stmt_t *r = tir_mutate_stmt(&m, s);
  mlc_arena_set_oom_handler(an->arena, NULL);
  return r;
}
