/*
 * parser.c - the TVMScript parser's entry points and the plumbing every
 * grammar file uses: error reporting, token access, lexical scopes and scratch
 * memory.
 *
 * tir_parse sets up two arenas (the module's, which the caller gets, and a
 * scratch arena for tokens and scopes), points both arenas' out-of-memory
 * handler at one jmp_buf, tokenizes, and runs the recursive-descent parser
 * (parse_func.c and the files it calls). The first error longjmps back here
 * with the error filled in, like chibicc's error_tok; since everything lives
 * in the two arenas, freeing them is the whole cleanup.
 */
#include "tir/parse_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

static void copy_source_line(parser_t *p, size_t line_start, char *out, size_t cap) {
  size_t n = 0;
  for (size_t i = line_start; i < p->len && n + 1 < cap; i++) {
    char c = p->src[i];
    if (c == '\n' || c == '\r') break;
    out[n++] = c == '\0' ? ' ' : c;
  }
  out[n] = '\0';
}

void parse_fail_at(parser_t *p, int line, int col, size_t line_start, const char *fmt, ...) {
  char message[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  const char *file = p->filename ? p->filename : "<input>";
  if (p->err) {
    snprintf(p->err->file, sizeof p->err->file, "%s", file);
    p->err->line = line;
    p->err->col = col;
    snprintf(p->err->message, sizeof p->err->message, "%s", message);
    copy_source_line(p, line_start, p->err->source_line, sizeof p->err->source_line);
  }
  mlc_error_set(MLC_EPARSE, "%s:%d:%d: %s", file, line, col, message);
  longjmp(p->jmp, 2);
}

void parse_fail(parser_t *p, const tok_t *t, const char *fmt, ...) {
  char message[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  parse_fail_at(p, t->line, t->col, t->line_start, "%s", message);
}

const char *tok_desc(parser_t *p, const tok_t *t) {
  switch (t->kind) {
  case TK_NEWLINE: return "newline";
  case TK_INDENT: return "indent";
  case TK_DEDENT: return "dedent";
  case TK_EOF: return "end of input";
  default: break;
  }
  if (t->len > 40) return mlc_arena_printf(p->tmp, "%.37s...", t->text);
  return tok_tmpdup(p, t);
}

void tir_parse_error_format(const tir_parse_error_t *err, mlc_strbuf_t *sb) {
  if (err->line <= 0) {
    mlc_sb_printf(sb, "%s: %s\n", err->file, err->message);
    return;
  }
  mlc_sb_printf(sb, "%s:%d:%d: %s\n%s\n", err->file, err->line, err->col, err->message,
                err->source_line);
  /* The caret lines up under the column; tabs are copied so it does on a
   * terminal too. */
  size_t n = strlen(err->source_line);
  for (int i = 0; i + 1 < err->col; i++)
    mlc_sb_putc(sb, (size_t)i < n && err->source_line[i] == '\t' ? '\t' : ' ');
  mlc_sb_append(sb, "^\n");
}

/* ------------------------------------------------------------------------ */
/* Tokens                                                                    */
/* ------------------------------------------------------------------------ */

const tok_t *peek(parser_t *p) { return &p->toks.data[p->pos]; }

const tok_t *peek_at(parser_t *p, int k) {
  int i = p->pos + k;
  return &p->toks.data[i < p->toks.len ? i : p->toks.len - 1];
}

const tok_t *advance(parser_t *p) {
  const tok_t *t = &p->toks.data[p->pos];
  if (t->kind != TK_EOF) p->pos++;
  return t;
}

bool tok_is_op(const tok_t *t, const char *op) {
  return t->kind == TK_OP && t->len == strlen(op) && memcmp(t->text, op, t->len) == 0;
}

bool tok_is_name(const tok_t *t, const char *name) {
  return t->kind == TK_NAME && t->len == strlen(name) && memcmp(t->text, name, t->len) == 0;
}

bool tok_is_keyword(const tok_t *t) {
  static const char *const keywords[] = {
      "and", "as", "assert", "break", "class", "continue", "def", "del", "elif", "else",
      "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
      "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
      "True", "False", "None", NULL};
  for (int i = 0; keywords[i]; i++)
    if (tok_is_name(t, keywords[i])) return true;
  return false;
}

bool accept_op(parser_t *p, const char *op) {
  if (!tok_is_op(peek(p), op)) return false;
  advance(p);
  return true;
}

const tok_t *expect_op(parser_t *p, const char *op) {
  const tok_t *t = peek(p);
  if (!tok_is_op(t, op)) parse_fail(p, t, "expected '%s' but found '%s'", op, tok_desc(p, t));
  return advance(p);
}

const tok_t *expect_name(parser_t *p, const char *what) {
  const tok_t *t = peek(p);
  if (t->kind != TK_NAME || tok_is_keyword(t))
    parse_fail(p, t, "expected %s but found '%s'", what, tok_desc(p, t));
  return advance(p);
}

const tok_t *expect_string(parser_t *p, const char *what) {
  const tok_t *t = peek(p);
  if (t->kind != TK_STRING) parse_fail(p, t, "expected %s but found '%s'", what, tok_desc(p, t));
  return advance(p);
}

void expect_newline(parser_t *p) {
  const tok_t *t = peek(p);
  if (t->kind == TK_NEWLINE) {
    advance(p);
    return;
  }
  if (t->kind != TK_EOF && t->kind != TK_DEDENT)
    parse_fail(p, t, "expected newline but found '%s'", tok_desc(p, t));
}

bool at_t_attr(parser_t *p, const char *name) {
  return tok_is_name(peek(p), "T") && tok_is_op(peek_at(p, 1), ".") &&
         peek_at(p, 2)->kind == TK_NAME && (!name || tok_is_name(peek_at(p, 2), name));
}

const char *parse_t_path(parser_t *p, const tok_t **first) {
  *first = advance(p); /* T */
  char buf[128];
  size_t n = 0;
  while (accept_op(p, ".")) {
    const tok_t *part = expect_name(p, "a name after '.'");
    if (n + part->len + 2 >= sizeof buf) parse_fail(p, part, "name too long");
    if (n > 0) buf[n++] = '.';
    memcpy(buf + n, part->text, part->len);
    n += part->len;
  }
  if (n == 0) parse_fail(p, peek(p), "expected '.' but found '%s'", tok_desc(p, peek(p)));
  return mlc_arena_strndup(p->tmp, buf, n);
}

bool at_kwarg(parser_t *p) {
  return peek(p)->kind == TK_NAME && tok_is_op(peek_at(p, 1), "=");
}

void parse_enter(parser_t *p, const tok_t *t) {
  if (++p->depth > PARSE_MAX_DEPTH) parse_fail(p, t, "nesting too deep");
}

void parse_leave(parser_t *p) { p->depth--; }

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

void pvec_grow_(parser_t *p, void **data, int *cap, int len, size_t elem) {
  int ncap = *cap < 8 ? 8 : *cap * 2;
  *data = mlc_arena_grow(p->tmp, *data, (size_t)len, (size_t)ncap, elem);
  *cap = ncap;
}

void *parse_dup(parser_t *p, const void *src, int n, size_t elem) {
  if (n <= 0) return NULL;
  return mlc_arena_memdup(p->arena, src, (size_t)n * elem);
}

char *tok_strdup(parser_t *p, const tok_t *t) { return mlc_arena_strndup(p->arena, t->text, t->len); }

char *tok_tmpdup(parser_t *p, const tok_t *t) { return mlc_arena_strndup(p->tmp, t->text, t->len); }

/* ------------------------------------------------------------------------ */
/* Scopes: one stack of names; a scope is a mark to truncate back to         */
/* ------------------------------------------------------------------------ */

int scope_mark(parser_t *p) { return p->syms.len; }

void scope_restore(parser_t *p, int mark) { p->syms.len = mark; }

sym_t *scope_declare(parser_t *p, const tok_t *name, sym_kind_t kind) {
  sym_t s = {.name = name->text, .len = name->len, .kind = kind, .param_index = -1};
  pvec_push(p, &p->syms, s);
  return &p->syms.data[p->syms.len - 1];
}

/* Innermost first, so inner declarations shadow outer ones. */
sym_t *scope_lookup(parser_t *p, const char *name, size_t len) {
  for (int i = p->syms.len - 1; i >= 0; i--) {
    sym_t *s = &p->syms.data[i];
    if (s->len == len && memcmp(s->name, name, len) == 0) return s;
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

/* Runs the parser under the jmp_buf. Kept apart from tir_parse so that no
 * local of the function calling setjmp changes after it (C11 7.13.2.1). */
static int run_parser(parser_t *p) {
  int jumped = setjmp(p->jmp);
  if (jumped == 0) {
    parse_lex(p);
    parse_program(p);
    return MLC_OK;
  }
  if (jumped == 1) return mlc_error_set(MLC_ENOMEM, "out of memory while parsing");
  return MLC_EPARSE;
}

static void clear_error(tir_parse_error_t *err, const char *filename) {
  if (!err) return;
  memset(err, 0, sizeof *err);
  snprintf(err->file, sizeof err->file, "%s", filename ? filename : "<input>");
}

int tir_parse(tir_module_t **out, const char *src, size_t len, const char *filename,
              tir_parse_error_t *err) {
  *out = NULL;
  clear_error(err, filename);
  if (!src) len = 0;
  tir_module_t *m = tir_module_new("Module");
  mlc_arena_t *tmp = mlc_arena_new();
  parser_t *p = tmp ? mlc_arena_alloc(tmp, sizeof *p) : NULL;
  if (!m || !p) {
    tir_module_free(m);
    mlc_arena_free(tmp);
    if (err) snprintf(err->message, sizeof err->message, "out of memory");
    return mlc_error_set(MLC_ENOMEM, "out of memory while parsing");
  }
  p->src = src ? src : "";
  p->len = len;
  p->filename = filename;
  p->err = err;
  p->tmp = tmp;
  p->arena = m->arena;
  p->module = m;
  p->list = LIST_OTHER;
  mlc_arena_set_oom_handler(tmp, &p->jmp);
  mlc_arena_set_oom_handler(m->arena, &p->jmp);
  int rc = run_parser(p);
  /* The jmp_buf dies with this call: the module must not keep it. */
  mlc_arena_set_oom_handler(m->arena, NULL);
  mlc_arena_free(tmp);
  if (rc != MLC_OK) {
    if (rc == MLC_ENOMEM && err) snprintf(err->message, sizeof err->message, "out of memory");
    tir_module_free(m);
    return rc;
  }
  *out = m;
  return MLC_OK;
}

int tir_parse_func(tir_func_t **out, const char *src, size_t len, const char *filename,
                   tir_parse_error_t *err) {
  *out = NULL;
  tir_module_t *m = NULL;
  int rc = tir_parse(&m, src, len, filename, err);
  if (rc != MLC_OK) return rc;
  if (m->nfuncs != 1) {
    const char *file = filename ? filename : "<input>";
    if (err) {
      err->line = err->col = 0;
      snprintf(err->message, sizeof err->message, "expected exactly one function, found %d",
               m->nfuncs);
    }
    rc = mlc_error_set(MLC_EPARSE, "%s: expected exactly one function, found %d", file, m->nfuncs);
    tir_module_free(m);
    return rc;
  }
  /* The module struct lives in its own arena: handing the arena to the
   * function is all it takes to drop the module. */
  tir_func_t *f = m->funcs[0];
  f->owns_arena = true;
  *out = f;
  return MLC_OK;
}
