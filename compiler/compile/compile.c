/*
 * compile.c - mlc_compile_module (compiler.h): a module compiled with the
 * best schedules the database knows, the library call behind mlc-compile.
 *
 * Per function, in module order:
 *   1. its workload key and db_best(key, canonical target): records of
 *      other targets never answer, failed trials are never best;
 *   2. with a record: the record's own stored workload (db_workload),
 *      parsed and verified as the worker did, must be structurally equal to
 *      the function (a key is a hash: two programs can share one); the
 *      record's trace is replayed on that stored workload with its
 *      decisions (sch_create + sch_trace_apply, as workers/measure_job.c
 *      does), so the program compiled is the program measured; the result
 *      takes the module function's name (its symbol);
 *   3. otherwise, or when any of that fails, the default schedule
 *      (default_schedule.c), with the reason kept for the report;
 *   4. lowering, as mlc_build does; a replayed function that does not
 *      lower here (a record from an older compiler) falls back to the
 *      default schedule too.
 * Then --require-tuned's check, and code generation of all functions into
 * one module (mlc_codegen, again as mlc_build).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"

/* The seed measure options default to (workers/measure.c); decisions in the
 * trace make it irrelevant unless a sampling instruction has none. */
#define COMPILE_REPLAY_SEED 1

typedef struct {
  const mlc_target_t *target;
  const mlc_compile_options_t *opts;
  char target_str[512];
  mlc_arena_t *arena; /* the result's */
} compile_t;

static int oom(void) { return mlc_error_set(MLC_ENOMEM, "compile: out of memory"); }

/* fn->why_default = printf(fmt, ...) in the result's arena. */
static int set_why(compile_t *c, mlc_compile_func_t *fn, const char *fmt, ...) MLC_PRINTF(3, 4);
static int set_why(compile_t *c, mlc_compile_func_t *fn, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  fn->how = MLC_COMPILE_DEFAULT;
  fn->why_default = sb.failed ? NULL : mlc_arena_strdup(c->arena, mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return fn->why_default ? MLC_OK : oom();
}

/* ------------------------------------------------------------------------ */
/* No record: say what the database has instead                             */
/* ------------------------------------------------------------------------ */

/* Other targets the database has records of this workload for: the first
 * three named, `more` when there are others. */
typedef struct {
  const char *names[3];
  int n;
  bool more;
} others_t;

static void note_target(others_t *o, const char *t) {
  for (int i = 0; i < o->n; i++)
    if (strcmp(o->names[i], t) == 0) return;
  if (o->n < 3) o->names[o->n++] = t;
  else o->more = true;
}

/* "no record for this target", and what the database has instead. */
static int why_no_record(compile_t *c, mlc_compile_func_t *fn, uint64_t key) {
  db_result_t *res = NULL;
  db_filter_t filter = {.workload_key = key};
  int st = db_records(c->opts->db, &res, &filter);
  if (st != MLC_OK) return st;
  int failed = 0;
  others_t others = {{NULL}, 0, false};
  for (int i = 0; i < res->nrecords; i++) {
    const db_record_t *r = &res->records[i];
    if (!r->target) continue;
    if (strcmp(r->target, c->target_str) == 0) failed += r->error_kind != MLC_ERROR_KIND_NONE;
    else note_target(&others, r->target);
  }
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_append(&sb, "no record for this target");
  if (failed || others.n) mlc_sb_append(&sb, " (");
  if (failed) mlc_sb_printf(&sb, "only %d failed trial%s%s", failed, failed == 1 ? "" : "s", others.n ? "; " : "");
  if (others.n) mlc_sb_append(&sb, "records for other targets: ");
  for (int i = 0; i < others.n; i++) mlc_sb_printf(&sb, "%s%s", i ? ", " : "", others.names[i]);
  if (others.more) mlc_sb_append(&sb, ", ...");
  if (failed || others.n) mlc_sb_append(&sb, ")");
  db_result_free(res);
  st = sb.failed ? oom() : set_why(c, fn, "%s", mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return st;
}

/* ------------------------------------------------------------------------ */
/* A record: the stored workload and the replay                             */
/* ------------------------------------------------------------------------ */

/* The record's stored workload, parsed and verified (as the worker decodes
 * it): MLC_OK and *out, or MLC_OK with *out NULL and why set when it is
 * unusable; other statuses are the database's. */
static int stored_workload(compile_t *c, mlc_compile_func_t *fn, const db_record_t *r, tir_func_t **out) {
  db_result_t *res = NULL;
  *out = NULL;
  int st = db_workload(c->opts->db, &res, r->workload_key);
  if (st != MLC_OK) return st;
  if (res->nworkloads == 0 || !res->workloads[0].tvmscript) {
    db_result_free(res);
    return set_why(c, fn, "record %s not applied: the database has no workload for its key", r->id);
  }
  const char *text = res->workloads[0].tvmscript;
  tir_parse_error_t perr;
  memset(&perr, 0, sizeof perr);
  mlc_error_clear();
  st = tir_parse_func(out, text, strlen(text), "workload", &perr);
  if (st == MLC_OK && (st = tir_verify(*out, NULL)) != MLC_OK) {
    tir_func_free(*out);
    *out = NULL;
  }
  db_result_free(res);
  if (st == MLC_ENOMEM) return st;
  if (st != MLC_OK) return set_why(c, fn, "record %s not applied: its stored workload is not valid (%s)", r->id,
                                   mlc_error_or(mlc_status_str(st)));
  return MLC_OK;
}

/* Names g after f: its name (the exported symbol) and, when g carries a
 * global_symbol attribute, that too (f's own, else f's name). */
static int rename_like(tir_func_t *g, const tir_func_t *f) {
  if (!(g->name = mlc_arena_strdup(g->arena, f->name))) return oom();
  const tir_expr_t *sym = tir_annot_get(f->attrs, f->nattrs, "global_symbol");
  const char *symbol = sym && sym->kind == TIR_STRING_IMM ? sym->u.str_value : f->name;
  for (int i = 0; i < g->nattrs; i++) {
    if (strcmp(g->attrs[i].key, "global_symbol") != 0) continue;
    if (!(g->attrs[i].value = tir_string(g->arena, symbol))) return oom();
  }
  return MLC_OK;
}

/* Replays r's trace on `stored` with its decisions: MLC_OK and *out (a
 * function the caller owns, named after f), or MLC_OK with *out NULL and
 * why set when the trace does not replay; MLC_ENOMEM. */
static int replay(compile_t *c, mlc_compile_func_t *fn, const db_record_t *r, const tir_func_t *stored,
                  const tir_func_t *f, tir_func_t **out) {
  sch_t *sch = NULL;
  sch_trace_t *trace = NULL;
  *out = NULL;
  mlc_error_clear();
  int st = sch_create(&sch, stored, COMPILE_REPLAY_SEED, SCH_ERRORS_FAST);
  if (st == MLC_OK)
    st = r->trace_json ? sch_trace_from_json_text(&trace, r->trace_json, "trace")
                       : mlc_error_set(MLC_EPARSE, "the record has no trace");
  if (st == MLC_OK && (st = sch_trace_apply(sch, trace, true)) != MLC_OK && !*mlc_error_last())
    mlc_error_set(st, "%s", sch_error(sch));
  if (st == MLC_OK) {
    fn->trace_len = trace->n;
    if (!(*out = tir_func_clone(sch_func(sch)))) st = oom();
    else if ((st = rename_like(*out, f)) != MLC_OK) tir_func_free(*out), *out = NULL;
  } else if (st != MLC_ENOMEM) {
    st = set_why(c, fn, "record %s not applied: its trace does not replay (%s)", r->id, mlc_error_or(mlc_status_str(st)));
  }
  sch_trace_free(trace);
  sch_free(sch);
  return st;
}

/* Copies what the report says about the record used. */
static int use_record(compile_t *c, mlc_compile_func_t *fn, const db_record_t *r) {
  fn->how = MLC_COMPILE_TUNED;
  fn->why_default = NULL;
  memcpy(fn->record_id, r->id, sizeof fn->record_id);
  fn->median_secs = db_record_median(r);
  fn->created_at_us = r->created_at_us;
  fn->device_key = mlc_arena_strdup(c->arena, r->device_key ? r->device_key : "");
  fn->worker_id = mlc_arena_strdup(c->arena, r->worker_id ? r->worker_id : "");
  return fn->device_key && fn->worker_id ? MLC_OK : oom();
}

static int from_default(compile_t *c, const tir_func_t *f, tir_func_t **out);

/* mlc-tune stores the default schedule's measurement as a record (its
 * baseline). When the best record is the only successful one (`alone`) and
 * its program is the default schedule's, the function was never tuned:
 * *out (the replayed record) is freed and set to NULL and fn's why says so,
 * so the caller compiles the default schedule (the same program) and
 * --require-tuned sees an untuned function. When tuning trials succeeded
 * and none beat the default, the default is the tuned result and *out
 * stays. The default schedule is made only for a lone record. */
static int only_default(compile_t *c, mlc_compile_func_t *fn, const db_record_t *best, bool alone,
                        const tir_func_t *f, tir_func_t **out) {
  if (!alone) return MLC_OK;
  tir_func_t *def = NULL;
  int st = from_default(c, f, &def);
  if (st == MLC_OK && tir_func_equal(*out, def, NULL, 0)) {
    st = set_why(c, fn, "only the default schedule was measured (record %s, %.3g ms): no tuning trial succeeded",
                 best->id, db_record_median(best) * 1e3);
    tir_func_free(*out);
    *out = NULL;
  }
  tir_func_free(def);
  return st;
}

/* The function as the database's best record for it makes it: MLC_OK and
 * *out, or MLC_OK with *out NULL and fn's why set; database errors. */
static int from_db(compile_t *c, mlc_compile_func_t *fn, const tir_func_t *f, uint64_t key, tir_func_t **out) {
  db_result_t *best = NULL;
  *out = NULL;
  /* The best two: the first is db_best's; a second says tuning trials succeeded. */
  int st = db_top_k(c->opts->db, &best, key, c->target_str, 2);
  if (st != MLC_OK) return st;
  if (best->nrecords == 0) {
    db_result_free(best);
    return why_no_record(c, fn, key);
  }
  const db_record_t *r = &best->records[0];
  tir_func_t *stored = NULL;
  char why[256] = "";
  st = stored_workload(c, fn, r, &stored);
  if (st == MLC_OK && stored && !tir_func_equal(stored, f, why, sizeof why))
    st = set_why(c, fn, "record %s not applied: its stored workload differs structurally (%s)", r->id, why);
  else if (st == MLC_OK && stored)
    st = replay(c, fn, r, stored, f, out);
  if (st == MLC_OK && *out) st = only_default(c, fn, r, best->nrecords == 1, f, out);
  if (st == MLC_OK && *out) st = use_record(c, fn, r);
  if (st != MLC_OK) tir_func_free(*out), *out = NULL;
  tir_func_free(stored);
  db_result_free(best);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Functions                                                                 */
/* ------------------------------------------------------------------------ */

/* The default schedule of f (a function the caller owns). */
static int from_default(compile_t *c, const tir_func_t *f, tir_func_t **out) {
  sch_t *sch = NULL;
  *out = NULL;
  int st = sch_create(&sch, f, COMPILE_REPLAY_SEED, SCH_ERRORS_FAST);
  if (st == MLC_OK) st = mlc_default_schedule(sch, c->target);
  if (st == MLC_OK && !(*out = tir_func_clone(sch_func(sch)))) st = oom();
  sch_free(sch);
  return st;
}

/* Lowers fn->scheduled into *lowered; a tuned function that does not lower
 * falls back to the default schedule. */
static int lower_func(compile_t *c, mlc_compile_func_t *fn, const tir_func_t *f, tir_func_t **lowered) {
  int st = mlc_lower(lowered, fn->scheduled, c->target, c->opts->lower);
  if (st == MLC_OK || st == MLC_ENOMEM) return st;
  if (fn->how != MLC_COMPILE_TUNED) {
    mlc_error_prefix("lowering");
    return st;
  }
  char id[17];
  memcpy(id, fn->record_id, sizeof id);
  st = set_why(c, fn, "record %s not applied: it does not lower (%s)", id, mlc_error_or(mlc_status_str(st)));
  tir_func_free(fn->scheduled);
  fn->scheduled = NULL;
  if (st == MLC_OK) st = from_default(c, f, &fn->scheduled);
  if (st == MLC_OK) st = mlc_lower(lowered, fn->scheduled, c->target, c->opts->lower);
  if (st != MLC_OK) mlc_error_prefix("lowering");
  return st;
}

/* Schedules and lowers function f into fn and *lowered. */
static int compile_func(compile_t *c, mlc_compile_func_t *fn, const tir_func_t *f, tir_func_t **lowered) {
  uint64_t key = tir_func_key(f);
  mlc_hash_hex(key, fn->key);
  if (!(fn->name = mlc_arena_strdup(c->arena, f->name))) return oom();
  int st = c->opts->db ? from_db(c, fn, f, key, &fn->scheduled) : set_why(c, fn, "no database");
  if (st == MLC_OK && !fn->scheduled) st = from_default(c, f, &fn->scheduled);
  if (st == MLC_OK) st = lower_func(c, fn, f, lowered);
  if (st != MLC_OK) {
    mlc_error_prefix("%s", f->name);
    return st;
  }
  if (fn->how == MLC_COMPILE_TUNED)
    MLC_DEBUG("compile: %s (%s): record %s, median %.3g s", fn->name, fn->key, fn->record_id, fn->median_secs);
  else if (!c->opts->quiet)
    MLC_WARN("%s (%s): compiled with the default schedule: %s", fn->name, fn->key, fn->why_default);
  return MLC_OK;
}

/* MLC_ENOTFOUND listing the untuned functions, or MLC_OK when every one is
 * tuned. */
static int check_tuned(const compile_t *c, const mlc_compile_result_t *out) {
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  int n = 0;
  for (int i = 0; i < out->nfuncs; i++) {
    const mlc_compile_func_t *fn = &out->funcs[i];
    if (fn->how == MLC_COMPILE_TUNED) continue;
    mlc_sb_printf(&sb, "%s%s (%s): %s", n++ ? "; " : "", fn->name, fn->key, fn->why_default);
  }
  int st = MLC_OK;
  if (n)
    st = mlc_error_set(MLC_ENOTFOUND, "%d of %d function%s %s no tuned schedule for %s: %s", n, out->nfuncs,
                       out->nfuncs == 1 ? "" : "s", n == 1 ? "has" : "have", c->target_str, mlc_sb_str(&sb));
  mlc_sb_free(&sb);
  return st;
}

void mlc_compile_result_free(mlc_compile_result_t *r) {
  if (!r) return;
  for (int i = 0; r->funcs && i < r->nfuncs; i++) tir_func_free(r->funcs[i].scheduled);
  mlc_module_free(r->module);
  mlc_arena_free(r->arena);
  memset(r, 0, sizeof *r);
}

static int compile_all(compile_t *c, mlc_compile_result_t *out, const tir_module_t *m, tir_func_t **lowered) {
  int st = MLC_OK;
  for (int i = 0; i < m->nfuncs && st == MLC_OK; i++) {
    st = compile_func(c, &out->funcs[i], m->funcs[i], &lowered[i]);
    if (st == MLC_OK) {
      out->nfuncs = i + 1;
    } else { /* not described: the error says what happened to it */
      tir_func_free(out->funcs[i].scheduled);
      memset(&out->funcs[i], 0, sizeof out->funcs[i]);
    }
  }
  if (st == MLC_OK && c->opts->require_tuned) st = check_tuned(c, out);
  if (st == MLC_OK) st = mlc_codegen(&out->module, lowered, m->nfuncs, c->target);
  return st;
}

int mlc_compile_module(mlc_compile_result_t *out, const tir_module_t *m, const mlc_target_t *target,
                       const mlc_compile_options_t *opts) {
  if (!out) return mlc_error_set(MLC_EINVAL, "compile: NULL result");
  memset(out, 0, sizeof *out);
  if (!m || !target) return mlc_error_set(MLC_EINVAL, "compile: NULL module or target");
  mlc_compile_options_t none = {0};
  compile_t c = {.target = target, .opts = opts ? opts : &none};
  mlc_target_str(target, c.target_str, sizeof c.target_str);
  if (!(out->arena = c.arena = mlc_arena_new())) return oom();
  out->funcs = mlc_arena_alloc(out->arena, sizeof *out->funcs * (size_t)(m->nfuncs > 0 ? m->nfuncs : 1));
  tir_func_t **lowered = mlc_calloc((size_t)(m->nfuncs > 0 ? m->nfuncs : 1), sizeof *lowered);
  int st = out->funcs && lowered ? compile_all(&c, out, m, lowered) : oom();
  for (int i = 0; lowered && i < m->nfuncs; i++) tir_func_free(lowered[i]);
  mlc_free(lowered);
  if (st != MLC_OK) {
    mlc_module_free(out->module);
    out->module = NULL;
  }
  return st;
}
