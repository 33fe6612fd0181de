#!/usr/bin/env bash
# cli_space.sh - shell-level tests of `mlc-sched space` (docs/search/space.md).
# Usage: bash cli_space.sh BUILD_DIR SOURCE_DIR
#
# Prints the design space of built-in workloads the way a user does: a
# matmul gives MetaSchedule's three sketches (write cache at level 2, at
# level 1, none), each of which `mlc-sched apply --script` replays into a
# program computing exactly what the workload computes (same checksum from
# `mlc-tir eval`: tiling keeps the summation order); the same seed gives the
# same space and another seed other samples; --json gives TVM's trace JSON;
# every error exits 1 or 2 with "mlc-sched: error: ...".
# Prints one PASS/FAIL line per check; exits non-zero if any failed.
set -euo pipefail

build=${1:?usage: cli_space.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: cli_space.sh BUILD_DIR SOURCE_DIR}
sched="$build/mlc-sched"
tir="$build/mlc-tir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
check() { # NAME COMMAND...: PASS when the command succeeds
  local name=$1
  shift
  if "$@"; then
    echo "PASS: $name"
    passed=$((passed + 1))
  else
    echo "FAIL: $name"
    failed=$((failed + 1))
  fi
}

# run COMMAND...: runs it, keeping its status in $rc and output in out/err.
run() {
  rc=0
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}
status_is() { [ "$rc" -eq "$1" ] || { echo "  exit status $rc, wanted $1; stderr:"; sed 's/^/    /' "$tmp/err"; return 1; }; }
out_has() { grep -qE -- "$1" "$tmp/out" || { echo "  stdout lacks /$1/"; return 1; }; }
err_has() { grep -qE -- "$1" "$tmp/err" || { echo "  stderr lacks /$1/:"; sed 's/^/    /' "$tmp/err"; return 1; }; }
count_is() { # PATTERN N: stdout has N lines matching
  local n
  n=$(grep -cE -- "$1" "$tmp/out" || true)
  [ "$n" -eq "$2" ] || { echo "  $n lines match /$1/, wanted $2"; return 1; }
}

[ -x "$sched" ] || { echo "FAIL: $sched is not built"; exit 1; }
[ -x "$tir" ] || { echo "FAIL: $tir is not built"; exit 1; }

target="llvm -mcpu=skylake-avx512 -num-cores=2"
rules="AutoInline,AddRFactor,MultiLevelTiling,ParallelizeVectorizeUnroll,RandomComputeLocation"
"$tir" workload GMM --shape 32,32,32 >"$tmp/gmm.py"
"$tir" workload D+B+R --shape 8,16,8 >"$tmp/dbr.py"

t_gmm_three_sketches() {
  run "$sched" space "$tmp/gmm.py" --target "$target" --rules "$rules" --seed 3 && status_is 0 &&
    count_is '^# sketch [0-2] of 3$' 3 && count_is 'sch\.cache_write\(block=b0' 2 &&
    count_is 'ann_key="meta_schedule.parallel", ann_val=32\)' 3 &&
    count_is 'ann_key="meta_schedule.tiling_structure", ann_val="SSRSRS"' 3 &&
    cp "$tmp/out" "$tmp/space.txt"
}
check "a matmul's space is MetaSchedule's three sketches" t_gmm_three_sketches

# Cuts sketch I out of space.txt into sketch_I.py.
cut_sketch() { awk -v want="# sketch $1 of 3" '/^# sketch /{on = ($0 == want); next} on && NF' "$tmp/space.txt" >"$tmp/sketch_$1.py"; }

t_sketches_replay_to_the_same_result() {
  run "$tir" eval "$tmp/gmm.py" --seed 5 && status_is 0 && cp "$tmp/out" "$tmp/before.txt" || return 1
  for i in 0 1 2; do
    cut_sketch $i
    run "$sched" apply --script "$tmp/sketch_$i.py" "$tmp/gmm.py" && status_is 0 || return 1
    cp "$tmp/out" "$tmp/scheduled_$i.py"
    run "$tir" eval "$tmp/scheduled_$i.py" --seed 5 && status_is 0 && diff -u "$tmp/before.txt" "$tmp/out" || return 1
    # and with fresh samples (a new candidate of the same sketch)
    run "$sched" apply --script "$tmp/sketch_$i.py" "$tmp/gmm.py" --no-decisions --seed 9 && status_is 0 || return 1
  done
  grep -q 'C_global' "$tmp/scheduled_0.py" && ! grep -q 'C_global' "$tmp/scheduled_2.py"
}
check "every sketch replays to a program with the same checksum" t_sketches_replay_to_the_same_result

t_seed_determines_the_space() {
  run "$sched" space "$tmp/gmm.py" --target "$target" --rules "$rules" --seed 3 && status_is 0 &&
    diff -q "$tmp/space.txt" "$tmp/out" >/dev/null &&
    run "$sched" space "$tmp/gmm.py" --target "$target" --rules "$rules" --seed 4 && status_is 0 &&
    ! diff -q "$tmp/space.txt" "$tmp/out" >/dev/null
}
check "the same seed gives the same space, another seed other samples" t_seed_determines_the_space

t_defaults_inline_the_bias() {
  run "$sched" space "$tmp/dbr.py" --target "llvm -mcpu=haswell -num-cores=2" && status_is 0 &&
    out_has '^sch\.compute_inline\(block=b1\)$' && out_has 'b[0-9]+, = sch\.get_consumers\(block=b0\)'
}
check "default rules on dense+bias+relu inline the bias and fuse the relu" t_defaults_inline_the_bias

t_avx512_defaults_tensorize_and_fuse() {
  run "$sched" space "$tmp/dbr.py" --target "$target" && status_is 0 &&
    out_has '^sch\.compute_inline\(block=b1\)$' &&
    out_has 'ann_key="meta_schedule.auto_tensorize", ann_val="avx512_fp32_fma_16x4"' &&
    out_has 'b[0-9]+, = sch\.get_consumers\(block=b[0-9]+\)'
}
check "with AVX-512 the dense tile is tensorized and the relu fused into it" t_avx512_defaults_tensorize_and_fuse

t_json() {
  run "$sched" space "$tmp/gmm.py" --target "$target" --rules MultiLevelTiling --json && status_is 0 &&
    out_has '^\{"func": "gmm", "target": "llvm -mcpu=skylake-avx512.*", "seed": 0, "rules": \["MultiLevelTiling"\], "sketches": \[\[\[\["GetBlock", \[\], \["C", "gmm"\], \["b0"\]\]' &&
    out_has '\["SamplePerfectTile", \["l2"\], \[4, 64\], \["v5", "v6", "v7", "v8"\]\]' &&
    count_is '.' 1
}
check "--json prints the sketches as TVM's trace JSON" t_json

t_help() { run "$sched" space --help && status_is 0 && out_has '^usage: mlc-sched space FILE'; }
check "--help" t_help

t_cuda() {
  run "$sched" space "$tmp/gmm.py" --target "cuda -arch=sm_80" && status_is 0 &&
    out_has 'thread_axis="blockIdx.x"' && out_has 'thread_axis="vthread.x"' && out_has 'thread_axis="threadIdx.x"' &&
    out_has 'storage_scope="shared"' && out_has 'meta_schedule.cooperative_fetch' &&
    run "$sched" space "$tmp/gmm.py" --target "cuda -arch=sm_80" --rules MultiLevelTiling && status_is 0 &&
    out_has 'ann_val="SSSRRSRS"'
}
check "a cuda target gets the GPU rules (also by name)" t_cuda

t_errors() {
  run "$sched" space && status_is 2 && err_has '^mlc-sched: error: space: missing FILE' &&
    run "$sched" space "$tmp/gmm.py" --rules AutoInline,Nope && status_is 2 &&
    err_has "^mlc-sched: error: space: unknown rule 'Nope'" &&
    run "$sched" space "$tmp/gmm.py" --rules AutoInline, && status_is 2 && err_has 'bad --rules list' &&
    run "$sched" space "$tmp/gmm.py" --target "vulkan" && status_is 2 && err_has 'bad --target' &&
    run "$sched" space "$tmp/gmm.py" --frobnicate && status_is 2 && err_has "unknown option '--frobnicate'" &&
    run "$sched" space "$tmp/gmm.py" --seed -1 && status_is 2 && err_has "bad --seed" &&
    run "$sched" space "$tmp/missing.py" && status_is 2 && err_has 'missing.py' &&
    printf 'def broken(:\n' >"$tmp/bad.py" && run "$sched" space "$tmp/bad.py" && status_is 2 &&
    err_has '^mlc-sched: error: .*bad.py:1:[0-9]+: '
}
check "bad usage and bad input exit 2 with a message" t_errors

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
