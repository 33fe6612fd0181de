/*
 * inst_kinds.c - the instruction kinds (TVM's InstructionKind registry):
 * one row per kind of state.h's SCH_INST_KINDS with its name, purity, the
 * adapter that replays it through the public sch_* primitive, and its
 * Python printer; beside it, the layout table (trace_internal.h) that the
 * JSON reader checks traces against and the Python form is printed and
 * parsed from.
 *
 * Adapters receive an instruction whose inputs are already the schedule's
 * random variables (trace_apply.c translates them) and whose layout has
 * been checked (recorded by a primitive, or validated by the JSON or Python
 * reader), so they only unpack arguments. A result count that differs from
 * the trace's outputs (get_loops of a block that now has more loops) is an
 * error: the rest of the trace would name the wrong variables.
 */
#include "schedule/trace/trace_internal.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Argument access (layouts are checked before replay)                       */
/* ------------------------------------------------------------------------ */

static sch_rv_t in_rv(const sch_inst_t *inst, int i) { return inst->inputs[i].u.rv; }
static int64_t attr_int(const sch_inst_t *inst, int i) { return inst->attrs[i].u.i; }
static bool attr_bool(const sch_inst_t *inst, int i) { return inst->attrs[i].u.i != 0; }
static const char *attr_str(const sch_inst_t *inst, int i) { return inst->attrs[i].u.s; }

/* The RVs of a list argument, into out (at most cap). */
static int list_rvs(const sch_arg_t *list, sch_rv_t *out, int cap) {
  int n = list->kind == SCH_ARG_LIST ? list->u.list.n : 0;
  if (n > cap) n = cap;
  for (int i = 0; i < n; i++) out[i] = list->u.list.items[i].u.rv;
  return n;
}

/* Hands a primitive's results over as the instruction's outputs. */
static int put_outputs(sch_t *sch, const char *prim, const sch_inst_t *inst, const sch_rv_t *rvs, int n,
                       sch_rv_t *outputs, int *noutputs) {
  if (n != inst->noutputs)
    return sch_fail(sch, prim, "gives %d result%s where the trace has %d", n, n == 1 ? "" : "s", inst->noutputs);
  if (n > 0) memcpy(outputs, rvs, sizeof(*rvs) * (size_t)n);
  *noutputs = n;
  return MLC_OK;
}

static int put_one(sch_t *sch, const char *prim, const sch_inst_t *inst, int rc, sch_rv_t rv, sch_rv_t *outputs,
                   int *noutputs) {
  return rc != MLC_OK ? rc : put_outputs(sch, prim, inst, &rv, 1, outputs, noutputs);
}

static int put_list(sch_t *sch, const char *prim, const sch_inst_t *inst, int rc, const sch_rv_t *rvs, int n,
                    sch_rv_t *outputs, int *noutputs) {
  return rc != MLC_OK ? rc : put_outputs(sch, prim, inst, rvs, n, outputs, noutputs);
}

#define ADAPTER(fn)                                                                                  \
  static int fn(sch_t *sch, const sch_inst_t *inst, const sch_arg_t *decision, sch_rv_t *outputs, \
                int *noutputs)

/* ------------------------------------------------------------------------ */
/* Lookup                                                                    */
/* ------------------------------------------------------------------------ */

ADAPTER(apply_get_block) {
  sch_rv_t rv;
  int rc = sch_get_block(sch, &rv, attr_str(inst, 0));
  return put_one(sch, "get_block", inst, rc, rv, outputs, noutputs);
}

ADAPTER(apply_get_loops) {
  const sch_rv_t *rvs;
  int n = 0, rc = sch_get_loops(sch, &rvs, &n, in_rv(inst, 0));
  return put_list(sch, "get_loops", inst, rc, rvs, n, outputs, noutputs);
}

ADAPTER(apply_get_child_blocks) {
  const sch_rv_t *rvs;
  int n = 0, rc = sch_get_child_blocks(sch, &rvs, &n, in_rv(inst, 0));
  return put_list(sch, "get_child_blocks", inst, rc, rvs, n, outputs, noutputs);
}

ADAPTER(apply_get_producers) {
  const sch_rv_t *rvs;
  int n = 0, rc = sch_get_producers(sch, &rvs, &n, in_rv(inst, 0));
  return put_list(sch, "get_producers", inst, rc, rvs, n, outputs, noutputs);
}

ADAPTER(apply_get_consumers) {
  const sch_rv_t *rvs;
  int n = 0, rc = sch_get_consumers(sch, &rvs, &n, in_rv(inst, 0));
  return put_list(sch, "get_consumers", inst, rc, rvs, n, outputs, noutputs);
}

/* ------------------------------------------------------------------------ */
/* Loops                                                                     */
/* ------------------------------------------------------------------------ */

ADAPTER(apply_split) {
  if (attr_bool(inst, 1)) return sch_fail(sch, "split", "disable_predication=True is not supported");
  const sch_rv_t *rvs;
  int nfactors = inst->ninputs - 1;
  int rc = sch_split(sch, &rvs, in_rv(inst, 0), inst->inputs + 1, nfactors, attr_bool(inst, 0));
  return put_list(sch, "split", inst, rc, rvs, nfactors, outputs, noutputs);
}

/* Inputs that are all RVs (fuse, reorder), copied out. */
static int input_rvs(const sch_inst_t *inst, sch_rv_t *out, int cap) {
  int n = inst->ninputs < cap ? inst->ninputs : cap;
  for (int i = 0; i < n; i++) out[i] = inst->inputs[i].u.rv;
  return n;
}

ADAPTER(apply_fuse) {
  sch_rv_t loops[SCH_MAX_DEPTH], rv;
  int n = input_rvs(inst, loops, SCH_MAX_DEPTH);
  int rc = sch_fuse(sch, &rv, loops, n, attr_bool(inst, 0));
  return put_one(sch, "fuse", inst, rc, rv, outputs, noutputs);
}

ADAPTER(apply_reorder) {
  sch_rv_t loops[SCH_MAX_DEPTH];
  int n = input_rvs(inst, loops, SCH_MAX_DEPTH);
  int rc = sch_reorder(sch, loops, n);
  return put_list(sch, "reorder", inst, rc, NULL, 0, outputs, noutputs);
}

ADAPTER(apply_add_unit_loop) {
  sch_rv_t rv;
  int rc = sch_add_unit_loop(sch, &rv, in_rv(inst, 0));
  return put_one(sch, "add_unit_loop", inst, rc, rv, outputs, noutputs);
}

/* ------------------------------------------------------------------------ */
/* Annotation                                                                */
/* ------------------------------------------------------------------------ */

ADAPTER(apply_parallel) {
  *noutputs = 0;
  return sch_parallel(sch, in_rv(inst, 0));
}

ADAPTER(apply_vectorize) {
  *noutputs = 0;
  return sch_vectorize(sch, in_rv(inst, 0));
}

ADAPTER(apply_unroll) {
  *noutputs = 0;
  return sch_unroll(sch, in_rv(inst, 0));
}

ADAPTER(apply_bind) {
  *noutputs = 0;
  return sch_bind(sch, in_rv(inst, 0), attr_str(inst, 0));
}

ADAPTER(apply_annotate) {
  *noutputs = 0;
  return sch_annotate(sch, in_rv(inst, 0), attr_str(inst, 0), inst->inputs[1]);
}

ADAPTER(apply_unannotate) {
  *noutputs = 0;
  return sch_unannotate(sch, in_rv(inst, 0), attr_str(inst, 0));
}

/* ------------------------------------------------------------------------ */
/* Compute location                                                          */
/* ------------------------------------------------------------------------ */

ADAPTER(apply_compute_at) {
  *noutputs = 0;
  return sch_compute_at(sch, in_rv(inst, 0), in_rv(inst, 1), attr_bool(inst, 0), (int)attr_int(inst, 1));
}

ADAPTER(apply_reverse_compute_at) {
  *noutputs = 0;
  return sch_reverse_compute_at(sch, in_rv(inst, 0), in_rv(inst, 1), attr_bool(inst, 0), (int)attr_int(inst, 1));
}

ADAPTER(apply_compute_inline) {
  *noutputs = 0;
  return sch_compute_inline(sch, in_rv(inst, 0));
}

ADAPTER(apply_reverse_compute_inline) {
  *noutputs = 0;
  return sch_reverse_compute_inline(sch, in_rv(inst, 0));
}

/* ------------------------------------------------------------------------ */
/* Storage                                                                   */
/* ------------------------------------------------------------------------ */

ADAPTER(apply_cache_read) {
  sch_rv_t consumers[SCH_MAX_DEPTH], rv;
  int n = list_rvs(&inst->inputs[1], consumers, SCH_MAX_DEPTH);
  int rc = sch_cache_read(sch, &rv, in_rv(inst, 0), (int)attr_int(inst, 0), attr_str(inst, 1), consumers, n);
  return put_one(sch, "cache_read", inst, rc, rv, outputs, noutputs);
}

ADAPTER(apply_cache_write) {
  sch_rv_t consumers[SCH_MAX_DEPTH], rv;
  int n = list_rvs(&inst->inputs[1], consumers, SCH_MAX_DEPTH);
  int rc = sch_cache_write(sch, &rv, in_rv(inst, 0), (int)attr_int(inst, 0), attr_str(inst, 1), consumers, n);
  return put_one(sch, "cache_write", inst, rc, rv, outputs, noutputs);
}

ADAPTER(apply_set_scope) {
  *noutputs = 0;
  return sch_set_scope(sch, in_rv(inst, 0), (int)attr_int(inst, 0), attr_str(inst, 1));
}

ADAPTER(apply_storage_align) {
  *noutputs = 0;
  return sch_storage_align(sch, in_rv(inst, 0), (int)attr_int(inst, 0), (int)attr_int(inst, 1),
                           (int)attr_int(inst, 2), (int)attr_int(inst, 3));
}

ADAPTER(apply_transform_layout) {
  *noutputs = 0;
  sch_index_map_t map;
  int rc = sch_index_map_from_text(sch, attr_str(inst, 2), &map);
  if (rc != MLC_OK) return rc;
  sch_buffer_kind_t kind = attr_int(inst, 1) ? SCH_BUFFER_WRITE : SCH_BUFFER_READ;
  return sch_transform_layout(sch, in_rv(inst, 0), (int)attr_int(inst, 0), kind, &map);
}

/* ------------------------------------------------------------------------ */
/* Reduction, blockize, tensorize                                            */
/* ------------------------------------------------------------------------ */

ADAPTER(apply_decompose_reduction) {
  sch_rv_t rv;
  int rc = sch_decompose_reduction(sch, &rv, in_rv(inst, 0), in_rv(inst, 1));
  return put_one(sch, "decompose_reduction", inst, rc, rv, outputs, noutputs);
}

ADAPTER(apply_rfactor) {
  sch_rv_t rv;
  int rc = sch_rfactor(sch, &rv, in_rv(inst, 0), (int)attr_int(inst, 0));
  return put_one(sch, "rfactor", inst, rc, rv, outputs, noutputs);
}

ADAPTER(apply_blockize) {
  sch_rv_t rv;
  int rc = sch_blockize(sch, &rv, in_rv(inst, 0), attr_bool(inst, 0));
  return put_one(sch, "blockize", inst, rc, rv, outputs, noutputs);
}

ADAPTER(apply_tensorize) {
  *noutputs = 0;
  return sch_tensorize(sch, in_rv(inst, 0), attr_str(inst, 0), attr_bool(inst, 1));
}

/* ------------------------------------------------------------------------ */
/* Sampling                                                                  */
/* ------------------------------------------------------------------------ */

/* The ints of a list argument (checked to be INT by the readers). */
static int list_ints(const sch_arg_t *list, int64_t *out, int cap) {
  int n = list->u.list.n < cap ? list->u.list.n : cap;
  for (int i = 0; i < n; i++) out[i] = list->u.list.items[i].u.i;
  return n;
}

ADAPTER(apply_sample_perfect_tile) {
  int n = (int)attr_int(inst, 0);
  int64_t factors[64];
  if (decision) {
    if (decision->kind != SCH_ARG_LIST || decision->u.list.n != n || n > 64)
      return sch_fail(sch, "sample_perfect_tile", "decision has %d factors, n is %d",
                      decision->kind == SCH_ARG_LIST ? decision->u.list.n : 1, n);
    list_ints(decision, factors, 64);
  }
  const sch_rv_t *rvs;
  int rc = sch_sample_perfect_tile(sch, &rvs, in_rv(inst, 0), n, (int)attr_int(inst, 1),
                                   decision ? factors : NULL);
  return put_list(sch, "sample_perfect_tile", inst, rc, rvs, n, outputs, noutputs);
}

ADAPTER(apply_sample_categorical) {
  const sch_arg_t *cand = &inst->attrs[0], *probs = &inst->attrs[1];
  int n = cand->u.list.n;
  if (probs->u.list.n != n)
    return sch_fail(sch, "sample_categorical", "%d candidates but %d probabilities", n, probs->u.list.n);
  int64_t cbuf[64];
  double pbuf[64];
  int64_t *c = n <= 64 ? cbuf : mlc_arena_alloc(sch_arena(sch), sizeof(int64_t) * (size_t)n);
  double *p = n <= 64 ? pbuf : mlc_arena_alloc(sch_arena(sch), sizeof(double) * (size_t)n);
  if (!c || !p) return mlc_error_set(MLC_ENOMEM, "sample_categorical: out of memory");
  list_ints(cand, c, n);
  for (int i = 0; i < n; i++) {
    const sch_arg_t *item = &probs->u.list.items[i];
    p[i] = item->kind == SCH_ARG_FLOAT ? item->u.f : (double)item->u.i;
  }
  int64_t index = decision ? decision->u.i : 0;
  sch_rv_t rv;
  int rc = sch_sample_categorical(sch, &rv, c, p, n, decision ? &index : NULL);
  return put_one(sch, "sample_categorical", inst, rc, rv, outputs, noutputs);
}

ADAPTER(apply_sample_compute_location) {
  int64_t index = decision ? decision->u.i : 0;
  sch_rv_t rv;
  int rc = sch_sample_compute_location(sch, &rv, in_rv(inst, 0), decision ? &index : NULL);
  return put_one(sch, "sample_compute_location", inst, rc, rv, outputs, noutputs);
}

/* EnterPostproc changes nothing; replaying it records it, so a replayed
 * trace keeps the marker where the search's postprocessing began. */
ADAPTER(apply_enter_postproc) {
  *noutputs = 0;
  return sch_enter_postproc(sch);
}

int sch_enter_postproc(sch_t *sch) {
  if (!sch) return mlc_error_set(MLC_EINVAL, "enter_postproc: no schedule");
  sch_record(sch, SCH_INST_ENTER_POSTPROC, NULL, 0, NULL, 0, NULL, 0, NULL);
  return MLC_OK;
}

/* ------------------------------------------------------------------------ */
/* The tables                                                                */
/* ------------------------------------------------------------------------ */

/* Adapter of each kind, by enum name. */
#define apply_GET_BLOCK apply_get_block
#define apply_GET_LOOPS apply_get_loops
#define apply_GET_CHILD_BLOCKS apply_get_child_blocks
#define apply_GET_PRODUCERS apply_get_producers
#define apply_GET_CONSUMERS apply_get_consumers
#define apply_SPLIT apply_split
#define apply_FUSE apply_fuse
#define apply_REORDER apply_reorder
#define apply_ADD_UNIT_LOOP apply_add_unit_loop
#define apply_PARALLEL apply_parallel
#define apply_VECTORIZE apply_vectorize
#define apply_UNROLL apply_unroll
#define apply_BIND apply_bind
#define apply_ANNOTATE apply_annotate
#define apply_UNANNOTATE apply_unannotate
#define apply_COMPUTE_AT apply_compute_at
#define apply_REVERSE_COMPUTE_AT apply_reverse_compute_at
#define apply_COMPUTE_INLINE apply_compute_inline
#define apply_REVERSE_COMPUTE_INLINE apply_reverse_compute_inline
#define apply_CACHE_READ apply_cache_read
#define apply_CACHE_WRITE apply_cache_write
#define apply_SET_SCOPE apply_set_scope
#define apply_STORAGE_ALIGN apply_storage_align
#define apply_TRANSFORM_LAYOUT apply_transform_layout
#define apply_DECOMPOSE_REDUCTION apply_decompose_reduction
#define apply_RFACTOR apply_rfactor
#define apply_BLOCKIZE apply_blockize
#define apply_TENSORIZE apply_tensorize
#define apply_SAMPLE_PERFECT_TILE apply_sample_perfect_tile
#define apply_SAMPLE_CATEGORICAL apply_sample_categorical
#define apply_SAMPLE_COMPUTE_LOCATION apply_sample_compute_location
#define apply_ENTER_POSTPROC apply_enter_postproc

const sch_inst_kind_t sch_inst_kinds[SCH_INST_COUNT] = {
#define SCH_KIND_ROW_(e, name, pure) [SCH_INST_##e] = {name, pure, apply_##e, sch_inst_to_python},
    SCH_INST_KINDS(SCH_KIND_ROW_)
#undef SCH_KIND_ROW_
};

/* Python parameters, in the order TVM prints them (its UnpackedAsPython). */
#define IN(kw, i, t) {PY_INPUT, kw, NULL, i, t, NULL}
#define IN_ALIAS(kw, alias, i, t) {PY_INPUT, kw, alias, i, t, NULL}
#define ATTR(kw, i, t) {PY_ATTR, kw, NULL, i, t, NULL}
#define ATTR_OR(kw, i, t, d) {PY_ATTR, kw, NULL, i, t, d}
#define DECISION(t) {PY_DECISION, "decision", NULL, 0, t, "None"}
#define END {PY_END, NULL, NULL, 0, 0, NULL}

/* A loop-annotation kind: one loop input, nothing else. */
#define LOOP_ONLY(method) {"l", 1, "", 0, 0, 0, 0, method, {IN("loop", 0, 'l'), END}}
#define BLOCK_ONLY(method) {"b", 1, "", 0, 0, 0, 0, method, {IN("block", 0, 'b'), END}}

/* inputs, ninputs_min, attrs, nattrs_min, nattrs_tvm, output, decision, method, params */
const sch_inst_sig_t sch_inst_sigs[SCH_INST_COUNT] = {
    [SCH_INST_GET_BLOCK] = {"", 0, "ss", 2, 2, 'b', 0, "get_block",
                            {ATTR("name", 0, 's'), ATTR_OR("func_name", 1, 's', "\"main\""), END}},
    [SCH_INST_GET_LOOPS] = {"b", 1, "", 0, 0, 'L', 0, "get_loops", {IN("block", 0, 'b'), END}},
    [SCH_INST_GET_CHILD_BLOCKS] = {"x", 1, "", 0, 0, 'B', 0, "get_child_blocks",
                                   {IN_ALIAS("", "block_or_loop", 0, 'x'), END}},
    [SCH_INST_GET_PRODUCERS] = {"b", 1, "", 0, 0, 'B', 0, "get_producers", {IN("block", 0, 'b'), END}},
    [SCH_INST_GET_CONSUMERS] = {"b", 1, "", 0, 0, 'B', 0, "get_consumers", {IN("block", 0, 'b'), END}},
    [SCH_INST_SPLIT] = {"lf*", 1, "zz", 1, 2, 'L', 0, "split",
                        {IN("loop", 0, 'l'), {PY_INPUT_LIST, "factors", NULL, 1, 'f', NULL},
                         ATTR_OR("preserve_unit_iters", 0, 'z', "True"),
                         ATTR_OR("disable_predication", 1, 'z', "False"), END}},
    [SCH_INST_FUSE] = {"l+", 1, "z", 0, 1, 'l', 0, "fuse",
                       {{PY_VARARGS, "", NULL, 0, 'l', NULL}, ATTR_OR("preserve_unit_iters", 0, 'z', "True"), END}},
    [SCH_INST_REORDER] = {"l+", 1, "", 0, 0, 0, 0, "reorder", {{PY_VARARGS, "", NULL, 0, 'l', NULL}, END}},
    [SCH_INST_ADD_UNIT_LOOP] = {"x", 1, "", 0, 0, 'l', 0, "add_unit_loop", {IN("block_or_loop", 0, 'x'), END}},
    [SCH_INST_PARALLEL] = LOOP_ONLY("parallel"),
    [SCH_INST_VECTORIZE] = LOOP_ONLY("vectorize"),
    [SCH_INST_UNROLL] = LOOP_ONLY("unroll"),
    [SCH_INST_BIND] = {"l", 1, "s", 1, 1, 0, 0, "bind",
                       {IN("loop", 0, 'l'), {PY_ATTR, "thread_axis", "thread", 0, 's', NULL}, END}},
    [SCH_INST_ANNOTATE] = {"xa", 2, "s", 1, 1, 0, 0, "annotate",
                           {IN("block_or_loop", 0, 'x'), ATTR("ann_key", 0, 's'), IN("ann_val", 1, 'a'), END}},
    [SCH_INST_UNANNOTATE] = {"x", 1, "s", 1, 1, 0, 0, "unannotate",
                             {IN("block_or_loop", 0, 'x'), ATTR("ann_key", 0, 's'), END}},
    [SCH_INST_COMPUTE_AT] = {"bl", 2, "zi", 1, 2, 0, 0, "compute_at",
                             {IN("block", 0, 'b'), IN("loop", 1, 'l'),
                              ATTR_OR("preserve_unit_loops", 0, 'z', "False"), ATTR_OR("index", 1, 'i', "-1"), END}},
    [SCH_INST_REVERSE_COMPUTE_AT] = {"bl", 2, "zi", 1, 2, 0, 0, "reverse_compute_at",
                                     {IN("block", 0, 'b'), IN("loop", 1, 'l'),
                                      ATTR_OR("preserve_unit_loops", 0, 'z', "False"),
                                      ATTR_OR("index", 1, 'i', "-1"), END}},
    [SCH_INST_COMPUTE_INLINE] = BLOCK_ONLY("compute_inline"),
    [SCH_INST_REVERSE_COMPUTE_INLINE] = BLOCK_ONLY("reverse_compute_inline"),
    [SCH_INST_CACHE_READ] = {"bB", 1, "is", 2, 2, 'b', 0, "cache_read",
                             {IN("block", 0, 'b'), ATTR("read_buffer_index", 0, 'i'), ATTR("storage_scope", 1, 's'),
                              {PY_INPUT, "consumer_blocks", NULL, 1, 'B', "[]"}, END}},
    [SCH_INST_CACHE_WRITE] = {"bB", 1, "is", 2, 2, 'b', 0, "cache_write",
                              {IN("block", 0, 'b'), ATTR("write_buffer_index", 0, 'i'), ATTR("storage_scope", 1, 's'),
                               {PY_INPUT, "consumer_blocks", NULL, 1, 'B', "[]"}, END}},
    [SCH_INST_SET_SCOPE] = {"b", 1, "is", 2, 2, 0, 0, "set_scope",
                            {IN("block", 0, 'b'), ATTR("buffer_index", 0, 'i'), ATTR("storage_scope", 1, 's'), END}},
    [SCH_INST_STORAGE_ALIGN] = {"b", 1, "iiii", 4, 4, 0, 0, "storage_align",
                                {IN("block", 0, 'b'), ATTR("buffer_index", 0, 'i'), ATTR("axis", 1, 'i'),
                                 ATTR("factor", 2, 'i'), ATTR("offset", 3, 'i'), END}},
    [SCH_INST_TRANSFORM_LAYOUT] = {"b", 1, "iim", 3, 5, 0, 0, "transform_layout",
                                   {IN("block", 0, 'b'), {PY_BUFFER, "buffer", NULL, 0, 0, NULL},
                                    ATTR("index_map", 2, 'm'), {PY_IGNORED, "pad_value", NULL, 0, 'n', "None"}, END}},
    [SCH_INST_DECOMPOSE_REDUCTION] = {"bl", 2, "", 0, 0, 'b', 0, "decompose_reduction",
                                      {IN("block", 0, 'b'), IN("loop", 1, 'l'), END}},
    [SCH_INST_RFACTOR] = {"l", 1, "i", 1, 2, 'b', 0, "rfactor",
                          {IN("loop", 0, 'l'), ATTR_OR("factor_axis", 0, 'i', "0"), END}},
    [SCH_INST_BLOCKIZE] = {"l", 1, "z", 0, 1, 'b', 0, "blockize",
                           {IN_ALIAS("target", "loop", 0, 'l'), ATTR_OR("preserve_unit_iters", 0, 'z', "True"), END}},
    [SCH_INST_TENSORIZE] = {"x", 1, "sz", 1, 2, 0, 0, "tensorize",
                            {IN("block_or_loop", 0, 'x'), {PY_ATTR, "tensor_intrin", "intrin", 0, 's', NULL},
                             ATTR_OR("preserve_unit_iters", 1, 'z', "True"), END}},
    [SCH_INST_SAMPLE_PERFECT_TILE] = {"l", 1, "ii", 2, 2, 'V', 'I', "sample_perfect_tile",
                                      {IN("loop", 0, 'l'), ATTR("n", 0, 'i'),
                                       ATTR_OR("max_innermost_factor", 1, 'i', "16"), DECISION('I'), END}},
    [SCH_INST_SAMPLE_CATEGORICAL] = {"", 0, "IF", 2, 2, 'v', 'i', "sample_categorical",
                                     {ATTR("candidates", 0, 'I'), ATTR("probs", 1, 'F'), DECISION('i'), END}},
    [SCH_INST_SAMPLE_COMPUTE_LOCATION] = {"b", 1, "", 0, 0, 'l', 'i', "sample_compute_location",
                                          {IN("block", 0, 'b'), DECISION('i'), END}},
    [SCH_INST_ENTER_POSTPROC] = {"", 0, "", 0, 0, 0, 0, "enter_postproc", {END}},
};

const sch_inst_kind_t *sch_inst_kind_find(const char *name) {
  for (int i = 0; i < SCH_INST_COUNT; i++)
    if (strcmp(sch_inst_kinds[i].name, name) == 0) return &sch_inst_kinds[i];
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Layout helpers                                                            */
/* ------------------------------------------------------------------------ */

char sch_sig_input_type(const char *spec, int i) {
  int n = (int)strlen(spec);
  if (n > 0 && (spec[n - 1] == '*' || spec[n - 1] == '+')) {
    int fixed = n - 2; /* codes before the repeated one */
    return i < fixed ? spec[i] : spec[n - 2];
  }
  return i < n ? spec[i] : 0;
}

bool sch_sig_input_count_ok(const sch_inst_sig_t *sig, int n) {
  int len = (int)strlen(sig->inputs);
  if (len > 0 && sig->inputs[len - 1] == '*') return n >= len - 2; /* the fixed codes */
  if (len > 0 && sig->inputs[len - 1] == '+') return n >= len - 1; /* and one repeated */
  return n >= sig->ninputs_min && n <= len;
}
