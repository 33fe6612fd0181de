/*
 * trace_util.c - what the trace module's files share: building traces
 * outside a schedule (the JSON and Python readers, simplified,
 * with_decision), TVM's naming of random variables, and a name-to-variable
 * map for the readers.
 *
 * Traces built here have the layout schedule/record.c gives the traces a
 * schedule records: one arena holds the instruction and decision arrays and
 * every argument, so sch_trace_free frees either kind.
 */
#include "schedule/trace/trace_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Building traces                                                           */
/* ------------------------------------------------------------------------ */

sch_trace_t *sch_trace_new(void) {
  sch_trace_t *t = mlc_calloc(1, sizeof(*t));
  if (!t) return NULL;
  t->arena = mlc_arena_new();
  if (!t->arena) {
    mlc_free(t);
    return NULL;
  }
  return t;
}

static sch_arg_t *clone_args(mlc_arena_t *a, const sch_arg_t *src, int n) {
  if (n <= 0) return NULL;
  sch_arg_t *out = mlc_arena_alloc(a, sizeof(*out) * (size_t)n);
  if (!out) return NULL;
  for (int i = 0; i < n; i++) out[i] = sch_arg_clone(a, &src[i]);
  return out;
}

/* Out of memory marks the arena failed; callers check mlc_arena_failed. */
sch_arg_t sch_arg_clone(mlc_arena_t *a, const sch_arg_t *arg) {
  sch_arg_t out = *arg;
  if (arg->kind == SCH_ARG_STR) {
    out.u.s = mlc_arena_strdup(a, arg->u.s ? arg->u.s : "");
  } else if (arg->kind == SCH_ARG_LIST) {
    out.u.list.items = clone_args(a, arg->u.list.items, arg->u.list.n);
    if (!out.u.list.items) out.u.list.n = 0;
  }
  return out;
}

static int reserve(sch_trace_t *t) {
  if (t->n < t->cap) return MLC_OK;
  int cap = t->cap ? t->cap * 2 : 32;
  sch_inst_t *insts = mlc_arena_grow(t->arena, t->insts, (size_t)t->n, (size_t)cap, sizeof(*insts));
  sch_arg_t *decisions = mlc_arena_grow(t->arena, t->decisions, (size_t)t->n, (size_t)cap, sizeof(*decisions));
  if (!insts || !decisions) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  t->insts = insts;
  t->decisions = decisions;
  t->cap = cap;
  return MLC_OK;
}

int sch_trace_append(sch_trace_t *t, const sch_inst_kind_t *kind, const sch_arg_t *inputs, int ninputs,
                     const sch_arg_t *attrs, int nattrs, const sch_rv_t *outputs, int noutputs,
                     const sch_arg_t *decision) {
  if (reserve(t) != MLC_OK) return MLC_ENOMEM;
  sch_inst_t *inst = &t->insts[t->n];
  inst->kind = kind;
  inst->ninputs = ninputs;
  inst->inputs = clone_args(t->arena, inputs, ninputs);
  inst->nattrs = nattrs;
  inst->attrs = clone_args(t->arena, attrs, nattrs);
  inst->noutputs = noutputs;
  inst->outputs = noutputs > 0 ? mlc_arena_memdup(t->arena, outputs, sizeof(*outputs) * (size_t)noutputs) : NULL;
  t->decisions[t->n] = decision ? sch_arg_clone(t->arena, decision) : sch_arg_none();
  if (mlc_arena_failed(t->arena)) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  for (int i = 0; i < noutputs; i++)
    if (outputs[i] >= t->nrvs) t->nrvs = outputs[i] + 1;
  t->n++;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* Naming                                                                    */
/* ------------------------------------------------------------------------ */

int sch_rv_names_init(sch_rv_names_t *nm, int nrvs) {
  memset(nm, 0, sizeof(*nm));
  nm->arena = mlc_arena_new();
  if (!nm->arena) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  nm->nrvs = nrvs;
  if (nrvs > 0) nm->names = mlc_arena_alloc(nm->arena, sizeof(char *) * (size_t)nrvs);
  if (nrvs > 0 && !nm->names) {
    sch_rv_names_free(nm);
    return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  }
  return MLC_OK;
}

void sch_rv_names_free(sch_rv_names_t *nm) {
  mlc_arena_free(nm->arena);
  memset(nm, 0, sizeof(*nm));
}

/* TVM numbers every output with one counter (TranslateAddOutputRVs): the
 * prefix says the kind, the number the order of definition. */
void sch_rv_names_define(sch_rv_names_t *nm, const sch_inst_t *inst) {
  const sch_inst_sig_t *sig = sch_inst_sig(inst->kind);
  char prefix = sch_rv_prefix(sch_code_rv_kind(sig->output));
  for (int i = 0; i < inst->noutputs; i++) {
    sch_rv_t rv = inst->outputs[i];
    char *name = mlc_arena_printf(nm->arena, "%c%d", prefix, nm->counter++);
    if (rv >= 0 && rv < nm->nrvs) nm->names[rv] = name;
  }
}

/* ------------------------------------------------------------------------ */
/* Name map: open addressing over (pointer, length) keys                     */
/* ------------------------------------------------------------------------ */

void sch_name_map_init(sch_name_map_t *m) { memset(m, 0, sizeof(*m)); }

void sch_name_map_free(sch_name_map_t *m) {
  mlc_free(m->keys);
  mlc_free(m->lens);
  mlc_free(m->vals);
  mlc_free(m->kinds);
  memset(m, 0, sizeof(*m));
}

static uint64_t name_hash(const char *key, size_t len) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)key[i]) * 1099511628211u;
  return h;
}

/* The slot holding key, or the empty slot where it would go. */
static int name_slot(const sch_name_map_t *m, const char *key, size_t len) {
  int mask = m->cap - 1;
  int i = (int)(name_hash(key, len) & (uint64_t)mask);
  while (m->keys[i] && !(m->lens[i] == len && memcmp(m->keys[i], key, len) == 0)) i = (i + 1) & mask;
  return i;
}

static int name_map_grow(sch_name_map_t *m) {
  sch_name_map_t bigger;
  bigger.cap = m->cap ? m->cap * 2 : 64;
  bigger.n = 0;
  bigger.keys = mlc_calloc((size_t)bigger.cap, sizeof(*bigger.keys));
  bigger.lens = mlc_calloc((size_t)bigger.cap, sizeof(*bigger.lens));
  bigger.vals = mlc_calloc((size_t)bigger.cap, sizeof(*bigger.vals));
  bigger.kinds = mlc_calloc((size_t)bigger.cap, sizeof(*bigger.kinds));
  if (!bigger.keys || !bigger.lens || !bigger.vals || !bigger.kinds) {
    sch_name_map_free(&bigger);
    return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  }
  for (int i = 0; i < m->cap; i++)
    if (m->keys[i]) sch_name_map_put(&bigger, m->keys[i], m->lens[i], m->vals[i], m->kinds[i]);
  sch_name_map_free(m);
  *m = bigger;
  return MLC_OK;
}

int sch_name_map_put(sch_name_map_t *m, const char *key, size_t len, sch_rv_t rv, sch_rv_kind_t kind) {
  if ((m->n + 1) * 2 > m->cap && name_map_grow(m) != MLC_OK) return MLC_ENOMEM;
  int i = name_slot(m, key, len);
  if (!m->keys[i]) m->n++;
  m->keys[i] = key;
  m->lens[i] = len;
  m->vals[i] = rv;
  m->kinds[i] = kind;
  return MLC_OK;
}

bool sch_name_map_get(const sch_name_map_t *m, const char *key, size_t len, sch_rv_t *rv, sch_rv_kind_t *kind) {
  if (m->cap == 0) return false;
  int i = name_slot(m, key, len);
  if (!m->keys[i]) return false;
  *rv = m->vals[i];
  *kind = m->kinds[i];
  return true;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

int sch_trace_inst_error(int code, int index, const sch_inst_kind_t *kind, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (kind) return mlc_error_set(code, "instruction %d (%s): %s", index, kind->name, msg);
  return mlc_error_set(code, "instruction %d: %s", index, msg);
}

/* ------------------------------------------------------------------------ */
/* Checking arguments against a kind's layout                                */
/* ------------------------------------------------------------------------ */

static bool rv_of(const sch_arg_t *arg, const sch_rv_kind_t *rv_kinds, int nrvs, sch_rv_kind_t *kind) {
  if (arg->kind != SCH_ARG_RV || arg->u.rv < 0 || arg->u.rv >= nrvs) return false;
  *kind = rv_kinds[arg->u.rv];
  return true;
}

static bool list_of(char item_type, sch_arg_t *arg, const sch_rv_kind_t *rv_kinds, int nrvs) {
  if (arg->kind != SCH_ARG_LIST) return false;
  const char *why;
  for (int i = 0; i < arg->u.list.n; i++)
    if (!sch_arg_check(item_type, &arg->u.list.items[i], rv_kinds, nrvs, &why)) return false;
  return true;
}

bool sch_arg_check(char type, sch_arg_t *arg, const sch_rv_kind_t *rv_kinds, int nrvs, const char **why) {
  sch_rv_kind_t k;
  switch (type) {
  case 'b': *why = "a block random variable"; return rv_of(arg, rv_kinds, nrvs, &k) && k == SCH_RV_BLOCK;
  case 'l': *why = "a loop random variable"; return rv_of(arg, rv_kinds, nrvs, &k) && k == SCH_RV_LOOP;
  case 'v': *why = "an expression random variable"; return rv_of(arg, rv_kinds, nrvs, &k) && k == SCH_RV_EXPR;
  case 'x':
    *why = "a block or loop random variable";
    return rv_of(arg, rv_kinds, nrvs, &k) && k != SCH_RV_EXPR;
  case 'f':
    *why = "a factor (an expression random variable, an integer or None)";
    if (arg->kind == SCH_ARG_INT || arg->kind == SCH_ARG_NONE) return true;
    return rv_of(arg, rv_kinds, nrvs, &k) && k == SCH_RV_EXPR;
  case 'a':
    *why = "an annotation value (an expression random variable, a number or a string)";
    if (arg->kind == SCH_ARG_INT || arg->kind == SCH_ARG_FLOAT || arg->kind == SCH_ARG_STR) return true;
    return rv_of(arg, rv_kinds, nrvs, &k) && k == SCH_RV_EXPR;
  case 'B': *why = "a list of block random variables"; return list_of('b', arg, rv_kinds, nrvs);
  case 'i': *why = "an integer"; return arg->kind == SCH_ARG_INT;
  case 'z': *why = "a bool"; return arg->kind == SCH_ARG_INT && (arg->u.i == 0 || arg->u.i == 1);
  case 's': *why = "a string"; return arg->kind == SCH_ARG_STR;
  case 'm': *why = "an index map (\"lambda i, j: (...)\")"; return arg->kind == SCH_ARG_STR;
  case 'I': *why = "a list of integers"; return list_of('i', arg, rv_kinds, nrvs);
  case 'F':
    *why = "a list of numbers";
    if (arg->kind != SCH_ARG_LIST) return false;
    for (int i = 0; i < arg->u.list.n; i++) {
      sch_arg_t *item = &arg->u.list.items[i];
      if (item->kind == SCH_ARG_INT) *item = sch_arg_float((double)item->u.i);
      else if (item->kind != SCH_ARG_FLOAT) return false;
    }
    return true;
  case 'n': *why = "None"; return arg->kind == SCH_ARG_NONE;
  default: *why = "nothing"; return false;
  }
}

static int expected_outputs(const sch_inst_t *inst) {
  sch_inst_id_t id = sch_inst_id(inst->kind);
  const sch_inst_sig_t *sig = sch_inst_sig(inst->kind);
  if (id == SCH_INST_SPLIT) return inst->ninputs - 1;
  if (id == SCH_INST_SAMPLE_PERFECT_TILE) return (int)inst->attrs[0].u.i;
  if (sig->output == 'b' || sig->output == 'l' || sig->output == 'v') return 1;
  return sig->output ? -1 : 0; /* -1: any number */
}

int sch_inst_check_counts(int index, const sch_inst_t *inst, const sch_arg_t *decision) {
  const sch_inst_sig_t *sig = sch_inst_sig(inst->kind);
  int want = expected_outputs(inst);
  if (want >= 0 && inst->noutputs != want)
    return sch_trace_inst_error(MLC_EPARSE, index, inst->kind, "has %d output%s, expected %d", inst->noutputs,
                                inst->noutputs == 1 ? "" : "s", want);
  if (sch_inst_id(inst->kind) == SCH_INST_SAMPLE_CATEGORICAL &&
      inst->attrs[0].u.list.n != inst->attrs[1].u.list.n)
    return sch_trace_inst_error(MLC_EPARSE, index, inst->kind, "has %d candidates but %d probabilities",
                                inst->attrs[0].u.list.n, inst->attrs[1].u.list.n);
  if (!decision || decision->kind == SCH_ARG_NONE) return MLC_OK;
  const char *why;
  if (!sig->decision) return sch_trace_inst_error(MLC_EPARSE, index, inst->kind, "takes no decision");
  sch_arg_t copy = *decision;
  if (!sch_arg_check(sig->decision, &copy, NULL, 0, &why))
    return sch_trace_inst_error(MLC_EPARSE, index, inst->kind, "the decision must be %s", why);
  if (sig->decision == 'I' && decision->u.list.n != inst->noutputs)
    return sch_trace_inst_error(MLC_EPARSE, index, inst->kind, "the decision has %d factors, expected %d",
                                decision->u.list.n, inst->noutputs);
  return MLC_OK;
}
