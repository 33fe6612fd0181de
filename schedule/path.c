/*
 * path.c - how primitives reach and rewrite the program: paths from the
 * function body down to a loop or block, and copy-on-write replacement up
 * such a path (state.h).
 *
 * A lookup walks the tree (the programs are small: a few dozen loops), so no
 * index has to be kept in sync with rewrites. A replacement copies only the
 * statements on the path; every other subtree stays shared with the previous
 * version of the program, and uids travel with the copies.
 */
#include "schedule/state.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Finding                                                                   */
/* ------------------------------------------------------------------------ */

typedef bool (*match_fn)(const tir_stmt_t *s, const void *key);

/* The children of s through which a path may continue, in program order. */
static int stmt_children(tir_stmt_t *s, tir_stmt_t **out) {
  switch (s->kind) {
  case TIR_LET: out[0] = s->u.let.body; return 1;
  case TIR_ATTR: out[0] = s->u.attr.body; return 1;
  case TIR_ASSERT: out[0] = s->u.assert_.body; return 1;
  case TIR_FOR: out[0] = s->u.loop.body; return 1;
  case TIR_ALLOCATE: out[0] = s->u.allocate.body; return 1;
  case TIR_IF:
    out[0] = s->u.if_.then_case;
    out[1] = s->u.if_.else_case;
    return out[1] ? 2 : 1;
  case TIR_BLOCK_REALIZE:
    out[0] = s->u.realize.block->init;
    out[1] = s->u.realize.block->body;
    return 2;
  default: return 0;
  }
}

/* Depth-first search for the first statement matching key; on success the
 * path holds it and its ancestors. */
static bool find_rec(tir_stmt_t *s, match_fn match, const void *key, sch_path_t *path) {
  if (!s || path->n >= SCH_MAX_DEPTH) return false;
  path->stmts[path->n++] = s;
  if (match(s, key)) return true;
  if (s->kind == TIR_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++)
      if (find_rec(s->u.seq.stmts[i], match, key, path)) return true;
  } else {
    tir_stmt_t *kids[2];
    int n = stmt_children(s, kids);
    for (int i = 0; i < n; i++)
      if (find_rec(kids[i], match, key, path)) return true;
  }
  path->n--;
  return false;
}

static bool match_uid(const tir_stmt_t *s, const void *key) {
  uint32_t uid = *(const uint32_t *)key;
  if (s->kind == TIR_FOR) return s->u.loop.uid == uid;
  if (s->kind == TIR_BLOCK_REALIZE) return s->u.realize.block->uid == uid;
  return false;
}

static bool match_name(const tir_stmt_t *s, const void *key) {
  return s->kind == TIR_BLOCK_REALIZE && strcmp(s->u.realize.block->name, key) == 0;
}

bool sch_find_uid(const sch_t *sch, uint32_t uid, sch_path_t *path) {
  path->n = 0;
  return uid != 0 && find_rec(sch->func->body, match_uid, &uid, path);
}

bool sch_find_block_by_name(const sch_t *sch, const char *name, sch_path_t *path) {
  path->n = 0;
  return find_rec(sch->func->body, match_name, name, path);
}

static const char *rv_kind_word(sch_rv_kind_t kind) {
  return kind == SCH_RV_BLOCK ? "block" : kind == SCH_RV_LOOP ? "loop" : "expression";
}

/* Shared by the three finders: `want` is BLOCK, LOOP, or -1 for either. */
static int find_rv(sch_t *sch, const char *prim, sch_rv_t rv, int want, sch_path_t *path) {
  path->n = 0;
  if (!sch_rv_valid(sch, rv))
    return sch_fail(sch, prim, "random variable %d is not defined", (int)rv);
  const sch_rv_entry_t *e = &sch->rvs[rv];
  bool kind_ok = want < 0 ? e->kind != SCH_RV_EXPR : (int)e->kind == want;
  if (!kind_ok)
    return sch_fail(sch, prim, "random variable %d is a %s variable, expected a %s", (int)rv,
                    rv_kind_word(e->kind), want < 0 ? "block or loop" : rv_kind_word((sch_rv_kind_t)want));
  if (e->kind == SCH_RV_LOOP && (e->uid == SCH_UID_ROOT || e->uid == SCH_UID_INLINE))
    return sch_fail(sch, prim, "random variable %d is the special location \"%s\", not a loop", (int)rv,
                    e->uid == SCH_UID_ROOT ? "root" : "inline");
  if (!sch_find_uid(sch, e->uid, path))
    return sch_fail(sch, prim, "the %s of random variable %d no longer exists in the program",
                    rv_kind_word(e->kind), (int)rv);
  return MLC_OK;
}

int sch_find_block(sch_t *sch, const char *prim, sch_rv_t rv, sch_path_t *path) {
  return find_rv(sch, prim, rv, SCH_RV_BLOCK, path);
}

int sch_find_loop(sch_t *sch, const char *prim, sch_rv_t rv, sch_path_t *path) {
  return find_rv(sch, prim, rv, SCH_RV_LOOP, path);
}

int sch_find_block_or_loop(sch_t *sch, const char *prim, sch_rv_t rv, sch_path_t *path, bool *is_loop) {
  int rc = find_rv(sch, prim, rv, -1, path);
  if (rc == MLC_OK) *is_loop = path->stmts[path->n - 1]->kind == TIR_FOR;
  return rc;
}

int sch_path_scope_depth(const sch_path_t *path, int depth) {
  for (int d = depth - 1; d >= 0; d--)
    if (path->stmts[d]->kind == TIR_BLOCK_REALIZE) return d;
  return -1;
}

int sch_path_loops(const sch_path_t *path, int from, int to, tir_stmt_t **loops, int cap) {
  int n = 0;
  for (int d = from + 1; d < to && d < path->n; d++) {
    if (path->stmts[d]->kind != TIR_FOR) continue;
    if (n < cap) loops[n] = path->stmts[d];
    n++;
  }
  return n;
}

/* ------------------------------------------------------------------------ */
/* Rewriting                                                                 */
/* ------------------------------------------------------------------------ */

/* A SEQ with old_child replaced (or removed); a SEQ left with one statement
 * is that statement, and a nested SEQ given as new_child is flattened in. */
static tir_stmt_t *replace_in_seq(sch_t *sch, tir_stmt_t *seq, tir_stmt_t *old_child, tir_stmt_t *new_child) {
  mlc_arena_t *a = sch_arena(sch);
  int n = seq->u.seq.n, k = 0;
  tir_stmt_t **stmts = mlc_arena_alloc(a, sizeof(*stmts) * (size_t)n);
  bool found = false;
  for (int i = 0; i < n; i++) {
    tir_stmt_t *s = seq->u.seq.stmts[i];
    if (s == old_child && !found) {
      found = true;
      if (new_child) stmts[k++] = new_child;
    } else {
      stmts[k++] = s;
    }
  }
  MLC_ASSERT(found);
  MLC_ASSERT(k > 0); /* removing the last statement leaves nothing to keep */
  return tir_seq(a, stmts, k);
}

static tir_stmt_t *replace_in_realize(sch_t *sch, tir_stmt_t *parent, tir_stmt_t *old_child,
                                      tir_stmt_t *new_child) {
  mlc_arena_t *a = sch_arena(sch);
  tir_block_t *b = tir_block_copy(a, parent->u.realize.block);
  if (b->body == old_child) b->body = new_child;
  else if (b->init == old_child) b->init = new_child;
  else MLC_PANIC("sch_replace_child: not a child of block %s", b->name);
  MLC_ASSERT(b->body != NULL);
  tir_stmt_t *out = tir_stmt_copy(a, parent);
  out->u.realize.block = b;
  return out;
}

tir_stmt_t *sch_replace_child(sch_t *sch, tir_stmt_t *parent, tir_stmt_t *old_child, tir_stmt_t *new_child) {
  if (parent->kind == TIR_SEQ) return replace_in_seq(sch, parent, old_child, new_child);
  if (parent->kind == TIR_BLOCK_REALIZE) return replace_in_realize(sch, parent, old_child, new_child);
  MLC_ASSERT(new_child != NULL || parent->kind == TIR_IF);
  tir_stmt_t *out = tir_stmt_copy(sch_arena(sch), parent);
  tir_stmt_t **slot = NULL;
  switch (parent->kind) {
  case TIR_LET: slot = &out->u.let.body; break;
  case TIR_ATTR: slot = &out->u.attr.body; break;
  case TIR_ASSERT: slot = &out->u.assert_.body; break;
  case TIR_FOR: slot = &out->u.loop.body; break;
  case TIR_ALLOCATE: slot = &out->u.allocate.body; break;
  case TIR_IF:
    slot = out->u.if_.then_case == old_child ? &out->u.if_.then_case : &out->u.if_.else_case;
    MLC_ASSERT(new_child != NULL || slot == &out->u.if_.else_case);
    break;
  default: MLC_PANIC("sch_replace_child: a %s has no statement children", tir_stmt_kind_name(parent->kind));
  }
  MLC_ASSERT(*slot == old_child);
  *slot = new_child;
  return out;
}

void sch_replace(sch_t *sch, const sch_path_t *path, int depth, tir_stmt_t *with) {
  MLC_ASSERT(depth >= 0 && depth < path->n);
  tir_stmt_t *cur = with;
  for (int d = depth - 1; d >= 0; d--) cur = sch_replace_child(sch, path->stmts[d], path->stmts[d + 1], cur);
  MLC_ASSERT(cur != NULL);
  sch->func->body = cur;
}

/* ------------------------------------------------------------------------ */
/* New loops and blocks                                                      */
/* ------------------------------------------------------------------------ */

tir_stmt_t *sch_new_loop(sch_t *sch, tir_var_t *var, tir_expr_t *min, tir_expr_t *extent,
                         tir_for_kind_t kind, tir_stmt_t *body) {
  tir_stmt_t *s = tir_for(sch_arena(sch), var, min, extent, kind, body);
  if (s) s->u.loop.uid = sch_new_uid(sch);
  return s;
}

tir_block_t *sch_new_block(sch_t *sch, const char *name) {
  tir_block_t *b = tir_block_new(sch_arena(sch), name);
  if (b) b->uid = sch_new_uid(sch);
  return b;
}

const char *sch_unique_block_name(sch_t *sch, const char *base) {
  sch_path_t path;
  if (!sch_find_block_by_name(sch, base, &path)) return mlc_arena_strdup(sch_arena(sch), base);
  for (int i = 1;; i++) {
    const char *name = mlc_arena_printf(sch_arena(sch), "%s_%d", base, i);
    if (!sch_find_block_by_name(sch, name, &path)) return name;
  }
}
