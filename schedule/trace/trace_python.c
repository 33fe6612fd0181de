/*
 * trace_python.c - printing a trace in the Python form TVM prints
 * (TraceNode::AsPython), one call per line:
 *
 *   b0 = sch.get_block(name="C", func_name="main")
 *   l1, l2, l3 = sch.get_loops(block=b0)
 *   v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=64, decision=[16, 8])
 *   l6, l7 = sch.split(loop=l1, factors=[v4, v5], preserve_unit_iters=True, disable_predication=False)
 *
 * Every kind prints through one table-driven printer (sch_inst_to_python)
 * from its Python parameters in inst_kinds.c, which list the keywords in
 * the order TVM's UnpackedAsPython writes them; the parser
 * (trace_python_parse.c) reads the same table back.
 */
#include "schedule/trace/trace_internal.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

/* A Python string literal, escaped so the parser reads it back exactly. */
static void put_str(mlc_strbuf_t *sb, const char *s) {
  mlc_sb_putc(sb, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') mlc_sb_putc(sb, '\\'), mlc_sb_putc(sb, *s);
    else if (*s == '\n') mlc_sb_append(sb, "\\n");
    else mlc_sb_putc(sb, *s);
  }
  mlc_sb_putc(sb, '"');
}

/* Floats as TVM prints them (17 significant digits, "%g" style). */
static void put_float(mlc_strbuf_t *sb, double f) { mlc_sb_printf(sb, "%.17g", f); }

/* An argument; RVs by name (names may be NULL for attributes). */
static void put_arg(mlc_strbuf_t *sb, const sch_arg_t *a, const sch_rv_names_t *names) {
  switch (a->kind) {
  case SCH_ARG_NONE: mlc_sb_append(sb, "None"); break;
  case SCH_ARG_INT: mlc_sb_printf(sb, "%lld", (long long)a->u.i); break;
  case SCH_ARG_FLOAT: put_float(sb, a->u.f); break;
  case SCH_ARG_STR: put_str(sb, a->u.s); break;
  case SCH_ARG_RV: {
    const char *name = names ? sch_rv_names_get(names, a->u.rv) : NULL;
    if (name) mlc_sb_append(sb, name);
    else mlc_sb_printf(sb, "_rv%d", (int)a->u.rv); /* undefined: cannot come from a valid trace */
    break;
  }
  case SCH_ARG_LIST:
    mlc_sb_putc(sb, '[');
    for (int i = 0; i < a->u.list.n; i++) {
      if (i) mlc_sb_append(sb, ", ");
      put_arg(sb, &a->u.list.items[i], names);
    }
    mlc_sb_putc(sb, ']');
    break;
  }
}

/* An attribute by its type code: bools as True/False, index maps raw. */
static void put_attr(mlc_strbuf_t *sb, const sch_arg_t *a, char type) {
  if (type == 'z' && a->kind == SCH_ARG_INT) mlc_sb_append(sb, a->u.i ? "True" : "False");
  else if (type == 'm' && a->kind == SCH_ARG_STR) mlc_sb_append(sb, a->u.s);
  else put_arg(sb, a, NULL);
}

/* ------------------------------------------------------------------------ */
/* One instruction                                                           */
/* ------------------------------------------------------------------------ */

static void put_outputs(mlc_strbuf_t *sb, const sch_inst_sig_t *sig, const sch_inst_t *inst,
                        const char *const *output_names) {
  if (inst->noutputs == 0) return;
  for (int i = 0; i < inst->noutputs; i++) {
    if (i) mlc_sb_append(sb, ", ");
    mlc_sb_append(sb, output_names[i] ? output_names[i] : "_");
  }
  /* A one-element tuple for list results (TVM's OutputList). */
  bool list = sig->output == 'B' || sig->output == 'L' || sig->output == 'V';
  mlc_sb_append(sb, list && inst->noutputs == 1 ? ", = " : " = ");
}

static void put_kw(mlc_strbuf_t *sb, bool *first, const char *kw) {
  if (!*first) mlc_sb_append(sb, ", ");
  *first = false;
  if (*kw) mlc_sb_printf(sb, "%s=", kw);
}

static void put_param(mlc_strbuf_t *sb, const sch_py_param_t *p, const sch_inst_t *inst,
                      const char *const *input_names, const sch_arg_t *decision, bool *first) {
  switch (p->dest) {
  case PY_INPUT:
    if (p->idx >= inst->ninputs) return;
    /* Optional lists are written only when given (TVM's consumer_blocks). */
    if (p->dflt && inst->inputs[p->idx].kind == SCH_ARG_LIST && inst->inputs[p->idx].u.list.n == 0) return;
    put_kw(sb, first, p->kw);
    mlc_sb_append(sb, input_names[p->idx]);
    return;
  case PY_INPUT_LIST:
    put_kw(sb, first, p->kw);
    mlc_sb_putc(sb, '[');
    for (int i = p->idx; i < inst->ninputs; i++) mlc_sb_printf(sb, i > p->idx ? ", %s" : "%s", input_names[i]);
    mlc_sb_putc(sb, ']');
    return;
  case PY_VARARGS:
    for (int i = p->idx; i < inst->ninputs; i++) {
      put_kw(sb, first, "");
      mlc_sb_append(sb, input_names[i]);
    }
    return;
  case PY_ATTR:
    if (p->idx >= inst->nattrs) return;
    put_kw(sb, first, p->kw);
    put_attr(sb, &inst->attrs[p->idx], p->type);
    return;
  case PY_BUFFER:
    if (p->idx + 1 >= inst->nattrs) return;
    put_kw(sb, first, p->kw);
    mlc_sb_printf(sb, "(\"%s\", %lld)", inst->attrs[p->idx + 1].u.i ? "write" : "read",
                  (long long)inst->attrs[p->idx].u.i);
    return;
  case PY_IGNORED:
    put_kw(sb, first, p->kw);
    mlc_sb_append(sb, p->dflt);
    return;
  case PY_DECISION: /* last inside the call, as TVM's py.Decision() puts it */
    if (!decision || decision->kind == SCH_ARG_NONE) return;
    put_kw(sb, first, p->kw);
    put_arg(sb, decision, NULL);
    return;
  case PY_END: return;
  }
}

void sch_inst_to_python(mlc_strbuf_t *sb, const sch_inst_t *inst, const char *const *input_names,
                        const char *const *output_names, const sch_arg_t *decision) {
  const sch_inst_sig_t *sig = sch_inst_sig(inst->kind);
  put_outputs(sb, sig, inst, output_names);
  mlc_sb_printf(sb, "sch.%s(", sig->method);
  bool first = true;
  for (const sch_py_param_t *p = sig->params; p->dest != PY_END; p++)
    put_param(sb, p, inst, input_names, decision, &first);
  mlc_sb_putc(sb, ')');
}

/* ------------------------------------------------------------------------ */
/* A whole trace                                                             */
/* ------------------------------------------------------------------------ */

/* Python text of each input, into an arena. */
static const char **input_texts(mlc_arena_t *a, const sch_inst_t *inst, const sch_rv_names_t *names) {
  const char **texts = mlc_arena_alloc(a, sizeof(char *) * (size_t)(inst->ninputs + 1));
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  for (int i = 0; texts && i < inst->ninputs; i++) {
    mlc_sb_reset(&sb);
    put_arg(&sb, &inst->inputs[i], names);
    texts[i] = sb.failed ? NULL : mlc_arena_strdup(a, mlc_sb_str(&sb));
    if (!texts[i]) texts = NULL;
  }
  mlc_sb_free(&sb);
  return texts;
}

char *sch_trace_to_python(const sch_trace_t *t) {
  sch_rv_names_t names;
  if (sch_rv_names_init(&names, t->nrvs) != MLC_OK) return NULL;
  mlc_strbuf_t sb, line;
  mlc_sb_init(&sb);
  mlc_sb_init(&line);
  for (int i = 0; i < t->n; i++) {
    const sch_inst_t *inst = &t->insts[i];
    if (!inst->kind) continue;
    const char **inputs = input_texts(names.arena, inst, &names);
    sch_rv_names_define(&names, inst);
    const char **outputs = mlc_arena_alloc(names.arena, sizeof(char *) * (size_t)(inst->noutputs + 1));
    if (!inputs || !outputs) {
      sb.failed = true;
      break;
    }
    for (int k = 0; k < inst->noutputs; k++) outputs[k] = sch_rv_names_get(&names, inst->outputs[k]);
    if (mlc_arena_failed(names.arena)) {
      sb.failed = true;
      break;
    }
    mlc_sb_reset(&line);
    inst->kind->to_python(&line, inst, inputs, outputs, &t->decisions[i]);
    mlc_sb_append(&sb, mlc_sb_str(&line));
    mlc_sb_putc(&sb, '\n');
  }
  if (line.failed) sb.failed = true;
  mlc_sb_free(&line);
  sch_rv_names_free(&names);
  if (sb.len == 0 && !sb.failed) mlc_sb_append(&sb, ""); /* an empty trace is "" */
  return mlc_sb_take(&sb);
}
