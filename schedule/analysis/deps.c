/*
 * deps.c - the blocks of a scope and the dependences between them (TVM's
 * BlockScope): child blocks in program order, producers and consumers.
 *
 * TVM builds its dependence graph from the child blocks' read and write
 * sets in program order: a block depends on every earlier block that writes
 * a buffer it reads (read-after-write) or writes (write-after-write).
 * get_producers / get_consumers follow exactly those two kinds of edge, so a
 * producer is an earlier block writing a buffer the block reads or writes,
 * and a consumer a later block reading or writing a buffer the block writes.
 * Unlike TVM (which returns them in hash order), results come in program
 * order, so traces print the same everywhere.
 */
#include "schedule/analysis/analysis.h"

typedef struct {
  tir_stmt_t *root;
  tir_stmt_t **out;
  int cap, n;
} child_collector_t;

static bool collect_child(tir_visitor_t *v, tir_stmt_t *s) {
  child_collector_t *c = v->payload;
  if (s->kind != TIR_BLOCK_REALIZE || s == c->root) return true;
  if (c->n < c->cap) c->out[c->n] = s;
  c->n++;
  return false; /* blocks nested inside belong to its own scope */
}

int sch_child_blocks(tir_stmt_t *root, tir_stmt_t **out, int cap) {
  child_collector_t c = {root, out, cap, 0};
  tir_visitor_t v = {0};
  v.stmt = collect_child;
  v.payload = &c;
  /* A block's children live in its body; its init is not part of the scope
   * (as TVM's GetChildBlocks). */
  if (root->kind == TIR_BLOCK_REALIZE) tir_visit_stmt(&v, root->u.realize.block->body);
  else tir_visit_stmt(&v, root);
  return c.n;
}

static bool writes_buffer(const tir_block_t *b, const tir_buffer_t *buf) {
  for (int i = 0; i < b->nwrites; i++)
    if (b->writes[i].buffer == buf) return true;
  return false;
}

static bool touches_buffer(const tir_block_t *b, const tir_buffer_t *buf) {
  if (writes_buffer(b, buf)) return true;
  for (int i = 0; i < b->nreads; i++)
    if (b->reads[i].buffer == buf) return true;
  return false;
}

/* An edge src -> dst (src earlier): dst reads or writes something src writes. */
static bool depends(const tir_block_t *src, const tir_block_t *dst) {
  for (int i = 0; i < src->nwrites; i++)
    if (touches_buffer(dst, src->writes[i].buffer)) return true;
  return false;
}

/* producers: want_before; consumers: !want_before. */
static int related_blocks(sch_t *sch, const char *prim, const sch_path_t *path, bool want_before,
                          tir_stmt_t ***out, int *n) {
  *out = NULL;
  *n = 0;
  tir_stmt_t *self = path->stmts[path->n - 1];
  int scope = sch_path_scope_depth(path, path->n - 1);
  if (scope < 0)
    return sch_fail(sch, prim, "block %s is the root block, which has no scope", self->u.realize.block->name);
  int total = sch_child_blocks(path->stmts[scope], NULL, 0);
  tir_stmt_t **kids = mlc_arena_alloc(sch_arena(sch), sizeof(*kids) * (size_t)(total + 1));
  sch_child_blocks(path->stmts[scope], kids, total);
  int pos = -1;
  for (int i = 0; i < total; i++)
    if (kids[i] == self) pos = i;
  MLC_ASSERT(pos >= 0);
  const tir_block_t *b = self->u.realize.block;
  int k = 0;
  for (int i = 0; i < total; i++) {
    if (i == pos || (i < pos) != want_before) continue;
    const tir_block_t *o = kids[i]->u.realize.block;
    if (want_before ? depends(o, b) : depends(b, o)) kids[k++] = kids[i];
  }
  *out = kids;
  *n = k;
  return MLC_OK;
}

int sch_block_producers(sch_t *sch, const sch_path_t *block_path, tir_stmt_t ***out, int *n) {
  return related_blocks(sch, "get_producers", block_path, true, out, n);
}

int sch_block_consumers(sch_t *sch, const sch_path_t *block_path, tir_stmt_t ***out, int *n) {
  return related_blocks(sch, "get_consumers", block_path, false, out, n);
}
