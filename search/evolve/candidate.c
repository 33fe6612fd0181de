/*
 * candidate.c - measurable candidates (search.h, Candidates): the design
 * part of a trace replayed on a fresh schedule of the task's workload, with
 * its decisions or sampling afresh, then postprocessed; the full trace that
 * results is what is measured and stored.
 *
 * The candidate's identity is its trace hash: XXH64 (seed 0) of the
 * canonical JSON text (mlc_json_dumps of sch_trace_to_json) of the full
 * trace. db_record_finish computes trace_hash the same way over a record's
 * trace_json, and the candidate's trace_json is exactly the text a record
 * stores, so "was this measured?" is one comparison of hashes. Replaying a
 * design trace with its decisions records the same instructions again, so a
 * stored record's design part makes the same candidate (same hash) anywhere.
 */
#include "search/evolve/evolve.h"

#include <stdlib.h>

#include "compiler/compiler.h"

void ms_candidate_free(ms_candidate_t *c) {
  if (!c) return;
  sch_trace_free(c->trace);
  mlc_free(c->trace_json);
  sch_free(c->sch);
  memset(c, 0, sizeof(*c));
}

int ms_trace_design_part(sch_trace_t **out, const sch_trace_t *t) {
  if (!out) return mlc_error_set(MLC_EINVAL, "ms_trace_design_part: no output");
  *out = NULL;
  if (!t) return mlc_error_set(MLC_EINVAL, "ms_trace_design_part: no trace");
  return ms_trace_copy_prefix(out, t, ms_trace_design_len(t));
}

int ms_trace_text(char **text, uint64_t *hash, const sch_trace_t *t) {
  *text = NULL;
  json_t *json = NULL;
  int rc = sch_trace_to_json(&json, t);
  if (rc != MLC_OK) return rc;
  char *dumped = mlc_json_dumps(json);
  json_decref(json);
  if (!dumped) return mlc_error_set(MLC_ENOMEM, "out of memory writing the trace JSON");
  *text = mlc_strdup(dumped);
  free(dumped); /* jansson's allocator */
  if (!*text) return mlc_error_set(MLC_ENOMEM, "out of memory writing the trace JSON");
  if (hash) *hash = mlc_hash64(*text, strlen(*text), 0);
  return MLC_OK;
}

static int check_args(const ms_candidate_t *out, const ms_ctx_t *ctx, const sch_trace_t *trace,
                      const ms_postproc_t *const *pp, int npp) {
  if (!out) return mlc_error_set(MLC_EINVAL, "ms_candidate_make: no output");
  if (!ctx || !ctx->workload) return mlc_error_set(MLC_EINVAL, "ms_candidate_make: no task context or workload");
  if (!trace) return mlc_error_set(MLC_EINVAL, "ms_candidate_make: no trace");
  if (npp < 0 || (npp > 0 && !pp))
    return mlc_error_set(MLC_EINVAL, "ms_candidate_make: %d postprocessors given without an array", npp);
  return MLC_OK;
}

int ms_candidate_make(ms_candidate_t *out, const ms_ctx_t *ctx, const sch_trace_t *trace, bool use_decisions,
                      uint64_t seed, const ms_postproc_t *const *pp, int npp) {
  if (out) memset(out, 0, sizeof(*out));
  int rc = check_args(out, ctx, trace, pp, npp);
  if (rc != MLC_OK) return rc;
  ms_candidate_t c = {0};
  if ((rc = sch_create(&c.sch, ctx->workload, seed, SCH_ERRORS_FAST)) != MLC_OK) goto done;
  sch_trace_t design = ms_trace_prefix_view(trace, ms_trace_design_len(trace));
  if ((rc = sch_trace_apply(c.sch, &design, use_decisions)) != MLC_OK) {
    mlc_error_prefix("replay");
    goto done;
  }
  if ((rc = ms_postprocs_apply(ctx, pp, npp, c.sch)) != MLC_OK) goto done;
  c.trace = sch_trace_copy(sch_get_trace(c.sch));
  if (!c.trace) {
    rc = mlc_error_set(MLC_ENOMEM, "candidate: out of memory copying the trace");
    goto done;
  }
  rc = ms_trace_text(&c.trace_json, &c.trace_hash, c.trace);
done:
  if (rc != MLC_OK) ms_candidate_free(&c);
  else *out = c;
  return rc;
}

int ms_candidate_features(cm_features_t *out, uint64_t *code, const tir_func_t *scheduled,
                          const mlc_target_t *target) {
  tir_func_t *lowered = NULL;
  mlc_lower_options_t lo = {.keep_unrolled_loops = true}; /* MetaSchedule's view, and cheaper */
  int rc = mlc_lower(&lowered, scheduled, target, &lo);
  if (rc == MLC_OK && code && !(*code = tir_func_key(lowered))) rc = MLC_ENOMEM; /* 0: the error is set */
  if (rc == MLC_OK) rc = cm_extract(out, lowered, target);
  tir_func_free(lowered);
  return rc;
}
