/*
 * cmd_tune_out.c - mlc-tune's summary, as a table for people or one JSON
 * document (--json). A table:
 *
 *   task  weight  trials  before  best_ms   GFLOP/s  default_ms  speedup
 *   main       1      32       0  0.01872    112.0       1.581    84.5x
 *
 *   time: 21.4 s (search 3.1 s, measuring 17.9 s); 1.5 trials/s
 *   database file:./mlc-db, target llvm -mcpu=..., device llvm-skylake-avx512
 *
 * `trials` are this run's measurements, `before` those the database held;
 * `best_ms` is the fastest median known (the database's included), `speedup`
 * the default schedule's time over it. `-` stands for "none". Tasks another
 * job held for a while (leases) get a line each saying so.
 */
#include <stdlib.h>
#include <string.h>

#include "search/tune/tune_internal.h"

static double speedup(const ms_task_report_t *t) {
  return t->best_secs > 0 && t->default_secs > 0 ? t->default_secs / t->best_secs : 0;
}

/* "%.4g" of v, or "-" when v is not positive. */
static const char *num(char *buf, size_t len, double v, const char *fmt) {
  if (v > 0) snprintf(buf, len, fmt, v);
  else snprintf(buf, len, "-");
  return buf;
}

bool tune_summary_any_success(const tune_summary_t *s) {
  for (int i = 0; i < s->result->ntasks; i++)
    if (s->result->tasks[i].best_secs > 0) return true;
  return false;
}

int tune_summary_trials(const tune_summary_t *s) {
  int n = 0;
  for (int i = 0; i < s->result->ntasks; i++) n += s->result->tasks[i].trials;
  return n;
}

/* The weighted sums of best and default times over tasks that have both. */
static void totals(const ms_tune_result_t *r, double *best, double *def) {
  *best = *def = 0;
  for (int i = 0; i < r->ntasks; i++) {
    const ms_task_report_t *t = &r->tasks[i];
    if (!(t->best_secs > 0 && t->default_secs > 0)) continue;
    *best += t->weight * t->best_secs;
    *def += t->weight * t->default_secs;
  }
}

static void print_rows(FILE *f, const ms_tune_result_t *r) {
  int w = 4;
  for (int i = 0; i < r->ntasks; i++) {
    int len = (int)strlen(r->tasks[i].name);
    if (len > w) w = len;
  }
  fprintf(f, "%-*s  %6s  %6s  %6s  %10s  %9s  %10s  %8s\n", w, "task", "weight", "trials", "before", "best_ms",
          "GFLOP/s", "default_ms", "speedup");
  for (int i = 0; i < r->ntasks; i++) {
    const ms_task_report_t *t = &r->tasks[i];
    char best[32], gf[32], def[32], sp[32];
    num(best, sizeof best, t->best_secs * 1e3, "%.4g");
    num(gf, sizeof gf, tune_gflops(t->flop, t->best_secs), "%.1f");
    num(def, sizeof def, t->default_secs * 1e3, "%.4g");
    num(sp, sizeof sp, speedup(t), "%.1fx");
    fprintf(f, "%-*s  %6d  %6d  %6d  %10s  %9s  %10s  %8s\n", w, t->name, t->weight, t->trials, t->trials_before,
            best, gf, def, sp);
  }
}

/* Tasks another job held for a while; the ones it held all run say so in
 * their status already. */
static void print_leases(FILE *f, const tune_summary_t *s) {
  if (!s->leases) return;
  for (int i = 0; i < s->result->ntasks; i++) {
    const tune_lease_note_t *l = &s->leases[i];
    if (l->skips == 0 || l->never) continue;
    fprintf(f, "%s: another job%s%s tuned it for a while: skipped %d time%s, %.0f s in all\n", s->result->tasks[i].name,
            l->holder[0] ? " " : "", l->holder, l->skips, l->skips == 1 ? "" : "s", l->waited_secs);
  }
}

void tune_print_summary(FILE *f, const tune_summary_t *s) {
  const ms_tune_result_t *r = s->result;
  print_rows(f, r);
  fputc('\n', f);
  double best, def;
  totals(r, &best, &def);
  if (r->ntasks > 1 && best > 0)
    fprintf(f, "weighted total: best %.4g ms, default %.4g ms, speedup %.1fx\n", best * 1e3, def * 1e3, def / best);
  int trials = tune_summary_trials(s);
  fprintf(f, "time: %.1f s (search %.1f s, measuring %.1f s); %.1f trials/s\n", r->wall_secs, r->search_secs,
          r->measure_secs, r->wall_secs > 0 ? trials / r->wall_secs : 0);
  fprintf(f, "database %s, target %s, device %s\n", s->db, s->target, s->device_key);
  for (int i = 0; i < r->ntasks; i++)
    if (r->tasks[i].status[0]) fprintf(f, "%s: %s\n", r->tasks[i].name, r->tasks[i].status);
  print_leases(f, s);
  if (s->stopped) fprintf(f, "stopped by Ctrl-C: what was measured is in the database; run again to go on\n");
}

static json_t *real_or_null(double v) { return v > 0 ? json_real(v) : json_null(); }

/* {"skips", "waited_secs", "holder" (null when unknown), "not_tuned"}. */
static json_t *lease_json(const tune_lease_note_t *l) {
  json_t *o = json_object();
  json_object_set_new(o, "skips", json_integer(l->skips));
  json_object_set_new(o, "waited_secs", json_real(l->waited_secs));
  json_object_set_new(o, "holder", l->holder[0] ? json_string(l->holder) : json_null());
  json_object_set_new(o, "not_tuned", json_boolean(l->never));
  return o;
}

static json_t *task_json(const ms_task_report_t *t) {
  char key[17];
  mlc_hash_hex(t->key, key);
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(t->name));
  json_object_set_new(o, "workload_key", json_string(key));
  json_object_set_new(o, "weight", json_integer(t->weight));
  json_object_set_new(o, "trials", json_integer(t->trials));
  json_object_set_new(o, "trials_before", json_integer(t->trials_before));
  json_object_set_new(o, "best_secs", real_or_null(t->best_secs));
  json_object_set_new(o, "default_secs", real_or_null(t->default_secs));
  json_object_set_new(o, "flop", json_real(t->flop));
  json_object_set_new(o, "gflops", real_or_null(tune_gflops(t->flop, t->best_secs)));
  json_object_set_new(o, "speedup", real_or_null(speedup(t)));
  json_object_set_new(o, "status", json_string(t->status));
  return o;
}

void tune_print_json(FILE *f, const tune_summary_t *s) {
  const ms_tune_result_t *r = s->result;
  json_t *tasks = json_array();
  for (int i = 0; i < r->ntasks; i++) {
    json_t *t = task_json(&r->tasks[i]);
    json_object_set_new(t, "lease", s->leases ? lease_json(&s->leases[i]) : json_null());
    json_array_append_new(tasks, t);
  }
  json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:f, s:f, s:f, s:b}", "target", s->target, "db", s->db, "device_key",
                        s->device_key, "tasks", tasks, "wall_secs", r->wall_secs, "search_secs", r->search_secs,
                        "measure_secs", r->measure_secs, "stopped", s->stopped);
  char *text = o ? mlc_json_dumps(o) : NULL;
  json_decref(o);
  if (text) fprintf(f, "%s\n", text);
  else fprintf(stderr, "mlc-tune: error: out of memory printing JSON\n");
  free(text);
}
