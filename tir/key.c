/*
 * key.c - the workload key: XXH64 (seed 0) over a canonical serialization of
 * a function, the same on every machine, compiler and run.
 *
 * The serialization is a pre-order walk that writes, through the support
 * hasher, only two kinds of items:
 *   U(x)  an unsigned 64-bit integer as 8 little-endian bytes (signed values
 *         as their two's complement, doubles as their IEEE-754 bit pattern);
 *   S(s)  a string as U(length) followed by its bytes (no NUL); a missing
 *         string as U(2^64 - 1).
 * Node tags are the TVM class names of the kinds (S("Add"), S("For")), loop
 * kinds and iter types their TVMScript spellings, call operators their
 * TVMScript names: nothing depends on the numbering of an enum, a pointer,
 * struct layout or the order of a hash table.
 *
 * Variables and buffers are written as their definition index (0, 1, 2, ...
 * in the order the walk meets their definitions), so names never matter. The
 * exact grammar is documented in docs/tir.md ("Structural equality and the
 * workload key"); changing anything here changes every key and must be
 * deliberate (tests/tir/test_key.c pins the built-in workloads' keys).
 */
#include "tir/tir.h"
#include "tir/ptrmap.h"

#include <string.h>

/* The first item of every serialization: bump it when the format changes. */
#define KEY_FORMAT "mlc-tir-key-v1"

typedef struct {
  mlc_hasher_t *h;
  mlc_arena_t *arena;
  tir_ptrmap_t vars, bufs; /* node -> index + 1 */
  uintptr_t nvars, nbufs;
  bool failed; /* out of memory */
} ser_t;

static void k_stmt(ser_t *k, const tir_stmt_t *s);
static void k_expr(ser_t *k, const tir_expr_t *e);

static void U(ser_t *k, uint64_t v) { mlc_hasher_u64(k->h, v); }
static void S(ser_t *k, const char *s) { mlc_hasher_str(k->h, s); }

static void k_dtype(ser_t *k, tir_dtype_t t) {
  U(k, t.code);
  U(k, t.bits);
  U(k, t.lanes);
}

/* ------------------------------------------------------------------------ */
/* Names of the closed sets (the tables' string columns, never enum values)  */
/* ------------------------------------------------------------------------ */

static const char *expr_tag(tir_expr_kind_t kind) {
  switch (kind) {
#define TAG_(e, name, shape, op) case TIR_##e: return name;
    TIR_EXPR_KINDS(TAG_)
#undef TAG_
  case TIR_EXPR_KIND_COUNT: break;
  }
  return "?";
}

static const char *stmt_tag(tir_stmt_kind_t kind) {
  switch (kind) {
#define TAG_(e, name) case TIR_##e: return name;
    TIR_STMT_KINDS(TAG_)
#undef TAG_
  case TIR_STMT_KIND_COUNT: break;
  }
  return "?";
}

static const char *for_tag(tir_for_kind_t kind) {
  switch (kind) {
#define TAG_(e, name) case TIR_FOR_##e: return name;
    TIR_FOR_KINDS(TAG_)
#undef TAG_
  }
  return "?";
}

static const char *iter_tag(tir_iter_type_t type) {
  switch (type) {
#define TAG_(e, name, letter) case TIR_ITER_##e: return name;
    TIR_ITER_TYPES(TAG_)
#undef TAG_
  }
  return "?";
}

static const char *op_tag(tir_op_t op) {
  switch (op) {
#define TAG_(e, name, nargs, pure) case TIR_OP_##e: return name;
    TIR_CALL_OPS(TAG_)
#undef TAG_
  case TIR_OP_COUNT: break;
  }
  return "?";
}

/* ------------------------------------------------------------------------ */
/* Variables and buffers by definition index                                 */
/* ------------------------------------------------------------------------ */

static uintptr_t k_number(ser_t *k, tir_ptrmap_t *map, uintptr_t *next, const void *node) {
  uintptr_t i = (*next)++;
  if (!tir_ptrmap_put(map, node, (void *)(i + 1))) k->failed = true;
  return i;
}

/* VarDef: S("VarDef") dtype U(index). A node defined again gets a new index. */
static void k_def_var(ser_t *k, const tir_var_t *v) {
  if (!v) {
    S(k, NULL);
    return;
  }
  S(k, "VarDef");
  k_dtype(k, v->dtype);
  U(k, k_number(k, &k->vars, &k->nvars, v));
}

/* Var: S("Var") dtype U(index); a variable never defined is numbered where
 * it is first met. */
static void k_use_var(ser_t *k, const tir_var_t *v) {
  uintptr_t i = (uintptr_t)tir_ptrmap_get(&k->vars, v);
  S(k, "Var");
  k_dtype(k, v->dtype);
  U(k, i ? i - 1 : k_number(k, &k->vars, &k->nvars, v));
}

static bool k_unseen_var(ser_t *k, const tir_expr_t *e) {
  return e && e->kind == TIR_VAR && !tir_ptrmap_get(&k->vars, e);
}

/* Shape, stride and offset entries: a bare variable met here for the first
 * time is a definition (symbolic shapes). */
static void k_decl_expr(ser_t *k, const tir_expr_t *e) {
  if (k_unseen_var(k, e))
    k_def_var(k, e);
  else
    k_expr(k, e);
}

static void k_decl_exprs(ser_t *k, tir_expr_t *const *xs, int n) {
  for (int i = 0; i < n; i++) k_decl_expr(k, xs[i]);
}

/* BufferDef: S("BufferDef") U(index) dtype U(ndim) shape... U(has strides)
 * [strides...] U(has offset) [offset] S(scope) U(align) U(offset_factor)
 * data-var. An elem_offset of constant 0 is written as absent. */
static void k_def_buffer(ser_t *k, const tir_buffer_t *b) {
  S(k, "BufferDef");
  U(k, k_number(k, &k->bufs, &k->nbufs, b));
  k_dtype(k, b->dtype);
  U(k, (uint64_t)b->ndim);
  k_decl_exprs(k, b->shape, b->ndim);
  U(k, b->strides != NULL);
  if (b->strides) k_decl_exprs(k, b->strides, b->ndim);
  bool offset = b->elem_offset && !tir_is_const_int(b->elem_offset, 0);
  U(k, offset);
  if (offset) k_decl_expr(k, b->elem_offset);
  S(k, b->scope ? b->scope : "global");
  U(k, (uint64_t)b->align);
  U(k, (uint64_t)b->offset_factor);
  k_def_var(k, b->data);
}

/* Buffer: S("Buffer") U(index); a buffer never defined is defined in place. */
static void k_use_buffer(ser_t *k, const tir_buffer_t *b) {
  uintptr_t i = (uintptr_t)tir_ptrmap_get(&k->bufs, b);
  if (!i) {
    k_def_buffer(k, b);
    return;
  }
  S(k, "Buffer");
  U(k, i - 1);
}

/* ------------------------------------------------------------------------ */
/* Expressions                                                               */
/* ------------------------------------------------------------------------ */

static void k_exprs(ser_t *k, tir_expr_t *const *xs, int n) {
  U(k, (uint64_t)n);
  for (int i = 0; i < n; i++) k_expr(k, xs[i]);
}

static void k_expr_fields(ser_t *k, const tir_expr_t *e) {
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM:
    if (e->kind == TIR_INT_IMM) {
      U(k, (uint64_t)e->u.int_value);
    } else if (e->kind == TIR_FLOAT_IMM) {
      uint64_t bits;
      memcpy(&bits, &e->u.float_value, sizeof bits);
      U(k, bits);
    } else {
      S(k, e->u.str_value);
    }
    break;
  case TIR_SHAPE_LEAF: break; /* written by k_use_var */
  case TIR_SHAPE_BINARY:
    k_expr(k, e->u.bin.a);
    k_expr(k, e->u.bin.b);
    break;
  case TIR_SHAPE_UNARY: k_expr(k, e->u.un.a); break;
  case TIR_SHAPE_SELECT:
    k_expr(k, e->u.select.cond);
    k_expr(k, e->u.select.t);
    k_expr(k, e->u.select.f);
    break;
  case TIR_SHAPE_LOAD:
    k_use_buffer(k, e->u.load.buffer);
    k_exprs(k, e->u.load.indices, e->u.load.nindices);
    break;
  case TIR_SHAPE_RAMP:
    k_expr(k, e->u.ramp.base);
    k_expr(k, e->u.ramp.stride);
    U(k, (uint64_t)e->u.ramp.lanes);
    break;
  case TIR_SHAPE_BROADCAST:
    k_expr(k, e->u.broadcast.value);
    U(k, (uint64_t)e->u.broadcast.lanes);
    break;
  case TIR_SHAPE_CALL:
    S(k, op_tag(e->u.call.op));
    k_exprs(k, e->u.call.args, e->u.call.nargs);
    break;
  }
}

/* Expr: S(kind) dtype fields; a variable is its Var item; a missing
 * expression S(missing). */
static void k_expr(ser_t *k, const tir_expr_t *e) {
  if (!e) {
    S(k, NULL);
    return;
  }
  if (e->kind == TIR_VAR) {
    k_use_var(k, e);
    return;
  }
  S(k, expr_tag(e->kind));
  k_dtype(k, e->dtype);
  k_expr_fields(k, e);
}

/* ------------------------------------------------------------------------ */
/* Statements and blocks                                                     */
/* ------------------------------------------------------------------------ */

/* Annotations: U(n) then S(key) Expr(value) each, in order. */
static void k_annots(ser_t *k, const tir_annot_t *as, int n, bool skip_symbol) {
  int kept = 0;
  for (int i = 0; i < n; i++) kept += !(skip_symbol && strcmp(as[i].key, "global_symbol") == 0);
  U(k, (uint64_t)kept);
  for (int i = 0; i < n; i++) {
    if (skip_symbol && strcmp(as[i].key, "global_symbol") == 0) continue;
    S(k, as[i].key);
    k_expr(k, as[i].value);
  }
}

/* Region: Buffer U(ndim) then min, extent per dimension. */
static void k_region(ser_t *k, const tir_region_t *r) {
  k_use_buffer(k, r->buffer);
  U(k, (uint64_t)r->ndim);
  for (int i = 0; i < r->ndim; i++) {
    k_expr(k, r->ranges[i].min);
    k_expr(k, r->ranges[i].extent);
  }
}

static void k_regions(ser_t *k, const tir_region_t *rs, int n) {
  U(k, (uint64_t)n);
  for (int i = 0; i < n; i++) k_region(k, &rs[i]);
}

/* Block: S(name) U(n) [min extent VarDef S(iter type)]... U(n) BufferDef...
 * U(n) [Region BufferDef]... reads writes annotations U(has init) [init]
 * body. */
static void k_block(ser_t *k, const tir_block_t *b) {
  if (!b) {
    S(k, NULL);
    return;
  }
  S(k, b->name);
  U(k, (uint64_t)b->niter_vars);
  for (int i = 0; i < b->niter_vars; i++) {
    k_expr(k, b->iter_vars[i].dom.min);
    k_expr(k, b->iter_vars[i].dom.extent);
    k_def_var(k, b->iter_vars[i].var);
    S(k, iter_tag(b->iter_vars[i].type));
  }
  U(k, (uint64_t)b->nalloc_buffers);
  for (int i = 0; i < b->nalloc_buffers; i++) k_def_buffer(k, b->alloc_buffers[i]);
  U(k, (uint64_t)b->nmatch_buffers);
  for (int i = 0; i < b->nmatch_buffers; i++) {
    k_region(k, &b->match_buffers[i].source);
    k_def_buffer(k, b->match_buffers[i].buffer);
  }
  k_regions(k, b->reads, b->nreads);
  k_regions(k, b->writes, b->nwrites);
  k_annots(k, b->annots, b->nannots, false);
  U(k, b->init != NULL);
  if (b->init) k_stmt(k, b->init);
  k_stmt(k, b->body);
}

/* A missing predicate is written as T.bool(True). */
static void k_predicate(ser_t *k, const tir_expr_t *p) {
  if (p) {
    k_expr(k, p);
    return;
  }
  S(k, "IntImm");
  k_dtype(k, tir_dt_BOOL());
  U(k, 1);
}

static void k_for(ser_t *k, const tir_stmt_t *s) {
  k_expr(k, s->u.loop.min);
  k_expr(k, s->u.loop.extent);
  k_def_var(k, s->u.loop.var);
  S(k, for_tag(s->u.loop.kind));
  S(k, s->u.loop.thread_tag ? s->u.loop.thread_tag : "");
  k_annots(k, s->u.loop.annots, s->u.loop.nannots, false);
  k_stmt(k, s->u.loop.body);
}

static void k_stmt_fields(ser_t *k, const tir_stmt_t *s) {
  switch (s->kind) {
  case TIR_BUFFER_STORE:
    k_use_buffer(k, s->u.store.buffer);
    k_exprs(k, s->u.store.indices, s->u.store.nindices);
    k_expr(k, s->u.store.value);
    break;
  case TIR_LET:
    k_expr(k, s->u.let.value);
    k_def_var(k, s->u.let.var);
    k_stmt(k, s->u.let.body);
    break;
  case TIR_ATTR:
    /* A node met here first (a thread var) is defined here. */
    U(k, s->u.attr.node != NULL);
    if (s->u.attr.node) k_decl_expr(k, s->u.attr.node);
    S(k, s->u.attr.key);
    k_expr(k, s->u.attr.value);
    k_stmt(k, s->u.attr.body);
    break;
  case TIR_ASSERT:
    k_expr(k, s->u.assert_.cond);
    k_expr(k, s->u.assert_.message);
    k_stmt(k, s->u.assert_.body);
    break;
  case TIR_FOR: k_for(k, s); break;
  case TIR_IF:
    k_expr(k, s->u.if_.cond);
    k_stmt(k, s->u.if_.then_case);
    k_stmt(k, s->u.if_.else_case);
    break;
  case TIR_SEQ:
    U(k, (uint64_t)s->u.seq.n);
    for (int i = 0; i < s->u.seq.n; i++) k_stmt(k, s->u.seq.stmts[i]);
    break;
  case TIR_EVALUATE: k_expr(k, s->u.evaluate.value); break;
  case TIR_ALLOCATE:
    k_def_buffer(k, s->u.allocate.buffer);
    k_stmt(k, s->u.allocate.body);
    break;
  case TIR_BLOCK_REALIZE:
    k_exprs(k, s->u.realize.iter_values, s->u.realize.n);
    k_predicate(k, s->u.realize.predicate);
    k_block(k, s->u.realize.block);
    break;
  case TIR_STMT_KIND_COUNT: break;
  }
}

/* Stmt: S(kind) fields; a missing statement S(missing). */
static void k_stmt(ser_t *k, const tir_stmt_t *s) {
  if (!s) {
    S(k, NULL);
    return;
  }
  S(k, stmt_tag(s->kind));
  k_stmt_fields(k, s);
}

/* Function: S(KEY_FORMAT) S("PrimFunc") U(nparams) [VarDef U(has buffer)
 * [BufferDef]]... attributes-without-global_symbol body. */
static void k_func(ser_t *k, const tir_func_t *f) {
  S(k, KEY_FORMAT);
  S(k, "PrimFunc");
  U(k, (uint64_t)f->nparams);
  for (int i = 0; i < f->nparams; i++) {
    k_def_var(k, f->params[i]);
    const tir_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    U(k, b != NULL);
    if (b) k_def_buffer(k, b);
  }
  k_annots(k, f->attrs, f->nattrs, true);
  k_stmt(k, f->body);
}

uint64_t tir_func_key(const tir_func_t *f) {
  ser_t k = {0};
  uint64_t key = 0;
  k.h = mlc_hasher_new(0);
  k.arena = mlc_arena_new();
  if (!k.h || !k.arena) goto oom;
  tir_ptrmap_init(&k.vars, k.arena);
  tir_ptrmap_init(&k.bufs, k.arena);
  k_func(&k, f);
  if (k.failed) goto oom;
  key = mlc_hasher_digest(k.h);
  goto done;
oom:
  mlc_error_set(MLC_ENOMEM, "workload key: out of memory");
done:
  mlc_hasher_free(k.h);
  mlc_arena_free(k.arena);
  return key;
}

char *tir_func_key_hex(const tir_func_t *f, char buf[17]) {
  mlc_hash_hex(tir_func_key(f), buf);
  return buf;
}
