/*
 * trace_python_parse.c - reading a trace back from its Python form, so a
 * user can write a schedule by hand (`mlc-sched apply --script S.py`) or
 * paste what TVM printed. A small line-oriented parser:
 *
 *   line    := [targets '='] 'sch' '.' METHOD '(' [arg (',' arg)* [',']] ')'
 *   targets := NAME (',' NAME)* [','] | '(' targets ')'
 *   arg     := NAME '=' value | value
 *   value   := NAME | None | True | False | ['-'] NUMBER | STRING
 *            | '[' values ']' | '(' values ')' | 'lambda' ...   (raw text)
 *
 * Blank lines, comments, imports, `def ...:` headers and `pass` are
 * skipped, as is indentation, so TVM's `print(sch.trace)` output reads as
 * is; brackets may span lines. Methods and keywords come from the kinds'
 * Python parameters (inst_kinds.c), with TVM's defaults for omitted ones;
 * names may be rebound as in Python. Errors are "FILE:LINE:COL: message".
 */
#include "schedule/trace/trace_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum { V_NAME, V_INT, V_FLOAT, V_STR, V_LIST, V_RAW } pyval_kind_t;

typedef struct pyval pyval_t;
struct pyval {
  pyval_kind_t kind;
  int line, col;
  const char *s; /* NAME (not NUL-terminated: len), STR, RAW (NUL-terminated) */
  size_t len;
  int64_t i;
  double f;
  int n;
  pyval_t *items;
};

typedef struct {
  const char *src, *end, *p;
  const char *file;
  int line;
  const char *line_start;
  int depth;           /* open brackets: newlines inside them are spaces */
  mlc_arena_t *arena;  /* values; the trace's arena */
  int tok_line, tok_col;
} lexer_t;

static int col_of(const lexer_t *lx, const char *at) { return (int)(at - lx->line_start) + 1; }

static int lx_error(const lexer_t *lx, int line, int col, const char *fmt, ...) MLC_PRINTF(4, 5);
static int lx_error(const lexer_t *lx, int line, int col, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (lx->file) return mlc_error_set(MLC_EPARSE, "%s:%d:%d: %s", lx->file, line, col, msg);
  return mlc_error_set(MLC_EPARSE, "%d:%d: %s", line, col, msg);
}

/* Skips spaces, comments and (inside brackets) newlines. */
static void skip_space(lexer_t *lx) {
  for (;;) {
    while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r')) lx->p++;
    if (lx->p < lx->end && *lx->p == '#') {
      while (lx->p < lx->end && *lx->p != '\n') lx->p++;
    }
    if (lx->depth > 0 && lx->p < lx->end && *lx->p == '\n') {
      lx->p++;
      lx->line++;
      lx->line_start = lx->p;
      continue;
    }
    if (lx->depth > 0 && lx->p + 1 < lx->end && lx->p[0] == '\\' && lx->p[1] == '\n') {
      lx->p += 2;
      lx->line++;
      lx->line_start = lx->p;
      continue;
    }
    return;
  }
}

/* The next character that starts a token (0 at the end), marking its place. */
static char peek(lexer_t *lx) {
  skip_space(lx);
  lx->tok_line = lx->line;
  lx->tok_col = col_of(lx, lx->p);
  return lx->p < lx->end ? *lx->p : 0;
}

static bool accept(lexer_t *lx, char c) {
  if (peek(lx) != c) return false;
  lx->p++;
  if (c == '(' || c == '[') lx->depth++;
  if (c == ')' || c == ']') lx->depth--;
  return true;
}

static int expect(lexer_t *lx, char c, const char *what) {
  if (accept(lx, c)) return MLC_OK;
  char got = peek(lx);
  if (!got || got == '\n') return lx_error(lx, lx->tok_line, lx->tok_col, "expected %s at the end of the line", what);
  return lx_error(lx, lx->tok_line, lx->tok_col, "expected %s, found '%c'", what, got);
}

static bool is_name_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* A NAME token (peek first); returns its length (0 when none). */
static size_t lex_name(lexer_t *lx, const char **start) {
  if (!is_name_start(peek(lx))) return 0;
  *start = lx->p;
  while (lx->p < lx->end && is_name_char(*lx->p)) lx->p++;
  return (size_t)(lx->p - *start);
}

static bool name_is(const char *s, size_t len, const char *word) { return strlen(word) == len && !memcmp(s, word, len); }

static int parse_value(lexer_t *lx, pyval_t *v);

static int parse_number(lexer_t *lx, pyval_t *v) {
  const char *start = lx->p;
  bool neg = *lx->p == '-';
  if (neg) {
    lx->p++;
    skip_space(lx);
  }
  if (lx->p >= lx->end || !(isdigit((unsigned char)*lx->p) || *lx->p == '.'))
    return lx_error(lx, v->line, v->col, "expected a number after '-'");
  const char *digits = lx->p;
  while (lx->p < lx->end && (isalnum((unsigned char)*lx->p) || *lx->p == '.' ||
                             ((*lx->p == '-' || *lx->p == '+') && (lx->p[-1] == 'e' || lx->p[-1] == 'E'))))
    lx->p++;
  char buf[64];
  size_t n = (size_t)(lx->p - digits);
  if (n >= sizeof buf) return lx_error(lx, v->line, v->col, "number too long");
  memcpy(buf, digits, n);
  buf[n] = '\0';
  char *endp;
  errno = 0;
  if (strpbrk(buf, ".eE")) {
    v->kind = V_FLOAT;
    v->f = strtod(buf, &endp);
    if (neg) v->f = -v->f;
  } else {
    v->kind = V_INT;
    long long x = strtoll(buf, &endp, 10);
    v->i = neg ? -x : x;
  }
  if (*endp || errno) return lx_error(lx, v->line, v->col, "bad number '%.*s'", (int)(lx->p - start), start);
  return MLC_OK;
}

static int parse_string(lexer_t *lx, pyval_t *v) {
  char quote = *lx->p++;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  while (lx->p < lx->end && *lx->p != quote && *lx->p != '\n') {
    char c = *lx->p++;
    if (c == '\\' && lx->p < lx->end) {
      c = *lx->p++;
      c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
    }
    mlc_sb_putc(&sb, c);
  }
  if (lx->p >= lx->end || *lx->p != quote) {
    mlc_sb_free(&sb);
    return lx_error(lx, v->line, v->col, "unterminated string");
  }
  lx->p++;
  v->kind = V_STR;
  v->s = sb.failed ? NULL : mlc_arena_strdup(lx->arena, sb.len ? mlc_sb_str(&sb) : "");
  mlc_sb_free(&sb);
  return v->s ? MLC_OK : mlc_error_set(MLC_ENOMEM, "trace: out of memory");
}

/* `lambda PARAMS: BODY`, kept as text: the parameters run to the ':', the
 * body to the ',' or closing bracket that ends the argument. */
static int parse_lambda(lexer_t *lx, pyval_t *v, const char *start) {
  const char *p = start;
  while (p < lx->end && *p != ':' && *p != '\n') p++;
  if (p >= lx->end || *p != ':') return lx_error(lx, v->line, v->col, "expected ':' in the lambda");
  int depth = 0;
  for (; p < lx->end; p++) {
    if (*p == '(' || *p == '[') depth++;
    else if ((*p == ')' || *p == ']') && depth-- == 0) break;
    else if (*p == ',' && depth == 0) break;
    else if (*p == '\n' && depth == 0 && lx->depth == 0) break;
  }
  const char *e = p;
  while (e > start && isspace((unsigned char)e[-1])) e--;
  v->kind = V_RAW;
  v->s = mlc_arena_strndup(lx->arena, start, (size_t)(e - start));
  if (!v->s) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  for (const char *q = lx->p; q < p; q++)
    if (*q == '\n') lx->line++, lx->line_start = q + 1;
  lx->p = p;
  return MLC_OK;
}

/* '[' or '(' already taken; items up to the closing bracket. */
static int parse_items(lexer_t *lx, pyval_t *v, char close) {
  pyval_t items[256];
  int n = 0;
  while (!accept(lx, close)) {
    if (n == 256) return lx_error(lx, lx->tok_line, lx->tok_col, "too many items");
    int rc = parse_value(lx, &items[n++]);
    if (rc != MLC_OK) return rc;
    if (!accept(lx, ',')) {
      if ((rc = expect(lx, close, close == ']' ? "',' or ']'" : "',' or ')'")) != MLC_OK) return rc;
      break;
    }
  }
  v->kind = V_LIST;
  v->n = n;
  v->items = n ? mlc_arena_memdup(lx->arena, items, sizeof(pyval_t) * (size_t)n) : NULL;
  if (n && !v->items) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  return MLC_OK;
}

static int parse_value(lexer_t *lx, pyval_t *v) {
  memset(v, 0, sizeof(*v));
  char c = peek(lx);
  v->line = lx->tok_line;
  v->col = lx->tok_col;
  if (c == '[' || c == '(') {
    accept(lx, c);
    return parse_items(lx, v, c == '[' ? ']' : ')');
  }
  if (c == '"' || c == '\'') return parse_string(lx, v);
  if (c == '-' || isdigit((unsigned char)c) || c == '.') return parse_number(lx, v);
  const char *name;
  size_t len = lex_name(lx, &name);
  if (!len) {
    if (!c || c == '\n') return lx_error(lx, v->line, v->col, "expected a value at the end of the line");
    return lx_error(lx, v->line, v->col, "expected a value, found '%c'", c);
  }
  if (name_is(name, len, "lambda")) return parse_lambda(lx, v, name);
  v->kind = V_NAME;
  v->s = name;
  v->len = len;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Values to arguments                                                       */
/* ------------------------------------------------------------------------ */

typedef struct {
  lexer_t lx;
  sch_trace_t *t;
  sch_name_map_t names;
  sch_rv_kind_t *kinds;
  int nrvs, cap_kinds;
} parser_t;

/* A value as an argument; names resolve to RVs, None/True/False to values. */
static int to_arg(parser_t *ps, const pyval_t *v, sch_arg_t *out) {
  switch (v->kind) {
  case V_INT: *out = sch_arg_int(v->i); return MLC_OK;
  case V_FLOAT: *out = sch_arg_float(v->f); return MLC_OK;
  case V_STR:
  case V_RAW: *out = sch_arg_str(v->s); return MLC_OK;
  case V_LIST:
    out->kind = SCH_ARG_LIST;
    out->u.list.n = v->n;
    out->u.list.items = v->n ? mlc_arena_alloc(ps->t->arena, sizeof(sch_arg_t) * (size_t)v->n) : NULL;
    if (v->n && !out->u.list.items) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
    for (int i = 0; i < v->n; i++) {
      int rc = to_arg(ps, &v->items[i], &out->u.list.items[i]);
      if (rc != MLC_OK) return rc;
    }
    return MLC_OK;
  case V_NAME: {
    sch_rv_t rv;
    sch_rv_kind_t kind;
    if (name_is(v->s, v->len, "None")) *out = sch_arg_none();
    else if (name_is(v->s, v->len, "True")) *out = sch_arg_int(1);
    else if (name_is(v->s, v->len, "False")) *out = sch_arg_int(0);
    else if (sch_name_map_get(&ps->names, v->s, v->len, &rv, &kind)) *out = sch_arg_rv(rv);
    else return lx_error(&ps->lx, v->line, v->col, "name '%.*s' is not defined", (int)v->len, v->s);
    return MLC_OK;
  }
  }
  return MLC_EPARSE;
}

/* Converts and type-checks one parameter's value. */
static int param_arg(parser_t *ps, const sch_py_param_t *p, const pyval_t *v, sch_arg_t *out) {
  if (p->type == 'm' && v->kind != V_RAW && v->kind != V_STR)
    return lx_error(&ps->lx, v->line, v->col, "%s should be an index map (lambda ...)", p->kw);
  int rc = to_arg(ps, v, out);
  if (rc != MLC_OK) return rc;
  const char *why;
  if (!sch_arg_check(p->type, out, ps->kinds, ps->nrvs, &why))
    return lx_error(&ps->lx, v->line, v->col, "%s should be %s", *p->kw ? p->kw : "the argument", why);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct {
  const sch_inst_kind_t *kind;
  sch_arg_t inputs[SCH_MAX_DEPTH], attrs[8], decision;
  int ninputs, nattrs;
  bool given[SCH_MAX_PY_PARAMS + 1];
} call_t;

/* ("read" | "write", index) */
static int buffer_arg(parser_t *ps, const sch_py_param_t *p, const pyval_t *v, call_t *c) {
  if (v->kind != V_LIST || v->n != 2 || v->items[0].kind != V_STR || v->items[1].kind != V_INT ||
      (strcmp(v->items[0].s, "read") && strcmp(v->items[0].s, "write")))
    return lx_error(&ps->lx, v->line, v->col, "%s should be (\"read\" or \"write\", buffer index)", p->kw);
  c->attrs[p->idx] = sch_arg_int(v->items[1].i);
  c->attrs[p->idx + 1] = sch_arg_int(strcmp(v->items[0].s, "write") == 0);
  return MLC_OK;
}

static int set_param(parser_t *ps, const sch_py_param_t *p, const pyval_t *v, call_t *c) {
  switch (p->dest) {
  case PY_INPUT: return param_arg(ps, p, v, &c->inputs[p->idx]);
  case PY_ATTR: return param_arg(ps, p, v, &c->attrs[p->idx]);
  case PY_DECISION: {
    int rc = to_arg(ps, v, &c->decision);
    const char *why;
    if (rc == MLC_OK && c->decision.kind != SCH_ARG_NONE && !sch_arg_check(p->type, &c->decision, NULL, 0, &why))
      return lx_error(&ps->lx, v->line, v->col, "decision should be %s", why);
    return rc;
  }
  case PY_BUFFER: return buffer_arg(ps, p, v, c);
  case PY_INPUT_LIST:
    if (v->kind != V_LIST) return lx_error(&ps->lx, v->line, v->col, "%s should be a list", p->kw);
    if (p->idx + v->n > SCH_MAX_DEPTH) return lx_error(&ps->lx, v->line, v->col, "too many %s", p->kw);
    for (int i = 0; i < v->n; i++) {
      int rc = param_arg(ps, p, &v->items[i], &c->inputs[p->idx + i]);
      if (rc != MLC_OK) return rc;
    }
    c->ninputs = p->idx + v->n;
    return MLC_OK;
  case PY_IGNORED: {
    sch_arg_t a;
    int rc = to_arg(ps, v, &a);
    if (rc == MLC_OK && !(a.kind == SCH_ARG_NONE || (a.kind == SCH_ARG_INT && a.u.i == 0)))
      return lx_error(&ps->lx, v->line, v->col, "%s is not supported (only %s)", p->kw, p->dflt);
    return rc;
  }
  case PY_VARARGS:
  case PY_END: break;
  }
  return MLC_OK;
}

static const sch_py_param_t *find_kw(const sch_inst_sig_t *sig, const char *kw, size_t len) {
  for (const sch_py_param_t *p = sig->params; p->dest != PY_END; p++)
    if ((*p->kw && name_is(kw, len, p->kw)) || (p->alias && name_is(kw, len, p->alias))) return p;
  return NULL;
}

/* A positional argument of a varargs method (fuse, reorder): the next input. */
static int parse_vararg(parser_t *ps, const sch_inst_sig_t *sig, call_t *c, int k, int line, int col) {
  const sch_py_param_t *p = &sig->params[0];
  if (p->idx + k + 1 >= SCH_MAX_DEPTH) return lx_error(&ps->lx, line, col, "too many arguments");
  pyval_t v;
  int rc = parse_value(&ps->lx, &v);
  if (rc == MLC_OK) rc = param_arg(ps, p, &v, &c->inputs[p->idx + k]);
  c->ninputs = p->idx + k + 1;
  c->given[0] = true;
  return rc;
}

/* One argument: `keyword=value`, or a positional value for the next
 * parameter in TVM's order (or the next of a varargs method). */
static int parse_arg(parser_t *ps, const sch_inst_sig_t *sig, call_t *c, int *npositional) {
  lexer_t *lx = &ps->lx;
  const char *save = lx->p, *save_ls = lx->line_start, *kw;
  int save_line = lx->line;
  peek(lx);
  int line = lx->tok_line, col = lx->tok_col;
  size_t len = lex_name(lx, &kw);
  const sch_py_param_t *p = NULL;
  if (len && accept(lx, '=')) {
    if (!(p = find_kw(sig, kw, len)))
      return lx_error(lx, line, col, "sch.%s() has no parameter '%.*s'", sig->method, (int)len, kw);
  } else {
    lx->p = save, lx->line = save_line, lx->line_start = save_ls; /* a value, not a keyword */
    int k = (*npositional)++;
    if (sig->params[0].dest == PY_VARARGS) return parse_vararg(ps, sig, c, k, line, col);
    int nparams = 0;
    while (sig->params[nparams].dest != PY_END) nparams++;
    if (k >= nparams) return lx_error(lx, line, col, "too many positional arguments to sch.%s()", sig->method);
    p = &sig->params[k];
  }
  int idx = (int)(p - sig->params);
  if (c->given[idx]) return lx_error(lx, line, col, "sch.%s() got '%s' twice", sig->method, *p->kw ? p->kw : p->alias);
  c->given[idx] = true;
  pyval_t v;
  int rc = parse_value(lx, &v);
  return rc == MLC_OK ? set_param(ps, p, &v, c) : rc;
}

/* Fills parameters not given with their defaults; required ones missing
 * are errors at the call's closing parenthesis. */
static int fill_defaults(parser_t *ps, const sch_inst_sig_t *sig, call_t *c, int line, int col) {
  for (int i = 0; sig->params[i].dest != PY_END; i++) {
    const sch_py_param_t *p = &sig->params[i];
    if (c->given[i] || p->dest == PY_IGNORED || p->dest == PY_DECISION) continue;
    if (p->dest == PY_VARARGS)
      return lx_error(&ps->lx, line, col, "sch.%s() needs at least one loop", sig->method);
    sch_arg_t a;
    if (!sch_py_default(ps->t->arena, p, &a))
      return lx_error(&ps->lx, line, col, "sch.%s() is missing '%s'", sig->method, *p->kw ? p->kw : p->alias);
    if (p->dest == PY_INPUT) c->inputs[p->idx] = a;
    else if (p->dest == PY_ATTR) c->attrs[p->idx] = a;
  }
  return MLC_OK;
}

/* Input and attribute counts from the kind's layout (varargs and factor
 * lists set ninputs while parsing). */
static void layout_counts(const sch_inst_sig_t *sig, call_t *c) {
  size_t len = strlen(sig->inputs);
  bool variadic = len > 0 && (sig->inputs[len - 1] == '*' || sig->inputs[len - 1] == '+');
  if (!variadic) c->ninputs = (int)len;
  c->nattrs = (int)strlen(sig->attrs);
}

static const sch_inst_kind_t *find_method(const char *name, size_t len) {
  for (int i = 0; i < SCH_INST_COUNT; i++)
    if (name_is(name, len, sch_inst_sigs[i].method)) return &sch_inst_kinds[i];
  return NULL;
}

/* `sch.method(args)`, the targets already read. */
static int parse_call(parser_t *ps, call_t *c) {
  lexer_t *lx = &ps->lx;
  const char *name;
  peek(lx);
  int line = lx->tok_line, col = lx->tok_col;
  size_t len = lex_name(lx, &name);
  if (!len || !name_is(name, len, "sch")) return lx_error(lx, line, col, "expected a call sch.<method>(...)");
  int rc = expect(lx, '.', "'.'");
  if (rc != MLC_OK) return rc;
  peek(lx);
  line = lx->tok_line, col = lx->tok_col;
  if (!(len = lex_name(lx, &name))) return lx_error(lx, line, col, "expected a method name after 'sch.'");
  if (!(c->kind = find_method(name, len)))
    return lx_error(lx, line, col, "unknown schedule method 'sch.%.*s'", (int)len, name);
  const sch_inst_sig_t *sig = sch_inst_sig(c->kind);
  if ((rc = expect(lx, '(', "'('")) != MLC_OK) return rc;
  int npos = 0;
  while (!accept(lx, ')')) {
    if ((rc = parse_arg(ps, sig, c, &npos)) != MLC_OK) return rc;
    if (!accept(lx, ',')) {
      if ((rc = expect(lx, ')', "',' or ')'")) != MLC_OK) return rc;
      break;
    }
  }
  layout_counts(sig, c);
  return fill_defaults(ps, sig, c, lx->tok_line, lx->tok_col); /* at the ')' */
}

/* ------------------------------------------------------------------------ */
/* Lines                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct {
  int n;
  const char *names[SCH_MAX_DEPTH];
  size_t lens[SCH_MAX_DEPTH];
} targets_t;

/* True when the line is `NAME[, NAME...] =` (then read into tg). */
static int parse_targets(parser_t *ps, targets_t *tg, bool *has) {
  lexer_t *lx = &ps->lx;
  const char *save = lx->p;
  int save_depth = lx->depth;
  tg->n = 0;
  *has = false;
  bool paren = accept(lx, '(');
  for (;;) {
    const char *name;
    size_t len = lex_name(lx, &name);
    if (!len || tg->n == SCH_MAX_DEPTH) break;
    tg->names[tg->n] = name;
    tg->lens[tg->n++] = len;
    if (!accept(lx, ',')) break;
    if (peek(lx) == '=' || peek(lx) == ')') break;
  }
  if (paren) accept(lx, ')');
  if (tg->n > 0 && peek(lx) == '=' && (lx->p + 1 >= lx->end || lx->p[1] != '=')) {
    lx->p++;
    *has = true;
    return MLC_OK;
  }
  lx->p = save; /* not an assignment: a bare call */
  lx->depth = save_depth;
  tg->n = 0;
  return MLC_OK;
}

/* Defines the targets as the call's outputs. */
static int bind_targets(parser_t *ps, const targets_t *tg, const call_t *c, sch_rv_t *outs) {
  sch_rv_kind_t kind = sch_code_rv_kind(sch_inst_sig(c->kind)->output);
  for (int i = 0; i < tg->n; i++) {
    if (ps->nrvs == ps->cap_kinds) {
      int cap = ps->cap_kinds ? ps->cap_kinds * 2 : 64;
      sch_rv_kind_t *k = mlc_realloc(ps->kinds, sizeof(*k) * (size_t)cap);
      if (!k) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
      ps->kinds = k;
      ps->cap_kinds = cap;
    }
    ps->kinds[ps->nrvs] = kind;
    outs[i] = ps->nrvs++;
    if (name_is(tg->names[i], tg->lens[i], "_")) continue;
    if (sch_name_map_put(&ps->names, tg->names[i], tg->lens[i], outs[i], kind) != MLC_OK) return MLC_ENOMEM;
  }
  return MLC_OK;
}

/* Lines that carry no instruction: imports, the def header, pass. */
static bool skippable(lexer_t *lx) {
  const char *name;
  const char *save = lx->p;
  size_t len = lex_name(lx, &name);
  bool skip = len && (name_is(name, len, "from") || name_is(name, len, "import") || name_is(name, len, "def") ||
                      name_is(name, len, "pass"));
  lx->p = save;
  return skip;
}

static void skip_line(lexer_t *lx) {
  while (lx->p < lx->end && *lx->p != '\n') lx->p++;
}

static int parse_line(parser_t *ps, int index) {
  lexer_t *lx = &ps->lx;
  int line = lx->line, col = col_of(lx, lx->p);
  targets_t tg;
  bool has_targets;
  call_t c;
  memset(&c, 0, sizeof c);
  c.decision = sch_arg_none();
  int rc = parse_targets(ps, &tg, &has_targets);
  if (rc == MLC_OK) rc = parse_call(ps, &c);
  if (rc != MLC_OK) return rc;
  char end = peek(lx);
  if (end && end != '\n') return lx_error(lx, lx->tok_line, lx->tok_col, "unexpected '%c' after the call", end);
  sch_rv_t outs[SCH_MAX_DEPTH];
  if ((rc = bind_targets(ps, &tg, &c, outs)) != MLC_OK) return rc;
  sch_inst_t inst = {c.kind, c.ninputs, c.inputs, c.nattrs, c.attrs, tg.n, outs};
  if ((rc = sch_inst_check_counts(index, &inst, &c.decision)) != MLC_OK) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", mlc_error_last());
    return lx_error(lx, line, col, "%s", msg);
  }
  return sch_trace_append(ps->t, c.kind, c.inputs, c.ninputs, c.attrs, c.nattrs, outs, tg.n, &c.decision);
}

int sch_trace_from_python(sch_trace_t **out, const char *src, size_t len, const char *filename) {
  *out = NULL;
  parser_t ps;
  memset(&ps, 0, sizeof ps);
  ps.t = sch_trace_new();
  if (!ps.t) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  sch_name_map_init(&ps.names);
  lexer_t *lx = &ps.lx;
  lx->src = lx->p = lx->line_start = src;
  lx->end = src + len;
  lx->file = filename;
  lx->line = 1;
  lx->arena = ps.t->arena;
  int rc = MLC_OK;
  while (rc == MLC_OK && lx->p < lx->end) {
    char c = peek(lx);
    if (c && c != '\n' && !skippable(lx)) rc = parse_line(&ps, ps.t->n);
    else skip_line(lx);
    if (rc == MLC_OK && lx->p < lx->end && *lx->p == '\n') {
      lx->p++;
      lx->line++;
      lx->line_start = lx->p;
    }
  }
  if (rc == MLC_OK && mlc_arena_failed(ps.t->arena)) rc = mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  ps.t->nrvs = ps.nrvs;
  mlc_free(ps.kinds);
  sch_name_map_free(&ps.names);
  if (rc != MLC_OK) sch_trace_free(ps.t);
  else *out = ps.t;
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Defaults                                                                  */
/* ------------------------------------------------------------------------ */

bool sch_py_default(mlc_arena_t *a, const sch_py_param_t *p, sch_arg_t *out) {
  if (!p->dflt) return false;
  parser_t ps;
  memset(&ps, 0, sizeof ps);
  sch_trace_t t = {0};
  t.arena = a;
  ps.t = &t;
  ps.lx.src = ps.lx.p = ps.lx.line_start = p->dflt;
  ps.lx.end = p->dflt + strlen(p->dflt);
  ps.lx.line = 1;
  ps.lx.arena = a;
  pyval_t v;
  if (parse_value(&ps.lx, &v) != MLC_OK || to_arg(&ps, &v, out) != MLC_OK) return false;
  const char *why;
  return p->type == 'n' || sch_arg_check(p->type, out, NULL, 0, &why);
}
