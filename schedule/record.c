/*
 * record.c - the trace a schedule records as primitives succeed, and copies
 * of traces.
 *
 * A trace owns an arena; every instruction's arguments are deep-copied into
 * it (strings and lists too), so a trace outlives the schedule and the
 * caller's argument arrays. Instruction and decision arrays grow by doubling
 * inside the arena (the old blocks stay until the trace is freed: at most
 * as much again). The trace's random variables are the schedule's: nrvs
 * follows the schedule's table (state.c).
 *
 * Serialisation, replay and the Python form are the trace module's
 * (schedule/trace/); this file only needs the instruction-kind table's
 * address.
 */
#include "schedule/state.h"

#include <string.h>

static void copy_arg(mlc_arena_t *a, sch_arg_t *dst, const sch_arg_t *src);

static sch_arg_t *copy_args(mlc_arena_t *a, const sch_arg_t *src, int n) {
  if (n <= 0) return NULL;
  sch_arg_t *out = mlc_arena_alloc(a, sizeof(*out) * (size_t)n);
  if (!out) MLC_PANIC("trace: out of memory");
  for (int i = 0; i < n; i++) copy_arg(a, &out[i], &src[i]);
  return out;
}

static void copy_arg(mlc_arena_t *a, sch_arg_t *dst, const sch_arg_t *src) {
  *dst = *src;
  if (src->kind == SCH_ARG_STR) dst->u.s = mlc_arena_strdup(a, src->u.s ? src->u.s : "");
  else if (src->kind == SCH_ARG_LIST) dst->u.list.items = copy_args(a, src->u.list.items, src->u.list.n);
}

static void copy_inst(mlc_arena_t *a, sch_inst_t *dst, const sch_inst_t *src) {
  dst->kind = src->kind;
  dst->ninputs = src->ninputs;
  dst->inputs = copy_args(a, src->inputs, src->ninputs);
  dst->nattrs = src->nattrs;
  dst->attrs = copy_args(a, src->attrs, src->nattrs);
  dst->noutputs = src->noutputs;
  dst->outputs = NULL;
  if (src->noutputs > 0)
    dst->outputs = mlc_arena_memdup(a, src->outputs, sizeof(*src->outputs) * (size_t)src->noutputs);
}

/* Room for one more instruction. */
static void trace_reserve(sch_trace_t *t) {
  if (t->n < t->cap) return;
  int cap = t->cap ? t->cap * 2 : 32;
  t->insts = mlc_arena_grow(t->arena, t->insts, (size_t)t->n, (size_t)cap, sizeof(*t->insts));
  t->decisions = mlc_arena_grow(t->arena, t->decisions, (size_t)t->n, (size_t)cap, sizeof(*t->decisions));
  if (!t->insts || !t->decisions) MLC_PANIC("trace: out of memory");
  t->cap = cap;
}

void sch_record(sch_t *sch, sch_inst_id_t kind, const sch_arg_t *inputs, int ninputs, const sch_arg_t *attrs,
                int nattrs, const sch_rv_t *outputs, int noutputs, const sch_arg_t *decision) {
  MLC_ASSERT(kind >= 0 && kind < SCH_INST_COUNT);
  sch_trace_t *t = sch->trace;
  trace_reserve(t);
  sch_inst_t src = {&sch_inst_kinds[kind], ninputs, (sch_arg_t *)inputs, nattrs, (sch_arg_t *)attrs,
                    noutputs, (sch_rv_t *)outputs};
  copy_inst(t->arena, &t->insts[t->n], &src);
  if (decision) copy_arg(t->arena, &t->decisions[t->n], decision);
  else t->decisions[t->n] = sch_arg_none();
  t->n++;
  t->nrvs = sch->nrvs;
}

sch_trace_t *sch_trace_copy(const sch_trace_t *src) {
  sch_trace_t *t = mlc_calloc(1, sizeof(*t));
  if (!t) return NULL;
  t->arena = mlc_arena_new();
  if (!t->arena) {
    mlc_free(t);
    return NULL;
  }
  t->nrvs = src->nrvs;
  if (src->n > 0) {
    t->cap = src->n;
    t->insts = mlc_arena_alloc(t->arena, sizeof(*t->insts) * (size_t)src->n);
    t->decisions = mlc_arena_alloc(t->arena, sizeof(*t->decisions) * (size_t)src->n);
    if (!t->insts || !t->decisions) {
      sch_trace_free(t);
      return NULL;
    }
    for (int i = 0; i < src->n; i++) {
      copy_inst(t->arena, &t->insts[i], &src->insts[i]);
      copy_arg(t->arena, &t->decisions[i], &src->decisions[i]);
    }
    t->n = src->n;
  }
  return t;
}

void sch_trace_free(sch_trace_t *t) {
  if (!t) return;
  mlc_arena_free(t->arena);
  mlc_free(t);
}
