/*
 * measure_wire.h - what a farm job says about measurement, shared by the two
 * ends of the wire (DESIGN.md, Wire protocol and Measurement): the measure
 * options as the JSON object a job carries (rpc_job_t.options) and the
 * device key a target's jobs are routed by. The tuner's farm transport
 * (search/tune/runner_farm.c) writes them, mlc-worker reads them; one table
 * of keys serves both, so the two cannot drift apart.
 *
 * Interim home: these three prototypes belong in workers/measure.h (the
 * folder's public header) and move there when its owner merges them.
 *
 * Errors: functions return an mlc status; the detail is in mlc_error_last().
 */
#ifndef MLC_WORKERS_MEASURE_WIRE_H
#define MLC_WORKERS_MEASURE_WIRE_H

#include "workers/measure.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The options as a JSON object (new reference in *out):
 *   {"number", "repeat", "min_repeat_ms", "flush_cache", "build_timeout_s",
 *    "run_timeout_s", "check_correctness", "rtol", "seed"}
 * in_process is not sent (a worker always measures in a forked child).
 * MLC_EINVAL when the options cannot travel: a `reference` function (a
 * pointer into this process) or a seed above INT64_MAX. */
int mlc_measure_options_to_json(json_t **out, const mlc_measure_options_t *opts);

/* Reads such an object (borrowed) into *out: keys not given keep the
 * defaults (mlc_measure_options_default), NULL or JSON null means all
 * defaults. MLC_EPARSE naming the key for an unknown key, a value of the
 * wrong JSON type or out of range (number >= 1, repeat in [1, 64],
 * min_repeat_ms >= 0, timeouts > 0 and finite, rtol >= 0, seed >= 0). */
int mlc_measure_options_from_json(mlc_measure_options_t *out, const json_t *json);

/* The device key a target's jobs go to: "llvm-<mcpu>" ("llvm-skylake-avx512";
 * "llvm-generic" when the CPU is unnamed), "cuda-sm<NN>" ("cuda-sm90" for
 * sm_90) and "rocm-<gfx arch>". Written into buf (NUL-terminated); MLC_ERANGE
 * when it does not fit. */
int mlc_device_key(char *buf, size_t len, const mlc_target_t *target);

/* The host CPU's properties for records, as a JSON object text:
 * {"cores":N,"cpu":"<model name>","mcpu":"<LLVM CPU name>"}. Written into buf
 * (NUL-terminated); MLC_ERANGE when it does not fit, MLC_ENOMEM. */
int mlc_host_device_json(char *buf, size_t len);

/* A device's properties `o` (consumed; NULL stands for a failed json_pack)
 * written into buf as compact JSON text (NUL-terminated); MLC_EINVAL for
 * no buf, MLC_ENOMEM, MLC_ERANGE when it does not fit. */
int mlc_device_json_dump(char *buf, size_t len, json_t *o);

#ifdef __cplusplus
}
#endif
#endif /* MLC_WORKERS_MEASURE_WIRE_H */
