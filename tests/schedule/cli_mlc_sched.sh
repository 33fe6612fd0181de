#!/usr/bin/env bash
# cli_mlc_sched.sh - shell-level tests of the mlc-sched program.
# Usage: bash cli_mlc_sched.sh BUILD_DIR SOURCE_DIR
#
# Runs the built program the way a user does: `apply` replays a trace (JSON
# or the Python form) on a built-in workload and prints TVMScript that
# mlc-tir accepts and that computes what the workload computes (same
# checksum from `mlc-tir eval` for a schedule that keeps the summation
# order); `trace` converts between the forms and back to the same text;
# --func picks a function of an IRModule; every error exits 1 (the trace
# does not apply) or 2 (bad usage or input) with "mlc-sched: error: ...".
# Prints one PASS/FAIL line per check; exits non-zero if any failed.
set -euo pipefail

build=${1:?usage: cli_mlc_sched.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: cli_mlc_sched.sh BUILD_DIR SOURCE_DIR}
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

[ -x "$sched" ] || { echo "FAIL: $sched is not built"; exit 1; }
[ -x "$tir" ] || { echo "FAIL: $tir is not built"; exit 1; }

"$tir" workload GMM --shape 32,32,32 >"$tmp/gmm.py"

# A spatial tiling with a write cache: the reduction order is kept, so the
# scheduled program's output is bit-identical to the workload's.
cat >"$tmp/t.json" <<'EOF'
[[["GetBlock", [], ["C", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]], ["SamplePerfectTile", ["l1"], [2, 16], ["v4", "v5"]], ["Split", ["l1", "v4", "v5"], [1, 0], ["l6", "l7"]], ["Split", ["l2", "None", 8], [1, 0], ["l8", "l9"]], ["Reorder", ["l6", "l8", "l7", "l9"], [], []], ["SampleCategorical", [], [[0, 16, 64], [0.5, 0.25, 0.25]], ["v10"]], ["Annotate", ["b0", "v10"], ["meta_schedule.unroll_explicit"], []], ["Fuse", ["l6", "l8"], [1], ["l11"]], ["Parallel", ["l11"], [], []]], [[2, [4, 8]], [6, 1]]]
EOF
cat >"$tmp/s.py" <<'EOF'
b0 = sch.get_block(name="C", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=16, decision=[4, 8])
l6, l7 = sch.split(loop=l1, factors=[v4, v5], preserve_unit_iters=True, disable_predication=False)
l8, l9 = sch.split(loop=l2, factors=[None, 8], preserve_unit_iters=True, disable_predication=False)
sch.reorder(l6, l8, l7, l9)
v10 = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.5, 0.25, 0.25], decision=1)
sch.annotate(block_or_loop=b0, ann_key="meta_schedule.unroll_explicit", ann_val=v10)
l11 = sch.fuse(l6, l8, preserve_unit_iters=True)
sch.parallel(loop=l11)
EOF

# --- global flags ---------------------------------------------------------
t_help() { run "$sched" --help && status_is 0 && out_has '^usage: mlc-sched' && out_has 'apply' && out_has 'trace'; }
check "--help exits 0 and lists the commands" t_help
t_sub_help() { run "$sched" apply --help && status_is 0 && out_has '^usage: mlc-sched apply'; }
check "apply --help exits 0" t_sub_help
t_version() { run "$sched" --version && status_is 0 && out_has '^mlc-sched [0-9]+\.[0-9]+'; }
check "--version prints the version" t_version
t_unknown() { run "$sched" frobnicate && status_is 2 && err_has "^mlc-sched: error: unknown command 'frobnicate'"; }
check "unknown command exits 2" t_unknown
t_no_args() { run "$sched" && status_is 2 && err_has '^usage:'; }
check "no arguments exits 2 with usage" t_no_args
t_bad_opt() { run "$sched" apply --frob "$tmp/gmm.py" && status_is 2 && err_has "unknown option '--frob'"; }
check "unknown option exits 2" t_bad_opt

# --- trace ------------------------------------------------------------------
t_to_python() { run "$sched" trace --trace "$tmp/t.json" && status_is 0 && diff -u "$tmp/s.py" "$tmp/out"; }
check "trace converts TVM JSON to the Python form" t_to_python
t_to_json() { run "$sched" trace --script "$tmp/s.py" && status_is 0 && diff -u "$tmp/t.json" "$tmp/out"; }
check "trace converts the Python form back to the same JSON" t_to_json
t_same_form() { run "$sched" trace --trace "$tmp/t.json" --json && status_is 0 && diff -u "$tmp/t.json" "$tmp/out"; }
check "trace --json of JSON is the same text" t_same_form

# --- apply ------------------------------------------------------------------
t_apply_json() {
  run "$sched" apply --trace "$tmp/t.json" "$tmp/gmm.py" && status_is 0 &&
    out_has 'for i_0_j_0_fused in T.parallel\(16\):' && out_has '"meta_schedule.unroll_explicit": 16' &&
    cp "$tmp/out" "$tmp/scheduled.py"
}
check "apply --trace prints the scheduled TVMScript" t_apply_json
t_apply_script() { run "$sched" apply --script "$tmp/s.py" "$tmp/gmm.py" && status_is 0 && diff -u "$tmp/scheduled.py" "$tmp/out"; }
check "apply --script gives the same program" t_apply_script
t_fmt() { run "$tir" fmt "$tmp/scheduled.py" && status_is 0 && diff -u "$tmp/scheduled.py" "$tmp/out"; }
check "the output is canonical TVMScript mlc-tir accepts" t_fmt
t_same_result() {
  run "$tir" eval "$tmp/gmm.py" --seed 5 && status_is 0 && cp "$tmp/out" "$tmp/before.txt" &&
    run "$tir" eval "$tmp/scheduled.py" --seed 5 && status_is 0 && diff -u "$tmp/before.txt" "$tmp/out"
}
check "the scheduled program computes the same C (same checksum)" t_same_result
t_stdin() { run "$sched" apply --trace - "$tmp/gmm.py" <"$tmp/t.json" && status_is 0 && diff -u "$tmp/scheduled.py" "$tmp/out"; }
check "apply reads the trace from standard input" t_stdin
t_no_decisions() {
  local differ=0 seed
  for seed in 1 2 3 4; do
    run "$sched" apply --trace "$tmp/t.json" "$tmp/gmm.py" --no-decisions --seed "$seed" && status_is 0 || return 1
    "$tir" fmt "$tmp/out" >/dev/null || return 1
    cmp -s "$tmp/out" "$tmp/scheduled.py" || differ=$((differ + 1))
  done
  [ "$differ" -ge 1 ] || { echo "  --no-decisions never sampled anything new"; return 1; }
}
check "apply --no-decisions samples afresh (valid programs)" t_no_decisions

cat >"$tmp/mod.py" <<'EOF'
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def scale(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi] * T.float32(2)

    @T.prim_func
    def shift(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi] + T.float32(1)
EOF
cat >"$tmp/m.py" <<'EOF'
b0 = sch.get_block(name="B")
l1, = sch.get_loops(block=b0)
l2, l3 = sch.split(loop=l1, factors=[None, 16])
sch.vectorize(loop=l3)
EOF
t_func() { run "$sched" apply --script "$tmp/m.py" "$tmp/mod.py" --func shift && status_is 0 && out_has '^def shift' && out_has 'T.vectorized\(16\)'; }
check "apply --func picks a function of an IRModule" t_func
t_func_needed() { run "$sched" apply --script "$tmp/m.py" "$tmp/mod.py" && status_is 2 && err_has "has 2 functions; pick one with --func \(scale, shift\)"; }
check "an IRModule without main needs --func" t_func_needed
t_func_missing() { run "$sched" apply --script "$tmp/m.py" "$tmp/mod.py" --func nope && status_is 2 && err_has "no function 'nope' \(functions: scale, shift\)"; }
check "--func of an unknown function exits 2" t_func_missing

# --- errors -----------------------------------------------------------------
t_not_apply() {
  sed 's/"C", "main"/"D", "main"/' "$tmp/t.json" >"$tmp/bad_block.json"
  run "$sched" apply --trace "$tmp/bad_block.json" "$tmp/gmm.py" && status_is 1 &&
    err_has "^mlc-sched: error: $tmp/bad_block.json: instruction 0 \(GetBlock\): get_block: "
}
check "a trace that does not apply exits 1 naming the instruction" t_not_apply
t_bad_decision() {
  sed 's/\[2, \[4, 8\]\]/[2, [4, 4]]/' "$tmp/t.json" >"$tmp/bad_dec.json"
  run "$sched" apply --trace "$tmp/bad_dec.json" "$tmp/gmm.py" && status_is 1 &&
    err_has "instruction 2 \(SamplePerfectTile\): sample_perfect_tile: decision factors of loop i multiply to 16, not its extent 32"
}
check "a bad decision exits 1 naming the instruction" t_bad_decision
t_bad_json() {
  printf '[[["GetBlock", [], ["C"' >"$tmp/broken.json"
  run "$sched" apply --trace "$tmp/broken.json" "$tmp/gmm.py" && status_is 2 && err_has "^mlc-sched: error: $tmp/broken.json:1:[0-9]+: "
}
check "malformed JSON exits 2 with line and column" t_bad_json
t_bad_kind() {
  echo '[[["Frobnicate", [], [], []]], []]' >"$tmp/kind.json"
  run "$sched" trace --trace "$tmp/kind.json" && status_is 2 &&
    err_has "^mlc-sched: error: $tmp/kind.json: instruction 0: unknown instruction kind \"Frobnicate\""
}
check "an unknown instruction kind exits 2" t_bad_kind
t_bad_script() {
  printf 'b0 = sch.get_block(name="C")\nl1 = sch.get_loops(blok=b0)\n' >"$tmp/bad.py"
  run "$sched" apply --script "$tmp/bad.py" "$tmp/gmm.py" && status_is 2 &&
    err_has "^mlc-sched: error: $tmp/bad.py:2:20: sch.get_loops\(\) has no parameter 'blok'"
}
check "a script error exits 2 with line and column" t_bad_script
t_bad_tvmscript() {
  printf '@T.prim_func\ndef f(:\n' >"$tmp/broken.py"
  run "$sched" apply --trace "$tmp/t.json" "$tmp/broken.py" && status_is 2 && err_has "^mlc-sched: error: $tmp/broken.py:2:"
}
check "bad TVMScript exits 2 with line and column" t_bad_tvmscript
t_two_traces() { run "$sched" apply --trace "$tmp/t.json" --script "$tmp/s.py" "$tmp/gmm.py" && status_is 2 && err_has "give one trace"; }
check "--trace and --script together exit 2" t_two_traces
t_no_trace() { run "$sched" apply "$tmp/gmm.py" && status_is 2 && err_has "missing --trace T.json or --script S.py"; }
check "apply without a trace exits 2" t_no_trace
t_no_file() { run "$sched" apply --trace "$tmp/t.json" && status_is 2 && err_has "missing FILE"; }
check "apply without FILE exits 2" t_no_file
t_missing_file() { run "$sched" apply --trace "$tmp/nope.json" "$tmp/gmm.py" && status_is 2 && err_has "nope.json"; }
check "an unreadable trace exits 2" t_missing_file

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
