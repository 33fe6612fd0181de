#!/usr/bin/env bash
# cli_worker_gpu.sh - mlc-worker with GPU targets, as a user meets it on a
# machine with or without a GPU (docs/mlc-worker.md, GPUs).
# Usage: bash cli_worker_gpu.sh BUILD_DIR SOURCE_DIR
#
# Without a driver (MLC_CUDA_DRIVER / MLC_HIP_RUNTIME pointing nowhere, so
# the result is the same on a GPU machine) `--target "cuda -arch=sm_90"`
# exits 2 with one line naming what is missing; through the fake driver of
# tests/runtime/fake_cuda.c (built with cc) a device number that does not
# exist and a target for another architecture exit 2 with why, and a worker
# for the right architecture starts, announces key cuda-sm90 with the GPU's
# properties and stops cleanly on SIGTERM. Exits 77 (skip) when mlc-worker
# is not built. One PASS/FAIL line per check; non-zero if any failed.
set -uo pipefail

build=${1:?usage: cli_worker_gpu.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: cli_worker_gpu.sh BUILD_DIR SOURCE_DIR}
worker="$build/mlc-worker"
[ -x "$worker" ] || { echo "SKIP: $worker is not built"; exit 77; }
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

passed=0
failed=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }

# run ENV... -- ARGS...: mlc-worker with a broker that never answers; status in $rc.
run() {
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  rc=0
  env "${envs[@]}" "$worker" --broker tcp://127.0.0.1:9 "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

# expect NAME STATUS TEXT: the last run exited STATUS with exactly one line
# on stderr that contains TEXT.
expect() {
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -eq "$2" ] && [ "$lines" -eq 1 ] && grep -qF -- "$3" "$tmp/err"; then
    pass "$1"
  else
    fail "$1 (status $rc, $lines lines: $(cat "$tmp/err"))"
  fi
}

nowhere=(MLC_CUDA_DRIVER=/nonexistent/libcuda.so.1 MLC_HIP_RUNTIME=/nonexistent/libamdhip64.so)
run "${nowhere[@]}" -- --target "cuda -arch=sm_90"
expect "no CUDA driver: exit 2, one line" 2 \
  "mlc-worker: error: no CUDA device: no CUDA driver (/nonexistent/libcuda.so.1: cannot open shared object file"
run "${nowhere[@]}" -- --target "rocm -mcpu=gfx90a" --device 1
expect "no ROCm driver: exit 2, one line" 2 "mlc-worker: error: no ROCm device: no ROCm driver ("

# The default library name, where this machine has no CUDA driver.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  run MLC_LOG=info -- --target "cuda -arch=sm_90"
  expect "default driver name in the message" 2 "no CUDA driver (libcuda.so.1: cannot open shared object file"
fi

if "$worker" --help | grep -q "CUDA_VISIBLE_DEVICES"; then pass "--help: one worker per GPU"; else fail "--help"; fi

# Through the fake driver: two devices, sm_90 and sm_80.
fake="$tmp/libcuda.so.1"
if ! cc -shared -fPIC -O1 -o "$fake" "$src/tests/runtime/fake_cuda.c" 2>"$tmp/cc"; then
  echo "SKIP: cannot build the fake CUDA driver: $(cat "$tmp/cc")"
else
  run MLC_CUDA_DRIVER="$fake" -- --target "cuda -arch=sm_90" --device 5
  expect "device that does not exist: exit 2" 2 "CUDA device 5 does not exist (2 devices: 0..1)"
  run MLC_CUDA_DRIVER="$fake" -- --target "cuda -arch=sm_90" --device 1
  expect "another architecture: exit 2" 2 "the target is for sm_90, this device is sm_80"

  MLC_CUDA_DRIVER="$fake" MLC_LOG=info "$worker" --broker tcp://127.0.0.1:9 --target "cuda -arch=sm_90" \
    --worker-id gpu-w0 >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    grep -q "device cuda-sm90" "$tmp/err" && break
    sleep 0.05
  done
  line=$(grep -F 'worker gpu-w0: device cuda-sm90 {' "$tmp/err" || true)
  if [[ "$line" == *'"arch":"sm_90"'* && "$line" == *'"name":"Fake GPU 90"'* && "$line" == *'"driver":"12.4"'* &&
        "$line" == *'"multiprocessors":132'* ]]; then
    pass "a worker for the device's architecture starts and announces it"
  else
    fail "worker start ($(cat "$tmp/err"))"
  fi
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  if [ "$rc" -eq 0 ]; then pass "SIGTERM: exit 0"; else fail "SIGTERM: status $rc"; fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
