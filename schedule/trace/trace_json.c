/*
 * trace_json.c - traces as TVM's JSON (TraceNode::AsJSON and
 * Trace::ApplyJSONToSchedule), so traces move between mlc-tune and TVM:
 *
 *   [[[kind, inputs, attrs, outputs], ...], [[inst_index, decision], ...]]
 *
 * Random variables are named by one counter in order of definition with a
 * prefix for their kind (b0, l1, v2). Inputs name variables, and write None
 * as "None", strings with their quotes ("\"SSRSRS\""), numbers as numbers
 * and lists as arrays. Attributes are plain JSON (strings unquoted, bools as
 * 1/0). Decisions are listed only for the instructions that have one.
 *
 * The reader checks everything against the kind's layout (inst_kinds.c):
 * unknown kinds, arity, argument types, undefined variables and malformed
 * decisions are errors naming the instruction ("instruction 4 (Split):
 * input 2 should be ..."). It also accepts the layouts of other TVM
 * versions: missing trailing attributes take TVM's defaults (split without
 * disable_predication, compute_at without index, cache_read without
 * consumer_blocks), extra ones at their defaults are dropped (rfactor's
 * merge_loops, transform_layout's pad_value), and JSON true/false for bools.
 */
#include "schedule/trace/trace_internal.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

/* An input: RVs by name, None as "None", strings quoted. NULL (with the
 * per-thread error set) for an RV the trace has not defined. */
static json_t *input_to_json(const sch_arg_t *arg, const sch_rv_names_t *names) {
  switch (arg->kind) {
  case SCH_ARG_NONE: return json_string("None");
  case SCH_ARG_INT: return json_integer(arg->u.i);
  case SCH_ARG_FLOAT: return json_real(arg->u.f);
  case SCH_ARG_STR: {
    mlc_strbuf_t sb;
    mlc_sb_init(&sb);
    mlc_sb_printf(&sb, "\"%s\"", arg->u.s);
    json_t *j = json_string(mlc_sb_str(&sb));
    mlc_sb_free(&sb);
    return j;
  }
  case SCH_ARG_RV: {
    const char *name = sch_rv_names_get(names, arg->u.rv);
    if (!name) {
      mlc_error_set(MLC_EINVAL, "random variable %d is used before it is defined", (int)arg->u.rv);
      return NULL;
    }
    return json_string(name);
  }
  case SCH_ARG_LIST: {
    json_t *arr = json_array();
    for (int i = 0; arr && i < arg->u.list.n; i++) {
      json_t *item = input_to_json(&arg->u.list.items[i], names);
      if (!item || json_array_append_new(arr, item) != 0) {
        json_decref(arr);
        return NULL;
      }
    }
    return arr;
  }
  }
  return NULL;
}

/* Attributes and decisions: plain values. */
static json_t *value_to_json(const sch_arg_t *arg) {
  switch (arg->kind) {
  case SCH_ARG_NONE: return json_null();
  case SCH_ARG_INT: return json_integer(arg->u.i);
  case SCH_ARG_FLOAT: return json_real(arg->u.f);
  case SCH_ARG_STR: return json_string(arg->u.s);
  case SCH_ARG_RV: return json_integer(arg->u.rv); /* not in any layout */
  case SCH_ARG_LIST: {
    json_t *arr = json_array();
    for (int i = 0; arr && i < arg->u.list.n; i++) {
      if (json_array_append_new(arr, value_to_json(&arg->u.list.items[i])) != 0) {
        json_decref(arr);
        return NULL;
      }
    }
    return arr;
  }
  }
  return NULL;
}

static json_t *args_to_json(const sch_arg_t *args, int n, const sch_rv_names_t *names) {
  json_t *arr = json_array();
  for (int i = 0; arr && i < n; i++) {
    json_t *item = names ? input_to_json(&args[i], names) : value_to_json(&args[i]);
    if (!item || json_array_append_new(arr, item) != 0) {
      json_decref(arr);
      return NULL;
    }
  }
  return arr;
}

static json_t *inst_to_json(const sch_inst_t *inst, sch_rv_names_t *names) {
  json_t *inputs = args_to_json(inst->inputs, inst->ninputs, names);
  if (!inputs) return NULL;
  json_t *attrs = args_to_json(inst->attrs, inst->nattrs, NULL);
  sch_rv_names_define(names, inst);
  json_t *outputs = json_array();
  for (int k = 0; outputs && k < inst->noutputs; k++) {
    const char *name = sch_rv_names_get(names, inst->outputs[k]);
    json_array_append_new(outputs, json_string(name ? name : "_"));
  }
  return json_pack("[s, o, o, o]", inst->kind->name, inputs, attrs, outputs);
}

int sch_trace_to_json(json_t **out, const sch_trace_t *t) {
  *out = NULL;
  sch_rv_names_t names;
  if (sch_rv_names_init(&names, t->nrvs) != MLC_OK) return MLC_ENOMEM;
  int rc = MLC_OK;
  json_t *insts = json_array(), *decisions = json_array();
  for (int i = 0; i < t->n && rc == MLC_OK; i++) {
    const sch_inst_t *inst = &t->insts[i];
    if (!inst->kind) {
      rc = sch_trace_inst_error(MLC_EINVAL, i, NULL, "has no kind");
      break;
    }
    json_t *j = inst_to_json(inst, &names);
    if (!j) {
      rc = sch_trace_inst_error(MLC_EINVAL, i, inst->kind, "%s", mlc_error_last());
      break;
    }
    json_array_append_new(insts, j);
    if (t->decisions[i].kind != SCH_ARG_NONE)
      json_array_append_new(decisions, json_pack("[i, o]", i, value_to_json(&t->decisions[i])));
  }
  sch_rv_names_free(&names);
  if (rc == MLC_OK) *out = json_pack("[o, o]", insts, decisions);
  else json_decref(insts), json_decref(decisions);
  if (rc == MLC_OK && !*out) rc = mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
  sch_trace_t *t;
  sch_name_map_t names;
  int nrvs, cap_kinds;
  sch_rv_kind_t *kinds; /* per trace RV */
  int index;            /* the instruction being read */
  const sch_inst_kind_t *kind;
} reader_t;

#define FAIL(r, ...) sch_trace_inst_error(MLC_EPARSE, (r)->index, (r)->kind, __VA_ARGS__)

/* An input value: RV names resolve through the map. */
static int input_from_json(reader_t *r, const json_t *j, sch_arg_t *out) {
  mlc_arena_t *a = r->t->arena;
  int rc;
  if (json_is_integer(j)) *out = sch_arg_int(json_integer_value(j));
  else if (json_is_real(j)) *out = sch_arg_float(json_real_value(j));
  else if (json_is_boolean(j)) *out = sch_arg_int(json_is_true(j));
  else if (json_is_null(j)) *out = sch_arg_none();
  else if (json_is_array(j)) {
    size_t n = json_array_size(j);
    out->kind = SCH_ARG_LIST;
    out->u.list.n = (int)n;
    out->u.list.items = n ? mlc_arena_alloc(a, sizeof(sch_arg_t) * n) : NULL;
    if (n && !out->u.list.items) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
    for (size_t i = 0; i < n; i++)
      if ((rc = input_from_json(r, json_array_get(j, i), &out->u.list.items[i])) != MLC_OK) return rc;
  } else if (json_is_string(j)) {
    const char *s = json_string_value(j);
    size_t len = json_string_length(j);
    sch_rv_kind_t kind;
    sch_rv_t rv;
    if (strcmp(s, "None") == 0) *out = sch_arg_none();
    else if (len >= 2 && s[0] == '"' && s[len - 1] == '"') *out = sch_arg_str(mlc_arena_strndup(a, s + 1, len - 2));
    else if (sch_name_map_get(&r->names, s, len, &rv, &kind)) *out = sch_arg_rv(rv);
    else return FAIL(r, "random variable \"%s\" is not defined", s);
  } else {
    return FAIL(r, "an input is neither a name, a number nor a list");
  }
  return MLC_OK;
}

/* An attribute or decision value: strings are plain. */
static int value_from_json(reader_t *r, const json_t *j, sch_arg_t *out) {
  if (json_is_string(j)) {
    *out = sch_arg_str(mlc_arena_strdup(r->t->arena, json_string_value(j)));
    return MLC_OK;
  }
  if (json_is_array(j)) {
    size_t n = json_array_size(j);
    int rc;
    out->kind = SCH_ARG_LIST;
    out->u.list.n = (int)n;
    out->u.list.items = n ? mlc_arena_alloc(r->t->arena, sizeof(sch_arg_t) * n) : NULL;
    if (n && !out->u.list.items) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
    for (size_t i = 0; i < n; i++)
      if ((rc = value_from_json(r, json_array_get(j, i), &out->u.list.items[i])) != MLC_OK) return rc;
    return MLC_OK;
  }
  if (json_is_object(j)) return FAIL(r, "objects are not supported as values");
  return input_from_json(r, j, out); /* numbers, bools, null */
}

/* Inputs: converted, completed with defaults (older TVM), type-checked. */
static int read_inputs(reader_t *r, const json_t *j, sch_arg_t *args, int *n) {
  const sch_inst_sig_t *sig = sch_inst_sig(r->kind);
  int rc;
  *n = (int)json_array_size(j);
  if (*n > SCH_MAX_DEPTH || !sch_sig_input_count_ok(sig, *n))
    return FAIL(r, "has %d input%s, which its layout (%s) does not allow", *n, *n == 1 ? "" : "s",
                *sig->inputs ? sig->inputs : "none");
  for (int i = 0; i < *n; i++)
    if ((rc = input_from_json(r, json_array_get(j, i), &args[i])) != MLC_OK) return rc;
  /* cache_read/cache_write before consumer_blocks existed */
  int full = (int)strlen(sig->inputs);
  for (; *n < full && *n >= sig->ninputs_min; (*n)++) {
    const sch_py_param_t *p = sig->params;
    while (p->dest != PY_END && !(p->dest == PY_INPUT && p->idx == *n)) p++;
    if (p->dest == PY_END || !sch_py_default(r->t->arena, p, &args[*n])) break;
  }
  for (int i = 0; i < *n; i++) {
    const char *why;
    if (!sch_arg_check(sch_sig_input_type(sig->inputs, i), &args[i], r->kinds, r->nrvs, &why))
      return FAIL(r, "input %d should be %s", i, why);
  }
  return MLC_OK;
}

/* True for a value a TVM option we lack may have: its default. */
static bool is_default_extra(const sch_arg_t *a) {
  return a->kind == SCH_ARG_NONE || (a->kind == SCH_ARG_INT && a->u.i == 0);
}

static int read_attrs(reader_t *r, const json_t *j, sch_arg_t *args, int *n) {
  const sch_inst_sig_t *sig = sch_inst_sig(r->kind);
  int ours = (int)strlen(sig->attrs), given = (int)json_array_size(j);
  if (given < sig->nattrs_min || given > sig->nattrs_tvm)
    return FAIL(r, "has %d attribute%s, expected %d", given, given == 1 ? "" : "s", ours);
  for (int i = 0; i < given; i++) {
    sch_arg_t v;
    int rc = value_from_json(r, json_array_get(j, i), &v);
    if (rc != MLC_OK) return rc;
    if (i < ours) args[i] = v;
    else if (!is_default_extra(&v)) return FAIL(r, "attribute %d (a TVM option not supported here) must be its default", i);
  }
  for (int i = given; i < ours; i++) {
    const sch_py_param_t *p = sig->params;
    while (p->dest != PY_END && !(p->dest == PY_ATTR && p->idx == i)) p++;
    if (p->dest == PY_END || !sch_py_default(r->t->arena, p, &args[i])) return FAIL(r, "attribute %d is missing", i);
  }
  *n = ours;
  for (int i = 0; i < ours; i++) {
    const char *why;
    if (sig->attrs[i] == 'm' && args[i].kind == SCH_ARG_STR && args[i].u.s[0] == '{')
      return FAIL(r, "index maps in TVM's JSON-graph form are not supported; write the lambda text");
    if (!sch_arg_check(sig->attrs[i], &args[i], r->kinds, r->nrvs, &why))
      return FAIL(r, "attribute %d should be %s", i, why);
  }
  return MLC_OK;
}

/* Output names: new variables of the kind's output kind. */
static int read_outputs(reader_t *r, const json_t *j, sch_rv_t *outs, int *n) {
  const sch_inst_sig_t *sig = sch_inst_sig(r->kind);
  sch_rv_kind_t kind = sch_code_rv_kind(sig->output);
  *n = (int)json_array_size(j);
  if (*n > SCH_MAX_DEPTH) return FAIL(r, "has too many outputs");
  for (int i = 0; i < *n; i++) {
    const json_t *name = json_array_get(j, i);
    if (!json_is_string(name)) return FAIL(r, "output %d is not a name", i);
    const char *s = json_string_value(name);
    size_t len = json_string_length(name);
    sch_rv_t old;
    sch_rv_kind_t old_kind;
    if (len == 0 || strcmp(s, "None") == 0 || s[0] == '"') return FAIL(r, "output %d has the bad name \"%s\"", i, s);
    if (strcmp(s, "_") != 0 && sch_name_map_get(&r->names, s, len, &old, &old_kind))
      return FAIL(r, "random variable \"%s\" is defined twice", s);
    if (r->nrvs == r->cap_kinds) {
      int cap = r->cap_kinds ? r->cap_kinds * 2 : 64;
      sch_rv_kind_t *k = mlc_realloc(r->kinds, sizeof(*k) * (size_t)cap);
      if (!k) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
      r->kinds = k;
      r->cap_kinds = cap;
    }
    r->kinds[r->nrvs] = kind;
    outs[i] = r->nrvs++;
    if (strcmp(s, "_") != 0 && sch_name_map_put(&r->names, s, len, outs[i], kind) != MLC_OK) return MLC_ENOMEM;
  }
  return MLC_OK;
}

static int read_inst(reader_t *r, const json_t *j, const json_t *decision) {
  r->kind = NULL;
  if (!json_is_array(j) || json_array_size(j) != 4 || !json_is_string(json_array_get(j, 0)) ||
      !json_is_array(json_array_get(j, 1)) || !json_is_array(json_array_get(j, 2)) ||
      !json_is_array(json_array_get(j, 3)))
    return FAIL(r, "should be [kind, inputs, attrs, outputs]");
  const char *name = json_string_value(json_array_get(j, 0));
  if (!(r->kind = sch_inst_kind_find(name))) return FAIL(r, "unknown instruction kind \"%s\"", name);
  sch_arg_t inputs[SCH_MAX_DEPTH], attrs[8], dec = sch_arg_none();
  sch_rv_t outs[SCH_MAX_DEPTH];
  int ninputs = 0, nattrs = 0, nouts = 0, rc;
  if ((rc = read_inputs(r, json_array_get(j, 1), inputs, &ninputs)) != MLC_OK) return rc;
  if ((rc = read_attrs(r, json_array_get(j, 2), attrs, &nattrs)) != MLC_OK) return rc;
  if ((rc = read_outputs(r, json_array_get(j, 3), outs, &nouts)) != MLC_OK) return rc;
  if (decision && (rc = value_from_json(r, decision, &dec)) != MLC_OK) return rc;
  sch_inst_t inst = {r->kind, ninputs, inputs, nattrs, attrs, nouts, outs};
  if ((rc = sch_inst_check_counts(r->index, &inst, &dec)) != MLC_OK) return rc;
  if (mlc_arena_failed(r->t->arena)) return mlc_error_set(MLC_ENOMEM, "trace: out of memory");
  return sch_trace_append(r->t, r->kind, inputs, ninputs, attrs, nattrs, outs, nouts, &dec);
}

/* decisions[i] = the JSON decision of instruction i, or NULL. */
static int index_decisions(const json_t *jdec, int ninsts, const json_t **decisions) {
  size_t k;
  const json_t *entry;
  json_array_foreach(jdec, k, entry) {
    if (!json_is_array(entry) || json_array_size(entry) != 2 || !json_is_integer(json_array_get(entry, 0)))
      return mlc_error_set(MLC_EPARSE, "decision %zu should be [instruction index, decision]", k);
    json_int_t i = json_integer_value(json_array_get(entry, 0));
    if (i < 0 || i >= ninsts)
      return mlc_error_set(MLC_EPARSE, "decision %zu names instruction %lld, which does not exist", k, (long long)i);
    if (decisions[i]) return mlc_error_set(MLC_EPARSE, "instruction %lld has two decisions", (long long)i);
    decisions[i] = json_array_get(entry, 1);
  }
  return MLC_OK;
}

int sch_trace_from_json(sch_trace_t **out, const json_t *json) {
  *out = NULL;
  if (!json_is_array(json) || json_array_size(json) != 2 || !json_is_array(json_array_get(json, 0)) ||
      !json_is_array(json_array_get(json, 1)))
    return mlc_error_set(MLC_EPARSE, "a trace should be [instructions, decisions]");
  const json_t *jinsts = json_array_get(json, 0);
  int ninsts = (int)json_array_size(jinsts);
  reader_t r;
  memset(&r, 0, sizeof r);
  sch_name_map_init(&r.names);
  const json_t **decisions = mlc_calloc((size_t)(ninsts > 0 ? ninsts : 1), sizeof(*decisions));
  r.t = sch_trace_new();
  int rc = !decisions || !r.t ? mlc_error_set(MLC_ENOMEM, "trace: out of memory") : MLC_OK;
  if (rc == MLC_OK) rc = index_decisions(json_array_get(json, 1), ninsts, decisions);
  for (r.index = 0; r.index < ninsts && rc == MLC_OK; r.index++)
    rc = read_inst(&r, json_array_get(jinsts, (size_t)r.index), decisions[r.index]);
  if (rc == MLC_OK) r.t->nrvs = r.nrvs;
  mlc_free(decisions);
  mlc_free(r.kinds);
  sch_name_map_free(&r.names);
  if (rc != MLC_OK) sch_trace_free(r.t);
  else *out = r.t;
  return rc;
}

int sch_trace_from_json_text(sch_trace_t **out, const char *text, const char *what) {
  *out = NULL;
  if (!text) return mlc_error_set(MLC_EPARSE, "%s: missing", what);
  json_t *json = mlc_json_loads(text, what);
  if (!json) return mlc_error_last_code() == MLC_ENOMEM ? MLC_ENOMEM : MLC_EPARSE;
  int rc = sch_trace_from_json(out, json);
  json_decref(json);
  if (rc != MLC_OK && rc != MLC_ENOMEM) mlc_error_prefix("%s", what);
  return rc;
}
