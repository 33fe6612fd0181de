/*
 * worker_cpu.c - the CPU device backend of mlc-worker (worker.h): llvm
 * targets measured on this machine by mlc_measure (replay, postprocessed
 * trace included; lower; LLVM codegen; JIT; time in a forked child).
 *
 * There is one CPU device, number 0: a kernel's parallel loops spread over
 * the cores, so two measurements at once would only slow each other down.
 * The device is described as the local transport describes it
 * (search/tune/runner_local.c), so records measured through a farm and
 * locally read the same: key "llvm-<mcpu>" of the target announced (the
 * host's when none is given), properties
 * {"cores":N,"cpu":"<model name from /proc/cpuinfo>","mcpu":"<host's>"}.
 *
 * A target is runnable here when it is an llvm target for this machine's
 * architecture and every CPU feature it turns on is one this CPU has: a job
 * for "llvm -mcpu=skylake-avx512" on a machine without AVX-512 would die of
 * SIGILL, so it is refused up front with the missing feature named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workers/worker.h"

/* Same architecture: the triples agree up to the first '-'. */
static bool same_arch(const char *a, const char *b) {
  size_t n = strcspn(a, "-");
  return n == strcspn(b, "-") && strncmp(a, b, n) == 0;
}

static int cpu_accepts(const worker_device_t *dev, const mlc_target_t *target) {
  (void)dev;
  if (target->kind != MLC_TARGET_LLVM) return mlc_error_set(MLC_EUNSUPPORTED, "not an llvm (CPU) target");
  mlc_target_t host;
  mlc_target_host(&host);
  if (!same_arch(target->mtriple, host.mtriple))
    return mlc_error_set(MLC_EUNSUPPORTED, "triple %s is not this machine's architecture (%s)", target->mtriple,
                         host.mtriple);
  /* Every "+feature" of the target must be on here. */
  for (const char *p = target->mattr; *p;) {
    size_t n = strcspn(p, ",");
    if (p[0] == '+' && n > 1) {
      char feature[64];
      snprintf(feature, sizeof feature, "%.*s", (int)(n - 1), p + 1);
      if (!mlc_target_has_feature(&host, feature))
        return mlc_error_set(MLC_EUNSUPPORTED, "this CPU (%s) lacks %s", host.mcpu, feature);
    }
    p += n;
    if (*p == ',') p++;
  }
  return MLC_OK;
}

static int describe(worker_device_t *dev) {
  int st = mlc_host_device_json(dev->device_json, sizeof dev->device_json);
  if (st != MLC_OK) mlc_error_prefix("cpu device");
  return st;
}

static int cpu_discover(worker_device_t *dev, int index, const mlc_target_t *target) {
  if (index != 0) return mlc_error_set(MLC_ENOTFOUND, "the cpu backend has one device, 0 (not %d)", index);
  if (target) {
    int st = cpu_accepts(dev, target);
    if (st != MLC_OK) {
      char text[512];
      mlc_error_prefix("cannot measure for '%s'", mlc_target_str(target, text, sizeof text));
      return st;
    }
    dev->target = *target;
  } else {
    mlc_target_host(&dev->target);
  }
  int st = mlc_device_key(dev->device_key, sizeof dev->device_key, &dev->target);
  return st == MLC_OK ? describe(dev) : st;
}

static int cpu_run(worker_device_t *dev, const worker_job_t *job, mlc_measure_result_t *out) {
  (void)dev;
  return mlc_measure(out, job->workload, job->trace, &job->target, &job->opts);
}

const worker_backend_t worker_backend_cpu = {
    .name = "cpu",
    .kind = MLC_TARGET_LLVM,
    .discover = cpu_discover,
    .accepts = cpu_accepts,
    .run = cpu_run,
};
