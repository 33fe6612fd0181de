/*
 * broker_jobs.c - the broker's jobs: from SUBMIT into the client's queue for
 * the job's device key, from there to a worker serving that key, and the
 * RESULT back to the client, exactly once.
 *
 * Fairness: each device key keeps the queues of the clients using it in a
 * ring, and a free worker takes the head job of the next client in the
 * ring that has one, so two tuning jobs sharing a fleet alternate instead of
 * the first one's backlog starving the second. Within a client, FIFO.
 *
 * Flow control: a client may have queue_bound jobs queued (running ones do
 * not count); the jobs of a SUBMIT beyond that are answered BUSY, and the
 * client sends them again later.
 *
 * Failures: a worker that dies holding jobs puts them back at the head of
 * their queues, each at most MLC_RPC_MAX_RETRIES times; after that the
 * client gets a RESULT with error `worker-lost` instead of a third attempt.
 * A client that goes away has its queued jobs dropped; its running ones
 * become orphans whose results are dropped when they arrive. A RESULT for a
 * job the broker does not track (orphan, re-queued meanwhile, duplicate) is
 * dropped, so exactly one result per job reaches the client.
 */
#include "rpc/broker_priv.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Devices and queues                                                        */
/* ------------------------------------------------------------------------ */

rb_device_t *broker_device(broker_t *b, const char *key) {
  rb_device_t *d = rpc_map_get(&b->devices, key, strlen(key));
  if (d) return d;
  if (!(d = mlc_calloc(1, sizeof *d))) return NULL;
  snprintf(d->key, sizeof d->key, "%s", key);
  if (rpc_map_put(&b->devices, d->key, strlen(d->key), d) != MLC_OK) {
    mlc_free(d);
    return NULL;
  }
  return d;
}

void broker_device_remove_worker(rb_device_t *d, rb_peer_t *w) {
  for (size_t i = 0; i < d->workers.len; i++) {
    if (d->workers.data[i] != w) continue;
    memmove(&d->workers.data[i], &d->workers.data[i + 1], (d->workers.len - i - 1) * sizeof w);
    d->workers.len--;
    if (d->next_worker > i) d->next_worker--;
    return;
  }
}

static void device_remove_queue(rb_device_t *d, rb_queue_t *q) {
  for (size_t i = 0; i < d->queues.len; i++) {
    if (d->queues.data[i] != q) continue;
    memmove(&d->queues.data[i], &d->queues.data[i + 1], (d->queues.len - i - 1) * sizeof q);
    d->queues.len--;
    if (d->next_queue > i) d->next_queue--;
    return;
  }
}

void broker_free_devices(broker_t *b) {
  for (size_t i = 0; i < b->devices.cap; i++) {
    rb_device_t *d = b->devices.slots[i].value;
    if (!b->devices.slots[i].key) continue;
    mlc_vec_free(&d->workers);
    mlc_vec_free(&d->queues);
    mlc_free(d);
  }
  rpc_map_free(&b->devices);
}

/* The client's queue for device d, made on first use. */
static rb_queue_t *client_queue(rb_peer_t *c, rb_device_t *d) {
  for (size_t i = 0; i < c->queues.len; i++)
    if (c->queues.data[i]->device == d) return c->queues.data[i];
  rb_queue_t *q = mlc_calloc(1, sizeof *q);
  if (!q) return NULL;
  q->client = c;
  q->device = d;
  if (mlc_vec_push(&c->queues, q) != MLC_OK) {
    mlc_free(q);
    return NULL;
  }
  if (mlc_vec_push(&d->queues, q) != MLC_OK) {
    c->queues.len--;
    mlc_free(q);
    return NULL;
  }
  return q;
}

static void queue_counts(rb_queue_t *q, int delta) {
  q->n += (size_t)delta;
  q->device->queued += (size_t)delta;
  q->client->queued += (size_t)delta;
}

static void push_tail(rb_queue_t *q, rb_job_t *j) {
  j->queue = q;
  j->next = NULL;
  j->prev = q->tail;
  if (q->tail) q->tail->next = j;
  else q->head = j;
  q->tail = j;
  queue_counts(q, 1);
}

static void push_head(rb_queue_t *q, rb_job_t *j) {
  j->queue = q;
  j->prev = NULL;
  j->next = q->head;
  if (q->head) q->head->prev = j;
  else q->tail = j;
  q->head = j;
  queue_counts(q, 1);
}

static rb_job_t *pop_head(rb_queue_t *q) {
  rb_job_t *j = q->head;
  if (!j) return NULL;
  q->head = j->next;
  if (q->head) q->head->prev = NULL;
  else q->tail = NULL;
  j->next = j->prev = NULL;
  queue_counts(q, -1);
  return j;
}

static void job_free(rb_job_t *j) {
  mlc_free(j->text);
  mlc_free(j);
}

/* ------------------------------------------------------------------------ */
/* SUBMIT                                                                    */
/* ------------------------------------------------------------------------ */

/* Queues one job (already checked by rpc_submit_scan), its JOB body the
 * bytes the client wrote. MLC_OK, or MLC_ENOMEM. */
static int enqueue(broker_t *b, rb_peer_t *c, const rpc_submit_job_t *sj, const char *text) {
  rb_device_t *d = broker_device(b, sj->device_key);
  rb_queue_t *q = d ? client_queue(c, d) : NULL;
  rb_job_t *job = q ? mlc_calloc(1, sizeof *job) : NULL;
  if (!job) return MLC_ENOMEM;
  snprintf(job->id, sizeof job->id, "%s", sj->id);
  job->len = sj->end - sj->start;
  if (!(job->text = mlc_malloc(job->len + 1)) || rpc_map_put(&c->jobs, job->id, strlen(job->id), job) != MLC_OK) {
    job_free(job);
    return MLC_ENOMEM;
  }
  memcpy(job->text, text + sj->start, job->len);
  job->text[job->len] = '\0';
  push_tail(q, job);
  return MLC_OK;
}

void broker_on_submit(broker_t *b, rb_peer_t *c, const rpc_submit_jobs_t *jobs, const char *text) {
  json_t *accepted = json_array(), *busy = json_array();
  const char *reason = "queue bound reached";
  for (size_t i = 0; i < jobs->len; i++) {
    const rpc_submit_job_t *sj = &jobs->data[i];
    json_t *id = json_string(sj->id);
    if (rpc_map_get(&c->jobs, sj->id, strlen(sj->id))) {
      json_array_append_new(accepted, id); /* sent again (a resubmission): tracked already */
    } else if (c->queued >= (size_t)b->opts.queue_bound) {
      json_array_append_new(busy, id);
    } else if (enqueue(b, c, sj, text) != MLC_OK) {
      reason = "the broker is out of memory";
      json_array_append_new(busy, id);
    } else {
      json_array_append_new(accepted, id);
    }
  }
  if (json_array_size(accepted)) {
    json_t *m = json_pack("{s:O}", "ids", accepted);
    if (m) broker_send_json(b, c, RPC_ACCEPTED, m);
    json_decref(m);
  }
  if (json_array_size(busy)) {
    char why[96];
    snprintf(why, sizeof why, "%s (%d jobs queued per client)", reason, b->opts.queue_bound);
    json_t *m = json_pack("{s:O, s:s}", "ids", busy, "reason", why);
    if (m) broker_send_json(b, c, RPC_BUSY, m);
    json_decref(m);
  }
  json_decref(accepted);
  json_decref(busy);
  for (size_t k = 0; k < c->queues.len; k++)
    if (c->queues.data[k]->n) broker_dispatch(b, c->queues.data[k]->device);
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------ */

/* The next worker with a free runner, round robin; failing that, the next
 * with room in its prefetch queue; NULL when all are full. */
static rb_peer_t *pick_worker(rb_device_t *d) {
  size_t n = d->workers.len;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t k = 0; k < n; k++) {
      size_t i = (d->next_worker + k) % n;
      rb_peer_t *w = d->workers.data[i];
      size_t room = (size_t)w->capacity + (pass && w->capacity ? (size_t)w->prefetch : 0);
      if (w->last_seen != 0 && w->running.len < room) {
        d->next_worker = i + 1;
        return w;
      }
    }
  }
  return NULL;
}

/* The next client queue holding a job, round robin (d->queued > 0). */
static rb_queue_t *pick_queue(rb_device_t *d) {
  size_t n = d->queues.len;
  for (size_t k = 0; k < n; k++) {
    size_t i = (d->next_queue + k) % n;
    if (d->queues.data[i]->n) {
      d->next_queue = i + 1;
      return d->queues.data[i];
    }
  }
  return NULL;
}

void broker_dispatch(broker_t *b, rb_device_t *d) {
  while (d->queued > 0) {
    rb_peer_t *w = pick_worker(d);
    rb_queue_t *q = w ? pick_queue(d) : NULL;
    if (!q || mlc_vec_reserve(&w->running, w->running.len + 1) != MLC_OK) return;
    rb_job_t *job = pop_head(q);
    if (rpc_send(b->sock, w->ident, w->ident_len, RPC_JOB, job->text, job->len) != MLC_OK) {
      MLC_DEBUG("broker: worker %s unreachable: %s", w->name, mlc_error_last());
      push_head(q, job);
      w->last_seen = 0; /* reaped at the next tick; skipped until then */
      continue;
    }
    job->worker = w;
    w->running.data[w->running.len++] = job;
  }
}

/* ------------------------------------------------------------------------ */
/* RESULT                                                                    */
/* ------------------------------------------------------------------------ */

static void result_to_client(broker_t *b, rb_peer_t *c, zmq_msg_t *frame) {
  zmq_msg_t m;
  zmq_msg_init(&m);
  zmq_msg_move(&m, frame);
  if (rpc_send_frame(b->sock, c->ident, c->ident_len, RPC_RESULT, &m) != MLC_OK) {
    MLC_DEBUG("broker: result to %s: %s", c->name, mlc_error_last());
    c->last_seen = 0;
  }
}

void broker_on_result(broker_t *b, rb_peer_t *w, const json_t *body, zmq_msg_t *frame) {
  const char *id = json_string_value(json_object_get(body, "id"));
  size_t i = 0;
  while (i < w->running.len && strcmp(w->running.data[i]->id, id) != 0) i++;
  if (i == w->running.len) {
    MLC_DEBUG("broker: dropped a result for %s from %s: not running there", id, w->name);
    return;
  }
  rb_job_t *job = w->running.data[i];
  memmove(&w->running.data[i], &w->running.data[i + 1], (w->running.len - i - 1) * sizeof job);
  w->running.len--;
  mlc_error_kind_t kind = MLC_ERROR_KIND_NONE;
  mlc_error_kind_parse(&kind, json_string_value(json_object_get(body, "error")));
  broker_count_result(w->device, kind, broker_now());
  if (job->queue) {
    rb_peer_t *c = job->queue->client;
    rpc_map_del(&c->jobs, job->id, strlen(job->id));
    result_to_client(b, c, frame);
  }
  job_free(job);
  broker_dispatch(b, w->device);
}

/* ------------------------------------------------------------------------ */
/* Workers and clients going away                                            */
/* ------------------------------------------------------------------------ */

/* The client gets `worker-lost` for a job whose retries ran out. */
static void worker_lost(broker_t *b, rb_peer_t *w, rb_job_t *job) {
  rb_peer_t *c = job->queue->client;
  rb_device_t *d = job->queue->device;
  rpc_result_t r;
  memset(&r, 0, sizeof r);
  snprintf(r.id, sizeof r.id, "%s", job->id);
  r.error = MLC_ERROR_KIND_WORKER_LOST;
  snprintf(r.message, sizeof r.message, "the worker died running it %d times (last %s); gave up after %d re-queues",
           job->retries, w->name, MLC_RPC_MAX_RETRIES);
  snprintf(r.worker_id, sizeof r.worker_id, "%.63s", w->name);
  snprintf(r.device_key, sizeof r.device_key, "%s", d->key);
  json_t *j = rpc_result_to_json(&r);
  if (j) broker_send_json(b, c, RPC_RESULT, j);
  json_decref(j);
  MLC_WARN("broker: job %s of %s: %s", job->id, c->name, r.message);
  broker_count_result(d, MLC_ERROR_KIND_WORKER_LOST, broker_now());
  rpc_map_del(&c->jobs, job->id, strlen(job->id));
  job_free(job);
}

void broker_worker_jobs_back(broker_t *b, rb_peer_t *w, bool count_retry) {
  /* last first, so the jobs keep their order at the head of the queue. The
   * worker runs its jobs in the order they were sent, so only the first
   * `runners` can have started: the prefetched rest count no retry. */
  for (size_t i = w->running.len; i-- > 0;) {
    rb_job_t *job = w->running.data[i];
    job->worker = NULL;
    if (!job->queue) {
      job_free(job); /* its client is gone */
    } else if (count_retry && i < (size_t)w->runners && ++job->retries > MLC_RPC_MAX_RETRIES) {
      worker_lost(b, w, job);
    } else {
      job->queue->device->requeued++;
      push_head(job->queue, job);
    }
  }
  w->running.len = 0;
}

void broker_client_jobs_drop(broker_t *b, rb_peer_t *c) {
  /* running jobs become orphans first: the map still holds every job */
  for (size_t i = 0; i < c->jobs.cap; i++) {
    rb_job_t *job = c->jobs.slots[i].value;
    if (c->jobs.slots[i].key && job->worker) job->queue = NULL;
  }
  for (size_t k = 0; k < c->queues.len; k++) {
    rb_queue_t *q = c->queues.data[k];
    rb_job_t *job;
    while ((job = pop_head(q)) != NULL) job_free(job);
    device_remove_queue(q->device, q);
    mlc_free(q);
  }
  c->queues.len = 0;
  rpc_map_free(&c->jobs);
}
