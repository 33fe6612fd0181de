/*
 * verify.c - the verifier: what must hold of a function before anything
 * (printer, schedule, interpreter, codegen) may rely on it.
 *
 * One walk over the function checks:
 *  - every variable and buffer is defined where it is used (parameters,
 *    buffer_map buffers and their symbolic shape variables, loop and let
 *    variables, block iter vars, allocated and matched buffers, in scope);
 *  - dtypes: binary operands agree, stored values have the buffer's dtype
 *    (with the lanes of a vector index), indices are integers, predicates and
 *    conditions are bool;
 *  - every load and store has one index per buffer dimension;
 *  - block names are unique, each block has one binding per iter var, and a
 *    binding provably stays inside its iter var's domain (when the domain is
 *    constant and the binding's bounds over the enclosing loops are);
 *  - a block (other than the function's root) declares every buffer it
 *    accesses in T.reads / T.writes (directly or through a nested block), and
 *    an access provably outside its declared region is reported.
 *
 * "Provably" uses the linear bounds of regions.h: a check that cannot be
 * decided with constants is skipped, never guessed. Statements are walked
 * here rather than with tir_visitor because every binder opens a scope that
 * must close after its body. Each problem is one line naming the block and
 * buffer (`block "C": buffer B is read but not in T.reads`).
 */
#include "tir/regions.h"
#include "tir/ptrmap.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Region problems are reported once per (block, buffer, kind). */
typedef enum { REPORT_UNDEFINED, REPORT_NOT_READ, REPORT_NOT_WRITTEN, REPORT_OUTSIDE } report_kind_t;

typedef struct {
  const tir_block_t *block;
  const tir_buffer_t *buffer;
  report_kind_t what;
} reported_t;

typedef struct {
  mlc_arena_t *arena; /* scratch; its out-of-memory handler unwinds tir_verify */
  mlc_strbuf_t *errors;
  int nerrors;
  char first[512];
  tir_lin_env_t env;        /* enclosing loops (ranges) and lets (values) */
  tir_ptrmap_t vars;        /* var -> number of enclosing definitions */
  tir_ptrmap_t bufs;        /* buffer -> block depth of its definition + 1 */
  tir_ptrmap_t bad_vars;    /* undefined variables already reported */
  const tir_block_t *block; /* innermost block; NULL outside blocks */
  const tir_block_t *root;  /* the function's root block: regions not checked */
  int depth;                /* block nesting depth */
  bool in_body;             /* walking the init/body of `block` */
  const char *where;        /* what the expression being checked is */
  const char **names;       /* block names seen */
  int nnames, cap_names;
  reported_t *reported;     /* region problems already reported */
  int nreported, cap_reported;
} vf_t;

static void vf_stmt(vf_t *v, const tir_stmt_t *s);
static void vf_expr(vf_t *v, const tir_expr_t *e);

/* ------------------------------------------------------------------------ */
/* Reporting                                                                 */
/* ------------------------------------------------------------------------ */

static void vf_report(vf_t *v, const char *fmt, ...) MLC_PRINTF(2, 3);
static void vf_report(vf_t *v, const char *fmt, ...) {
  char msg[448], line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (v->block)
    snprintf(line, sizeof line, "block \"%s\": %s", v->block->name, msg);
  else
    snprintf(line, sizeof line, "%s", msg);
  if (v->nerrors++ == 0) snprintf(v->first, sizeof v->first, "%s", line);
  if (v->errors) {
    mlc_sb_append(v->errors, line);
    mlc_sb_putc(v->errors, '\n');
  }
}

/* True the first time (block, buffer, what) is seen: one line per problem. */
static bool vf_first_report(vf_t *v, const tir_buffer_t *b, report_kind_t what) {
  for (int i = 0; i < v->nreported; i++)
    if (v->reported[i].block == v->block && v->reported[i].buffer == b && v->reported[i].what == what)
      return false;
  if (v->nreported == v->cap_reported) {
    int cap = v->cap_reported ? v->cap_reported * 2 : 16;
    v->reported =
        mlc_arena_grow(v->arena, v->reported, (size_t)v->nreported, (size_t)cap, sizeof(*v->reported));
    v->cap_reported = cap;
  }
  v->reported[v->nreported++] = (reported_t){v->block, b, what};
  return true;
}

/* ------------------------------------------------------------------------ */
/* Scopes                                                                    */
/* ------------------------------------------------------------------------ */

static uintptr_t vf_count(tir_ptrmap_t *m, const void *node) { return (uintptr_t)tir_ptrmap_get(m, node); }

static void vf_def_var(vf_t *v, const tir_var_t *x) {
  if (x) tir_ptrmap_put(&v->vars, x, (void *)(vf_count(&v->vars, x) + 1));
}

static void vf_undef_var(vf_t *v, const tir_var_t *x) {
  uintptr_t n = x ? vf_count(&v->vars, x) : 0;
  if (n) tir_ptrmap_put(&v->vars, x, (void *)(n - 1));
}

static bool vf_var_defined(vf_t *v, const tir_expr_t *x) { return vf_count(&v->vars, x) > 0; }

/* Declaration entries of a buffer: with may_define, a bare undefined
 * variable is a definition (symbolic shape); anything else must be defined. */
static void vf_decl_expr(vf_t *v, const tir_expr_t *e, bool may_define) {
  if (may_define && e && e->kind == TIR_VAR && !vf_var_defined(v, e))
    vf_def_var(v, e);
  else
    vf_expr(v, e);
}

static void vf_def_buffer(vf_t *v, const tir_buffer_t *b, bool may_define) {
  char where[160];
  snprintf(where, sizeof where, "the declaration of buffer %s", b->name);
  const char *saved = v->where;
  v->where = where;
  for (int i = 0; i < b->ndim; i++) vf_decl_expr(v, b->shape[i], may_define);
  for (int i = 0; b->strides && i < b->ndim; i++) vf_decl_expr(v, b->strides[i], may_define);
  vf_decl_expr(v, b->elem_offset, may_define);
  v->where = saved;
  vf_def_var(v, b->data);
  tir_ptrmap_put(&v->bufs, b, (void *)(uintptr_t)(v->depth + 1));
}

static void vf_undef_buffer(vf_t *v, const tir_buffer_t *b) { tir_ptrmap_put(&v->bufs, b, NULL); }

static bool vf_use_buffer(vf_t *v, const tir_buffer_t *b) {
  if (!b) {
    vf_report(v, "a buffer access has no buffer");
    return false;
  }
  if (vf_count(&v->bufs, b)) return true;
  /* A view declared by its use (lowered code's flat `C_1 = T.Buffer((4096,),
   * data=C.data)`): defined when the storage it aliases is. */
  if (b->data && vf_var_defined(v, b->data)) return true;
  if (vf_first_report(v, b, REPORT_UNDEFINED)) vf_report(v, "buffer %s is used but not defined", b->name);
  return false;
}

/* ------------------------------------------------------------------------ */
/* Expressions                                                               */
/* ------------------------------------------------------------------------ */

static const char *dt(tir_dtype_t t, char buf[24]) { return tir_dtype_str(t, buf); }

static const char *var_name(const tir_var_t *x) {
  return x && x->kind == TIR_VAR && x->u.var.name ? x->u.var.name : "?";
}

static bool is_index_dtype(tir_dtype_t t) { return tir_dtype_is_integer(t) && !tir_dtype_is_bool(t); }

static void vf_cond(vf_t *v, const tir_expr_t *c, const char *what) {
  char b[24];
  vf_expr(v, c);
  if (c && !tir_dtype_is_bool(c->dtype)) vf_report(v, "%s is %s, not bool", what, dt(c->dtype, b));
}

static void vf_indices(vf_t *v, const tir_buffer_t *b, tir_expr_t *const *idx, int n) {
  char t[24];
  if (b->ndim != n)
    vf_report(v, "%s has %d dimension%s but is indexed with %d ind%s", b->name, b->ndim,
              b->ndim == 1 ? "" : "s", n, n == 1 ? "ex" : "ices");
  for (int i = 0; i < n; i++) {
    vf_expr(v, idx[i]);
    if (idx[i] && !is_index_dtype(idx[i]->dtype))
      vf_report(v, "index %d of %s is %s, not an integer", i, b->name, dt(idx[i]->dtype, t));
  }
}

static void vf_access(vf_t *v, const tir_buffer_t *b, tir_expr_t *const *idx, int n, bool is_write);

static void vf_var(vf_t *v, const tir_expr_t *e) {
  if (vf_var_defined(v, e) || tir_ptrmap_get(&v->bad_vars, e)) return;
  tir_ptrmap_put(&v->bad_vars, e, (void *)e);
  vf_report(v, "variable %s is used but not defined (in %s)", var_name(e),
            v->where ? v->where : "the body");
}

static void vf_binary(vf_t *v, const tir_expr_t *e) {
  char a[24], b[24];
  vf_expr(v, e->u.bin.a);
  vf_expr(v, e->u.bin.b);
  if (e->u.bin.a && e->u.bin.b && !tir_dtype_eq(e->u.bin.a->dtype, e->u.bin.b->dtype))
    vf_report(v, "operands of %s have different dtypes: %s vs %s (in %s)", tir_expr_kind_name(e->kind),
              dt(e->u.bin.a->dtype, a), dt(e->u.bin.b->dtype, b), v->where ? v->where : "the body");
}

static void vf_expr(vf_t *v, const tir_expr_t *e) {
  if (!e) return;
  switch (tir_expr_kind_shape(e->kind)) {
  case TIR_SHAPE_IMM: break;
  case TIR_SHAPE_LEAF: vf_var(v, e); break;
  case TIR_SHAPE_BINARY: vf_binary(v, e); break;
  case TIR_SHAPE_UNARY: vf_expr(v, e->u.un.a); break;
  case TIR_SHAPE_SELECT:
    vf_cond(v, e->u.select.cond, "a Select condition");
    vf_expr(v, e->u.select.t);
    vf_expr(v, e->u.select.f);
    break;
  case TIR_SHAPE_LOAD:
    if (!vf_use_buffer(v, e->u.load.buffer)) break;
    vf_indices(v, e->u.load.buffer, e->u.load.indices, e->u.load.nindices);
    vf_access(v, e->u.load.buffer, e->u.load.indices, e->u.load.nindices, false);
    break;
  case TIR_SHAPE_RAMP:
    vf_expr(v, e->u.ramp.base);
    vf_expr(v, e->u.ramp.stride);
    break;
  case TIR_SHAPE_BROADCAST: vf_expr(v, e->u.broadcast.value); break;
  case TIR_SHAPE_CALL:
    for (int i = 0; i < e->u.call.nargs; i++) vf_expr(v, e->u.call.args[i]);
    if (e->u.call.op == TIR_OP_IF_THEN_ELSE && e->u.call.nargs == 3 && e->u.call.args[0] &&
        !tir_dtype_is_bool(e->u.call.args[0]->dtype)) {
      char b[24];
      vf_report(v, "an if_then_else condition is %s, not bool", dt(e->u.call.args[0]->dtype, b));
    }
    break;
  }
}

/* ------------------------------------------------------------------------ */
/* Regions: accesses against the declared T.reads / T.writes                 */
/* ------------------------------------------------------------------------ */

static const tir_region_t *find_region(const tir_region_t *rs, int n, const tir_buffer_t *b) {
  for (int i = 0; i < n; i++)
    if (rs[i].buffer == b) return &rs[i];
  return NULL;
}

static bool is_match_buffer(const tir_block_t *blk, const tir_buffer_t *b) {
  for (int i = 0; i < blk->nmatch_buffers; i++)
    if (blk->match_buffers[i].buffer == b) return true;
  return false;
}

/* How far an access's bounds stick out of one range of a region, below its
 * start and past its end (0 when inside or undecidable). Only a range with
 * an exact start and a constant extent is judged. */
static void vf_overhang(vf_t *v, const tir_range_t *r, const tir_lin_bound_t *acc, int64_t *below,
                        int64_t *above) {
  *below = *above = 0;
  tir_lin_bound_t m = tir_lin_relax(&v->env, r->min);
  tir_lin_bound_t x = tir_lin_relax(&v->env, r->extent);
  int64_t ext, d;
  if (!m.point || !m.exact.known || !tir_lin_as_const(&x.exact, &ext)) return;
  tir_lin_t zero = {true, 0, NULL, 0};
  tir_lin_t last = tir_lin_sub_plus(&v->env, &m.exact, &zero, ext - 1);
  if (tir_lin_diff_const(&m.exact, &acc->lo, &d) && d > 0) *below = d;
  if (tir_lin_diff_const(&acc->hi, &last, &d) && d > 0) *above = d;
}

/* Reports an access (per-dimension bounds) that is provably outside r. */
static void vf_contained(vf_t *v, const tir_region_t *r, const tir_lin_bound_t *dims, int n, bool is_write) {
  const char *kind = is_write ? "write" : "read", *decl = is_write ? "T.writes" : "T.reads";
  for (int d = 0; d < n && d < r->ndim; d++) {
    int64_t below, above;
    vf_overhang(v, &r->ranges[d], &dims[d], &below, &above);
    if (!below && !above) continue;
    if (!vf_first_report(v, r->buffer, REPORT_OUTSIDE)) return;
    if (below)
      vf_report(v, "%s of %s is outside its %s region in dimension %d: %" PRId64 " below its start", kind,
                r->buffer->name, decl, d, below);
    else
      vf_report(v, "%s of %s is outside its %s region in dimension %d: %" PRId64 " past its end", kind,
                r->buffer->name, decl, d, above);
    return;
  }
}

/* An access of the current block (dims relaxed over the loops in scope):
 * its buffer must be declared, and the access inside the declaration. */
static void vf_region_access(vf_t *v, const tir_buffer_t *b, const tir_lin_bound_t *dims, int n,
                             bool is_write) {
  const tir_block_t *blk = v->block;
  if (!blk || blk == v->root || !v->in_body || is_match_buffer(blk, b)) return;
  if ((int)vf_count(&v->bufs, b) > v->depth) return; /* allocated inside this block */
  const tir_region_t *r = is_write ? find_region(blk->writes, blk->nwrites, b)
                                   : find_region(blk->reads, blk->nreads, b);
  /* A reduction's update reads what it writes (TVM leaves it out of T.reads). */
  if (!r && !is_write && blk->init) r = find_region(blk->writes, blk->nwrites, b);
  if (!r) {
    if (vf_first_report(v, b, is_write ? REPORT_NOT_WRITTEN : REPORT_NOT_READ))
      vf_report(v, "buffer %s is %s but not in %s", b->name, is_write ? "written" : "read",
                is_write ? "T.writes" : "T.reads");
    return;
  }
  vf_contained(v, r, dims, n, is_write);
}

static void vf_access(vf_t *v, const tir_buffer_t *b, tir_expr_t *const *idx, int n, bool is_write) {
  if (!v->block || v->block == v->root || !v->in_body || b->ndim != n) return;
  tir_lin_bound_t *dims = mlc_arena_alloc(v->arena, sizeof(*dims) * (size_t)(n ? n : 1));
  for (int d = 0; d < n; d++) dims[d] = tir_lin_relax(&v->env, idx[d]);
  vf_region_access(v, b, dims, n, is_write);
}

/* A nested block's declared regions count as accesses of the enclosing
 * block, with the nested iter vars replaced by their bindings. */
static void vf_nested_regions(vf_t *v, const tir_stmt_t *s, const tir_region_t *rs, int n, bool is_write) {
  const tir_block_t *nb = s->u.realize.block;
  int mark = v->env.n;
  for (int i = 0; i < nb->niter_vars && i < s->u.realize.n; i++)
    tir_lin_env_push_value(&v->env, nb->iter_vars[i].var, s->u.realize.iter_values[i]);
  for (int i = 0; i < n; i++) {
    const tir_region_t *r = &rs[i];
    if (!r->buffer || r->buffer->ndim != r->ndim) continue;
    bool local = false;
    for (int j = 0; j < nb->nalloc_buffers; j++) local |= nb->alloc_buffers[j] == r->buffer;
    if (local) continue;
    tir_lin_bound_t *dims = mlc_arena_alloc(v->arena, sizeof(*dims) * (size_t)(r->ndim ? r->ndim : 1));
    for (int d = 0; d < r->ndim; d++)
      dims[d] = tir_lin_relax_range(&v->env, r->ranges[d].min, r->ranges[d].extent);
    vf_region_access(v, r->buffer, dims, r->ndim, is_write);
  }
  tir_lin_env_reset(&v->env, mark);
}

/* ------------------------------------------------------------------------ */
/* Blocks                                                                    */
/* ------------------------------------------------------------------------ */

static void vf_block_name(vf_t *v, const tir_block_t *b) {
  for (int i = 0; i < v->nnames; i++) {
    if (strcmp(v->names[i], b->name) == 0) {
      const tir_block_t *saved = v->block;
      v->block = NULL;
      vf_report(v, "duplicate block name \"%s\"", b->name);
      v->block = saved;
      return;
    }
  }
  if (v->nnames == v->cap_names) {
    int cap = v->cap_names ? v->cap_names * 2 : 16;
    v->names = mlc_arena_grow(v->arena, v->names, (size_t)v->nnames, (size_t)cap, sizeof(*v->names));
    v->cap_names = cap;
  }
  v->names[v->nnames++] = b->name;
}

/* A binding that can leave its constant domain over the enclosing loops. */
static void vf_binding_domain(vf_t *v, const tir_iter_var_t *iv, tir_expr_t *value) {
  int64_t min, extent, lo, hi;
  if (!tir_as_int(iv->dom.min, &min) || !tir_as_int(iv->dom.extent, &extent)) return;
  tir_lin_bound_t b = tir_lin_relax(&v->env, value);
  if (!tir_lin_as_const(&b.lo, &lo) || !tir_lin_as_const(&b.hi, &hi)) return;
  if (lo >= min && hi <= min + extent - 1) return;
  vf_report(v, "binding of %s can reach %" PRId64 ", outside its domain [%" PRId64 ", %" PRId64 ")",
            var_name(iv->var), lo < min ? lo : hi, min, min + extent);
}

/* Bindings and predicate: checked in the enclosing scope. */
static void vf_realize_outside(vf_t *v, const tir_stmt_t *s, const tir_block_t *b) {
  char where[160];
  bool in_body = v->in_body;
  v->in_body = false; /* bindings are not accesses of the enclosing block */
  const tir_block_t *outer = v->block;
  v->block = b;
  if (s->u.realize.n != b->niter_vars)
    vf_report(v, "%d iter var%s but %d binding%s", b->niter_vars, b->niter_vars == 1 ? "" : "s",
              s->u.realize.n, s->u.realize.n == 1 ? "" : "s");
  for (int i = 0; i < s->u.realize.n; i++) {
    const tir_iter_var_t *iv = i < b->niter_vars ? &b->iter_vars[i] : NULL;
    snprintf(where, sizeof where, "the binding of %s", var_name(iv ? iv->var : NULL));
    v->where = where;
    vf_expr(v, s->u.realize.iter_values[i]);
  }
  v->where = "the predicate";
  vf_cond(v, s->u.realize.predicate, "the predicate");
  bool pred_true = !s->u.realize.predicate || tir_is_const_int(s->u.realize.predicate, 1);
  for (int i = 0; pred_true && i < s->u.realize.n && i < b->niter_vars; i++)
    vf_binding_domain(v, &b->iter_vars[i], s->u.realize.iter_values[i]);
  v->block = outer;
  v->in_body = in_body;
  vf_nested_regions(v, s, b->reads, b->nreads, false);
  vf_nested_regions(v, s, b->writes, b->nwrites, true);
}

static void vf_regions(vf_t *v, const tir_region_t *rs, int n, const char *what) {
  char where[160];
  for (int i = 0; i < n; i++) {
    const tir_region_t *r = &rs[i];
    if (!vf_use_buffer(v, r->buffer)) continue;
    snprintf(where, sizeof where, "the %s region of %s", what, r->buffer->name);
    v->where = where;
    if (r->ndim != r->buffer->ndim)
      vf_report(v, "the %s region of %s has %d range%s but the buffer has %d dimension%s", what,
                r->buffer->name, r->ndim, r->ndim == 1 ? "" : "s", r->buffer->ndim,
                r->buffer->ndim == 1 ? "" : "s");
    for (int d = 0; d < r->ndim; d++) {
      vf_expr(v, r->ranges[d].min);
      vf_expr(v, r->ranges[d].extent);
    }
  }
}

/* Iter vars, allocations and matches: the block's scope opens. */
static void vf_block_defs(vf_t *v, const tir_block_t *b) {
  char where[160];
  for (int i = 0; i < b->niter_vars; i++) {
    snprintf(where, sizeof where, "the domain of %s", var_name(b->iter_vars[i].var));
    v->where = where;
    vf_expr(v, b->iter_vars[i].dom.min);
    vf_expr(v, b->iter_vars[i].dom.extent);
  }
  for (int i = 0; i < b->niter_vars; i++) vf_def_var(v, b->iter_vars[i].var);
  for (int i = 0; i < b->nalloc_buffers; i++) vf_def_buffer(v, b->alloc_buffers[i], false);
  for (int i = 0; i < b->nmatch_buffers; i++) {
    vf_regions(v, &b->match_buffers[i].source, 1, "match_buffer");
    vf_def_buffer(v, b->match_buffers[i].buffer, true);
  }
}

static void vf_block_undefs(vf_t *v, const tir_block_t *b) {
  for (int i = 0; i < b->niter_vars; i++) vf_undef_var(v, b->iter_vars[i].var);
  for (int i = 0; i < b->nalloc_buffers; i++) vf_undef_buffer(v, b->alloc_buffers[i]);
  for (int i = 0; i < b->nmatch_buffers; i++) vf_undef_buffer(v, b->match_buffers[i].buffer);
}

static void vf_realize(vf_t *v, const tir_stmt_t *s) {
  const tir_block_t *b = s->u.realize.block;
  if (!b) {
    vf_report(v, "a block realize has no block");
    return;
  }
  vf_block_name(v, b);
  vf_realize_outside(v, s, b);
  const tir_block_t *outer = v->block;
  bool in_body = v->in_body;
  v->block = b;
  v->depth++;
  v->in_body = false;
  vf_block_defs(v, b);
  vf_regions(v, b->reads, b->nreads, "T.reads");
  vf_regions(v, b->writes, b->nwrites, "T.writes");
  v->in_body = true;
  v->where = "the init";
  vf_stmt(v, b->init);
  v->where = NULL;
  vf_stmt(v, b->body);
  vf_block_undefs(v, b);
  v->depth--;
  v->block = outer;
  v->in_body = in_body;
}

/* ------------------------------------------------------------------------ */
/* Statements                                                                */
/* ------------------------------------------------------------------------ */

static void vf_store(vf_t *v, const tir_stmt_t *s) {
  char where[160], a[24], b[24];
  const tir_buffer_t *buf = s->u.store.buffer;
  if (!vf_use_buffer(v, buf)) return;
  snprintf(where, sizeof where, "the store to %s", buf->name);
  v->where = where;
  vf_access(v, buf, s->u.store.indices, s->u.store.nindices, true);
  vf_expr(v, s->u.store.value);
  vf_indices(v, buf, s->u.store.indices, s->u.store.nindices);
  const tir_expr_t *val = s->u.store.value;
  int lanes = 1;
  for (int i = 0; i < s->u.store.nindices; i++) {
    const tir_expr_t *idx = s->u.store.indices[i];
    if (idx && idx->dtype.lanes > lanes) lanes = idx->dtype.lanes;
  }
  tir_dtype_t want = tir_dtype_lanes(buf->dtype, buf->dtype.lanes * lanes);
  if (val && !tir_dtype_eq(val->dtype, want))
    vf_report(v, "the value stored to %s is %s but the buffer holds %s", buf->name, dt(val->dtype, a),
              dt(want, b));
  v->where = NULL;
}

static void vf_for(vf_t *v, const tir_stmt_t *s) {
  char where[160], t[24];
  const tir_var_t *x = s->u.loop.var;
  snprintf(where, sizeof where, "the range of loop %s", var_name(x));
  v->where = where;
  vf_expr(v, s->u.loop.min);
  vf_expr(v, s->u.loop.extent);
  if (s->u.loop.extent && !is_index_dtype(s->u.loop.extent->dtype))
    vf_report(v, "the extent of loop %s is %s, not an integer", var_name(x),
              dt(s->u.loop.extent->dtype, t));
  v->where = NULL;
  int mark = v->env.n;
  vf_def_var(v, x);
  tir_lin_env_push_range(&v->env, x, s->u.loop.min, s->u.loop.extent);
  vf_stmt(v, s->u.loop.body);
  tir_lin_env_reset(&v->env, mark);
  vf_undef_var(v, x);
}

static void vf_let(vf_t *v, const tir_stmt_t *s) {
  v->where = "a let value";
  vf_expr(v, s->u.let.value);
  v->where = NULL;
  int mark = v->env.n;
  vf_def_var(v, s->u.let.var);
  tir_lin_env_push_value(&v->env, s->u.let.var, s->u.let.value);
  vf_stmt(v, s->u.let.body);
  tir_lin_env_reset(&v->env, mark);
  vf_undef_var(v, s->u.let.var);
}

/* `T.attr(tx, "thread_extent", n)` may define its node. */
static void vf_attr(vf_t *v, const tir_stmt_t *s) {
  const tir_var_t *node = s->u.attr.node;
  bool defines = node && node->kind == TIR_VAR && !vf_var_defined(v, node);
  v->where = "an attribute";
  vf_expr(v, s->u.attr.value);
  if (defines) vf_def_var(v, node);
  vf_stmt(v, s->u.attr.body);
  if (defines) vf_undef_var(v, node);
}

static void vf_stmt(vf_t *v, const tir_stmt_t *s) {
  if (!s) return;
  switch (s->kind) {
  case TIR_BUFFER_STORE: vf_store(v, s); break;
  case TIR_LET: vf_let(v, s); break;
  case TIR_ATTR: vf_attr(v, s); break;
  case TIR_ASSERT:
    v->where = "an assert";
    vf_cond(v, s->u.assert_.cond, "an assert condition");
    vf_expr(v, s->u.assert_.message);
    vf_stmt(v, s->u.assert_.body);
    break;
  case TIR_FOR: vf_for(v, s); break;
  case TIR_IF:
    v->where = "an if condition";
    vf_cond(v, s->u.if_.cond, "an if condition");
    v->where = NULL;
    vf_stmt(v, s->u.if_.then_case);
    vf_stmt(v, s->u.if_.else_case);
    break;
  case TIR_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) vf_stmt(v, s->u.seq.stmts[i]);
    break;
  case TIR_EVALUATE:
    v->where = "T.evaluate";
    vf_expr(v, s->u.evaluate.value);
    v->where = NULL;
    break;
  case TIR_ALLOCATE:
    vf_def_buffer(v, s->u.allocate.buffer, false);
    vf_stmt(v, s->u.allocate.body);
    vf_undef_buffer(v, s->u.allocate.buffer);
    break;
  case TIR_BLOCK_REALIZE: vf_realize(v, s); break;
  case TIR_STMT_KIND_COUNT: break;
  }
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                               */
/* ------------------------------------------------------------------------ */

static void vf_func(vf_t *v, const tir_func_t *f) {
  for (int i = 0; i < f->nparams; i++) vf_def_var(v, f->params[i]);
  for (int i = 0; i < f->nparams; i++)
    if (f->buffer_map && f->buffer_map[i]) vf_def_buffer(v, f->buffer_map[i], true);
  v->root = tir_func_root_block(f);
  vf_stmt(v, f->body);
}

/* The walk, with the scratch arena's out-of-memory handler set: no local
 * here changes after setjmp, so nothing is clobbered by the longjmp. */
static int vf_run(vf_t *v, const tir_func_t *f) {
  jmp_buf jb;
  mlc_arena_set_oom_handler(v->arena, &jb);
  if (setjmp(jb)) return mlc_error_set(MLC_ENOMEM, "verify: out of memory");
  tir_lin_env_init(&v->env, v->arena);
  tir_ptrmap_init(&v->vars, v->arena);
  tir_ptrmap_init(&v->bufs, v->arena);
  tir_ptrmap_init(&v->bad_vars, v->arena);
  vf_func(v, f);
  mlc_arena_set_oom_handler(v->arena, NULL);
  return v->nerrors ? mlc_error_set(MLC_EVERIFY, "%s", v->first) : MLC_OK;
}

int tir_verify(const tir_func_t *f, mlc_strbuf_t *errors) {
  vf_t *v = mlc_calloc(1, sizeof *v);
  if (!v || !(v->arena = mlc_arena_new())) {
    mlc_free(v);
    return mlc_error_set(MLC_ENOMEM, "verify: out of memory");
  }
  v->errors = errors;
  int rc = vf_run(v, f);
  mlc_arena_free(v->arena);
  mlc_free(v);
  return rc;
}
