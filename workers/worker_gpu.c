/*
 * worker_gpu.c - the GPU device backends of mlc-worker (worker.h): cuda
 * (CUDA driver API) and rocm (HIP), both through the runtime's GPU calls
 * (runtime/runtime.h), which load the driver with dlopen, so mlc-worker
 * builds and starts everywhere and says clearly when there is no GPU.
 *
 * Discovery runs in a forked child: it loads the driver, counts the devices
 * and reads device `index`'s properties, sends them back over a pipe and
 * exits. The worker itself never initialises the driver, because its
 * measuring process forks a child per candidate and a CUDA context does not
 * survive fork(); each candidate's child initialises its own (the driver's
 * start-up cost, a fraction of a second, is part of every job's build time
 * rather than its run time).
 *
 * A device runs jobs for its own architecture only: `cuda -arch=sm_90` on an
 * sm_90 card, `rocm -mcpu=gfx90a` on a gfx90a. PTX for sm_80 would load on
 * an sm_90 card, but its timings would be filed under the wrong device key.
 * The device key is mlc_device_key of the target ("cuda-sm90",
 * "rocm-gfx90a"); the properties announced and stored with every record are
 * {"name","arch","driver","memory_bytes","multiprocessors","clock_khz",
 * "memory_clock_khz","l2_bytes","max_threads_per_block",
 * "max_shared_memory_per_block","registers_per_block","warp_size"}.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "workers/worker_gpu.h"

_Static_assert(sizeof(worker_gpu_probe_t) <= 4096, "a probe's answer is written at once");

static int32_t runtime_kind(mlc_target_kind_t kind) {
  return kind == MLC_TARGET_CUDA ? MLC_RT_GPU_CUDA : MLC_RT_GPU_ROCM;
}

static const char *kind_word(mlc_target_kind_t kind) { return kind == MLC_TARGET_CUDA ? "CUDA" : "ROCm"; }

/* In the child: fills msg for device index of kind. */
static void probe(worker_gpu_probe_t *msg, int32_t kind, int index) {
  memset(msg, 0, sizeof *msg);
  int counted = mlc_rt_gpu_device_count(kind, &msg->count);
  if (counted == 0 && msg->count == 0)
    snprintf(msg->why, sizeof msg->why, "the driver reports no device");
  else if (counted == 0 && mlc_rt_gpu_device_props(kind, index, &msg->props) == 0)
    msg->ok = 1;
  else
    snprintf(msg->why, sizeof msg->why, "%s", mlc_last_error());
}

/* Runs probe in a forked child. MLC_EIO when the child cannot be run or
 * says nothing (it crashed inside the driver). */
int worker_gpu_probe(worker_gpu_probe_t *msg, mlc_target_kind_t kind, int index) {
  int fds[2];
  if (pipe(fds) != 0) return mlc_error_set(MLC_EIO, "device discovery: pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return mlc_error_set(MLC_EIO, "device discovery: fork: %s", strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    probe(msg, runtime_kind(kind), index);
    ssize_t w = write(fds[1], msg, sizeof *msg);
    _exit(w == (ssize_t)sizeof *msg ? 0 : 1);
  }
  close(fds[1]);
  bool got = mlc_read_full(fds[0], msg, sizeof *msg);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!got) {
    memset(msg, 0, sizeof *msg);
    return mlc_error_set(MLC_EIO, "device discovery: the %s probe ended without an answer (status %d)",
                         kind_word(kind), status);
  }
  msg->why[sizeof msg->why - 1] = '\0';
  msg->props.name[sizeof msg->props.name - 1] = '\0';
  msg->props.arch[sizeof msg->props.arch - 1] = '\0';
  msg->props.driver_version[sizeof msg->props.driver_version - 1] = '\0';
  return MLC_OK;
}

/* The architecture a target names: sm_XX for cuda, the gfx name for rocm. */
static const char *target_arch(const mlc_target_t *t) { return t->kind == MLC_TARGET_CUDA ? t->arch : t->mcpu; }

/* Whether a device of architecture `arch` (worker_gpu_device_target) runs
 * jobs for target; MLC_EUNSUPPORTED with why otherwise. */
int worker_gpu_accepts_arch(mlc_target_kind_t kind, const char *arch, const mlc_target_t *target) {
  if (target->kind != kind)
    return mlc_error_set(MLC_EUNSUPPORTED, "not a %s target", kind == MLC_TARGET_CUDA ? "cuda" : "rocm");
  if (strcmp(target_arch(target), arch) != 0)
    return mlc_error_set(MLC_EUNSUPPORTED, "the target is for %s, this device is %s", target_arch(target), arch);
  return MLC_OK;
}

static int gpu_accepts(const worker_device_t *dev, const mlc_target_t *target) {
  return worker_gpu_accepts_arch(dev->backend->kind, target_arch(&dev->target), target);
}

/* The target of a device of this arch ("cuda -arch=sm_90"). */
static int device_target(mlc_target_t *out, mlc_target_kind_t kind, const char *arch) {
  char text[96];
  snprintf(text, sizeof text, kind == MLC_TARGET_CUDA ? "cuda -arch=%s" : "rocm -mcpu=%s", arch);
  int st = mlc_target_parse(out, text);
  if (st != MLC_OK) mlc_error_prefix("the device's architecture %s is not a target this build knows", arch);
  return st;
}

/* The properties as device_json. */
int worker_gpu_props_json(char *buf, size_t len, const mlc_rt_gpu_props_t *p) {
  json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "name", p->name, "arch",
                        p->arch, "driver", p->driver_version, "memory_bytes", (json_int_t)p->total_memory,
                        "multiprocessors", (int)p->multiprocessors, "clock_khz", (int)p->clock_khz,
                        "memory_clock_khz", (int)p->memory_clock_khz, "l2_bytes", (int)p->l2_cache_bytes,
                        "max_threads_per_block", (int)p->max_threads_per_block, "max_shared_memory_per_block",
                        (int)p->max_shared_memory_per_block, "registers_per_block", (int)p->registers_per_block,
                        "warp_size", (int)p->warp_size);
  return mlc_device_json_dump(buf, len, o);
}

/* Fills dev from a probe's answer: target (checked against the device, or
 * the device's own), key, properties. */
int worker_gpu_describe(worker_device_t *dev, const worker_gpu_probe_t *msg, const mlc_target_t *target) {
  mlc_target_kind_t kind = dev->backend->kind;
  if (!msg->ok && dev->index >= msg->count && msg->count > 0) return mlc_error_set(MLC_ENOTFOUND, "%s", msg->why);
  if (!msg->ok && msg->count > 0)
    return mlc_error_set(MLC_ENOTFOUND, "%s device %d: %s", kind_word(kind), dev->index, msg->why);
  if (!msg->ok) return mlc_error_set(MLC_ENOTFOUND, "no %s device: %s", kind_word(kind), msg->why);
  if (target) {
    if (worker_gpu_accepts_arch(kind, msg->props.arch, target) != MLC_OK) {
      char text[256];
      mlc_error_prefix("cannot measure for '%s' on %s device %d (%s)", mlc_target_str(target, text, sizeof text),
                       kind_word(kind), dev->index, msg->props.name);
      return MLC_EUNSUPPORTED;
    }
    dev->target = *target;
  } else {
    int st = device_target(&dev->target, kind, msg->props.arch);
    if (st != MLC_OK) return st;
  }
  int st = mlc_device_key(dev->device_key, sizeof dev->device_key, &dev->target);
  if (st == MLC_OK) st = worker_gpu_props_json(dev->device_json, sizeof dev->device_json, &msg->props);
  return st;
}

static int gpu_discover(worker_device_t *dev, int index, const mlc_target_t *target) {
  worker_gpu_probe_t msg;
  int st = worker_gpu_probe(&msg, dev->backend->kind, index);
  return st == MLC_OK ? worker_gpu_describe(dev, &msg, target) : st;
}

static int gpu_run(worker_device_t *dev, const worker_job_t *job, mlc_measure_result_t *out) {
  mlc_measure_options_t o = job->opts;
  o.device = dev->index;
  return mlc_measure(out, job->workload, job->trace, &job->target, &o);
}

const worker_backend_t worker_backend_cuda = {
    .name = "cuda",
    .kind = MLC_TARGET_CUDA,
    .discover = gpu_discover,
    .accepts = gpu_accepts,
    .run = gpu_run,
};

const worker_backend_t worker_backend_rocm = {
    .name = "rocm",
    .kind = MLC_TARGET_ROCM,
    .discover = gpu_discover,
    .accepts = gpu_accepts,
    .run = gpu_run,
};
