/*
 * index_map.c - reading the index map a TransformLayout instruction
 * records, `lambda i, j: (i // 16, j, i % 16)`, back into expressions, for
 * replay. The lambda's body is Python expression syntax over the TVMScript
 * operators, so rather than a second expression parser it is wrapped in a
 * tiny PrimFunc (one scalar parameter per lambda variable, one T.evaluate
 * per result) and read by the TVMScript parser; the results are then copied
 * into the schedule's arena with fresh variables.
 */
#include "schedule/trace/trace_internal.h"

#include <ctype.h>
#include <string.h>

#define MAX_MAP_VARS 16

static const char *skip_ws(const char *p) {
  while (isspace((unsigned char)*p)) p++;
  return p;
}

/* Splits "a, b, c" at top-level commas into parts (trimmed, non-empty). */
static int split_top(const char *s, size_t len, const char **parts, size_t *lens, int cap) {
  int n = 0, depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= len; i++) {
    char c = i < len ? s[i] : ',';
    if (c == '(' || c == '[') depth++;
    else if (c == ')' || c == ']') depth--;
    if (c != ',' || depth != 0) continue;
    const char *p = s + start;
    size_t l = i - start;
    while (l && isspace((unsigned char)*p)) p++, l--;
    while (l && isspace((unsigned char)p[l - 1])) l--;
    if (l) {
      if (n == cap) return -1;
      parts[n] = p;
      lens[n++] = l;
    }
    start = i + 1;
  }
  return depth == 0 ? n : -1;
}

/* The body's results: a bracketed tuple/list enclosing the whole body is
 * opened; anything else is one result. */
static int split_results(const char *body, size_t len, const char **parts, size_t *lens, int cap) {
  if (len >= 2 && (body[0] == '(' || body[0] == '[')) {
    int depth = 0;
    size_t close = 0;
    for (size_t i = 0; i < len; i++) {
      if (body[i] == '(' || body[i] == '[') depth++;
      else if ((body[i] == ')' || body[i] == ']') && --depth == 0) {
        close = i;
        break;
      }
    }
    if (close == len - 1) return split_top(body + 1, len - 2, parts, lens, cap);
  }
  return split_top(body, len, parts, lens, cap);
}

/* The PrimFunc text standing for the lambda. */
static void wrap_lambda(mlc_strbuf_t *sb, const char **vars, const size_t *vlens, int nvars, const char **res,
                        const size_t *rlens, int nres) {
  mlc_sb_append(sb, "@T.prim_func\ndef index_map(");
  for (int i = 0; i < nvars; i++) mlc_sb_printf(sb, "%s%.*s: T.int32", i ? ", " : "", (int)vlens[i], vars[i]);
  mlc_sb_append(sb, "):\n");
  for (int i = 0; i < nres; i++) mlc_sb_printf(sb, "    T.evaluate(%.*s)\n", (int)rlens[i], res[i]);
}

/* The T.evaluate values of the parsed wrapper, in order. */
static int collect_results(tir_stmt_t *s, tir_expr_t **out, int cap) {
  while (s && s->kind == TIR_BLOCK_REALIZE) s = s->u.realize.block->body;
  if (!s) return 0;
  if (s->kind == TIR_EVALUATE) {
    out[0] = s->u.evaluate.value;
    return 1;
  }
  if (s->kind != TIR_SEQ || s->u.seq.n > cap) return -1;
  for (int i = 0; i < s->u.seq.n; i++) {
    if (s->u.seq.stmts[i]->kind != TIR_EVALUATE) return -1;
    out[i] = s->u.seq.stmts[i]->u.evaluate.value;
  }
  return s->u.seq.n;
}

/* Deep copy into the schedule's arena, the lambda's variables replaced. */
typedef struct {
  tir_var_map_t *vars;
  bool bad;
} copy_ctx_t;

static tir_expr_t *copy_expr(tir_mutator_t *m, tir_expr_t *e) {
  copy_ctx_t *ctx = m->payload;
  if (e->kind == TIR_VAR) {
    tir_expr_t *to = tir_var_map_get(ctx->vars, e);
    if (!to) ctx->bad = true;
    return to ? to : e;
  }
  if (e->kind == TIR_BUFFER_LOAD) {
    ctx->bad = true;
    return e;
  }
  tir_expr_t *c = tir_mutate_expr_children(m, e);
  if (c == e) c = tir_expr_copy(m->arena, e);
  if (c->kind == TIR_STRING_IMM) c->u.str_value = mlc_arena_strdup(m->arena, e->u.str_value);
  return c;
}

static int build_map(sch_t *sch, const tir_func_t *f, const char *text, sch_index_map_t *out) {
  static const char *prim = "transform_layout";
  tir_expr_t *res[TIR_MAX_DIMS * 2];
  int nres = collect_results(f->body, res, TIR_MAX_DIMS * 2);
  if (nres < 1) return sch_fail(sch, prim, "index map %s has no results", text);
  mlc_arena_t *a = sch_arena(sch);
  tir_var_map_t vars = {0};
  out->nsrc = f->nparams;
  out->src = mlc_arena_alloc(a, sizeof(tir_var_t *) * (size_t)f->nparams);
  out->dst = mlc_arena_alloc(a, sizeof(tir_expr_t *) * (size_t)nres);
  if (!out->src || !out->dst) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  for (int i = 0; i < f->nparams; i++) {
    out->src[i] = tir_var(a, f->params[i]->u.var.name, f->params[i]->dtype);
    tir_var_map_set(a, &vars, f->params[i], out->src[i]);
  }
  copy_ctx_t ctx = {&vars, false};
  tir_mutator_t m = {0};
  m.arena = a;
  m.expr = copy_expr;
  m.payload = &ctx;
  out->ndst = nres;
  for (int i = 0; i < nres; i++) out->dst[i] = tir_mutate_expr(&m, res[i]);
  if (mlc_arena_failed(a)) return mlc_error_set(MLC_ENOMEM, "%s: out of memory", prim);
  if (ctx.bad) return sch_fail(sch, prim, "index map %s uses names other than its variables", text);
  return MLC_OK;
}

int sch_index_map_from_text(sch_t *sch, const char *text, sch_index_map_t *out) {
  static const char *prim = "transform_layout";
  memset(out, 0, sizeof(*out));
  const char *p = skip_ws(text);
  if (strncmp(p, "lambda", 6) != 0 || !isspace((unsigned char)p[6]))
    return sch_fail(sch, prim, "index map %s is not a lambda", text);
  p += 6;
  const char *colon = strchr(p, ':');
  if (!colon) return sch_fail(sch, prim, "index map %s has no ':'", text);
  const char *vars[MAX_MAP_VARS], *res[TIR_MAX_DIMS * 2];
  size_t vlens[MAX_MAP_VARS], rlens[TIR_MAX_DIMS * 2];
  int nvars = split_top(p, (size_t)(colon - p), vars, vlens, MAX_MAP_VARS);
  const char *body = skip_ws(colon + 1);
  size_t blen = strlen(body);
  while (blen && isspace((unsigned char)body[blen - 1])) blen--;
  int nres = split_results(body, blen, res, rlens, TIR_MAX_DIMS * 2);
  if (nvars < 1 || nres < 1) return sch_fail(sch, prim, "index map %s does not parse", text);
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  wrap_lambda(&sb, vars, vlens, nvars, res, rlens, nres);
  tir_func_t *f = NULL;
  tir_parse_error_t perr;
  memset(&perr, 0, sizeof perr);
  int rc = sb.failed ? mlc_error_set(MLC_ENOMEM, "out of memory")
                     : tir_parse_func(&f, sb.data, sb.len, "<index_map>", &perr);
  mlc_sb_free(&sb);
  if (rc == MLC_OK) rc = build_map(sch, f, text, out);
  else if (rc == MLC_EPARSE) rc = sch_fail(sch, prim, "index map %s does not parse: %s", text, perr.message);
  tir_func_free(f);
  return rc;
}
