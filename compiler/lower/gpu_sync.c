/*
 * gpu_sync.c - the "gpu-sync" pass: barriers between the phases of a GPU
 * kernel that communicate through shared memory (TVM's ThreadSync, for the
 * "shared" scopes, simplified).
 *
 * In lowered TIR the threads of a block are loops bound to threadIdx; the
 * interpreter runs them one after the other, the GPU at the same time. The
 * two agree when every read of shared memory written by another thread is
 * separated from that write by a barrier, and every overwrite from the reads
 * before it. The pass walks each kernel (the outermost thread-bound loop and
 * everything inside) in program order, keeping the shared buffers read and
 * written since the last barrier, and puts `T.tvm_storage_sync("shared")`
 * before a statement that reads a buffer written since (read after write) or
 * writes a buffer read since (write after read). Buffers are told apart by
 * their data variable (flat views share it), never by index: conservative,
 * as a thread reading back its own write gets a barrier it does not need.
 *
 * Barriers only go where every thread of the block arrives: never inside a
 * branch or loop whose condition or bounds depend on a threadIdx variable,
 * nor inside a threadIdx loop narrower than the block (it runs under a
 * guard); such a statement is handled whole, its barrier placed before it.
 * A statement that neither both reads and writes one shared buffer needs no
 * barrier inside and is handled whole too (this keeps the walk linear in
 * practice: cooperative fetches only write, compute phases only read).
 * Serial loops (and vthread loops, serial in the kernel) are walked twice:
 * the second walk starts with what the first left pending, so a write at
 * the top of iteration k+1 waits for the reads at the end of iteration k.
 * A WMMA tvm_store_matrix_sync writes the tile its memory operand names
 * (a load in the IR): it counts as a write of that buffer.
 */
#include "compiler/lower/gpu_sync.h"

#include <string.h>

#include "compiler/lower/lower_util.h"
#include "compiler/lower/tensor_core.h"

/* A set of shared buffers by data variable; `all` when it overflowed. */
enum { SYNC_SET_MAX = 32 };
typedef struct {
  int n;
  bool all;
  const tir_var_t *data[SYNC_SET_MAX];
} bufset_t;

typedef struct {
  bufset_t r, w; /* read, written since the last barrier */
} acc_t;

typedef struct {
  mlc_arena_t *a;
  tir_var_t *tvars[64];  /* threadIdx variables (and lets of them) in scope */
  int ntvars;
  int64_t block[3];      /* widest constant threadIdx.x/y/z loop of the kernel */
  int nsyncs;
} sync_t;

static bool is_shared_scope(const char *scope) { return strncmp(scope, "shared", 6) == 0; }

static void set_add(bufset_t *s, const tir_var_t *v) {
  for (int i = 0; i < s->n; i++)
    if (s->data[i] == v) return;
  if (s->n == SYNC_SET_MAX) s->all = true;
  else s->data[s->n++] = v;
}

static void set_union(bufset_t *s, const bufset_t *o) {
  s->all |= o->all;
  for (int i = 0; i < o->n; i++) set_add(s, o->data[i]);
}

static bool set_meets(const bufset_t *a, const bufset_t *b) {
  if ((a->all && (b->n || b->all)) || (b->all && a->n)) return true;
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++)
      if (a->data[i] == b->data[j]) return true;
  return false;
}

static void acc_union(acc_t *a, const acc_t *b) {
  set_union(&a->r, &b->r);
  set_union(&a->w, &b->w);
}

/* ---- what a statement reads and writes ---- */

static bool collect_expr(tir_visitor_t *v, tir_expr_t *e) {
  acc_t *acc = v->payload;
  if (tir_wmma_op(e) == TIR_WMMA_STORE && e->u.call.nargs > LOWER_TC_MEM_ARG) { /* writes its memory tile */
    const tir_expr_t *p = e->u.call.args[LOWER_TC_MEM_ARG];
    if (p->kind == TIR_BUFFER_LOAD && is_shared_scope(p->u.load.buffer->scope)) set_add(&acc->w, p->u.load.buffer->data);
  }
  if (e->kind == TIR_BUFFER_LOAD && is_shared_scope(e->u.load.buffer->scope)) set_add(&acc->r, e->u.load.buffer->data);
  return true;
}

static bool collect_stmt(tir_visitor_t *v, tir_stmt_t *s) {
  acc_t *acc = v->payload;
  if (s->kind == TIR_BUFFER_STORE && is_shared_scope(s->u.store.buffer->scope))
    set_add(&acc->w, s->u.store.buffer->data);
  return true;
}

static acc_t accesses(tir_stmt_t *s) {
  acc_t acc;
  memset(&acc, 0, sizeof acc);
  tir_visitor_t v = {.expr = collect_expr, .stmt = collect_stmt, .payload = &acc};
  tir_visit_stmt(&v, s);
  return acc;
}

static bool is_sync(const tir_stmt_t *s) {
  return s->kind == TIR_EVALUATE && s->u.evaluate.value->kind == TIR_CALL &&
         s->u.evaluate.value->u.call.op == TIR_OP_TVM_STORAGE_SYNC;
}

/* ---- thread-dependence ---- */

static bool divergent(const sync_t *c, tir_expr_t *e) {
  return e && c->ntvars > 0 && tir_expr_uses_any_var(e, (tir_var_t *const *)c->tvars, c->ntvars);
}

static bool push_tvar(sync_t *c, tir_var_t *v) {
  if (c->ntvars == (int)(sizeof c->tvars / sizeof c->tvars[0])) return false;
  c->tvars[c->ntvars++] = v;
  return true;
}

/* ---- the walk ---- */

static tir_stmt_t *walk(sync_t *c, tir_stmt_t *s, acc_t *st);

static tir_stmt_t *sync_stmt(sync_t *c) {
  tir_expr_t *arg = tir_string(c->a, "shared");
  c->nsyncs++;
  return tir_evaluate(c->a, tir_call(c->a, tir_dt_INT32(), TIR_OP_TVM_STORAGE_SYNC, &arg, 1));
}

/* s as a whole: a barrier before it when it conflicts with what is pending. */
static tir_stmt_t *whole(sync_t *c, tir_stmt_t *s, acc_t *st, const acc_t *acc) {
  if (set_meets(&acc->r, &st->w) || set_meets(&acc->w, &st->r)) {
    *st = *acc;
    tir_stmt_t *two[2] = {sync_stmt(c), s};
    return tir_seq(c->a, two, 2);
  }
  acc_union(st, acc);
  return s;
}

static tir_stmt_t *walk_seq(sync_t *c, tir_stmt_t *s, acc_t *st) {
  int n = s->u.seq.n;
  tir_stmt_t **xs = mlc_arena_alloc(c->a, sizeof(*xs) * (size_t)(n > 0 ? n : 1));
  bool changed = false;
  for (int i = 0; i < n; i++) {
    xs[i] = walk(c, s->u.seq.stmts[i], st);
    changed |= xs[i] != s->u.seq.stmts[i];
  }
  return changed ? tir_seq(c->a, xs, n) : s;
}

static tir_stmt_t *with_body(sync_t *c, tir_stmt_t *s, tir_stmt_t *body) {
  tir_stmt_t **slot;
  switch (s->kind) {
  case TIR_FOR: slot = &s->u.loop.body; break;
  case TIR_LET: slot = &s->u.let.body; break;
  case TIR_ATTR: slot = &s->u.attr.body; break;
  case TIR_ALLOCATE: slot = &s->u.allocate.body; break;
  default: return s;
  }
  if (*slot == body) return s;
  tir_stmt_t *r = tir_stmt_copy(c->a, s);
  switch (r->kind) {
  case TIR_FOR: r->u.loop.body = body; break;
  case TIR_LET: r->u.let.body = body; break;
  case TIR_ATTR: r->u.attr.body = body; break;
  default: r->u.allocate.body = body; break;
  }
  return r;
}

/* A loop whose iterations run one after another (serial, unrolled, vthread):
 * walked twice, the second time with what the first left pending. */
static tir_stmt_t *walk_serial_loop(sync_t *c, tir_stmt_t *s, acc_t *st) {
  acc_t in = *st, first = *st;
  int mark = c->nsyncs;
  (void)walk(c, s->u.loop.body, &first);
  c->nsyncs = mark;
  acc_t second = in;
  acc_union(&second, &first);
  tir_stmt_t *body = walk(c, s->u.loop.body, &second);
  acc_union(st, &second);
  return with_body(c, s, body);
}

static tir_stmt_t *walk_for(sync_t *c, tir_stmt_t *s, acc_t *st, const acc_t *acc) {
  if (divergent(c, s->u.loop.min) || divergent(c, s->u.loop.extent)) return whole(c, s, st, acc);
  if (s->u.loop.kind != TIR_FOR_THREAD_BINDING) return walk_serial_loop(c, s, st);
  int d;
  tir_thread_kind_t kind = tir_thread_tag(s->u.loop.thread_tag, &d);
  if (kind != TIR_THREAD_THREAD) {
    if (kind == TIR_THREAD_BLOCK) return with_body(c, s, walk(c, s->u.loop.body, st));
    return walk_serial_loop(c, s, st); /* vthread: a serial loop in the kernel */
  }
  int64_t ext = lower_const_or_neg(s->u.loop.extent);
  if (ext < 0 || ext < c->block[d] || !push_tvar(c, s->u.loop.var)) return whole(c, s, st, acc); /* guarded */
  tir_stmt_t *body = walk(c, s->u.loop.body, st);
  c->ntvars--;
  return with_body(c, s, body);
}

static tir_stmt_t *walk_if(sync_t *c, tir_stmt_t *s, acc_t *st, const acc_t *acc) {
  if (divergent(c, s->u.if_.cond)) return whole(c, s, st, acc);
  acc_t then_st = *st, else_st = *st;
  tir_stmt_t *t = walk(c, s->u.if_.then_case, &then_st);
  tir_stmt_t *e = s->u.if_.else_case ? walk(c, s->u.if_.else_case, &else_st) : NULL;
  *st = then_st;
  acc_union(st, &else_st);
  if (t == s->u.if_.then_case && e == s->u.if_.else_case) return s;
  return tir_if(c->a, s->u.if_.cond, t, e);
}

static tir_stmt_t *walk(sync_t *c, tir_stmt_t *s, acc_t *st) {
  if (is_sync(s)) {
    memset(st, 0, sizeof *st);
    return s;
  }
  acc_t acc = accesses(s);
  if (!set_meets(&acc.r, &acc.w)) return whole(c, s, st, &acc); /* nothing to order inside */
  switch (s->kind) {
  case TIR_SEQ: return walk_seq(c, s, st);
  case TIR_FOR: return walk_for(c, s, st, &acc);
  case TIR_IF: return walk_if(c, s, st, &acc);
  case TIR_LET: {
    bool dep = divergent(c, s->u.let.value) && push_tvar(c, s->u.let.var);
    tir_stmt_t *body = walk(c, s->u.let.body, st);
    if (dep) c->ntvars--;
    return with_body(c, s, body);
  }
  case TIR_ATTR: return with_body(c, s, walk(c, s->u.attr.body, st));
  case TIR_ALLOCATE: return with_body(c, s, walk(c, s->u.allocate.body, st));
  default: return whole(c, s, st, &acc);
  }
}

/* ---- kernels ---- */

static bool block_dims(tir_visitor_t *v, tir_stmt_t *s) {
  int64_t *block = v->payload;
  if (s->kind != TIR_FOR || s->u.loop.kind != TIR_FOR_THREAD_BINDING) return true;
  int d;
  int64_t ext = lower_const_or_neg(s->u.loop.extent);
  if (tir_thread_tag(s->u.loop.thread_tag, &d) == TIR_THREAD_THREAD && ext > block[d]) block[d] = ext;
  return true;
}

/* Host code down to each kernel (the outermost thread-bound loop). */
static tir_stmt_t *host(tir_mutator_t *m, tir_stmt_t *s) {
  if (s->kind != TIR_FOR || s->u.loop.kind != TIR_FOR_THREAD_BINDING) return tir_mutate_stmt_children(m, s);
  sync_t *c = m->payload;
  memset(c->block, 0, sizeof c->block);
  c->ntvars = 0;
  tir_visitor_t v = {.stmt = block_dims, .payload = c->block};
  tir_visit_stmt(&v, s);
  acc_t st;
  memset(&st, 0, sizeof st);
  return walk(c, s, &st);
}

static int run(tir_func_t *f, mlc_strbuf_t *notes) {
  sync_t c = {.a = f->arena};
  tir_mutator_t m = {.arena = f->arena, .stmt = host, .payload = &c};
  f->body = tir_mutate_stmt(&m, f->body);
  if (c.nsyncs > 0) lower_note(notes, "gpu-sync", "%s: %d barrier%s placed", f->name, c.nsyncs, c.nsyncs == 1 ? "" : "s");
  return MLC_OK;
}

int mlc_pass_gpu_sync(tir_func_t *f, const mlc_target_t *target, mlc_strbuf_t *notes) {
  if (!target || target->kind == MLC_TARGET_LLVM) return MLC_OK;
  int rc;
  LOWER_GUARDED(rc, f->arena, run(f, notes));
  return rc;
}
