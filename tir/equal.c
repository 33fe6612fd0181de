/*
 * equal.c - structural equality of functions, statements and expressions, up to
 * renaming of variables and buffers.
 *
 * Two programs are equal when they have the same shape and every definition
 * (parameter, buffer_map buffer, loop variable, block iter var, let variable,
 * allocated / matched / declared buffer, symbolic shape variable at its first
 * appearance in a buffer declaration) on one side can be paired with the
 * definition met at the same point of the walk on the other. Uses are then
 * compared through that pairing; a variable or buffer defined on neither side
 * (free) must be the very same node. The pairing is kept in both directions so
 * it is a bijection: `x + y` never equals `x + x`.
 *
 * One exception, in functions only: a buffer used with no declaration (a
 * view, such as lowering's flat 1-D buffer over a parameter's data var, which
 * TVMScript declares `C_1 = T.Buffer((4096,), data=C.data)` with no IR
 * statement) is defined at its first use, as the workload key defines it:
 * layouts must match and its data var is the one already paired (the storage
 * it views), or is paired there. A statement compared alone keeps comparing
 * free buffers by identity.
 *
 * Names (function, variables, buffers) and the "global_symbol" attribute are
 * ignored; block names, dtypes, immediates (floats bit for bit), strings,
 * annotations (in order), scopes and buffer layouts are not.
 *
 * The walk records a path ("block \"C\": reads[1]") so that the first
 * difference can be explained to a user comparing a record's workload with
 * the function at hand.
 */
#include "tir/tir.h"
#include "tir/ptrmap.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  /* Definition pairing, both directions (a -> b and b -> a). */
  tir_ptrmap_t vars, vars_rev, bufs, bufs_rev;
  mlc_arena_t *arena; /* created on the first definition */
  char *why;
  size_t why_len;
  char path[512];
  size_t path_len;
  bool reported;
  bool views;         /* comparing functions: undeclared buffers are views */
} eq_t;

static bool eq_expr(eq_t *q, const tir_expr_t *a, const tir_expr_t *b);
static bool eq_stmt(eq_t *q, const tir_stmt_t *a, const tir_stmt_t *b);

/* ------------------------------------------------------------------------ */
/* Path and the first difference                                             */
/* ------------------------------------------------------------------------ */

/* Appends ": seg" to the path; returns the old length for eq_pop. */
static size_t eq_push(eq_t *q, const char *fmt, ...) MLC_PRINTF(2, 3);
static size_t eq_push(eq_t *q, const char *fmt, ...) {
  size_t old = q->path_len;
  if (!q->why) return old;
  size_t cap = sizeof q->path;
  if (q->path_len && q->path_len + 2 < cap) {
    memcpy(q->path + q->path_len, ": ", 3);
    q->path_len += 2;
  }
  if (q->path_len < cap) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(q->path + q->path_len, cap - q->path_len, fmt, ap);
    va_end(ap);
    if (n > 0) q->path_len += (size_t)n < cap - q->path_len ? (size_t)n : cap - q->path_len - 1;
  }
  return old;
}

static void eq_pop(eq_t *q, size_t old) {
  q->path_len = old;
  q->path[old] = '\0';
}

/* Inside a block the path restarts at the block ("block \"C\": reads[1]"):
 * block names are unique, so the loops around it add nothing. */
typedef struct {
  char path[sizeof(((eq_t *)0)->path)];
  size_t len;
} eq_saved_path_t;

static void eq_enter_block(eq_t *q, const char *name, eq_saved_path_t *saved) {
  saved->len = q->path_len;
  if (!q->why) return;
  memcpy(saved->path, q->path, q->path_len + 1);
  q->path_len = 0;
  q->path[0] = '\0';
  eq_push(q, "block \"%s\"", name ? name : "?");
}

static void eq_leave_block(eq_t *q, const eq_saved_path_t *saved) {
  if (!q->why) return;
  memcpy(q->path, saved->path, saved->len + 1);
  q->path_len = saved->len;
}

/* Records the first difference (path + message) and returns false. */
static bool eq_fail(eq_t *q, const char *fmt, ...) MLC_PRINTF(2, 3);
static bool eq_fail(eq_t *q, const char *fmt, ...) {
  if (!q->why || q->reported) return false;
  q->reported = true;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (q->path_len)
    snprintf(q->why, q->why_len, "%s: %s", q->path, msg);
  else
    snprintf(q->why, q->why_len, "%s", msg);
  return false;
}

/* A short description of an expression for messages: immediates and
 * variables in full, anything else by its kind. */
static const char *describe(const tir_expr_t *e, char buf[64]) {
  if (!e) return "nothing";
  switch (e->kind) {
  case TIR_INT_IMM: snprintf(buf, 64, "%" PRId64, e->u.int_value); break;
  case TIR_FLOAT_IMM: snprintf(buf, 64, "%.17g", e->u.float_value); break;
  case TIR_STRING_IMM: snprintf(buf, 64, "\"%s\"", e->u.str_value ? e->u.str_value : ""); break;
  case TIR_VAR: snprintf(buf, 64, "%s", e->u.var.name ? e->u.var.name : "?"); break;
  case TIR_BUFFER_LOAD: snprintf(buf, 64, "%s[...]", e->u.load.buffer->name); break;
  default: snprintf(buf, 64, "%s", tir_expr_kind_name(e->kind)); break;
  }
  return buf;
}

static bool eq_dtype(eq_t *q, const char *what, tir_dtype_t a, tir_dtype_t b) {
  if (tir_dtype_eq(a, b)) return true;
  char sa[24], sb[24];
  return eq_fail(q, "%s dtype differs: %s vs %s", what, tir_dtype_str(a, sa), tir_dtype_str(b, sb));
}

static bool eq_count(eq_t *q, const char *what, int a, int b) {
  return a == b || eq_fail(q, "number of %s differs: %d vs %d", what, a, b);
}

static bool eq_str(eq_t *q, const char *what, const char *a, const char *b) {
  if (strcmp(a ? a : "", b ? b : "") == 0) return true;
  return eq_fail(q, "%s differs: \"%s\" vs \"%s\"", what, a ? a : "", b ? b : "");
}

/* ------------------------------------------------------------------------ */
/* The definition pairing                                                    */
/* ------------------------------------------------------------------------ */

static bool eq_map_put(eq_t *q, tir_ptrmap_t *fwd, tir_ptrmap_t *rev, const void *a, const void *b) {
  if (!q->arena) {
    q->arena = mlc_arena_new();
    if (!q->arena) goto oom;
    q->vars.arena = q->vars_rev.arena = q->bufs.arena = q->bufs_rev.arena = q->arena;
  }
  if (tir_ptrmap_put(fwd, a, (void *)b) && tir_ptrmap_put(rev, b, (void *)a)) return true;
oom:
  mlc_error_set(MLC_ENOMEM, "structural equality: out of memory");
  return eq_fail(q, "out of memory");
}

/* Pairs two definitions. A variable defined again (the same node reused in
 * two sibling loops) is simply paired anew: definitions are scoped. */
static bool eq_def_var(eq_t *q, const tir_var_t *a, const tir_var_t *b) {
  if (!a || !b) return a == b || eq_fail(q, "variable missing on one side");
  if (a->kind != TIR_VAR || b->kind != TIR_VAR) return eq_expr(q, a, b);
  if (!eq_dtype(q, "variable", a->dtype, b->dtype)) return false;
  return eq_map_put(q, &q->vars, &q->vars_rev, a, b);
}

static bool eq_use_var(eq_t *q, const tir_var_t *a, const tir_var_t *b) {
  const void *ma = tir_ptrmap_get(&q->vars, a);
  const void *mb = tir_ptrmap_get(&q->vars_rev, b);
  bool ok = (ma || mb) ? (ma == b && mb == a) : a == b;
  if (ok) return true;
  return eq_fail(q, "variable differs: %s vs %s", a->u.var.name, b->u.var.name);
}

static bool eq_def_view(eq_t *q, const tir_buffer_t *a, const tir_buffer_t *b);

static bool eq_use_buffer(eq_t *q, const tir_buffer_t *a, const tir_buffer_t *b) {
  if (!a || !b) return a == b || eq_fail(q, "buffer missing on one side");
  const void *ma = tir_ptrmap_get(&q->bufs, a);
  const void *mb = tir_ptrmap_get(&q->bufs_rev, b);
  if (!ma && !mb && a != b && q->views) return eq_def_view(q, a, b);
  bool ok = (ma || mb) ? (ma == b && mb == a) : a == b;
  if (ok) return true;
  return eq_fail(q, "buffer differs: %s vs %s", a->name, b->name);
}

/* True when neither side has been defined or met: a bare variable there
 * (a symbolic shape var) is a definition. */
static bool eq_both_unmapped(eq_t *q, const tir_expr_t *a, const tir_expr_t *b) {
  return a && b && a->kind == TIR_VAR && b->kind == TIR_VAR && !tir_ptrmap_get(&q->vars, a) &&
         !tir_ptrmap_get(&q->vars_rev, b);
}

/* Shape, stride and offset entries of a buffer declaration. */
static bool eq_decl_expr(eq_t *q, const tir_expr_t *a, const tir_expr_t *b) {
  if (eq_both_unmapped(q, a, b) && a != b) return eq_def_var(q, a, b);
  return eq_expr(q, a, b);
}

static bool is_zero(const tir_expr_t *e) { return !e || tir_is_const_int(e, 0); }

/* Compares declaration entries without reporting, so the caller can say
 * which field of the buffer differs ("buffer shape differs: 128 vs 64"). */
static bool eq_decl_quiet(eq_t *q, const tir_expr_t *a, const tir_expr_t *b) {
  char *why = q->why;
  q->why = NULL;
  bool ok = eq_decl_expr(q, a, b);
  q->why = why;
  return ok;
}

static bool eq_decl_list(eq_t *q, const char *what, tir_expr_t *const *a, tir_expr_t *const *b, int n) {
  char da[64], db[64];
  for (int i = 0; i < n; i++)
    if (!eq_decl_quiet(q, a[i], b[i]))
      return eq_fail(q, "buffer %s differs: %s vs %s", what, describe(a[i], da), describe(b[i], db));
  return true;
}

static bool eq_buffer_layout(eq_t *q, const tir_buffer_t *a, const tir_buffer_t *b) {
  char da[64], db[64];
  if (!eq_dtype(q, "buffer", a->dtype, b->dtype)) return false;
  if (a->ndim != b->ndim) return eq_fail(q, "buffer rank differs: %d vs %d", a->ndim, b->ndim);
  if (!eq_decl_list(q, "shape", a->shape, b->shape, a->ndim)) return false;
  if (!a->strides != !b->strides) return eq_fail(q, "buffer strides present on one side only");
  if (a->strides && !eq_decl_list(q, "strides", a->strides, b->strides, a->ndim)) return false;
  /* No elem_offset means 0. */
  if (!(is_zero(a->elem_offset) && is_zero(b->elem_offset)) &&
      (!a->elem_offset || !b->elem_offset || !eq_decl_quiet(q, a->elem_offset, b->elem_offset)))
    return eq_fail(q, "buffer elem_offset differs: %s vs %s", describe(a->elem_offset, da),
                   describe(b->elem_offset, db));
  /* No scope means global (as the key writes it). */
  if (!eq_str(q, "buffer scope", a->scope ? a->scope : "global", b->scope ? b->scope : "global"))
    return false;
  if (a->align != b->align) return eq_fail(q, "buffer align differs: %d vs %d", a->align, b->align);
  if (a->offset_factor != b->offset_factor)
    return eq_fail(q, "buffer offset_factor differs: %d vs %d", a->offset_factor, b->offset_factor);
  return true;
}

static bool eq_def_buffer(eq_t *q, const tir_buffer_t *a, const tir_buffer_t *b) {
  if (!a || !b) return a == b || eq_fail(q, "buffer missing on one side");
  size_t mark = eq_push(q, "buffer %s", a->name);
  bool ok = eq_buffer_layout(q, a, b);
  if (ok && a->data && b->data) ok = eq_def_var(q, a->data, b->data);
  else if (ok && !a->data != !b->data) ok = eq_fail(q, "buffer data variable missing on one side");
  eq_pop(q, mark);
  return ok && eq_map_put(q, &q->bufs, &q->bufs_rev, a, b);
}

/* A view met for the first time on both sides (see the top of the file):
 * the data var is used when either side has it paired, so a view of C's
 * storage only equals a view of the storage C is paired with. */
static bool eq_def_view(eq_t *q, const tir_buffer_t *a, const tir_buffer_t *b) {
  size_t mark = eq_push(q, "view %s", a->name);
  bool ok = eq_buffer_layout(q, a, b);
  if (ok && (!a->data || !b->data))
    ok = a->data == b->data || eq_fail(q, "buffer data variable missing on one side");
  else if (ok && eq_both_unmapped(q, a->data, b->data) && a->data != b->data)
    ok = eq_def_var(q, a->data, b->data);
  else if (ok)
    ok = eq_use_var(q, a->data, b->data);
  eq_pop(q, mark);
  return ok && eq_map_put(q, &q->bufs, &q->bufs_rev, a, b);
}

/* ------------------------------------------------------------------------ */
/* Expressions                                                               */
/* ------------------------------------------------------------------------ */

static bool eq_exprs(eq_t *q, tir_expr_t *const *a, tir_expr_t *const *b, int n) {
  for (int i = 0; i < n; i++)
    if (!eq_expr(q, a[i], b[i])) return false;
  return true;
}

static bool eq_imm(eq_t *q, const tir_expr_t *a, const tir_expr_t *b) {
  char da[64], db[64];
  bool same;
  switch (a->kind) {
  case TIR_INT_IMM: same = a->u.int_value == b->u.int_value; break;
  case TIR_FLOAT_IMM: {
    /* Bit for bit: 0.0 and -0.0 differ, a NaN equals the same NaN. */
    uint64_t ba, bb;
    memcpy(&ba, &a->u.float_value, sizeof ba);
    memcpy(&bb, &b->u.float_value, sizeof bb);
    same = ba == bb;
    break;
  }
  default: same = strcmp(a->u.str_value ? a->u.str_value : "", b->u.str_value ? b->u.str_value : "") == 0;
  }
  return same || eq_fail(q, "value differs: %s vs %s", describe(a, da), describe(b, db));
}

static bool eq_expr_fields(eq_t *q, const tir_expr_t *a, const tir_expr_t *b) {
  switch (tir_expr_kind_shape(a->kind)) {
  case TIR_SHAPE_IMM: return eq_imm(q, a, b);
  case TIR_SHAPE_LEAF: return eq_use_var(q, a, b);
  case TIR_SHAPE_BINARY: return eq_expr(q, a->u.bin.a, b->u.bin.a) && eq_expr(q, a->u.bin.b, b->u.bin.b);
  case TIR_SHAPE_UNARY: return eq_expr(q, a->u.un.a, b->u.un.a);
  case TIR_SHAPE_SELECT:
    return eq_expr(q, a->u.select.cond, b->u.select.cond) && eq_expr(q, a->u.select.t, b->u.select.t) &&
           eq_expr(q, a->u.select.f, b->u.select.f);
  case TIR_SHAPE_LOAD:
    return eq_use_buffer(q, a->u.load.buffer, b->u.load.buffer) &&
           eq_count(q, "indices", a->u.load.nindices, b->u.load.nindices) &&
           eq_exprs(q, a->u.load.indices, b->u.load.indices, a->u.load.nindices);
  case TIR_SHAPE_RAMP:
    return eq_count(q, "ramp lanes", a->u.ramp.lanes, b->u.ramp.lanes) &&
           eq_expr(q, a->u.ramp.base, b->u.ramp.base) && eq_expr(q, a->u.ramp.stride, b->u.ramp.stride);
  case TIR_SHAPE_BROADCAST:
    return eq_count(q, "broadcast lanes", a->u.broadcast.lanes, b->u.broadcast.lanes) &&
           eq_expr(q, a->u.broadcast.value, b->u.broadcast.value);
  case TIR_SHAPE_CALL:
    if (a->u.call.op != b->u.call.op)
      return eq_fail(q, "call differs: %s vs %s", tir_op_name(a->u.call.op), tir_op_name(b->u.call.op));
    return eq_count(q, "call arguments", a->u.call.nargs, b->u.call.nargs) &&
           eq_exprs(q, a->u.call.args, b->u.call.args, a->u.call.nargs);
  }
  return false;
}

static bool eq_expr(eq_t *q, const tir_expr_t *a, const tir_expr_t *b) {
  char da[64], db[64];
  if (!a || !b) {
    if (a == b) return true;
    return eq_fail(q, "expression differs: %s vs %s", describe(a, da), describe(b, db));
  }
  if (a->kind != b->kind)
    return eq_fail(q, "expression differs: %s vs %s", describe(a, da), describe(b, db));
  if (!tir_dtype_eq(a->dtype, b->dtype)) {
    char sa[24], sb[24];
    return eq_fail(q, "dtype of %s differs: %s vs %s", describe(a, da), tir_dtype_str(a->dtype, sa),
                   tir_dtype_str(b->dtype, sb));
  }
  return eq_expr_fields(q, a, b);
}

/* ------------------------------------------------------------------------ */
/* Statements and blocks                                                     */
/* ------------------------------------------------------------------------ */

/* Annotations in order; "global_symbol" is skipped when skip_symbol (function
 * attributes only). */
static bool eq_annots(eq_t *q, const tir_annot_t *a, int na, const tir_annot_t *b, int nb,
                      bool skip_symbol) {
  int i = 0, j = 0;
  for (;;) {
    while (skip_symbol && i < na && strcmp(a[i].key, "global_symbol") == 0) i++;
    while (skip_symbol && j < nb && strcmp(b[j].key, "global_symbol") == 0) j++;
    if (i == na || j == nb) break;
    if (!eq_str(q, "annotation key", a[i].key, b[j].key)) return false;
    size_t mark = eq_push(q, "annotation \"%s\"", a[i].key);
    bool ok = eq_expr(q, a[i].value, b[j].value);
    eq_pop(q, mark);
    if (!ok) return false;
    i++, j++;
  }
  if (i == na && j == nb) return true;
  return eq_fail(q, "annotation \"%s\" present on one side only", i < na ? a[i].key : b[j].key);
}

static bool eq_region(eq_t *q, const tir_region_t *a, const tir_region_t *b) {
  if (!eq_use_buffer(q, a->buffer, b->buffer)) return false;
  if (!eq_count(q, "region dimensions", a->ndim, b->ndim)) return false;
  for (int i = 0; i < a->ndim; i++)
    if (!eq_expr(q, a->ranges[i].min, b->ranges[i].min) ||
        !eq_expr(q, a->ranges[i].extent, b->ranges[i].extent))
      return false;
  return true;
}

static bool eq_regions(eq_t *q, const char *what, const tir_region_t *a, int na, const tir_region_t *b,
                       int nb) {
  if (!eq_count(q, what, na, nb)) return false;
  for (int i = 0; i < na; i++) {
    size_t mark = eq_push(q, "%s[%d]", what, i);
    bool ok = eq_region(q, &a[i], &b[i]);
    eq_pop(q, mark);
    if (!ok) return false;
  }
  return true;
}

static bool eq_iter_vars(eq_t *q, const tir_block_t *a, const tir_block_t *b) {
  if (!eq_count(q, "iter vars", a->niter_vars, b->niter_vars)) return false;
  for (int i = 0; i < a->niter_vars; i++) {
    const tir_iter_var_t *x = &a->iter_vars[i], *y = &b->iter_vars[i];
    size_t mark = eq_push(q, "iter var %s", x->var ? x->var->u.var.name : "?");
    bool ok = eq_expr(q, x->dom.min, y->dom.min) && eq_expr(q, x->dom.extent, y->dom.extent);
    if (ok && x->type != y->type)
      ok = eq_fail(q, "iter type differs: %s vs %s", tir_iter_type_name(x->type),
                   tir_iter_type_name(y->type));
    ok = ok && eq_def_var(q, x->var, y->var);
    eq_pop(q, mark);
    if (!ok) return false;
  }
  return true;
}

static bool eq_block_buffers(eq_t *q, const tir_block_t *a, const tir_block_t *b) {
  if (!eq_count(q, "alloc_buffers", a->nalloc_buffers, b->nalloc_buffers)) return false;
  for (int i = 0; i < a->nalloc_buffers; i++)
    if (!eq_def_buffer(q, a->alloc_buffers[i], b->alloc_buffers[i])) return false;
  if (!eq_count(q, "match_buffers", a->nmatch_buffers, b->nmatch_buffers)) return false;
  for (int i = 0; i < a->nmatch_buffers; i++) {
    const tir_match_buffer_t *x = &a->match_buffers[i], *y = &b->match_buffers[i];
    if (!eq_region(q, &x->source, &y->source) || !eq_def_buffer(q, x->buffer, y->buffer)) return false;
  }
  return true;
}

static bool eq_block(eq_t *q, const tir_block_t *a, const tir_block_t *b) {
  if (!eq_str(q, "block name", a->name, b->name)) return false;
  eq_saved_path_t saved;
  eq_enter_block(q, a->name, &saved);
  bool ok = eq_iter_vars(q, a, b) && eq_block_buffers(q, a, b) &&
            eq_regions(q, "reads", a->reads, a->nreads, b->reads, b->nreads) &&
            eq_regions(q, "writes", a->writes, a->nwrites, b->writes, b->nwrites) &&
            eq_annots(q, a->annots, a->nannots, b->annots, b->nannots, false);
  if (ok && !a->init != !b->init) ok = eq_fail(q, "init present on one side only");
  if (ok && a->init) {
    size_t m2 = eq_push(q, "init");
    ok = eq_stmt(q, a->init, b->init);
    eq_pop(q, m2);
  }
  ok = ok && eq_stmt(q, a->body, b->body);
  eq_leave_block(q, &saved);
  return ok;
}

/* A missing predicate means true. */
static bool is_true(const tir_expr_t *e) {
  return !e || (e->kind == TIR_INT_IMM && tir_dtype_is_bool(e->dtype) && e->u.int_value == 1);
}

static bool eq_realize(eq_t *q, const tir_stmt_t *a, const tir_stmt_t *b) {
  const tir_block_t *ba = a->u.realize.block, *bb = b->u.realize.block;
  eq_saved_path_t saved;
  eq_enter_block(q, ba ? ba->name : NULL, &saved);
  bool ok = eq_count(q, "bindings", a->u.realize.n, b->u.realize.n) &&
            eq_exprs(q, a->u.realize.iter_values, b->u.realize.iter_values, a->u.realize.n);
  if (ok && !(is_true(a->u.realize.predicate) && is_true(b->u.realize.predicate))) {
    size_t m2 = eq_push(q, "predicate");
    ok = a->u.realize.predicate && b->u.realize.predicate
             ? eq_expr(q, a->u.realize.predicate, b->u.realize.predicate)
             : eq_fail(q, "predicate present on one side only");
    eq_pop(q, m2);
  }
  eq_leave_block(q, &saved);
  if (!ok) return false;
  if (!ba || !bb) return ba == bb || eq_fail(q, "block missing on one side");
  return eq_block(q, ba, bb);
}

static bool eq_for(eq_t *q, const tir_stmt_t *a, const tir_stmt_t *b) {
  size_t mark = eq_push(q, "for %s", a->u.loop.var ? a->u.loop.var->u.var.name : "?");
  bool ok = eq_expr(q, a->u.loop.min, b->u.loop.min) && eq_expr(q, a->u.loop.extent, b->u.loop.extent) &&
            eq_def_var(q, a->u.loop.var, b->u.loop.var);
  if (ok && a->u.loop.kind != b->u.loop.kind)
    ok = eq_fail(q, "loop kind differs: %s vs %s", tir_for_kind_name(a->u.loop.kind),
                 tir_for_kind_name(b->u.loop.kind));
  ok = ok && eq_str(q, "thread tag", a->u.loop.thread_tag, b->u.loop.thread_tag) &&
       eq_annots(q, a->u.loop.annots, a->u.loop.nannots, b->u.loop.annots, b->u.loop.nannots, false) &&
       eq_stmt(q, a->u.loop.body, b->u.loop.body);
  eq_pop(q, mark);
  return ok;
}

static bool eq_attr(eq_t *q, const tir_stmt_t *a, const tir_stmt_t *b) {
  const tir_var_t *na = a->u.attr.node, *nb = b->u.attr.node;
  bool ok;
  if (!na || !nb)
    ok = na == nb || eq_fail(q, "attribute node present on one side only");
  else if (eq_both_unmapped(q, na, nb) && na != nb)
    ok = eq_def_var(q, na, nb); /* `T.attr(tx, "thread_extent", n)` defines tx */
  else
    ok = eq_expr(q, na, nb);
  return ok && eq_str(q, "attribute key", a->u.attr.key, b->u.attr.key) &&
         eq_expr(q, a->u.attr.value, b->u.attr.value) && eq_stmt(q, a->u.attr.body, b->u.attr.body);
}

static bool eq_seq(eq_t *q, const tir_stmt_t *a, const tir_stmt_t *b) {
  if (!eq_count(q, "statements in sequence", a->u.seq.n, b->u.seq.n)) return false;
  for (int i = 0; i < a->u.seq.n; i++)
    if (!eq_stmt(q, a->u.seq.stmts[i], b->u.seq.stmts[i])) return false;
  return true;
}

static bool eq_stmt_fields(eq_t *q, const tir_stmt_t *a, const tir_stmt_t *b) {
  switch (a->kind) {
  case TIR_BUFFER_STORE:
    return eq_use_buffer(q, a->u.store.buffer, b->u.store.buffer) &&
           eq_count(q, "indices", a->u.store.nindices, b->u.store.nindices) &&
           eq_exprs(q, a->u.store.indices, b->u.store.indices, a->u.store.nindices) &&
           eq_expr(q, a->u.store.value, b->u.store.value);
  case TIR_LET:
    return eq_expr(q, a->u.let.value, b->u.let.value) && eq_def_var(q, a->u.let.var, b->u.let.var) &&
           eq_stmt(q, a->u.let.body, b->u.let.body);
  case TIR_ATTR: return eq_attr(q, a, b);
  case TIR_ASSERT:
    return eq_expr(q, a->u.assert_.cond, b->u.assert_.cond) &&
           eq_expr(q, a->u.assert_.message, b->u.assert_.message) &&
           eq_stmt(q, a->u.assert_.body, b->u.assert_.body);
  case TIR_FOR: return eq_for(q, a, b);
  case TIR_IF:
    return eq_expr(q, a->u.if_.cond, b->u.if_.cond) && eq_stmt(q, a->u.if_.then_case, b->u.if_.then_case) &&
           eq_stmt(q, a->u.if_.else_case, b->u.if_.else_case);
  case TIR_SEQ: return eq_seq(q, a, b);
  case TIR_EVALUATE: return eq_expr(q, a->u.evaluate.value, b->u.evaluate.value);
  case TIR_ALLOCATE:
    return eq_def_buffer(q, a->u.allocate.buffer, b->u.allocate.buffer) &&
           eq_stmt(q, a->u.allocate.body, b->u.allocate.body);
  case TIR_BLOCK_REALIZE: return eq_realize(q, a, b);
  case TIR_STMT_KIND_COUNT: break;
  }
  return false;
}

static bool eq_stmt(eq_t *q, const tir_stmt_t *a, const tir_stmt_t *b) {
  if (!a || !b) {
    if (a == b) return true;
    return eq_fail(q, "statement present on one side only (%s)", tir_stmt_kind_name(a ? a->kind : b->kind));
  }
  if (a->kind != b->kind)
    return eq_fail(q, "statement differs: %s vs %s", tir_stmt_kind_name(a->kind),
                   tir_stmt_kind_name(b->kind));
  return eq_stmt_fields(q, a, b);
}

/* ------------------------------------------------------------------------ */
/* Functions and the public entry points                                     */
/* ------------------------------------------------------------------------ */

static bool eq_params(eq_t *q, const tir_func_t *a, const tir_func_t *b) {
  if (!eq_count(q, "parameters", a->nparams, b->nparams)) return false;
  for (int i = 0; i < a->nparams; i++) {
    size_t mark = eq_push(q, "parameter %d (%s)", i, a->params[i] ? a->params[i]->u.var.name : "?");
    bool ok = eq_def_var(q, a->params[i], b->params[i]);
    const tir_buffer_t *x = a->buffer_map ? a->buffer_map[i] : NULL;
    const tir_buffer_t *y = b->buffer_map ? b->buffer_map[i] : NULL;
    if (ok && !x != !y) ok = eq_fail(q, "buffer present on one side only");
    if (ok && x) ok = eq_def_buffer(q, x, y);
    eq_pop(q, mark);
    if (!ok) return false;
  }
  return true;
}

static void eq_init(eq_t *q, char *why, size_t why_len) {
  memset(q, 0, sizeof *q);
  tir_ptrmap_init(&q->vars, NULL);
  tir_ptrmap_init(&q->vars_rev, NULL);
  tir_ptrmap_init(&q->bufs, NULL);
  tir_ptrmap_init(&q->bufs_rev, NULL);
  if (why && why_len) {
    q->why = why;
    q->why_len = why_len;
    why[0] = '\0';
  }
}

bool tir_func_equal(const tir_func_t *a, const tir_func_t *b, char *why, size_t why_len) {
  eq_t q;
  eq_init(&q, why, why_len);
  q.views = true;
  bool ok;
  if (!a || !b) {
    ok = a == b || eq_fail(&q, "function missing on one side");
  } else {
    ok = eq_params(&q, a, b) && eq_annots(&q, a->attrs, a->nattrs, b->attrs, b->nattrs, true) &&
         eq_stmt(&q, a->body, b->body);
  }
  mlc_arena_free(q.arena);
  return ok;
}

bool tir_stmt_equal(const tir_stmt_t *a, const tir_stmt_t *b) {
  eq_t q;
  eq_init(&q, NULL, 0);
  bool ok = eq_stmt(&q, a, b);
  mlc_arena_free(q.arena);
  return ok;
}

bool tir_expr_equal(const tir_expr_t *a, const tir_expr_t *b) {
  if (a == b) return true; /* nothing in an expression defines a variable */
  eq_t q;
  eq_init(&q, NULL, 0);
  bool ok = eq_expr(&q, a, b);
  mlc_arena_free(q.arena);
  return ok;
}
