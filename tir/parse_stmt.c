/*
 * parse_stmt.c - TVMScript statements: statement lists and suites, loops,
 * if/elif/else, `with` (blocks, T.init, T.attr), assert, stores, let-bindings,
 * declarations (variables, buffers, views) and expression statements.
 *
 * A statement list is parsed into items first and built back to front:
 * let-bindings, asserts and T.decl_buffer take the rest of their list as
 * their body (as in TVM's IR), which makes them nest without the parser
 * recursing once per binding. Every list is a lexical scope: names declared in
 * it (loop and let variables, buffers) disappear when it ends.
 */
#include "tir/parse_internal.h"

#include <string.h>

typedef struct {
  tir_stmt_t *s;
  bool opens; /* its body is the rest of the list */
} item_t;

static tir_stmt_t *parse_stmt(parser_t *p, bool *opens);

static tir_stmt_t *parse_empty_body(parser_t *p) { return tir_evaluate(p->arena, tir_i32(p->arena, 0)); }

static void set_body(tir_stmt_t *s, tir_stmt_t *body) {
  switch (s->kind) {
  case TIR_LET: s->u.let.body = body; break;
  case TIR_ASSERT: s->u.assert_.body = body; break;
  case TIR_ALLOCATE: s->u.allocate.body = body; break;
  default: MLC_PANIC("statement kind %d takes no body", (int)s->kind);
  }
}

/* tail holds statements in reverse order. */
static tir_stmt_t *seq_of_reversed(parser_t *p, tir_stmt_t **tail, int n) {
  if (n == 0) return parse_empty_body(p);
  tir_stmt_t **in_order = mlc_arena_alloc(p->tmp, sizeof(*in_order) * (size_t)n);
  for (int i = 0; i < n; i++) in_order[i] = tail[n - 1 - i];
  return tir_seq(p->arena, in_order, n);
}

static tir_stmt_t *build_list(parser_t *p, const item_t *items, int n) {
  tir_stmt_t **tail = mlc_arena_alloc(p->tmp, sizeof(*tail) * (size_t)(n + 1));
  int ntail = 0;
  for (int i = n - 1; i >= 0; i--) {
    if (items[i].opens) {
      set_body(items[i].s, seq_of_reversed(p, tail, ntail));
      ntail = 0;
    }
    tail[ntail++] = items[i].s;
  }
  return seq_of_reversed(p, tail, ntail);
}

/* Statements until DEDENT or EOF, or just one when `single`. */
static tir_stmt_t *parse_list(parser_t *p, list_kind_t kind, bool single) {
  list_kind_t saved_list = p->list;
  int saved_lets = p->open_lets;
  int mark = scope_mark(p);
  p->list = kind;
  PVEC(item_t) items = {0};
  while (peek(p)->kind != TK_DEDENT && peek(p)->kind != TK_EOF) {
    if (p->depth + p->open_lets > PARSE_MAX_HEIGHT) parse_fail(p, peek(p), "nesting too deep");
    item_t it = {0};
    it.s = parse_stmt(p, &it.opens);
    if (it.s) pvec_push(p, &items, it);
    if (it.opens) p->open_lets++;
    if (single) break;
  }
  scope_restore(p, mark);
  p->open_lets = saved_lets;
  p->list = saved_list;
  return build_list(p, items.data, items.len);
}

/* suite = ":" NEWLINE INDENT stmt+ DEDENT | ":" simple_stmt */
tir_stmt_t *parse_suite(parser_t *p, list_kind_t kind) {
  expect_op(p, ":");
  if (peek(p)->kind != TK_NEWLINE) return parse_list(p, kind, true);
  advance(p);
  const tok_t *t = peek(p);
  if (t->kind != TK_INDENT)
    parse_fail(p, t, "expected an indented block but found '%s'", tok_desc(p, t));
  advance(p);
  tir_stmt_t *body = parse_list(p, kind, false);
  if (peek(p)->kind == TK_DEDENT) advance(p);
  return body;
}

/* ------------------------------------------------------------------------ */
/* Loops                                                                     */
/* ------------------------------------------------------------------------ */

/*      spelling          kind */
#define LOOP_KINDS(X)                      \
  X("serial",         TIR_FOR_SERIAL)      \
  X("parallel",       TIR_FOR_PARALLEL)    \
  X("vectorized",     TIR_FOR_VECTORIZED)  \
  X("unroll",         TIR_FOR_UNROLLED)    \
  X("thread_binding", TIR_FOR_THREAD_BINDING)

static const struct {
  const char *name;
  tir_for_kind_t kind;
} loop_kinds[] = {
#define ROW_(name, kind) {name, kind},
    LOOP_KINDS(ROW_)
#undef ROW_
};

typedef struct {
  tir_for_kind_t kind;
  tir_expr_t *min, *extent;
  const char *thread;
  tir_annot_t *annots;
  int nannots;
} loop_t;

/* [start, stop) or [0, stop) into min and extent. */
static void loop_range(parser_t *p, const tok_t *t, const char *op, loop_t *l, pexpr_t *a, int n) {
  pexpr_t start = n == 2 ? a[0] : pexpr_lit_int(p, t, 0);
  pexpr_t stop = n == 2 ? a[1] : a[0];
  l->extent = range_extent(p, t, op, &start, &stop);
  l->min = start.e;
}

/* range = "range" "(" expr ("," expr)? ")" */
static void parse_range(parser_t *p, const tok_t *t, loop_t *l) {
  pexpr_t a[2];
  int n = 0;
  expect_op(p, "(");
  while (!tok_is_op(peek(p), ")")) {
    if (n == 2) parse_fail(p, peek(p), "range() with a step is not supported");
    a[n++] = parse_index_pexpr(p, "a loop bound");
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, ")");
  if (n == 0) parse_fail(p, t, "range() needs a bound");
  l->kind = TIR_FOR_SERIAL;
  loop_range(p, t, "range", l, a, n);
}

/* kind_loop = ("T.serial" | ...) "(" expr ("," expr)? ("," STRING)?
 *             ("," "thread" "=" STRING)? ("," "annotations" "=" dict)? ")" */
static void parse_kind_loop(parser_t *p, const tok_t *t, const char *path, loop_t *l) {
  pexpr_t a[2];
  int n = 0;
  expect_op(p, "(");
  while (!tok_is_op(peek(p), ")")) {
    if (at_kwarg(p)) {
      const tok_t *key = advance(p);
      advance(p);
      if (tok_is_name(key, "annotations"))
        l->nannots = parse_annotations(p, &l->annots);
      else if (tok_is_name(key, "thread"))
        l->thread = expect_string(p, "a thread tag")->str;
      else
        parse_fail(p, key, "unknown keyword argument '%s'", tok_desc(p, key));
    } else if (peek(p)->kind == TK_STRING && l->kind == TIR_FOR_THREAD_BINDING) {
      l->thread = advance(p)->str;
    } else {
      if (n == 2) parse_fail(p, peek(p), "too many arguments to 'T.%s'", path);
      a[n++] = parse_index_pexpr(p, "a loop bound");
    }
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, ")");
  if (n == 0) parse_fail(p, t, "'T.%s' needs a bound", path);
  if (l->kind == TIR_FOR_THREAD_BINDING && !l->thread)
    parse_fail(p, t, "'T.thread_binding' needs thread=\"...\"");
  if (l->kind != TIR_FOR_THREAD_BINDING && l->thread)
    parse_fail(p, t, "'T.%s' takes no thread", path);
  loop_range(p, t, mlc_arena_printf(p->tmp, "T.%s", path), l, a, n);
}

/* grid = "T.grid" "(" expr ("," expr)* ")": one serial loop per variable. */
static void parse_grid(parser_t *p, const tok_t *t, loop_t *loops, int n) {
  PVEC(tir_expr_t *) extents = {0};
  expect_op(p, "(");
  while (!tok_is_op(peek(p), ")")) {
    pvec_push(p, &extents, parse_index_pexpr(p, "a loop extent").e);
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, ")");
  int k = extents.len;
  if (k != n)
    parse_fail(p, t, "T.grid: %d extent%s for %d variable%s", k, k == 1 ? "" : "s", n,
               n == 1 ? "" : "s");
  for (int i = 0; i < n; i++) {
    loops[i].kind = TIR_FOR_SERIAL;
    loops[i].extent = extents.data[i];
    loops[i].min = tir_int(p->arena, extents.data[i]->dtype, 0);
  }
}

static void parse_loop_iter(parser_t *p, loop_t *loops, int n) {
  const tok_t *t = peek(p);
  if (tok_is_name(t, "range")) {
    advance(p);
    if (n != 1) parse_fail(p, t, "range() defines one loop variable but %d are given", n);
    parse_range(p, t, &loops[0]);
    return;
  }
  if (!at_t_attr(p, NULL))
    parse_fail(p, t, "expected 'range' or a T loop but found '%s'", tok_desc(p, t));
  const tok_t *first;
  const char *path = parse_t_path(p, &first);
  if (strcmp(path, "grid") == 0) {
    parse_grid(p, first, loops, n);
    return;
  }
  for (size_t i = 0; i < sizeof loop_kinds / sizeof *loop_kinds; i++) {
    if (strcmp(loop_kinds[i].name, path) != 0) continue;
    if (n != 1) parse_fail(p, first, "'T.%s' defines one loop variable but %d are given", path, n);
    loops[0].kind = loop_kinds[i].kind;
    parse_kind_loop(p, first, path, &loops[0]);
    return;
  }
  parse_fail(p, first, "unknown loop kind 'T.%s'", path);
}

/* for_stmt = "for" NAME ("," NAME)* "in" loop_iter suite */
static tir_stmt_t *parse_for(parser_t *p) {
  const tok_t *for_tok = advance(p);
  PVEC(const tok_t *) names = {0};
  do {
    if (names.len >= PARSE_MAX_DEPTH) parse_fail(p, peek(p), "nesting too deep");
    pvec_push(p, &names, expect_name(p, "a loop variable"));
  } while (accept_op(p, ","));
  const tok_t *in = peek(p);
  if (!tok_is_name(in, "in")) parse_fail(p, in, "expected 'in' but found '%s'", tok_desc(p, in));
  advance(p);
  int n = names.len;
  loop_t *loops = mlc_arena_alloc(p->tmp, sizeof(*loops) * (size_t)n);
  parse_loop_iter(p, loops, n);
  int mark = scope_mark(p);
  tir_var_t **vars = mlc_arena_alloc(p->tmp, sizeof(*vars) * (size_t)n);
  for (int i = 0; i < n; i++) {
    vars[i] = tir_var(p->arena, tok_strdup(p, names.data[i]), loops[i].extent->dtype);
    sym_t *s = scope_declare(p, names.data[i], SYM_VAR);
    s->var = vars[i];
    s->loop_min = loops[i].min;
    s->loop_extent = loops[i].extent;
  }
  p->depth += n;
  parse_enter(p, for_tok);
  tir_stmt_t *body = parse_suite(p, LIST_OTHER);
  parse_leave(p);
  p->depth -= n;
  scope_restore(p, mark);
  for (int i = n - 1; i >= 0; i--) {
    body = tir_for(p->arena, vars[i], loops[i].min, loops[i].extent, loops[i].kind, body);
    body->u.loop.thread_tag = loops[i].thread ? mlc_arena_strdup(p->arena, loops[i].thread) : NULL;
    body->u.loop.annots = loops[i].annots;
    body->u.loop.nannots = loops[i].nannots;
  }
  return body;
}

/* ------------------------------------------------------------------------ */
/* if, with, assert                                                          */
/* ------------------------------------------------------------------------ */

/* if_stmt = ("if" | "elif") expr suite ("elif" ... | "else" suite)? */
static tir_stmt_t *parse_if(parser_t *p) {
  const tok_t *t = advance(p);
  parse_enter(p, t);
  tir_expr_t *cond = parse_cond(p, "the if condition");
  tir_stmt_t *then_case = parse_suite(p, LIST_OTHER);
  tir_stmt_t *else_case = NULL;
  if (tok_is_name(peek(p), "elif")) {
    else_case = parse_if(p);
  } else if (tok_is_name(peek(p), "else")) {
    advance(p);
    else_case = parse_suite(p, LIST_OTHER);
  }
  parse_leave(p);
  return tir_if(p->arena, cond, then_case, else_case);
}

/* attr = "T.attr" "(" (NAME | NAME ".data" | None | INT | STRING) "," STRING ","
 *        expr ")" suite */
static tir_stmt_t *parse_attr(parser_t *p, const tok_t *with_tok) {
  const tok_t *first;
  parse_t_path(p, &first);
  expect_op(p, "(");
  const tok_t *n = advance(p);
  tir_var_t *node = NULL;
  if (n->kind == TK_NAME && !tok_is_keyword(n)) {
    sym_t *s = scope_lookup(p, n->text, n->len);
    if (!s) parse_fail(p, n, "unknown name '%s'", tok_desc(p, n));
    if (s->kind == SYM_BUFFER && tok_is_op(peek(p), "."))
      node = parse_buffer_data(p, n, s->buffer);
    else if (s->kind != SYM_VAR)
      parse_fail(p, n, "'T.attr' takes a variable, not buffer '%s'", tok_desc(p, n));
    else
      node = s->var;
  } else if (!tok_is_name(n, "None") && n->kind != TK_INT && n->kind != TK_STRING) {
    parse_fail(p, n, "expected the attribute's node but found '%s'", tok_desc(p, n));
  }
  expect_op(p, ",");
  const char *key = expect_string(p, "the attribute key")->str;
  expect_op(p, ",");
  tir_expr_t *value = parse_expr(p);
  accept_op(p, ",");
  expect_op(p, ")");
  parse_enter(p, with_tok);
  tir_stmt_t *body = parse_suite(p, LIST_OTHER);
  parse_leave(p);
  return tir_attr_stmt(p->arena, node, key, value, body);
}

/* with_stmt = "with" (block | init | attr) */
static tir_stmt_t *parse_with(parser_t *p) {
  const tok_t *t = advance(p);
  if (at_t_attr(p, "block") || at_t_attr(p, "sblock")) return parse_block(p, t);
  if (at_t_attr(p, "init")) return parse_init(p, t);
  if (at_t_attr(p, "attr")) return parse_attr(p, t);
  parse_fail(p, peek(p), "expected 'T.block', 'T.init' or 'T.attr' after 'with' but found '%s'",
             tok_desc(p, peek(p)));
}

/* assert_stmt = "assert" expr ("," expr)? NEWLINE; the rest is its body. */
static tir_stmt_t *parse_assert(parser_t *p) {
  advance(p);
  tir_expr_t *cond = parse_cond(p, "the assert condition");
  tir_expr_t *msg = accept_op(p, ",") ? parse_expr(p) : tir_string(p->arena, "");
  expect_newline(p);
  return tir_assert_stmt(p->arena, cond, msg, NULL);
}

/* ------------------------------------------------------------------------ */
/* Assignments                                                               */
/* ------------------------------------------------------------------------ */

static const struct {
  const char *op;
  tir_expr_kind_t kind;
} aug_ops[] = {{"+=", TIR_ADD}, {"-=", TIR_SUB}, {"*=", TIR_MUL},
               {"/=", TIR_DIV}, {"//=", TIR_FLOOR_DIV}, {"%=", TIR_FLOOR_MOD}};

/* store = NAME "[" indices "]" ("=" | "+=" | "-=" | ...) expr NEWLINE */
static tir_stmt_t *parse_store(parser_t *p, const tok_t *name, tir_buffer_t *b) {
  tir_expr_t **idx;
  int h;
  int n = parse_indices(p, b, name, &idx, &h);
  const tok_t *op = advance(p);
  int aug = -1;
  for (int i = 0; i < (int)(sizeof aug_ops / sizeof *aug_ops); i++)
    if (tok_is_op(op, aug_ops[i].op)) aug = i;
  if (aug < 0 && !tok_is_op(op, "=")) parse_fail(p, op, "expected '=' but found '%s'", tok_desc(p, op));
  pexpr_t value = parse_pexpr(p);
  tir_expr_t *load = tir_load(p->arena, b, idx, n);
  if (aug >= 0) {
    char opname[4] = {0};
    memcpy(opname, op->text, op->len - 1);
    value = make_binary(p, op, opname, aug_ops[aug].kind, pexpr_of(p, op, load, h + 1), value);
  }
  value = coerce(p, op, "=", value, load->dtype);
  expect_newline(p);
  return tir_store(p->arena, b, value.e, idx, n);
}

/* let = NAME ":" T.dtype "=" expr NEWLINE; the rest of the list is its body. */
static tir_stmt_t *parse_annotated_let(parser_t *p, const tok_t *name) {
  expect_op(p, ":");
  const tok_t *first;
  if (!at_t_attr(p, NULL)) parse_fail(p, peek(p), "expected a type but found '%s'", tok_desc(p, peek(p)));
  const char *path = parse_t_path(p, &first);
  tir_dtype_t dt;
  if (!dtype_from_path(path, &dt)) parse_fail(p, first, "unknown dtype '%s'", path);
  const tok_t *eq = expect_op(p, "=");
  pexpr_t v = coerce(p, eq, "=", parse_pexpr(p), dt);
  expect_newline(p);
  tir_var_t *var = tir_var(p->arena, tok_strdup(p, name), dt);
  scope_declare(p, name, SYM_VAR)->var = var;
  return tir_let_stmt(p->arena, var, v.e, NULL);
}

/* The `T.a.b` path at the cursor, without moving; NULL when not at `T.`. */
static const char *peek_t_path(parser_t *p) {
  if (!at_t_attr(p, NULL)) return NULL;
  int save = p->pos;
  const tok_t *first;
  const char *path = parse_t_path(p, &first);
  p->pos = save;
  return path;
}

/* `n = T.int32()`, `n = T.int64(is_size_var=True)`, `n = T.var("int32")`. */
static bool try_var_decl(parser_t *p, const tok_t *name, const char *path) {
  tir_dtype_t dt;
  bool is_var = strcmp(path, "var") == 0;
  int save = p->pos;
  const tok_t *first;
  if (!is_var && !dtype_from_path(path, &dt)) return false;
  parse_t_path(p, &first);
  expect_op(p, "(");
  if (is_var) {
    dt = parse_dtype_string(p);
    accept_op(p, ",");
  } else if (tok_is_name(peek(p), "is_size_var") && tok_is_op(peek_at(p, 1), "=")) {
    advance(p);
    advance(p);
    advance(p);
  } else if (!tok_is_op(peek(p), ")")) {
    p->pos = save; /* T.int32(5): a value, not a declaration */
    return false;
  }
  expect_op(p, ")");
  scope_declare(p, name, SYM_VAR)->var = tir_var(p->arena, tok_strdup(p, name), dt);
  return true;
}

/* assign = NAME "=" (declaration | expr) NEWLINE */
static tir_stmt_t *parse_name_assign(parser_t *p, const tok_t *name, bool *opens) {
  advance(p); /* = */
  const char *path = peek_t_path(p);
  tir_stmt_t *s = NULL;
  const tok_t *first = peek(p);
  if (path && (strcmp(path, "alloc_buffer") == 0 || strcmp(path, "sblock_alloc_buffer") == 0)) {
    parse_t_path(p, &first);
    parse_alloc_buffer(p, name, first);
  } else if (path && strcmp(path, "decl_buffer") == 0) {
    parse_t_path(p, &first);
    s = parse_decl_buffer(p, name, first);
    *opens = true;
  } else if (path && strcmp(path, "match_buffer") == 0) {
    parse_t_path(p, &first);
    parse_match_buffer(p, name, first);
  } else if (path && strncmp(path, "axis.", 5) == 0) {
    parse_axis_assign(p, &name, 1);
  } else if (path && strcmp(path, "Buffer") == 0) {
    parse_t_path(p, &first);
    parse_buffer_view(p, name, first);
  } else if (!path || !try_var_decl(p, name, path)) {
    pexpr_t v = parse_pexpr(p); /* x = e: a let-binding of e's dtype */
    tir_var_t *var = tir_var(p->arena, tok_strdup(p, name), v.e->dtype);
    scope_declare(p, name, SYM_VAR)->var = var;
    s = tir_let_stmt(p->arena, var, v.e, NULL);
    *opens = true;
  }
  expect_newline(p);
  return s;
}

/* tuple_assign = NAME ("," NAME)+ "=" ("T.axis.remap" "(" ... ")" | decl ("," decl)*) NEWLINE
 * where decl is a symbolic variable declaration (`m, n = T.int32(), T.int32()`). */
static void parse_tuple_assign(parser_t *p) {
  PVEC(const tok_t *) names = {0};
  do {
    if (tok_is_op(peek(p), "=")) break;
    pvec_push(p, &names, expect_name(p, "a variable name"));
  } while (accept_op(p, ","));
  expect_op(p, "=");
  if (at_t_attr(p, "axis")) {
    parse_axis_assign(p, names.data, names.len);
    expect_newline(p);
    return;
  }
  for (int i = 0; i < names.len; i++) {
    const char *path = peek_t_path(p);
    if (!path || !try_var_decl(p, names.data[i], path))
      parse_fail(p, peek(p), "expected 'T.axis.remap' or variable declarations but found '%s'",
                 tok_desc(p, peek(p)));
    if (i + 1 < names.len) expect_op(p, ",");
  }
  accept_op(p, ",");
  expect_newline(p);
}

/* ------------------------------------------------------------------------ */
/* Statements                                                                */
/* ------------------------------------------------------------------------ */

/* func_attr = "T.func_attr" "(" annotations ")"; several calls add up. */
static void parse_func_attr(parser_t *p, const tok_t *t) {
  if (p->list != LIST_FUNC || p->blk) parse_fail(p, t, "'T.func_attr' is only allowed at function level");
  tir_func_t *f = p->fn->f;
  expect_op(p, "(");
  tir_annot_t *a;
  int n = parse_annotations(p, &a);
  accept_op(p, ",");
  expect_op(p, ")");
  tir_annot_t *all = mlc_arena_alloc(p->arena, sizeof(*all) * (size_t)(f->nattrs + n + 1));
  if (f->nattrs) memcpy(all, f->attrs, sizeof(*all) * (size_t)f->nattrs);
  if (n) memcpy(all + f->nattrs, a, sizeof(*all) * (size_t)n);
  f->attrs = all;
  f->nattrs += n;
}

/* T statements: T.func_attr, T.reads, T.writes, T.where, T.block_attr,
 * T.evaluate; any other T call is an expression statement. */
static bool parse_t_stmt(parser_t *p, tir_stmt_t **out) {
  const char *path = peek_t_path(p);
  const tok_t *t;
  if (strcmp(path, "reads") == 0 || strcmp(path, "writes") == 0) {
    parse_t_path(p, &t);
    parse_reads_writes(p, t, path[0] == 'w');
  } else if (strcmp(path, "where") == 0) {
    parse_t_path(p, &t);
    parse_where(p, t);
  } else if (strcmp(path, "block_attr") == 0) {
    parse_t_path(p, &t);
    parse_block_attr(p, t);
  } else if (strcmp(path, "func_attr") == 0) {
    parse_t_path(p, &t);
    parse_func_attr(p, t);
  } else if (strcmp(path, "evaluate") == 0) {
    parse_t_path(p, &t);
    expect_op(p, "(");
    *out = tir_evaluate(p->arena, parse_expr(p));
    accept_op(p, ",");
    expect_op(p, ")");
  } else {
    return false;
  }
  expect_newline(p);
  return true;
}

static tir_stmt_t *parse_name_stmt(parser_t *p, bool *opens) {
  const tok_t *t = peek(p), *next = peek_at(p, 1);
  if (tok_is_name(t, "for")) return parse_for(p);
  if (tok_is_name(t, "if")) return parse_if(p);
  if (tok_is_name(t, "with")) return parse_with(p);
  if (tok_is_name(t, "assert")) {
    *opens = true;
    return parse_assert(p);
  }
  if (tok_is_name(t, "pass")) {
    advance(p);
    expect_newline(p);
    return NULL;
  }
  if (tok_is_keyword(t) && !tok_is_name(t, "not") && !tok_is_name(t, "True") &&
      !tok_is_name(t, "False"))
    parse_fail(p, t, "expected a statement but found '%s'", tok_desc(p, t));
  if (tok_is_op(next, "=")) {
    advance(p);
    return parse_name_assign(p, t, opens);
  }
  if (tok_is_op(next, ",")) {
    parse_tuple_assign(p);
    return NULL;
  }
  if (tok_is_op(next, ":")) {
    advance(p);
    *opens = true;
    return parse_annotated_let(p, t);
  }
  sym_t *s = scope_lookup(p, t->text, t->len);
  if (tok_is_op(next, "[") && s && s->kind == SYM_BUFFER) {
    advance(p);
    return parse_store(p, t, s->buffer);
  }
  for (size_t i = 0; i < sizeof aug_ops / sizeof *aug_ops; i++)
    if (tok_is_op(next, aug_ops[i].op))
      parse_fail(p, next, "'%s' needs a buffer element on its left", aug_ops[i].op);
  return NULL;
}

/* stmt = for_stmt | if_stmt | with_stmt | assert_stmt | "pass" | assignment
 *      | store | T_stmt | expr NEWLINE */
static tir_stmt_t *parse_stmt(parser_t *p, bool *opens) {
  const tok_t *t = peek(p);
  *opens = false;
  if (t->kind == TK_INDENT) parse_fail(p, t, "unexpected indent");
  tir_stmt_t *s = NULL;
  if (at_t_attr(p, NULL) && parse_t_stmt(p, &s)) return s;
  if (t->kind == TK_NAME && !at_t_attr(p, NULL)) {
    int save = p->pos;
    s = parse_name_stmt(p, opens);
    if (s || p->pos != save) return s;
  }
  /* An expression statement: a bare call is T.evaluate of it; a string
   * alone is a docstring and means nothing. */
  tir_expr_t *e = parse_expr(p);
  expect_newline(p);
  if (e->kind == TIR_STRING_IMM) return NULL;
  return tir_evaluate(p->arena, e);
}
