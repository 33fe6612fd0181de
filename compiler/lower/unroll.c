/*
 * unroll.c - the "unroll" pass (TVM's UnrollLoop).
 *
 * Explicit: a loop of kind unroll with a constant extent of at most 64 is
 * replaced by that many copies of its body, the loop variable replaced by
 * min + 0, min + 1, ... (each copy after the first gets fresh definitions of
 * the loops, lets and allocations inside it, so no variable is defined
 * twice). A larger or symbolic extent keeps a serial loop and a note.
 *
 * Automatic, TVM's meaning: under a loop annotated
 * `pragma_auto_unroll_max_step = S` (MetaSchedule's unroll decision; also
 * read from `T.attr(0, "pragma_auto_unroll_max_step", S)` left by a block
 * annotation), walking bottom-up, a serial loop of constant extent n whose
 * body has no serial loop left and at most 8 levels of unrolled loops is
 * unrolled when n times the number of statements (stores and evaluations,
 * counted after inner unrolling) is at most S. `pragma_unroll_explicit = 0`
 * asks for the loop to be marked unroll (left to LLVM) instead of copied.
 * The pragma annotations are consumed.
 *
 * Marking only (mlc_pass_unroll_mark, for the search's features): the same
 * decisions, but a loop whose body would be copied becomes a loop of kind
 * unroll carrying pragma_unroll_explicit = 1, so its program differs from
 * one left to LLVM, and the body stays one copy.
 */
#include "compiler/lower/unroll.h"

#include <string.h>

#include "compiler/lower/lower_util.h"

#define MAX_EXPLICIT_EXTENT 64 /* the brief's limit for loops marked unroll */
#define AUTO_MAX_DEPTH 8       /* TVM's auto_max_depth */

static const char max_step_key[] = "pragma_auto_unroll_max_step";
static const char explicit_key[] = "pragma_unroll_explicit";

typedef struct {
  mlc_strbuf_t *notes;
  int64_t auto_max_step;
  bool explicit_unroll;
  int64_t step_count;
  int unroll_depth, normal_loop_depth;
  bool mark_only;
} ur_t;

static int64_t sat_mul(int64_t x, int64_t y) {
  if (x == 0 || y == 0) return 0;
  return x > INT64_MAX / y ? INT64_MAX : x * y;
}

/* The loop without the pragmas this pass consumes. */
static tir_stmt_t *strip_pragmas(mlc_arena_t *a, tir_stmt_t *r) {
  int n = 0;
  tir_annot_t *annots = mlc_arena_alloc(a, sizeof(*annots) * (size_t)(r->u.loop.nannots + 1));
  for (int i = 0; i < r->u.loop.nannots; i++) {
    const char *key = r->u.loop.annots[i].key;
    if (strcmp(key, max_step_key) != 0 && strcmp(key, explicit_key) != 0) annots[n++] = r->u.loop.annots[i];
  }
  if (n == r->u.loop.nannots) return r;
  r = tir_stmt_copy(a, r);
  r->u.loop.annots = n ? annots : NULL;
  r->u.loop.nannots = n;
  return r;
}

static void apply_pragma(ur_t *u, const char *key, const tir_expr_t *value) {
  int64_t v;
  if (!tir_as_int(value, &v)) return;
  if (strcmp(key, max_step_key) == 0) u->auto_max_step = v;
  else if (strcmp(key, explicit_key) == 0) u->explicit_unroll = v != 0;
}

/* extent copies of body with var = min + k. */
static tir_stmt_t *replicate(mlc_arena_t *a, tir_stmt_t *loop, int64_t extent) {
  if (extent == 0) return tir_evaluate(a, tir_i32(a, 0));
  tir_stmt_t **copies = mlc_arena_alloc(a, sizeof(*copies) * (size_t)extent);
  tir_var_t *var = loop->u.loop.var;
  for (int64_t k = 0; k < extent; k++) {
    tir_var_map_t map = {0};
    tir_var_map_set(a, &map, var, lower_add(a, loop->u.loop.min, tir_int(a, var->dtype, k)));
    copies[k] = k == 0 ? tir_substitute_stmt(a, loop->u.loop.body, &map) : lower_copy_fresh(a, loop->u.loop.body, &map);
  }
  return tir_seq(a, copies, (int)extent);
}

/* The loop as kind unroll with pragma_unroll_explicit = 1 (marking only). */
static tir_stmt_t *mark_explicit(mlc_arena_t *a, tir_stmt_t *r) {
  tir_annot_t *annots = mlc_arena_alloc(a, sizeof(*annots) * (size_t)(r->u.loop.nannots + 1));
  for (int i = 0; i < r->u.loop.nannots; i++) annots[i] = r->u.loop.annots[i];
  annots[r->u.loop.nannots] = (tir_annot_t){.key = explicit_key, .value = tir_i32(a, 1)};
  r = tir_stmt_copy(a, r);
  r->u.loop.kind = TIR_FOR_UNROLLED;
  r->u.loop.annots = annots;
  r->u.loop.nannots++;
  return r;
}

/* TVM's decision for one loop, after its body was visited. */
static bool decide(ur_t *u, const tir_stmt_t *r, int64_t extent) {
  bool auto_unroll = r->u.loop.kind == TIR_FOR_SERIAL && extent >= 0 && u->normal_loop_depth == 0 &&
                     u->unroll_depth <= AUTO_MAX_DEPTH && sat_mul(extent, u->step_count) <= u->auto_max_step;
  if (r->u.loop.kind != TIR_FOR_UNROLLED) return auto_unroll;
  const char *name = r->u.loop.var->u.var.name;
  if (extent >= 0 && extent <= MAX_EXPLICIT_EXTENT) return true;
  if (extent < 0)
    lower_note(u->notes, "unroll", "loop %s kept serial: its extent is not a constant", name);
  else
    lower_note(u->notes, "unroll", "loop %s kept serial: its extent %lld is more than %d", name, (long long)extent,
               MAX_EXPLICIT_EXTENT);
  return false;
}

static tir_stmt_t *unroll_loop(tir_mutator_t *m, tir_stmt_t *s) {
  ur_t *u = m->payload;
  int64_t saved_step = u->auto_max_step;
  bool saved_explicit = u->explicit_unroll;
  for (int i = 0; i < s->u.loop.nannots; i++) apply_pragma(u, s->u.loop.annots[i].key, s->u.loop.annots[i].value);
  tir_stmt_t *r = strip_pragmas(m->arena, tir_mutate_stmt_children(m, s));
  int64_t extent = lower_const_or_neg(r->u.loop.extent);
  bool auto_unroll = decide(u, r, extent);
  bool explicit_unroll = u->explicit_unroll;
  u->auto_max_step = saved_step;
  u->explicit_unroll = saved_explicit;
  if (auto_unroll) {
    u->step_count = sat_mul(u->step_count, extent);
    u->unroll_depth++;
  } else {
    u->normal_loop_depth++;
  }
  if (auto_unroll && explicit_unroll && !u->mark_only) return replicate(m->arena, r, extent);
  if (auto_unroll && explicit_unroll) return mark_explicit(m->arena, r);
  if (auto_unroll == (r->u.loop.kind == TIR_FOR_UNROLLED)) return r;
  r = tir_stmt_copy(m->arena, r);
  r->u.loop.kind = auto_unroll ? TIR_FOR_UNROLLED : TIR_FOR_SERIAL;
  return r;
}

/* Each statement of a sequence is counted from zero; the sequence's count
 * is the sum, its depths the maxima (TVM's VisitStmt_(SeqStmtNode)). */
static tir_stmt_t *unroll_seq(tir_mutator_t *m, tir_stmt_t *s) {
  ur_t *u = m->payload;
  tir_stmt_t **xs = mlc_arena_alloc(m->arena, sizeof(*xs) * (size_t)(s->u.seq.n > 0 ? s->u.seq.n : 1));
  bool changed = false;
  for (int i = 0; i < s->u.seq.n; i++) {
    int64_t step = u->step_count;
    int unroll_depth = u->unroll_depth, normal_depth = u->normal_loop_depth;
    u->step_count = 0;
    u->unroll_depth = u->normal_loop_depth = 0;
    xs[i] = tir_mutate_stmt(m, s->u.seq.stmts[i]);
    changed |= xs[i] != s->u.seq.stmts[i];
    u->step_count = u->step_count > INT64_MAX - step ? INT64_MAX : u->step_count + step;
    if (normal_depth > u->normal_loop_depth) u->normal_loop_depth = normal_depth;
    if (unroll_depth > u->unroll_depth) u->unroll_depth = unroll_depth;
  }
  return changed ? tir_seq(m->arena, xs, s->u.seq.n) : s;
}

static tir_stmt_t *unroll_stmt(tir_mutator_t *m, tir_stmt_t *s) {
  ur_t *u = m->payload;
  switch (s->kind) {
  case TIR_FOR: return unroll_loop(m, s);
  case TIR_SEQ: return unroll_seq(m, s);
  case TIR_BUFFER_STORE:
  case TIR_EVALUATE: u->step_count++; return tir_mutate_stmt_children(m, s);
  case TIR_ATTR:
    if (strcmp(s->u.attr.key, max_step_key) == 0 || strcmp(s->u.attr.key, explicit_key) == 0) {
      int64_t saved_step = u->auto_max_step;
      bool saved_explicit = u->explicit_unroll;
      apply_pragma(u, s->u.attr.key, s->u.attr.value);
      tir_stmt_t *r = tir_mutate_stmt(m, s->u.attr.body);
      u->auto_max_step = saved_step;
      u->explicit_unroll = saved_explicit;
      return r;
    }
    return tir_mutate_stmt_children(m, s);
  default: return tir_mutate_stmt_children(m, s);
  }
}

static int run(tir_func_t *f, mlc_strbuf_t *notes, bool mark_only) {
  ur_t u = {notes, 0, true, 0, 0, 0, mark_only};
  tir_mutator_t m = {.arena = f->arena, .stmt = unroll_stmt, .payload = &u};
  f->body = tir_mutate_stmt(&m, f->body);
  return MLC_OK;
}

int mlc_pass_unroll(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f, notes, false));
  return rc;
}

int mlc_pass_unroll_mark(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f, notes, true));
  return rc;
}
