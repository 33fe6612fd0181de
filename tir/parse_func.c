/*
 * parse_func.c - the top of a TVMScript file: import lines, decorators,
 * `@I.ir_module class Name:` modules and `@T.prim_func def name(params):`
 * functions, with their parameters and the implicit root block.
 *
 * Parameters are read in two passes because a buffer's shape may name a
 * scalar parameter that comes after it (`A: T.Buffer((n,), "float32"), n:
 * T.int32`): the first pass declares handles and scalars and skips buffer
 * annotations, the second goes back and reads those.
 */
#include "tir/parse_internal.h"

#include <string.h>

/* The decorators we know, by spelling. */
typedef enum { DECO_PRIM_FUNC, DECO_IR_MODULE } deco_t;

static const struct {
  const char *name;
  deco_t kind;
} decorators[] = {
    {"T.prim_func", DECO_PRIM_FUNC},        {"tir.prim_func", DECO_PRIM_FUNC},
    {"prim_func", DECO_PRIM_FUNC},          {"tvm.script.tir.prim_func", DECO_PRIM_FUNC},
    {"I.ir_module", DECO_IR_MODULE},        {"ir_module", DECO_IR_MODULE},
    {"tvm.script.ir_module", DECO_IR_MODULE}, {"tvm.script.ir.ir_module", DECO_IR_MODULE},
};

/* decorator = "@" NAME ("." NAME)* ("(" (NAME "=" atom ("," ...)*)? ")")? NEWLINE
 * Keyword arguments (private=True, s_tir=True, check_well_formed=False) are
 * accepted and ignored: they do not change the IR. */
static deco_t parse_decorator(parser_t *p) {
  expect_op(p, "@");
  const tok_t *first = peek(p);
  char name[96];
  size_t n = 0;
  do {
    const tok_t *part = expect_name(p, "a decorator name");
    if (n + part->len + 2 >= sizeof name) parse_fail(p, part, "decorator name too long");
    if (n) name[n++] = '.';
    memcpy(name + n, part->text, part->len);
    n += part->len;
  } while (accept_op(p, "."));
  name[n] = '\0';
  if (accept_op(p, "(")) {
    while (!tok_is_op(peek(p), ")")) {
      expect_name(p, "a keyword argument");
      expect_op(p, "=");
      const tok_t *v = advance(p);
      if (v->kind != TK_NAME && v->kind != TK_INT && v->kind != TK_STRING)
        parse_fail(p, v, "expected a constant but found '%s'", tok_desc(p, v));
      if (!accept_op(p, ",")) break;
    }
    expect_op(p, ")");
  }
  expect_newline(p);
  for (size_t i = 0; i < sizeof decorators / sizeof *decorators; i++)
    if (strcmp(decorators[i].name, name) == 0) return decorators[i].kind;
  parse_fail(p, first, "unknown decorator '@%s'", name);
}

/* ------------------------------------------------------------------------ */
/* Parameters                                                                */
/* ------------------------------------------------------------------------ */

static void skip_balanced(parser_t *p) {
  int depth = 0;
  do {
    const tok_t *t = peek(p);
    if (t->kind == TK_EOF) parse_fail(p, t, "expected ')' but found 'end of input'");
    if (tok_is_op(t, "(") || tok_is_op(t, "[") || tok_is_op(t, "{")) depth++;
    if (tok_is_op(t, ")") || tok_is_op(t, "]") || tok_is_op(t, "}")) depth--;
    advance(p);
  } while (depth > 0);
}

typedef struct {
  const tok_t *name;
  int type_pos; /* buffer parameters: where `T.Buffer` starts; else -1 */
} param_t;

/* param = NAME ":" ("T.Buffer" ... | "T.handle" ("(" ... ")")? | "T." DTYPE) */
static param_t parse_param_pass1(parser_t *p, tir_func_t *f, const param_t *prev, int index) {
  param_t prm = {expect_name(p, "a parameter name"), -1};
  for (int i = 0; i < index; i++)
    if (prev[i].name->len == prm.name->len &&
        memcmp(prev[i].name->text, prm.name->text, prm.name->len) == 0)
      parse_fail(p, prm.name, "duplicate parameter '%s'", tok_desc(p, prm.name));
  expect_op(p, ":");
  if (at_t_attr(p, "Buffer")) {
    prm.type_pos = p->pos;
    advance(p);
    advance(p);
    advance(p);
    if (!tok_is_op(peek(p), "(") && !tok_is_op(peek(p), "["))
      parse_fail(p, peek(p), "expected '(' but found '%s'", tok_desc(p, peek(p)));
    skip_balanced(p); /* declared in pass 2 */
    return prm;
  }
  if (!at_t_attr(p, NULL))
    parse_fail(p, peek(p), "expected a parameter type but found '%s'", tok_desc(p, peek(p)));
  const tok_t *first;
  const char *path = parse_t_path(p, &first);
  tir_dtype_t dt;
  if (!dtype_from_path(path, &dt)) parse_fail(p, first, "unknown dtype '%s'", path);
  /* T.handle("float32", "global") in lowered code: the pointee is not kept. */
  if (tir_dtype_is_handle(dt) && tok_is_op(peek(p), "(")) skip_balanced(p);
  tir_var_t *v = tir_var(p->arena, tok_strdup(p, prm.name), dt);
  f->params[index] = v;
  sym_t *s = scope_declare(p, prm.name, SYM_VAR);
  s->var = v;
  if (tir_dtype_is_handle(dt)) s->param_index = index;
  return prm;
}

/* T.Buffer((128, 128), "float32"), T.Buffer([128], dtype="float32") or the
 * old subscript form T.Buffer[(128,), "float32"]. */
static void parse_param_buffer(parser_t *p, tir_func_t *f, int index, const param_t *prm) {
  int resume = p->pos;
  p->pos = prm->type_pos;
  const tok_t *first;
  parse_t_path(p, &first);
  const char *close = tok_is_op(advance(p), "(") ? ")" : "]";
  buffer_spec_t spec;
  parse_buffer_args(p, &spec, close, "T.Buffer");
  expect_op(p, close);
  p->pos = resume;
  tir_buffer_t *b = buffer_from_spec(p, prm->name, &spec);
  f->params[index] = tir_var(p->arena, b->name, tir_dt_HANDLE());
  f->buffer_map[index] = b;
  scope_declare(p, prm->name, SYM_BUFFER)->buffer = b;
}

/* params = "(" (param ("," param)* ","?)? ")" */
static void parse_params(parser_t *p, tir_func_t *f) {
  expect_op(p, "(");
  int start = p->pos, n = 0;
  while (!tok_is_op(peek(p), ")")) { /* count first: params are arrays */
    if (peek(p)->kind == TK_EOF) break;
    if (tok_is_op(peek(p), ",")) n++;
    if (tok_is_op(peek(p), "(") || tok_is_op(peek(p), "[") || tok_is_op(peek(p), "{"))
      skip_balanced(p);
    else
      advance(p);
  }
  if (p->pos > start && !tok_is_op(peek_at(p, -1), ",")) n++;
  p->pos = start;
  f->params = mlc_arena_alloc(p->arena, sizeof(*f->params) * (size_t)(n + 1));
  f->buffer_map = mlc_arena_alloc(p->arena, sizeof(*f->buffer_map) * (size_t)(n + 1));
  param_t *prms = mlc_arena_alloc(p->tmp, sizeof(*prms) * (size_t)(n + 1));
  int k = 0;
  while (!tok_is_op(peek(p), ")")) {
    if (k >= n) parse_fail(p, peek(p), "expected ')' but found '%s'", tok_desc(p, peek(p)));
    prms[k] = parse_param_pass1(p, f, prms, k);
    k++;
    if (!accept_op(p, ",")) break;
  }
  expect_op(p, ")");
  f->nparams = k;
  for (int i = 0; i < k; i++)
    if (prms[i].type_pos >= 0) parse_param_buffer(p, f, i, &prms[i]);
}

/* ------------------------------------------------------------------------ */
/* Functions and modules                                                     */
/* ------------------------------------------------------------------------ */

/* The implicit root block: a body with blocks or root allocations that is
 * not exactly one explicit root block is wrapped in a block named "root". */
static tir_stmt_t *wrap_root(parser_t *p, func_ctx_t *fn, tir_stmt_t *body) {
  if (fn->nblocks == 0 && fn->root_allocs.len == 0) return body;
  if (fn->root_allocs.len == 0 && body->kind == TIR_BLOCK_REALIZE &&
      body->u.realize.block->niter_vars == 0 && strcmp(body->u.realize.block->name, "root") == 0)
    return body;
  tir_block_t *root = tir_block_new(p->arena, "root");
  root->nalloc_buffers = fn->root_allocs.len;
  root->alloc_buffers = parse_dup(p, fn->root_allocs.data, fn->root_allocs.len, sizeof(tir_buffer_t *));
  root->body = body;
  return tir_block_realize(p->arena, NULL, 0, tir_bool(p->arena, true), root);
}

/* func = "def" NAME params ("->" ("None" | type))? suite */
static tir_func_t *parse_function(parser_t *p) {
  const tok_t *def = peek(p);
  if (!tok_is_name(def, "def")) parse_fail(p, def, "expected 'def' but found '%s'", tok_desc(p, def));
  advance(p);
  const tok_t *name = expect_name(p, "a function name");
  tir_func_t *f = mlc_arena_alloc(p->arena, sizeof *f);
  f->arena = p->arena;
  f->name = tok_strdup(p, name);
  func_ctx_t fn = {.f = f};
  p->fn = &fn;
  p->blk = NULL;
  int mark = scope_mark(p);
  parse_params(p, f);
  if (accept_op(p, "->")) {
    const tok_t *first;
    if (tok_is_name(peek(p), "None")) advance(p);
    else if (at_t_attr(p, NULL)) parse_t_path(p, &first);
    else parse_fail(p, peek(p), "expected a return type but found '%s'", tok_desc(p, peek(p)));
  }
  tir_stmt_t *body = parse_suite(p, LIST_FUNC);
  scope_restore(p, mark);
  f->body = wrap_root(p, &fn, body);
  p->fn = NULL;
  return f;
}

static void add_function(parser_t *p, void *vec, const tok_t *at, tir_func_t *f) {
  PVEC(tir_func_t *) *funcs = vec;
  for (int i = 0; i < funcs->len; i++)
    if (strcmp(funcs->data[i]->name, f->name) == 0)
      parse_fail(p, at, "duplicate function '%s'", f->name);
  pvec_push(p, funcs, f);
}

/* module = "class" NAME ("(" ")")? ":" NEWLINE INDENT (decorator func)+ DEDENT */
static void parse_module_class(parser_t *p, void *funcs) {
  const tok_t *cls = peek(p);
  if (!tok_is_name(cls, "class")) parse_fail(p, cls, "expected 'class' but found '%s'", tok_desc(p, cls));
  advance(p);
  p->module->name = tok_strdup(p, expect_name(p, "a class name"));
  if (accept_op(p, "(")) expect_op(p, ")");
  expect_op(p, ":");
  expect_newline(p);
  const tok_t *t = peek(p);
  if (t->kind != TK_INDENT) parse_fail(p, t, "expected an indented block but found '%s'", tok_desc(p, t));
  advance(p);
  while (peek(p)->kind != TK_DEDENT && peek(p)->kind != TK_EOF) {
    const tok_t *at = peek(p);
    if (at->kind == TK_STRING && peek_at(p, 1)->kind == TK_NEWLINE) { /* docstring */
      advance(p);
      advance(p);
      continue;
    }
    if (!tok_is_op(at, "@"))
      parse_fail(p, at, "expected '@T.prim_func' but found '%s'", tok_desc(p, at));
    if (parse_decorator(p) != DECO_PRIM_FUNC) parse_fail(p, at, "expected '@T.prim_func'");
    add_function(p, funcs, at, parse_function(p));
  }
  if (peek(p)->kind == TK_DEDENT) advance(p);
}

/* Skips `import ...` and `from ... import ...` lines: T and I are fixed. */
static void skip_import(parser_t *p) {
  while (peek(p)->kind != TK_NEWLINE && peek(p)->kind != TK_EOF) advance(p);
  expect_newline(p);
}

/* program = (import | decorator (func | module))* EOF */
void parse_program(parser_t *p) {
  PVEC(tir_func_t *) funcs = {0};
  bool has_class = false;
  for (;;) {
    const tok_t *t = peek(p);
    if (t->kind == TK_EOF) break;
    if (t->kind == TK_INDENT) parse_fail(p, t, "unexpected indent");
    if (tok_is_name(t, "import") || tok_is_name(t, "from")) {
      skip_import(p);
      continue;
    }
    if (!tok_is_op(t, "@"))
      parse_fail(p, t, "expected '@T.prim_func' or '@I.ir_module' but found '%s'", tok_desc(p, t));
    if (parse_decorator(p) == DECO_PRIM_FUNC) {
      add_function(p, &funcs, t, parse_function(p));
      continue;
    }
    if (has_class) parse_fail(p, t, "only one module per input");
    has_class = true;
    parse_module_class(p, &funcs);
  }
  if (funcs.len == 0)
    parse_fail(p, peek(p), "expected '@T.prim_func' or '@I.ir_module' but found '%s'",
               tok_desc(p, peek(p)));
  tir_module_t *m = p->module;
  m->funcs = parse_dup(p, funcs.data, funcs.len, sizeof(tir_func_t *));
  m->nfuncs = funcs.len;
  m->bare_func = !has_class && funcs.len == 1;
}
