/*
 * runner_farm.c - the farm transport (runner_farm.h): ms_runner_t over the
 * protocol's client side (rpc/rpc.h, rpc_client_run).
 *
 * A batch becomes one list of wire jobs; each carries everything a worker on
 * another machine needs and nothing it must share with us: the workload as
 * canonical TVMScript (printed once per distinct workload of the batch), the
 * candidate's full trace as canonical JSON (the same text whose hash the
 * record stores, so a worker's log line names the record), the canonical
 * target string, the measure options (workers/measure_wire.h) and the device
 * key the broker routes by. Results come back in any order; the client
 * delivers each at most once even when a job was measured twice (a broker
 * restart), and a job whose worker died is re-queued by the broker, so every
 * index is filled exactly once or the transport failed.
 *
 * ms_runner_t has one worker_id and device_json for a whole batch (search.h),
 * so they describe the batch: the id of the worker that measured it, or
 * "<first>+<n more>" when several did, and the first result's properties.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"
#include "search/tune/runner_farm.h"
#include "search/tune/tune_internal.h"
#include "workers/measure_wire.h"

typedef struct {
  ms_runner_t base;
  rpc_client_t *client;
  json_t *options;      /* the measure options as jobs carry them */
  mlc_measure_options_t opts; /* the same, for baseline jobs' variant */
  /* ms_runner_farm_interrupt (a signal handler) and run(): */
  volatile sig_atomic_t in_batch; /* run() is waiting for a batch */
  volatile sig_atomic_t batch_got; /* results of that batch so far */
  volatile int quit;              /* rpc_client_run's stop: give up the batch now */
} farm_runner_t;

/* What the result callback fills for one batch. */
typedef struct {
  farm_runner_t *runner;
  int n;
  mlc_measure_result_t *results;
  bool *got;
  int ngot, nduplicates;
  char first_worker[64];
  int nworkers;         /* distinct worker ids seen (counted up to 64) */
  char workers[64][64];
  char device_json[512];
} batch_t;

/* ------------------------------------------------------------------------ */
/* Results                                                                   */
/* ------------------------------------------------------------------------ */

static void note_worker(batch_t *b, const char *id) {
  for (int i = 0; i < b->nworkers && i < 64; i++)
    if (strcmp(b->workers[i], id) == 0) return;
  if (b->nworkers < 64) snprintf(b->workers[b->nworkers], sizeof b->workers[0], "%s", id);
  b->nworkers++;
}

static void on_result(void *payload, int index, const rpc_result_t *r) {
  batch_t *b = payload;
  if (index < 0 || index >= b->n) return;
  if (b->got[index]) { /* the client promises once; keep the first all the same */
    b->nduplicates++;
    return;
  }
  mlc_measure_result_t *m = &b->results[index];
  memset(m, 0, sizeof *m);
  m->error = r->error;
  snprintf(m->message, sizeof m->message, "%s", r->message);
  m->nrun_secs = r->nrun_secs < 0 ? 0 : r->nrun_secs > MLC_MEASURE_MAX_REPEAT ? MLC_MEASURE_MAX_REPEAT : r->nrun_secs;
  for (int i = 0; i < m->nrun_secs; i++) m->run_secs[i] = r->run_secs[i];
  m->build_secs = r->build_secs;
  b->got[index] = true;
  b->ngot++;
  b->runner->batch_got = b->ngot;
  if (r->worker_id[0]) note_worker(b, r->worker_id);
  if (!b->device_json[0] && r->device_json && strlen(r->device_json) < sizeof b->device_json)
    snprintf(b->device_json, sizeof b->device_json, "%s", r->device_json);
}

/* The batch's worker id and device properties into the runner. */
static void describe_batch(farm_runner_t *r, const batch_t *b) {
  if (b->nworkers == 1) snprintf(r->base.worker_id, sizeof r->base.worker_id, "%s", b->workers[0]);
  else if (b->nworkers > 1)
    snprintf(r->base.worker_id, sizeof r->base.worker_id, "%.40s+%d more", b->workers[0], b->nworkers - 1);
  if (b->device_json[0]) snprintf(r->base.device_json, sizeof r->base.device_json, "%s", b->device_json);
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                      */
/* ------------------------------------------------------------------------ */

/* shared: the runner's options object, which jobs without their own borrow. */
static void wire_jobs_free(rpc_job_t *w, int n, const json_t *shared) {
  for (int i = 0; i < n; i++) {
    if (w[i].options && w[i].options != shared) json_decref(w[i].options);
    /* A workload text is shared by the jobs of one workload: freed once. */
    if (w[i].workload && (i == 0 || w[i].workload != w[i - 1].workload)) mlc_free(w[i].workload);
    free(w[i].trace_json); /* jansson's allocator (mlc_json_dumps) */
    mlc_free(w[i].target);
  }
  mlc_free(w);
}

static int wire_job(farm_runner_t *r, const ms_job_t *job, rpc_job_t *w, const rpc_job_t *prev,
                    const ms_job_t *prev_job) {
  if (!job->workload || !job->trace || !job->target) return mlc_error_set(MLC_EINVAL, "farm runner: NULL in a job");
  if (prev && prev_job->workload == job->workload) w->workload = prev->workload;
  else if (!(w->workload = tir_print_func(job->workload)))
    return mlc_error_set(MLC_ENOMEM, "farm runner: out of memory");
  json_t *tj = NULL;
  int st = sch_trace_to_json(&tj, job->trace);
  if (st != MLC_OK) return st;
  w->trace_json = mlc_json_dumps(tj);
  json_decref(tj);
  char target[512];
  mlc_target_str(job->target, target, sizeof target);
  w->target = mlc_strdup(target);
  if (!w->trace_json || !w->target) return mlc_error_set(MLC_ENOMEM, "farm runner: out of memory");
  /* A baseline job or one with slow_secs has options of its own; the next
   * job with the same ones shares them, as jobs of one workload share its text. */
  if (!job->baseline && !(job->slow_secs > 0)) {
    w->options = r->options;
  } else if (prev && prev_job->baseline == job->baseline && prev_job->slow_secs == job->slow_secs) {
    w->options = json_incref(prev->options);
  } else {
    mlc_measure_options_t o = ms_job_options(job, &r->opts);
    if ((st = mlc_measure_options_to_json(&w->options, &o)) != MLC_OK) return st;
  }
  return mlc_device_key(w->device_key, sizeof w->device_key, job->target);
}

static void farm_free(ms_runner_t *self);

/* The jobs Ctrl-C left unmeasured (ms_runner_farm_interrupt): results the
 * tuner drops (TUNE_NOT_MEASURED_MSG), so nothing records them. */
static void fill_unmeasured(batch_t *b) {
  for (int i = 0; i < b->n; i++) {
    if (b->got[i]) continue;
    memset(&b->results[i], 0, sizeof b->results[i]);
    b->results[i].error = MLC_ERROR_KIND_CRASH;
    snprintf(b->results[i].message, sizeof b->results[i].message, "%s", TUNE_NOT_MEASURED_MSG);
    b->got[i] = true;
  }
}

/* Waits for the batch's results; when ms_runner_farm_interrupt gave it up,
 * the missing ones become "not measured" results. */
static int await_batch(farm_runner_t *r, rpc_job_t *w, int n, batch_t *b) {
  r->batch_got = 0;
  r->quit = 0;
  r->in_batch = 1;
  int st = rpc_client_run(r->client, w, n, on_result, b, MS_FARM_UNREACHABLE_MS, &r->quit);
  r->in_batch = 0;
  if (st == MLC_OK && r->quit && b->ngot < n) {
    MLC_INFO("farm runner: %d of %d jobs given up (Ctrl-C before any came back)", n - b->ngot, n);
    fill_unmeasured(b);
    b->ngot = n;
  }
  r->quit = 0;
  return st;
}

bool ms_runner_farm_interrupt(ms_runner_t *runner) {
  if (!runner || runner->free != farm_free) return false;
  farm_runner_t *r = (farm_runner_t *)runner;
  if (!r->in_batch || r->batch_got != 0) return false;
  r->quit = 1;
  return true;
}

static int farm_run(ms_runner_t *self, const ms_job_t *jobs, int n, mlc_measure_result_t *results) {
  farm_runner_t *r = (farm_runner_t *)self;
  if (n < 0 || (n > 0 && (!jobs || !results))) return mlc_error_set(MLC_EINVAL, "runner: bad batch");
  if (n == 0) return MLC_OK;
  for (int i = 0; i < n; i++) memset(&results[i], 0, sizeof results[i]);
  rpc_job_t *w = mlc_calloc((size_t)n, sizeof *w);
  batch_t *b = mlc_calloc(1, sizeof *b);
  bool *got = mlc_calloc((size_t)n, sizeof *got);
  int st = w && b && got ? MLC_OK : mlc_error_set(MLC_ENOMEM, "farm runner: out of memory");
  for (int i = 0; st == MLC_OK && i < n; i++)
    st = wire_job(r, &jobs[i], &w[i], i ? &w[i - 1] : NULL, i ? &jobs[i - 1] : NULL);
  if (st == MLC_OK) {
    *b = (batch_t){.runner = r, .n = n, .results = results, .got = got};
    st = await_batch(r, w, n, b);
    if (st != MLC_OK) mlc_error_prefix("farm runner: %d of %d results came back", b->ngot, n);
    else if (b->ngot != n)
      st = mlc_error_set(MLC_EIO, "farm runner: %d of %d jobs got no result", n - b->ngot, n);
    if (b->nduplicates) MLC_WARN("farm runner: %d results delivered twice (the first kept)", b->nduplicates);
    describe_batch(r, b);
  }
  if (w) wire_jobs_free(w, n, r->options);
  mlc_free(b);
  mlc_free(got);
  return st;
}

static void farm_free(ms_runner_t *self) {
  farm_runner_t *r = (farm_runner_t *)self;
  rpc_client_close(r->client);
  json_decref(r->options);
  mlc_free(r);
}

int ms_runner_farm(ms_runner_t **out, const char *endpoint, const char *curve_keys, const char *key_name,
                   const mlc_target_t *target, const mlc_measure_options_t *opts) {
  if (!out) return mlc_error_set(MLC_EINVAL, "ms_runner_farm: NULL out");
  *out = NULL;
  if (!endpoint || !*endpoint || !target) return mlc_error_set(MLC_EINVAL, "farm runner: no endpoint or target");
  mlc_measure_options_t defaults;
  if (!opts) {
    mlc_measure_options_default(&defaults);
    opts = &defaults;
  }
  farm_runner_t *r = mlc_calloc(1, sizeof *r);
  if (!r) return mlc_error_set(MLC_ENOMEM, "farm runner: out of memory");
  r->base.name = "farm";
  r->base.run = farm_run;
  r->base.free = farm_free;
  r->opts = *opts;
  int st = mlc_measure_options_to_json(&r->options, opts);
  if (st == MLC_OK) st = mlc_device_key(r->base.device_key, sizeof r->base.device_key, target);
  if (st == MLC_OK) {
    snprintf(r->base.device_json, sizeof r->base.device_json, "{}");
    snprintf(r->base.worker_id, sizeof r->base.worker_id, "farm");
    st = rpc_client_open(&r->client, endpoint, curve_keys, key_name);
    if (st != MLC_OK) mlc_error_prefix("farm runner: %s", endpoint);
  }
  if (st != MLC_OK) {
    farm_free(&r->base);
    return st;
  }
  *out = &r->base;
  return MLC_OK;
}
