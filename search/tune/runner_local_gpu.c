/*
 * runner_local_gpu.c - the local transport for GPU targets (search.h:
 * ms_runner_local_target). Local workers measure on this machine, so a cuda
 * or rocm target needs a GPU of that kind here, of the target's
 * architecture; without one, tuning must stop at once with a message that
 * says so and what to do instead (--farm), not fail every trial or wait.
 *
 * The device is probed in a forked child (worker_gpu_probe, as mlc-worker
 * does: the runtime loads the driver with dlopen, counts the devices and
 * reads device 0's properties, writes them to a pipe and exits): this
 * process never initialises the driver, since every
 * measurement is a child forked from it and a CUDA context does not survive
 * fork (runtime.h). Jobs then go through the local runner as for CPUs (K
 * builder processes compile host objects with the PTX / code object inside,
 * then one process loads and times them one at a time, GPU work in each
 * candidate's own child: workers/measure_gpu.c), the prebuilt objects run
 * on the target's kind of device (mlc_measure_options_t.prebuilt_kind).
 * The device key is mlc_device_key of the target ("cuda-sm90"), the device
 * description the probed properties.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"
#include "search/tune/tune_internal.h"
#include "workers/measure_wire.h"
#include "workers/worker_gpu.h"

static const char *kind_word(const mlc_target_t *t) { return t->kind == MLC_TARGET_CUDA ? "CUDA" : "ROCm"; }

/* The probed device must be of the target's architecture. */
static int check_device(const worker_gpu_probe_t *p, const mlc_target_t *t) {
  char tbuf[160];
  mlc_target_str(t, tbuf, sizeof tbuf);
  if (!p->ok)
    return mlc_error_set(MLC_ENOTFOUND,
                         "no %s device on this machine (%s): local workers measure on this machine's GPU; to tune "
                         "for '%s', run mlc-worker on a GPU machine and pass --farm ENDPOINT",
                         kind_word(t), p->why[0] ? p->why : "unknown reason", tbuf);
  const char *want = t->kind == MLC_TARGET_CUDA ? t->arch : t->mcpu;
  if (want[0] && strcmp(p->props.arch, want) != 0)
    return mlc_error_set(MLC_EUNSUPPORTED,
                         "cannot measure for '%s' here: %s device 0 (%s) is %s; use a target for it or --farm", tbuf,
                         kind_word(t), p->props.name, p->props.arch);
  return MLC_OK;
}

static int describe(ms_runner_t *r, const worker_gpu_probe_t *p, const mlc_target_t *t) {
  int st = mlc_device_key(r->device_key, sizeof r->device_key, t);
  if (st != MLC_OK) return st;
  const mlc_rt_gpu_props_t *d = &p->props;
  json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:i, s:i, s:i, s:i, s:i, s:i}", "name", d->name, "arch", d->arch,
                        "driver", d->driver_version, "memory_bytes", (json_int_t)d->total_memory, "multiprocessors",
                        d->multiprocessors, "clock_khz", d->clock_khz, "max_threads_per_block",
                        d->max_threads_per_block, "max_shared_memory_per_block", d->max_shared_memory_per_block,
                        "registers_per_block", d->registers_per_block, "warp_size", d->warp_size);
  char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  json_decref(j);
  if (!text) return mlc_error_set(MLC_ENOMEM, "local runner: out of memory");
  bool fits = strlen(text) < sizeof r->device_json;
  if (fits) snprintf(r->device_json, sizeof r->device_json, "%s", text);
  free(text);
  return fits ? MLC_OK : mlc_error_set(MLC_ERANGE, "local runner: device description too long");
}

int ms_runner_local_target(ms_runner_t **out, const mlc_target_t *target, int workers,
                           const mlc_measure_options_t *opts) {
  if (!out || !target) return mlc_error_set(MLC_EINVAL, "ms_runner_local_target: NULL argument");
  *out = NULL;
  if (target->kind == MLC_TARGET_LLVM) return ms_runner_local(out, workers, opts);
  worker_gpu_probe_t p; /* in a child: the driver never loads into the tuner */
  int st = worker_gpu_probe(&p, target->kind, 0);
  if (st == MLC_OK) st = check_device(&p, target);
  if (st != MLC_OK) return st;
  mlc_measure_options_t o;
  if (opts) o = *opts;
  else mlc_measure_options_default(&o);
  o.prebuilt_kind = target->kind; /* the objects the builders make run on the GPU */
  if ((st = ms_runner_local(out, workers, &o)) != MLC_OK) return st;
  if ((st = describe(*out, &p, target)) != MLC_OK) {
    ms_runner_free(*out);
    *out = NULL;
  }
  return st;
}
