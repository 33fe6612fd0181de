/*
 * trace_apply.c - replaying a trace on a schedule, and the two rewrites of
 * traces the search's mutators use (TVM's TraceNode::ApplyToSchedule,
 * WithDecision and Simplified).
 *
 * Replay walks the instructions in order, translates each input random
 * variable of the trace into the schedule's variable defined by an earlier
 * instruction, runs the kind's adapter (inst_kinds.c), and maps the trace's
 * outputs to what the primitive returned. It is the search's hot path (every
 * candidate is a replay), so it allocates nothing per instruction: arguments
 * are translated into a stack pool.
 */
#include "schedule/trace/trace_internal.h"

#include <stdio.h>
#include <string.h>

/* Arguments (lists included) one instruction may have when replayed. */
#define ARG_POOL 512
/* Outputs one instruction may have (get_loops of a deep nest, split). */
#define MAX_OUTPUTS 256
/* RV maps up to this size live on the stack. */
#define STACK_RVS 1024

typedef struct {
  const sch_rv_t *map; /* trace RV -> schedule RV (SCH_RV_NONE: not defined yet) */
  int nrvs;
  sch_arg_t pool[ARG_POOL];
  int used;
  sch_rv_t bad;        /* first undefined trace RV met, or SCH_RV_NONE */
} translate_t;

/* Copies args into the pool with RVs translated; NULL when the pool is full. */
static sch_arg_t *translate_args(translate_t *tr, const sch_arg_t *args, int n) {
  if (n <= 0) return NULL;
  if (tr->used + n > ARG_POOL) return NULL;
  sch_arg_t *out = &tr->pool[tr->used];
  tr->used += n;
  for (int i = 0; i < n; i++) {
    out[i] = args[i];
    if (args[i].kind == SCH_ARG_RV) {
      sch_rv_t rv = args[i].u.rv;
      sch_rv_t to = rv >= 0 && rv < tr->nrvs ? tr->map[rv] : SCH_RV_NONE;
      if (to == SCH_RV_NONE && tr->bad == SCH_RV_NONE) tr->bad = rv;
      out[i].u.rv = to;
    } else if (args[i].kind == SCH_ARG_LIST && args[i].u.list.n > 0) {
      out[i].u.list.items = translate_args(tr, args[i].u.list.items, args[i].u.list.n);
      if (!out[i].u.list.items) return NULL;
    }
  }
  return out;
}

/* Prefixes the failure with the instruction, in sch_error and the
 * per-thread error: "instruction 4 (Split): split: ...". Primitives fail
 * through sch_fail (the message is in sch->error); anything else (out of
 * memory) left its message in the per-thread error. */
static int fail_inst(sch_t *sch, int index, const char *kind_name, int rc) {
  char line[sizeof sch->error + 64];
  const char *msg = rc == MLC_ESCHEDULE ? sch->error : mlc_error_last();
  int len = snprintf(line, sizeof line, "instruction %d (%s): ", index, kind_name);
  if (len < 0 || (size_t)len >= sizeof line) len = 0;
  strncpy(line + len, msg, sizeof line - (size_t)len - 1);
  line[sizeof line - 1] = '\0';
  memcpy(sch->error, line, sizeof sch->error - 1);
  sch->error[sizeof sch->error - 1] = '\0';
  if (sch->error_detail && rc == MLC_ESCHEDULE) {
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    mlc_sb_printf(&sb, "instruction %d (%s): %s", index, kind_name, sch->error_detail);
    char *detail = mlc_sb_take(&sb);
    mlc_free(sch->error_detail);
    sch->error_detail = detail;
  } else {
    mlc_free(sch->error_detail);
    sch->error_detail = NULL;
  }
  mlc_error_set(rc, "%s", sch->error);
  return rc;
}

/* Replays one instruction; outputs land in map. */
static int apply_one(sch_t *sch, const sch_trace_t *t, int index, bool use_decisions, translate_t *tr,
                     sch_rv_t *map) {
  const sch_inst_t *inst = &t->insts[index];
  if (!inst->kind) {
    sch_fail(sch, "trace", "instruction without a kind");
    return fail_inst(sch, index, "?", MLC_ESCHEDULE);
  }
  tr->used = 0;
  tr->bad = SCH_RV_NONE;
  sch_inst_t local = *inst;
  local.inputs = translate_args(tr, inst->inputs, inst->ninputs);
  if (inst->ninputs > 0 && !local.inputs) {
    sch_fail(sch, "trace", "too many arguments (more than %d)", ARG_POOL);
    return fail_inst(sch, index, inst->kind->name, MLC_ESCHEDULE);
  }
  if (tr->bad != SCH_RV_NONE) {
    sch_fail(sch, "trace", "input random variable %d is not defined by an earlier instruction", (int)tr->bad);
    return fail_inst(sch, index, inst->kind->name, MLC_ESCHEDULE);
  }
  if (inst->noutputs > MAX_OUTPUTS) {
    sch_fail(sch, "trace", "too many outputs (%d)", inst->noutputs);
    return fail_inst(sch, index, inst->kind->name, MLC_ESCHEDULE);
  }
  const sch_arg_t *decision = &t->decisions[index];
  if (!use_decisions || decision->kind == SCH_ARG_NONE) decision = NULL;
  sch_rv_t outs[MAX_OUTPUTS];
  int nout = 0;
  int rc = inst->kind->apply(sch, &local, decision, outs, &nout);
  if (rc != MLC_OK) return fail_inst(sch, index, inst->kind->name, rc);
  for (int k = 0; k < nout && k < inst->noutputs; k++) {
    sch_rv_t rv = inst->outputs[k];
    if (rv >= 0 && rv < tr->nrvs) map[rv] = outs[k];
  }
  return MLC_OK;
}

int sch_trace_apply(sch_t *sch, const sch_trace_t *t, bool use_decisions) {
  sch_rv_t stack_map[STACK_RVS];
  sch_rv_t *map = t->nrvs <= STACK_RVS ? stack_map : mlc_malloc(sizeof(sch_rv_t) * (size_t)t->nrvs);
  if (!map) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  for (int i = 0; i < t->nrvs; i++) map[i] = SCH_RV_NONE;
  /* The pool is large; keep it off the caller's stack frame budget. */
  translate_t *tr = mlc_malloc(sizeof(*tr));
  int rc = MLC_OK;
  if (!tr) {
    rc = mlc_error_set(MLC_ENOMEM, "trace: out of memory");
    goto done;
  }
  tr->map = map;
  tr->nrvs = t->nrvs;
  /* t may be sch's own trace, which grows as we replay: stop at its end now. */
  int n = t->n;
  for (int i = 0; i < n && rc == MLC_OK; i++) rc = apply_one(sch, t, i, use_decisions, tr, map);
done:
  mlc_free(tr);
  if (map != stack_map) mlc_free(map);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* with_decision                                                             */
/* ------------------------------------------------------------------------ */

/* A decision of the right shape for the kind: INT, or a list of INT. */
static bool decision_fits(char type, const sch_arg_t *d) {
  if (type == 'i') return d->kind == SCH_ARG_INT;
  if (type != 'I' || d->kind != SCH_ARG_LIST) return false;
  for (int i = 0; i < d->u.list.n; i++)
    if (d->u.list.items[i].kind != SCH_ARG_INT) return false;
  return true;
}

int sch_trace_with_decision(sch_trace_t **out, const sch_trace_t *t, int inst, const sch_arg_t *decision) {
  *out = NULL;
  if (inst < 0 || inst >= t->n) return mlc_error_set(MLC_EINVAL, "with_decision: no instruction %d (the trace has %d)", inst, t->n);
  const sch_inst_kind_t *kind = t->insts[inst].kind;
  char type = kind ? sch_inst_sig(kind)->decision : 0;
  if (!type) return sch_trace_inst_error(MLC_EINVAL, inst, kind, "takes no decision");
  if (!decision || !decision_fits(type, decision))
    return sch_trace_inst_error(MLC_EINVAL, inst, kind, "the decision must be %s",
                                type == 'i' ? "an integer" : "a list of integers");
  if (sch_inst_check_counts(inst, &t->insts[inst], decision) != MLC_OK) /* a tile of the wrong length */
    return mlc_error_set(MLC_EINVAL, "%s", mlc_error_last());
  sch_trace_t *copy = sch_trace_copy(t);
  if (!copy) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  copy->decisions[inst] = sch_arg_clone(copy->arena, decision);
  if (mlc_arena_failed(copy->arena)) {
    sch_trace_free(copy);
    return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  }
  *out = copy;
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* simplified                                                                */
/* ------------------------------------------------------------------------ */

static void mark_used(const sch_arg_t *args, int n, bool *used, int nrvs) {
  for (int i = 0; i < n; i++) {
    if (args[i].kind == SCH_ARG_RV && args[i].u.rv >= 0 && args[i].u.rv < nrvs) used[args[i].u.rv] = true;
    else if (args[i].kind == SCH_ARG_LIST) mark_used(args[i].u.list.items, args[i].u.list.n, used, nrvs);
  }
}

/* A pure instruction is dead when none of its outputs is used later. One
 * with no outputs at all is kept: it can only be there for its effect
 * (EnterPostproc, which TVM does not count as pure). Unlike TVM, inputs
 * inside lists (cache_read's consumer blocks) count as uses. */
static bool is_dead(const sch_inst_t *inst, const bool *used) {
  if (!inst->kind || !inst->kind->is_pure || inst->noutputs == 0) return false;
  for (int k = 0; k < inst->noutputs; k++)
    if (inst->outputs[k] >= 0 && used[inst->outputs[k]]) return false;
  return true;
}

int sch_trace_simplified(sch_trace_t **out, const sch_trace_t *t) {
  *out = NULL;
  int rc = MLC_OK;
  bool *used = mlc_calloc((size_t)(t->nrvs > 0 ? t->nrvs : 1), sizeof(bool));
  bool *keep = mlc_calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(bool));
  sch_trace_t *s = sch_trace_new();
  if (!used || !keep || !s) {
    rc = mlc_error_set(MLC_ENOMEM, "trace: out of memory");
    goto done;
  }
  for (int i = t->n - 1; i >= 0; i--) {
    const sch_inst_t *inst = &t->insts[i];
    if (is_dead(inst, used)) continue;
    keep[i] = true;
    mark_used(inst->inputs, inst->ninputs, used, t->nrvs);
  }
  for (int i = 0; i < t->n && rc == MLC_OK; i++) {
    const sch_inst_t *inst = &t->insts[i];
    if (!keep[i]) continue;
    rc = sch_trace_append(s, inst->kind, inst->inputs, inst->ninputs, inst->attrs, inst->nattrs, inst->outputs,
                          inst->noutputs, &t->decisions[i]);
  }
  s->nrvs = t->nrvs;
done:
  mlc_free(used);
  mlc_free(keep);
  if (rc != MLC_OK) sch_trace_free(s);
  else *out = s;
  return rc;
}
