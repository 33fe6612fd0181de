/*
 * lexer.c - turns TVMScript source into tokens for the parser.
 *
 * Python's lexical rules, cut down to what TVMScript uses: names, integers
 * (decimal and 0x hex), floats (1.5, 1e-05, 3.4028234663852886e+38), string
 * literals in single, double or triple quotes with the usual escapes,
 * operators, comments, and the layout tokens NEWLINE, INDENT and DEDENT.
 * Inside brackets and after a backslash at the end of a line, newlines and
 * indentation mean nothing (implicit and explicit line joining); blank and
 * comment-only lines are skipped. Any indentation width works as long as it is
 * used consistently (4 spaces in printed TVMScript); a tab advances to the
 * next multiple of 8 as in Python. The first line may be indented (a function
 * pasted from inside a class): its indentation is the base level.
 *
 * The source need not be NUL-terminated: every read is checked against len.
 */
#include "tir/parse_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  parser_t *p;
  const char *s;
  size_t len, i;
  int line;
  size_t line_start;
  bool line_open;  /* tokens seen on the current logical line: NEWLINE pending */
  PVEC(int) indents;
  char brackets[PARSE_MAX_DEPTH];
  size_t bracket_at[PARSE_MAX_DEPTH], bracket_line_start[PARSE_MAX_DEPTH];
  int bracket_line[PARSE_MAX_DEPTH];
  int nbrackets;
} lexer_t;

static int cur(const lexer_t *lx) { return lx->i < lx->len ? (unsigned char)lx->s[lx->i] : -1; }
static int at(const lexer_t *lx, size_t k) {
  return lx->i + k < lx->len ? (unsigned char)lx->s[lx->i + k] : -1;
}

MLC_NORETURN static void lex_fail(lexer_t *lx, size_t offset, const char *msg) {
  parse_fail_at(lx->p, lx->line, (int)(offset - lx->line_start) + 1, lx->line_start, "%s", msg);
}

static tok_t *emit(lexer_t *lx, tok_kind_t kind, size_t start, size_t len) {
  tok_t t = {0};
  t.kind = kind;
  t.text = lx->s + start;
  t.len = len;
  t.line = lx->line;
  t.col = (int)(start - lx->line_start) + 1;
  t.line_start = lx->line_start;
  pvec_push(lx->p, &lx->p->toks, t);
  if (kind != TK_NEWLINE && kind != TK_INDENT && kind != TK_DEDENT) lx->line_open = true;
  return &lx->p->toks.data[lx->p->toks.len - 1];
}

static void new_line(lexer_t *lx) {
  lx->line++;
  lx->line_start = lx->i;
}

/* Indentation of a new logical line: INDENT, DEDENTs, or nothing. Blank and
 * comment-only lines are left to the main loop, which skips them. */
static void lex_indent(lexer_t *lx) {
  int width = 0;
  while (cur(lx) == ' ' || cur(lx) == '\t' || cur(lx) == '\f') {
    width = cur(lx) == '\t' ? (width / 8 + 1) * 8 : cur(lx) == ' ' ? width + 1 : 0;
    lx->i++;
  }
  int c = cur(lx);
  if (c < 0 || c == '\n' || c == '#' || (c == '\r' && at(lx, 1) == '\n')) return;
  if (lx->indents.len == 0) {
    pvec_push(lx->p, &lx->indents, width);
    return;
  }
  int top = lx->indents.data[lx->indents.len - 1];
  if (width > top) {
    if (lx->indents.len >= PARSE_MAX_DEPTH) lex_fail(lx, lx->i, "nesting too deep");
    pvec_push(lx->p, &lx->indents, width);
    emit(lx, TK_INDENT, lx->i, 0);
    return;
  }
  while (width < top) {
    lx->indents.len--;
    if (lx->indents.len == 0) break;
    emit(lx, TK_DEDENT, lx->i, 0);
    top = lx->indents.data[lx->indents.len - 1];
  }
  if (lx->indents.len == 0 || width != top) lex_fail(lx, lx->i, "inconsistent indentation");
}

static bool is_name_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_name_char(int c) { return is_name_start(c) || is_digit(c); }
static int hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void number_fail(lexer_t *lx, size_t start) {
  while (is_name_char(cur(lx)) || cur(lx) == '.') lx->i++;
  size_t n = lx->i - start;
  char msg[80];
  snprintf(msg, sizeof msg, "invalid number literal '%.*s%s'", (int)(n > 32 ? 32 : n),
           lx->s + start, n > 32 ? "..." : "");
  lex_fail(lx, start, msg);
}

/* Integers accumulate into uint64 (the parser narrows them); floats go through
 * strtod on a NUL-terminated copy, since the source may not be terminated. */
static void lex_number(lexer_t *lx) {
  size_t start = lx->i;
  bool is_float = false;
  uint64_t v = 0;
  bool overflow = false;
  if (cur(lx) == '0' && (at(lx, 1) == 'x' || at(lx, 1) == 'X')) {
    lx->i += 2;
    if (hex_value(cur(lx)) < 0) number_fail(lx, start);
    for (int d; (d = hex_value(cur(lx))) >= 0; lx->i++) {
      if (v > (UINT64_MAX >> 4)) overflow = true;
      v = v * 16 + (uint64_t)d;
    }
  } else {
    for (; is_digit(cur(lx)); lx->i++) {
      uint64_t d = (uint64_t)(cur(lx) - '0');
      if (v > (UINT64_MAX - d) / 10) overflow = true;
      v = v * 10 + d;
    }
    if (cur(lx) == '.') {
      is_float = true;
      for (lx->i++; is_digit(cur(lx)); lx->i++) {}
    }
    if (cur(lx) == 'e' || cur(lx) == 'E') {
      is_float = true;
      lx->i++;
      if (cur(lx) == '+' || cur(lx) == '-') lx->i++;
      if (!is_digit(cur(lx))) number_fail(lx, start);
      while (is_digit(cur(lx))) lx->i++;
    }
  }
  if (is_name_char(cur(lx)) || (cur(lx) == '.' && is_float)) number_fail(lx, start);
  tok_t *t = emit(lx, is_float ? TK_FLOAT : TK_INT, start, lx->i - start);
  if (is_float) {
    char *copy = mlc_arena_strndup(lx->p->tmp, lx->s + start, lx->i - start);
    t->fval = strtod(copy, NULL);
  } else {
    if (overflow) lex_fail(lx, start, "integer literal too large");
    t->ival = v;
  }
}

/* Decodes one escape; s[*j] is the character after the backslash. Unknown
 * escapes stay as written, as in Python. Returns the decoded length. */
static size_t decode_escape(lexer_t *lx, size_t *j, size_t end, char *out) {
  static const char simple[] = "n\nt\tr\r0\0a\ab\bf\fv\v\\\\'\'\"\"";
  char c = lx->s[*j];
  for (size_t k = 0; k + 1 < sizeof simple; k += 2) {
    if (c == simple[k]) {
      *out = simple[k + 1];
      (*j)++;
      return 1;
    }
  }
  if (c == 'x' && *j + 2 < end && hex_value((unsigned char)lx->s[*j + 1]) >= 0 &&
      hex_value((unsigned char)lx->s[*j + 2]) >= 0) {
    *out = (char)(hex_value((unsigned char)lx->s[*j + 1]) * 16 +
                  hex_value((unsigned char)lx->s[*j + 2]));
    *j += 3;
    return 1;
  }
  if (c == '\n') { /* backslash-newline joins the lines */
    (*j)++;
    lx->line++;
    lx->line_start = *j;
    return 0;
  }
  *out = '\\';
  return 1;
}

/* Two passes: find the closing quote, then decode into a scratch buffer no
 * longer than the raw text (so nothing is allocated that a longjmp could
 * leak). The token keeps the position of its opening quote. */
static void lex_string(lexer_t *lx) {
  size_t start = lx->i, n = lx->len;
  const char *s = lx->s;
  char q = s[start];
  size_t nq = (at(lx, 1) == q && at(lx, 2) == q) ? 3 : 1;
  size_t end = start + nq;
  for (;;) {
    if (end >= n || (s[end] == '\n' && nq == 1)) lex_fail(lx, start, "unterminated string");
    if (s[end] == '\\' && end + 1 < n) {
      end += 2;
      continue;
    }
    if (s[end] == q && (nq == 1 || (end + 2 < n && s[end + 1] == q && s[end + 2] == q))) break;
    end++;
  }
  tok_t *t = emit(lx, TK_STRING, start, end + nq - start);
  char *out = mlc_arena_alloc(lx->p->tmp, end - start + 1);
  size_t k = 0;
  for (size_t j = start + nq; j < end;) {
    char c = s[j++];
    if (c == '\\') {
      k += decode_escape(lx, &j, end, out + k);
      continue;
    }
    out[k++] = c;
    if (c == '\n') {
      lx->line++;
      lx->line_start = j;
    }
  }
  out[k] = '\0';
  t->str = out;
  lx->i = end + nq;
}

static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", NULL};
static const char *const ops2[] = {"->", "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "+=",
                                   "-=", "*=", "/=", "%=", "&=", "|=", "^=", NULL};
static const char ops1[] = "()[]{},:.;@=+-*/%<>&|^~";

static void lex_bracket(lexer_t *lx, char c) {
  const char *open = "([{", *close = ")]}";
  if (strchr(open, c)) {
    if (lx->nbrackets >= PARSE_MAX_DEPTH) lex_fail(lx, lx->i, "nesting too deep");
    lx->brackets[lx->nbrackets] = c;
    lx->bracket_at[lx->nbrackets] = lx->i;
    lx->bracket_line[lx->nbrackets] = lx->line;
    lx->bracket_line_start[lx->nbrackets] = lx->line_start;
    lx->nbrackets++;
    return;
  }
  char want = lx->nbrackets > 0 ? open[strchr(close, c) - close] : 0;
  char msg[64];
  if (lx->nbrackets == 0) {
    snprintf(msg, sizeof msg, "unmatched '%c'", c);
    lex_fail(lx, lx->i, msg);
  }
  if (lx->brackets[lx->nbrackets - 1] != want) {
    snprintf(msg, sizeof msg, "closing '%c' does not match '%c'", c, lx->brackets[lx->nbrackets - 1]);
    lex_fail(lx, lx->i, msg);
  }
  lx->nbrackets--;
}

static void lex_op(lexer_t *lx) {
  for (int k = 0; ops3[k]; k++)
    if (lx->i + 3 <= lx->len && memcmp(lx->s + lx->i, ops3[k], 3) == 0) {
      emit(lx, TK_OP, lx->i, 3);
      lx->i += 3;
      return;
    }
  for (int k = 0; ops2[k]; k++)
    if (lx->i + 2 <= lx->len && memcmp(lx->s + lx->i, ops2[k], 2) == 0) {
      emit(lx, TK_OP, lx->i, 2);
      lx->i += 2;
      return;
    }
  int c = cur(lx);
  if (c > 0 && strchr(ops1, c)) {
    if (strchr("()[]{}", c)) lex_bracket(lx, (char)c);
    emit(lx, TK_OP, lx->i, 1);
    lx->i++;
    return;
  }
  char msg[48];
  if (c > ' ' && c < 127)
    snprintf(msg, sizeof msg, "invalid character '%c'", c);
  else
    snprintf(msg, sizeof msg, "invalid character '\\x%02x'", (unsigned)c);
  lex_fail(lx, lx->i, msg);
}

/* Handles whitespace, comments, line joins and newlines at the cursor; true
 * when it consumed something. */
static bool lex_layout(lexer_t *lx, bool *line_start) {
  int c = cur(lx);
  if (c == ' ' || c == '\t' || c == '\f' || (c == '\r' && at(lx, 1) != '\n')) {
    lx->i++;
  } else if (c == '#') {
    while (cur(lx) >= 0 && cur(lx) != '\n') lx->i++;
  } else if (c == '\\' && (at(lx, 1) == '\n' || (at(lx, 1) == '\r' && at(lx, 2) == '\n'))) {
    lx->i += at(lx, 1) == '\n' ? 2 : 3;
    new_line(lx);
  } else if (c == '\n' || c == '\r') {
    size_t nl = lx->i + (c == '\r');
    if (lx->nbrackets == 0 && lx->line_open) {
      emit(lx, TK_NEWLINE, nl, 0);
      lx->line_open = false;
    }
    lx->i = nl + 1;
    new_line(lx);
    *line_start = lx->nbrackets == 0;
  } else {
    return false;
  }
  return true;
}

void parse_lex(parser_t *p) {
  lexer_t lx = {.p = p, .s = p->src, .len = p->len, .line = 1};
  bool line_start = true;
  for (;;) {
    if (line_start) {
      lex_indent(&lx);
      line_start = false;
    }
    if (lex_layout(&lx, &line_start)) continue;
    int c = cur(&lx);
    if (c < 0) break;
    if (is_name_start(c)) {
      size_t start = lx.i;
      while (is_name_char(cur(&lx))) lx.i++;
      emit(&lx, TK_NAME, start, lx.i - start);
    } else if (is_digit(c) || (c == '.' && is_digit(at(&lx, 1)))) {
      lex_number(&lx);
    } else if (c == '"' || c == '\'') {
      lex_string(&lx);
    } else {
      lex_op(&lx);
    }
  }
  if (lx.nbrackets > 0) { /* reported where it opened, as Python does */
    int k = lx.nbrackets - 1;
    char msg[48];
    snprintf(msg, sizeof msg, "'%c' was never closed", lx.brackets[k]);
    lx.line = lx.bracket_line[k];
    lx.line_start = lx.bracket_line_start[k];
    lex_fail(&lx, lx.bracket_at[k], msg);
  }
  if (lx.line_open) emit(&lx, TK_NEWLINE, lx.i, 0);
  for (int k = 1; k < lx.indents.len; k++) emit(&lx, TK_DEDENT, lx.i, 0);
  emit(&lx, TK_EOF, lx.i, 0);
}
