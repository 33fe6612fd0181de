/*
 * cmd_db_query.c - the query commands of mlc-db (docs/mlc-db.md): `top`
 * (the best K records per workload and target), `list` (workloads with
 * record counts, failures and best time per target), `failures` (failed
 * trials, newest first) and `show` (one record in full, its trace as the
 * Python script TVM prints).
 *
 * Everything goes through the public database interface, so the commands
 * behave the same on both backends. Work is done workload by workload, which
 * keeps memory bounded by one workload's records; `show` looks a full id up
 * directly (find_record says how a prefix is resolved). Targets are matched
 * exactly as stored (canonical strings); a --target that is not stored
 * verbatim is canonicalised first, so
 * `llvm -num-cores=4 -mcpu=znver4` finds `llvm -mcpu=znver4 ... -num-cores=4`.
 */
#include "database/cmd_db_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Selecting workloads and targets                                           */
/* ------------------------------------------------------------------------ */

/* The workloads and targets a query covers. Keys and names point into ws
 * (or the selection's arena for a key with no workload row). */
typedef struct {
  db_result_t *ws;        /* every workload */
  db_stats_t stats;       /* the stored targets */
  mlc_arena_t *arena;
  int nkeys, ntargets;
  uint64_t *keys;
  const char **names;     /* NULL for a key with no workload row */
  const char **targets;
} selection_t;

static void selection_free(selection_t *s) {
  db_result_free(s->ws);
  db_stats_free(&s->stats);
  mlc_arena_free(s->arena);
  memset(s, 0, sizeof *s);
}

/* --workload: a workload name (every workload of that name), or a key. */
static int select_workloads(selection_t *s, const char *spec) {
  int n = s->ws->nworkloads;
  s->keys = mlc_arena_alloc(s->arena, sizeof *s->keys * (size_t)(n + 1));
  s->names = mlc_arena_alloc(s->arena, sizeof *s->names * (size_t)(n + 1));
  if (!s->keys || !s->names) return db_cmd_fail(EXIT_WORK, "out of memory");
  for (int i = 0; i < n; i++) {
    const db_workload_t *w = &s->ws->workloads[i];
    if (spec && (!w->name || strcmp(w->name, spec) != 0)) continue;
    s->keys[s->nkeys] = w->key;
    s->names[s->nkeys++] = w->name;
  }
  if (!spec || s->nkeys > 0) return EXIT_OK;
  uint64_t key;
  if (!db_cmd_parse_key(spec, &key))
    return db_cmd_fail(EXIT_WORK, "no workload named '%s' (see `" PROG " list`)", spec);
  s->keys[0] = key; /* records may exist for a key whose workload row does not */
  s->names[0] = db_cmd_workload_name(s->ws, key);
  s->nkeys = 1;
  return EXIT_OK;
}

/* --target: as stored, else its canonical form, else as given (no records). */
static const char *resolve_target(selection_t *s, const char *spec) {
  for (int i = 0; i < s->stats.ntargets; i++)
    if (strcmp(s->stats.targets[i], spec) == 0) return s->stats.targets[i];
  mlc_target_t t;
  char canon[512];
  if (mlc_target_parse(&t, spec) != MLC_OK) return spec;
  mlc_target_str(&t, canon, sizeof canon);
  for (int i = 0; i < s->stats.ntargets; i++)
    if (strcmp(s->stats.targets[i], canon) == 0) return s->stats.targets[i];
  return spec;
}

/* Loads workloads and targets and applies --workload / --target. */
static int selection_load(selection_t *s, db_t *db, const char *workload, const char *target) {
  memset(s, 0, sizeof *s);
  s->arena = mlc_arena_new();
  if (!s->arena) return db_cmd_fail(EXIT_WORK, "out of memory");
  int st = db_workloads(db, &s->ws);
  if (st == MLC_OK) st = db_stats(db, &s->stats);
  if (st != MLC_OK) return db_cmd_fail_status(st, "reading the database");
  db_cmd_sort_workloads(s->ws);
  int code = select_workloads(s, workload);
  if (code != EXIT_OK) return code;
  s->ntargets = target ? 1 : s->stats.ntargets;
  s->targets = target ? mlc_arena_alloc(s->arena, sizeof *s->targets) : s->stats.targets;
  if (target && !s->targets) return db_cmd_fail(EXIT_WORK, "out of memory");
  if (target) s->targets[0] = resolve_target(s, target);
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* top                                                                       */
/* ------------------------------------------------------------------------ */

static const char top_help[] =
    "usage: " PROG " top [--workload KEY|NAME] [--target T] [-k K] [--db URI] [--json] [--table]\n"
    "\n"
    "Prints the K best measured records (default 1) of every workload and target,\n"
    "fastest median first; failed trials are never listed. --workload takes a\n"
    "workload key (16 hex digits) or name, --target a target string. Columns\n"
    "(tab-separated when standard output is not a terminal):\n"
    "  key  workload  target  rank  median_ms  runs  id  created (UTC)\n"
    "--json prints [{workload_key, workload, target, records: [...]}] with every\n"
    "field of each record (see `" PROG " show --help`).\n";

static int top_rows(db_table_t *t, const db_result_t *res, uint64_t key, const char *name) {
  int st = MLC_OK;
  for (int i = 0; st == MLC_OK && i < res->nrecords; i++) {
    const db_record_t *r = &res->records[i];
    char khex[17], rank[16], ms[32], runs[16], when[40];
    mlc_hash_hex(key, khex);
    snprintf(rank, sizeof rank, "%d", i + 1);
    snprintf(runs, sizeof runs, "%d", r->nrun_secs);
    const char *row[] = {khex, name, r->target, rank, db_cmd_ms(ms, db_record_median(r)), runs, r->id,
                         db_cmd_time(when, r->created_at_us)};
    st = db_table_row(t, row);
  }
  return st;
}

static json_t *top_group_json(const db_result_t *res, uint64_t key, const char *name, const char *target) {
  char khex[17];
  json_t *recs = json_array();
  for (int i = 0; recs && i < res->nrecords; i++) json_array_append_new(recs, db_cmd_record_json(&res->records[i], name));
  mlc_hash_hex(key, khex);
  return json_pack("{s:s, s:s?, s:s, s:o*}", "workload_key", khex, "workload", name, "target", target, "records", recs);
}

/* Runs every (workload, target) query of the selection. */
static int top_run(db_t *db, const selection_t *s, int k, db_table_t *t, json_t *groups) {
  for (int w = 0; w < s->nkeys; w++) {
    for (int g = 0; g < s->ntargets; g++) {
      db_result_t *res = NULL;
      int st = db_top_k(db, &res, s->keys[w], s->targets[g], k);
      if (st != MLC_OK) return db_cmd_fail_status(st, "top");
      if (res->nrecords > 0) {
        if (groups) st = json_array_append_new(groups, top_group_json(res, s->keys[w], s->names[w], s->targets[g])) ? MLC_ENOMEM : MLC_OK;
        else st = top_rows(t, res, s->keys[w], s->names[w]);
      }
      db_result_free(res);
      if (st != MLC_OK) return db_cmd_fail(EXIT_WORK, "out of memory");
    }
  }
  return EXIT_OK;
}

int db_cmd_top(db_cmd_args_t *a) {
  bool helped = false;
  const char *workload = NULL, *target = NULL, *k_s = NULL;
  for (a->i = 1; a->i < a->argc && !a->error && !helped; a->i++) {
    if (db_cmd_common_opt(a, top_help, &helped) || db_cmd_opt_value(a, "--workload", &workload) ||
        db_cmd_opt_value(a, "--target", &target) || db_cmd_opt_value(a, "-k", &k_s))
      continue;
    if (strcmp(a->argv[a->i], "--") != 0) return db_cmd_bad_option(a);
  }
  if (a->error) return EXIT_USAGE;
  if (helped) return EXIT_OK;
  int64_t k = 1;
  if (k_s && (!db_cmd_parse_i64(k_s, &k) || k < 1 || k > 1000000))
    return db_cmd_fail(EXIT_USAGE, "top: -k wants a whole number from 1 to 1000000, not '%s'", k_s);
  db_t *db;
  int code = db_cmd_open(a, &db);
  if (code != EXIT_OK) return code;
  selection_t s;
  static const char *const heads[] = {"key", "workload", "target", ">rank", ">median_ms", ">runs", "id", "created"};
  db_table_t t = {0};
  json_t *groups = a->format == DB_OUT_JSON ? json_array() : NULL;
  code = selection_load(&s, db, workload, target);
  if (code == EXIT_OK && !groups && db_table_init(&t, 8, heads) != MLC_OK) code = db_cmd_fail(EXIT_WORK, "out of memory");
  if (code == EXIT_OK) code = top_run(db, &s, (int)k, &t, groups);
  if (code == EXIT_OK && groups) {
    code = db_cmd_print_json(groups);
    groups = NULL;
  } else if (code == EXIT_OK) {
    db_table_print(&t, a->format);
  }
  json_decref(groups);
  db_table_free(&t);
  selection_free(&s);
  db_close(db);
  return code;
}

/* ------------------------------------------------------------------------ */
/* list                                                                      */
/* ------------------------------------------------------------------------ */

static const char list_help[] =
    "usage: " PROG " list [--db URI] [--json] [--table]\n"
    "\n"
    "Prints every workload with, per target, its number of records, how many of\n"
    "them are failed trials, and the best median time. Columns (tab-separated when\n"
    "standard output is not a terminal; target '-' for a workload with no records):\n"
    "  key  workload  target  records  failures  best_ms  best_id\n";

/* Counts for one target of one workload. */
typedef struct {
  const char *target;
  int64_t nrecords, nfailures;
  const db_record_t *best;
  double best_median;
} target_summary_t;

static int cmp_summary(const void *a, const void *b) {
  return strcmp(((const target_summary_t *)a)->target, ((const target_summary_t *)b)->target);
}

/* Groups one workload's records by target (targets sorted, as stats lists them). */
static int summarise(const db_result_t *res, uint64_t key, target_summary_t **out, int *n) {
  target_summary_t *sums = mlc_calloc((size_t)res->nrecords + 1, sizeof *sums);
  *out = sums;
  *n = 0;
  if (!sums) return MLC_ENOMEM;
  for (int i = 0; i < res->nrecords; i++) {
    const db_record_t *r = &res->records[i];
    const char *target = r->target ? r->target : "";
    if (r->workload_key != key) continue;
    int g = 0;
    while (g < *n && strcmp(sums[g].target, target) != 0) g++;
    if (g == *n) sums[(*n)++] = (target_summary_t){.target = target, .best_median = INFINITY};
    sums[g].nrecords++;
    double m = db_record_median(r);
    if (r->error_kind != MLC_ERROR_KIND_NONE) sums[g].nfailures++;
    else if (isfinite(m) && (!sums[g].best || m < sums[g].best_median ||
                             (m == sums[g].best_median && strcmp(r->id, sums[g].best->id) < 0)))
      sums[g].best = r, sums[g].best_median = m; /* ties by id, as top orders them */
  }
  qsort(sums, (size_t)*n, sizeof *sums, cmp_summary);
  return MLC_OK;
}

static int list_rows(db_table_t *t, const db_workload_t *w, const target_summary_t *sums, int n) {
  char khex[17], nrec[24], nfail[24], ms[32];
  mlc_hash_hex(w->key, khex);
  if (n == 0) return db_table_row(t, (const char *[]){khex, w->name, "-", "0", "0", "-", "-"});
  int st = MLC_OK;
  for (int g = 0; st == MLC_OK && g < n; g++) {
    snprintf(nrec, sizeof nrec, "%lld", (long long)sums[g].nrecords);
    snprintf(nfail, sizeof nfail, "%lld", (long long)sums[g].nfailures);
    const char *row[] = {khex, w->name, sums[g].target, nrec, nfail, db_cmd_ms(ms, sums[g].best_median),
                         sums[g].best ? sums[g].best->id : NULL};
    st = db_table_row(t, row);
  }
  return st;
}

static json_t *list_json(const db_workload_t *w, const target_summary_t *sums, int n) {
  char khex[17];
  json_t *targets = json_array();
  int64_t nrec = 0, nfail = 0;
  for (int g = 0; targets && g < n; g++) {
    nrec += sums[g].nrecords;
    nfail += sums[g].nfailures;
    json_array_append_new(targets, json_pack("{s:s, s:I, s:I, s:o, s:s?}", "target", sums[g].target, "records",
                                             (json_int_t)sums[g].nrecords, "failures", (json_int_t)sums[g].nfailures,
                                             "best_median_secs",
                                             sums[g].best ? json_real(sums[g].best_median) : json_null(), "best_id",
                                             sums[g].best ? sums[g].best->id : NULL));
  }
  mlc_hash_hex(w->key, khex);
  return json_pack("{s:s, s:s?, s:I, s:I, s:o*}", "workload_key", khex, "workload", w->name, "records",
                   (json_int_t)nrec, "failures", (json_int_t)nfail, "targets", targets);
}

/* One workload: its records summarised into a row per target. */
static int list_workload(db_t *db, const db_workload_t *w, db_table_t *t, json_t *out) {
  db_result_t *res = NULL;
  db_filter_t f = {.workload_key = w->key};
  int st = db_records(db, &res, &f);
  if (st != MLC_OK) return db_cmd_fail_status(st, "list");
  target_summary_t *sums = NULL;
  int n = 0;
  st = summarise(res, w->key, &sums, &n);
  if (st == MLC_OK) st = out ? (json_array_append_new(out, list_json(w, sums, n)) ? MLC_ENOMEM : MLC_OK) : list_rows(t, w, sums, n);
  mlc_free(sums);
  db_result_free(res);
  return st == MLC_OK ? EXIT_OK : db_cmd_fail(EXIT_WORK, "out of memory");
}

int db_cmd_list(db_cmd_args_t *a) {
  bool helped = false;
  for (a->i = 1; a->i < a->argc && !a->error && !helped; a->i++) {
    if (db_cmd_common_opt(a, list_help, &helped)) continue;
    if (strcmp(a->argv[a->i], "--") != 0) return db_cmd_bad_option(a);
  }
  if (a->error) return EXIT_USAGE;
  if (helped) return EXIT_OK;
  db_t *db;
  int code = db_cmd_open(a, &db);
  if (code != EXIT_OK) return code;
  db_result_t *ws = NULL;
  static const char *const heads[] = {"key", "workload", "target", ">records", ">failures", ">best_ms", "best_id"};
  db_table_t t = {0};
  json_t *out = a->format == DB_OUT_JSON ? json_array() : NULL;
  int st = db_workloads(db, &ws);
  db_cmd_sort_workloads(ws);
  if (st != MLC_OK) code = db_cmd_fail_status(st, "list");
  else if (!out && db_table_init(&t, 7, heads) != MLC_OK) code = db_cmd_fail(EXIT_WORK, "out of memory");
  for (int i = 0; code == EXIT_OK && i < ws->nworkloads; i++) code = list_workload(db, &ws->workloads[i], &t, out);
  if (code == EXIT_OK && out) {
    code = db_cmd_print_json(out);
    out = NULL;
  } else if (code == EXIT_OK) {
    db_table_print(&t, a->format);
  }
  json_decref(out);
  db_table_free(&t);
  db_result_free(ws);
  db_close(db);
  return code;
}

/* ------------------------------------------------------------------------ */
/* failures                                                                  */
/* ------------------------------------------------------------------------ */

static const char failures_help[] =
    "usage: " PROG " failures [--workload KEY|NAME] [--target T] [--kind K] [--limit N]\n"
    "                   [--db URI] [--json] [--table]\n"
    "\n"
    "Prints failed trials, newest first (the last 20 unless --limit says otherwise;\n"
    "--limit 0: all), with their id for `" PROG " show ID`. --kind keeps one kind:\n"
    "build, run, timeout, wrong-result, crash or worker-lost. Columns (tab-separated\n"
    "when standard output is not a terminal):\n"
    "  id  workload  target  kind  created (UTC)  message (its first line)\n"
    "--json prints every field of each record (see `" PROG " show --help`).\n";

typedef MLC_VEC(const db_record_t *) record_ptrs_t;

static int cmp_newest(const void *a, const void *b) {
  const db_record_t *x = *(const db_record_t *const *)a, *y = *(const db_record_t *const *)b;
  if (x->created_at_us != y->created_at_us) return x->created_at_us > y->created_at_us ? -1 : 1;
  return strcmp(x->id, y->id);
}

/* The failures of the selection, newest first, of one kind (or any), at
 * most limit (0: all): pointers into *results (nres of them, caller frees). */
static int failures_collect(db_t *db, const selection_t *s, bool any_workload, const char *target, int kind,
                            int64_t limit, db_result_t ***results, int *nres, record_ptrs_t *out) {
  int nq = any_workload ? 1 : s->nkeys;
  *results = mlc_calloc((size_t)nq + 1, sizeof **results);
  if (!*results) return MLC_ENOMEM;
  for (int q = 0; q < nq; q++) {
    db_filter_t f = {.workload_key = any_workload ? 0 : s->keys[q], .target = target, .only_ok = -1,
                     .limit = kind < 0 && limit > 0 && limit < INT32_MAX ? (int)limit : 0};
    int st = db_records(db, &(*results)[q], &f);
    if (st != MLC_OK) return st;
    (*nres)++;
    for (int i = 0; i < (*results)[q]->nrecords; i++) {
      const db_record_t *r = &(*results)[q]->records[i];
      if (kind >= 0 && (int)r->error_kind != kind) continue;
      if (mlc_vec_push(out, r) != MLC_OK) return MLC_ENOMEM;
    }
  }
  if (out->len > 1) qsort(out->data, out->len, sizeof *out->data, cmp_newest);
  if (limit > 0 && out->len > (size_t)limit) out->len = (size_t)limit;
  return MLC_OK;
}

static int failures_print(const db_result_t *ws, const db_record_t *const *recs, size_t n, db_cmd_format_t format) {
  if (format == DB_OUT_JSON) {
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
      if (json_array_append_new(arr, db_cmd_record_json(recs[i], db_cmd_workload_name(ws, recs[i]->workload_key))))
        json_decref(arr), arr = NULL;
    return arr ? db_cmd_print_json(arr) : db_cmd_fail(EXIT_WORK, "out of memory");
  }
  static const char *const heads[] = {"id", "workload", "target", "kind", "created", "message"};
  db_table_t t = {0};
  int st = db_table_init(&t, 6, heads);
  for (size_t i = 0; st == MLC_OK && i < n; i++) {
    const db_record_t *r = recs[i];
    char when[40], msg[121];
    const char *m = r->error_msg ? r->error_msg : "";
    snprintf(msg, sizeof msg, "%.*s", (int)strcspn(m, "\n"), m);
    const char *row[] = {r->id, db_cmd_workload_name(ws, r->workload_key), r->target, db_cmd_outcome(r),
                         db_cmd_time(when, r->created_at_us), msg};
    st = db_table_row(&t, row);
  }
  if (st == MLC_OK) db_table_print(&t, format);
  db_table_free(&t);
  return st == MLC_OK ? EXIT_OK : db_cmd_fail(EXIT_WORK, "out of memory");
}

int db_cmd_failures(db_cmd_args_t *a) {
  bool helped = false;
  const char *workload = NULL, *target = NULL, *kind_s = NULL, *limit_s = NULL;
  for (a->i = 1; a->i < a->argc && !a->error && !helped; a->i++) {
    if (db_cmd_common_opt(a, failures_help, &helped) || db_cmd_opt_value(a, "--workload", &workload) ||
        db_cmd_opt_value(a, "--target", &target) || db_cmd_opt_value(a, "--kind", &kind_s) ||
        db_cmd_opt_value(a, "--limit", &limit_s))
      continue;
    if (strcmp(a->argv[a->i], "--") != 0) return db_cmd_bad_option(a);
  }
  if (a->error) return EXIT_USAGE;
  if (helped) return EXIT_OK;
  int64_t limit = 20;
  if (limit_s && (!db_cmd_parse_i64(limit_s, &limit) || limit < 0))
    return db_cmd_fail(EXIT_USAGE, "failures: --limit wants a whole number >= 0, not '%s'", limit_s);
  mlc_error_kind_t kind = MLC_ERROR_KIND_NONE;
  if (kind_s && (mlc_error_kind_parse(&kind, kind_s) != MLC_OK || kind == MLC_ERROR_KIND_NONE))
    return db_cmd_fail(EXIT_USAGE,
                       "failures: --kind '%s' is not a failure kind (build, run, timeout, wrong-result, crash, "
                       "worker-lost)", kind_s);
  db_t *db;
  int code = db_cmd_open(a, &db);
  if (code != EXIT_OK) return code;
  selection_t s;
  db_result_t **results = NULL;
  int nres = 0;
  record_ptrs_t recs = {0};
  code = selection_load(&s, db, workload, target);
  if (code == EXIT_OK) {
    int st = failures_collect(db, &s, workload == NULL, target ? s.targets[0] : NULL, kind_s ? (int)kind : -1,
                              limit, &results, &nres, &recs);
    code = st == MLC_OK ? failures_print(s.ws, recs.data, recs.len, a->format) : db_cmd_fail_status(st, "failures");
  }
  for (int i = 0; i < nres; i++) db_result_free(results[i]);
  mlc_free(results);
  mlc_vec_free(&recs);
  selection_free(&s);
  db_close(db);
  return code;
}

/* ------------------------------------------------------------------------ */
/* show                                                                      */
/* ------------------------------------------------------------------------ */

static const char show_help[] =
    "usage: " PROG " show ID [--tvmscript] [--db URI] [--json]\n"
    "\n"
    "Prints one record in full: its workload, target, device, outcome, every run\n"
    "time, the worker and compiler that measured it, and its trace as the Python\n"
    "script TVM prints (`b0 = sch.get_block(...)`). ID is the record id (16 hex\n"
    "digits, as `top` and `list` print it: one indexed lookup) or a unique prefix\n"
    "of at least 4 digits (found by reading the records: slower on a large\n"
    "database).\n"
    "--tvmscript also prints the workload's TVMScript. --json prints every field,\n"
    "the trace both as JSON (\"trace\") and as a script (\"trace_python\"), and the\n"
    "workload's TVMScript (\"tvmscript\").\n"
    "\n"
    "Exit status: 0 ok, 1 no record has that id (or a prefix matches several), or\n"
    "its trace cannot be printed, 2 bad usage.\n";

/* The record(s) whose id starts with `prefix`: the first match is copied
 * into *found (its strings in *owner), *nfound counts distinct matches. */
typedef struct {
  const char *prefix;
  db_result_t *owner;
  db_record_t found;
  int nfound;
} id_search_t;

/* Scans one result; keeps it (in s->owner) when it holds the first match. */
static void search_result(id_search_t *s, db_result_t *res) {
  size_t n = strlen(s->prefix);
  bool keep = false;
  for (int i = 0; i < res->nrecords; i++) {
    const db_record_t *r = &res->records[i];
    if (strncmp(r->id, s->prefix, n) != 0) continue;
    if (s->nfound > 0 && strcmp(s->found.id, r->id) == 0) continue;
    if (s->nfound++ == 0) s->found = *r, keep = true;
  }
  if (keep) s->owner = res;
  else db_result_free(res);
}

/* A full id is one indexed lookup (db_filter_t.id). A shorter prefix is
 * resolved here, by a scan: workload by workload (memory bounded by one
 * workload's records, stopping at a second match), then, for records of
 * workloads never committed, through everything. The database looks up
 * whole ids only (database.h), so the scan reads records until it is sure,
 * and its time grows with the database: fine for a person typing a short
 * prefix; scripts pass the full ids `top` and `list` print. */
static int find_record(db_t *db, id_search_t *s) {
  db_result_t *res = NULL;
  if (strlen(s->prefix) == 16) {
    db_filter_t by_id = {.id = s->prefix};
    int st = db_records(db, &res, &by_id);
    if (st == MLC_OK) search_result(s, res);
    return st;
  }
  db_result_t *ws = NULL;
  int st = db_workloads(db, &ws);
  for (int w = 0; st == MLC_OK && w < ws->nworkloads && s->nfound < 2; w++) {
    db_filter_t f = {.workload_key = ws->workloads[w].key};
    if ((st = db_records(db, &res, &f)) == MLC_OK) search_result(s, res);
  }
  db_result_free(ws);
  if (st != MLC_OK || s->nfound > 0) return st;
  db_filter_t all = {0};
  st = db_records(db, &res, &all);
  if (st == MLC_OK) search_result(s, res);
  return st;
}

static json_t *show_json(const db_record_t *r, const char *name, const char *tvmscript, const char *script, const char *trace_error) {
  json_t *o = db_cmd_record_json(r, name);
  if (!o) return NULL;
  json_object_set_new(o, "tvmscript", tvmscript ? json_string(tvmscript) : json_null());
  json_object_set_new(o, "trace_python", script ? json_string(script) : json_null());
  if (trace_error) json_object_set_new(o, "trace_error", json_string(trace_error));
  return o;
}

/* The human form: a field per line, then the trace script. */
static int show_text(const db_cmd_args_t *a, const db_record_t *r, const char *name, char *khex) {
  db_table_t t;
  if (db_table_init(&t, 2, NULL) != MLC_OK) return MLC_ENOMEM;
  char ms[32], when[40], th[17], label[128];
  mlc_strbuf_t runs;
  mlc_sb_init(&runs);
  for (int i = 0; r->run_secs && i < r->nrun_secs; i++) mlc_sb_printf(&runs, "%s%s", i ? " " : "", db_cmd_ms(ms, r->run_secs[i]));
  snprintf(label, sizeof label, "%s (%s)", khex, name ? name : "no workload row");
  mlc_hash_hex(r->trace_hash, th);
  const char *rows[][2] = {
      {"id", r->id}, {"workload", label}, {"target", r->target}, {"device", r->device_key},
      {"device properties", r->device_json}, {"outcome", db_cmd_outcome(r)},
      {"median_ms", db_cmd_ms(ms, db_record_median(r))}, {"runs_ms", mlc_sb_str(&runs)},
      {"error", r->error_msg}, {"compiler", r->compiler_version}, {"worker", r->worker_id},
      {"created (UTC)", db_cmd_time(when, r->created_at_us)}, {"trace hash", th},
  };
  int st = MLC_OK;
  for (size_t i = 0; st == MLC_OK && i < sizeof rows / sizeof rows[0]; i++)
    if (strcmp(rows[i][0], "error") != 0 || r->error_kind != MLC_ERROR_KIND_NONE) st = db_table_row(&t, rows[i]);
  if (st == MLC_OK) db_table_print(&t, a->format == DB_OUT_TSV ? DB_OUT_TSV : DB_OUT_TABLE);
  mlc_sb_free(&runs);
  db_table_free(&t);
  return st;
}

/* The trace as a script through the installed printer; *why when not. */
static char *trace_script(const db_record_t *r, char **why) {
  mlc_db_trace_printer_fn print = db_cmd_trace_printer();
  char *out = NULL;
  *why = NULL;
  if (!print) {
    *why = mlc_strdup("this build of mlc-db cannot print traces as scripts");
    return NULL;
  }
  mlc_error_clear();
  int st = print(&out, r->trace_json ? r->trace_json : "");
  if (st == MLC_OK) return out;
  mlc_strbuf_t sb;
  mlc_sb_init(&sb);
  mlc_sb_printf(&sb, "the trace does not load: %s", mlc_error_or(mlc_status_str(st)));
  *why = mlc_sb_take(&sb);
  return NULL;
}

static int show_record(db_t *db, const db_cmd_args_t *a, const db_record_t *r, bool with_tvmscript) {
  db_result_t *w = NULL;
  int st = db_workload(db, &w, r->workload_key);
  if (st != MLC_OK) return db_cmd_fail_status(st, "show");
  const db_workload_t *wl = w->nworkloads > 0 ? &w->workloads[0] : NULL;
  char khex[17], *why = NULL, *script = trace_script(r, &why);
  int code = EXIT_OK;
  mlc_hash_hex(r->workload_key, khex);
  if (a->format == DB_OUT_JSON) {
    code = db_cmd_print_json(show_json(r, wl ? wl->name : NULL, wl ? wl->tvmscript : NULL, script, why));
  } else if (show_text(a, r, wl ? wl->name : NULL, khex) != MLC_OK) {
    code = db_cmd_fail(EXIT_WORK, "out of memory");
  } else {
    printf("\n# trace\n%s", script ? script : (r->trace_json ? r->trace_json : ""));
    if (!script) putchar('\n');
    if (with_tvmscript) printf("\n# workload\n%s", wl && wl->tvmscript ? wl->tvmscript : "# (no workload row)\n");
  }
  if (why && code == EXIT_OK && db_cmd_trace_printer()) {
    code = db_cmd_fail(EXIT_WORK, "record %s: %s", r->id, why); /* a damaged trace */
  } else if (why && code == EXIT_OK) {
    fprintf(stderr, PROG ": note: %s; the trace is shown as JSON\n", why);
  }
  mlc_free(script);
  mlc_free(why);
  db_result_free(w);
  return code;
}

int db_cmd_show(db_cmd_args_t *a) {
  bool helped = false, with_tvmscript = false;
  const char *id = NULL;
  for (a->i = 1; a->i < a->argc && !a->error && !helped; a->i++) {
    if (db_cmd_common_opt(a, show_help, &helped)) continue;
    if (db_cmd_opt_flag(a, "--tvmscript")) {
      with_tvmscript = true;
    } else if (db_cmd_is_positional(a)) {
      if (id) return db_cmd_fail(EXIT_USAGE, "show: more than one ID given");
      id = a->argv[a->i];
    } else if (strcmp(a->argv[a->i], "--") != 0) {
      return db_cmd_bad_option(a);
    }
  }
  if (a->error) return EXIT_USAGE;
  if (helped) return EXIT_OK;
  uint64_t ignored;
  if (!id) return db_cmd_fail(EXIT_USAGE, "show: missing ID (see `" PROG " show --help`)");
  if (strlen(id) < 4 || !db_cmd_parse_key(id, &ignored))
    return db_cmd_fail(EXIT_USAGE, "show: '%s' is not a record id (4 to 16 hex digits)", id);
  db_t *db;
  int code = db_cmd_open(a, &db);
  if (code != EXIT_OK) return code;
  char lower[17];
  for (size_t i = 0; i <= strlen(id); i++) lower[i] = (char)(id[i] >= 'A' && id[i] <= 'F' ? id[i] - 'A' + 'a' : id[i]);
  id_search_t s = {.prefix = lower};
  int st = find_record(db, &s);
  if (st != MLC_OK) code = db_cmd_fail_status(st, "show");
  else if (s.nfound == 0) code = db_cmd_fail(EXIT_WORK, "no record with id %s", id);
  else if (s.nfound > 1) code = db_cmd_fail(EXIT_WORK, "id %s is ambiguous: %d records start with it", id, s.nfound);
  else code = show_record(db, a, &s.found, with_tvmscript);
  db_result_free(s.owner);
  db_close(db);
  return code;
}
