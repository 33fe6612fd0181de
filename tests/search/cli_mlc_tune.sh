#!/bin/bash
# cli_mlc_tune.sh - mlc-tune end to end (docs/mlc-tune.md): a GMM-32 module
# tuned for 8 trials into a throwaway file database with a plot (the summary
# table, every trial a record, the SVG well-formed XML), a second run with
# --json that resumes (the database's 8 trials counted, none measured twice),
# a module of two identical functions tuned as one task of weight 2, and the
# refusals: bad flags, a missing file, bad TVMScript and a target that
# cannot be measured here all exit 2 with one error line.
#
# Usage: bash cli_mlc_tune.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=${1:?build dir}
SRC=${2:?source dir}
BIN=$BUILD/mlc-tune
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
TMP=$(mktemp -d /tmp/mlc-tune-cli-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
unset MLC_DB
export MLC_LOG=warn

FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# run WANT_RC ARGS...: runs mlc-tune, output in $TMP/out and $TMP/err.
run() {
  local want=$1
  shift
  "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "mlc-tune $* exited $rc, expected $want"
    sed 's/^/  stdout: /' "$TMP/out" | head -20 >&2
    sed 's/^/  stderr: /' "$TMP/err" | head -20 >&2
    return 1
  fi
  return 0
}
has() { grep -qF -- "$2" "$1" || { fail "expected '$2' in $1:"; sed 's/^/  | /' "$1" | head -20 >&2; }; }
pyjson() {
  "$PY" -c "import json,sys; d=json.load(open('$TMP/out')); sys.exit(0 if ($1) else 1)" || fail "JSON check failed: $1"
}

# records: the trace hash of every record in the test database, one a line.
records() {
  "$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "trace_hash" in r: print(r["trace_hash"])' "$TMP/db/records.jsonl"
}

# A small module: GMM-32 as TVMScript (the workload mlc-tir prints).
"$BUILD/mlc-tir" workload GMM --shape 32,32,32 >"$TMP/gmm.py" || fail "mlc-tir workload"
QUICK=(--target llvm --per-round 8 --min-repeat-ms 1 --number 1 --population 32 --generations 1 --search-threads 2 --check)

# Tuning: the summary table, the records, the plot.
if run 0 "$TMP/gmm.py" --trials 8 --db "file:$TMP/db" --plot "$TMP/c.svg" "${QUICK[@]}"; then
  has "$TMP/out" "task"
  has "$TMP/out" "GFLOP/s"
  has "$TMP/out" "speedup"
  has "$TMP/out" "database file:$TMP/db"
  grep -qE '^gmm +1 +8 +0 ' "$TMP/out" || fail "summary row 'gmm 1 8 0 ...' missing: $(cat "$TMP/out")"
  # 8 trials and the default schedule's record.
  n=$(records | wc -l)
  [ "$n" -eq 9 ] || fail "expected 9 records, got $n"
  "$PY" -c 'import xml.dom.minidom,sys; d=xml.dom.minidom.parse(sys.argv[1]); assert d.documentElement.tagName=="svg"; assert d.getElementsByTagName("polyline")' \
    "$TMP/c.svg" || fail "the plot is not a well-formed SVG with a curve"
fi
echo "ok: tune, records and plot"

# Resume with --json: 8 before, no trace measured twice.
if run 0 "$TMP/gmm.py" --trials 8 --db "file:$TMP/db" --json "${QUICK[@]}"; then
  pyjson "len(d['tasks']) == 1 and d['tasks'][0]['trials_before'] == 8"
  pyjson "d['tasks'][0]['weight'] == 1 and d['tasks'][0]['flop'] == 65536 and d['stopped'] is False"
  pyjson "d['tasks'][0]['best_secs'] > 0 and d['tasks'][0]['default_secs'] > 0"
  new=$("$PY" -c "import json; print(json.load(open('$TMP/out'))['tasks'][0]['trials'])")
  [ "$(records | wc -l)" -eq $((9 + new)) ] || fail "expected $((9 + new)) records, got $(records | wc -l)"
  [ "$(records | sort -u | wc -l)" -eq "$(records | wc -l)" ] || fail "a trace was measured twice"
fi
echo "ok: resume with --json"

# A module of two identical functions is one task of weight 2 (--trials 0:
# only the default schedule is measured); --func picks one of them.
"$PY" - "$TMP/gmm.py" "$TMP/mod.py" <<'EOF_PY'
import sys
src = open(sys.argv[1]).read()
body = src[src.index("@T.prim_func"):]
f1 = "\n".join("    " + l if l else l for l in body.splitlines())
f2 = f1.replace("def gmm(", "def gmm2(").replace('"global_symbol": "gmm"', '"global_symbol": "gmm2"')
open(sys.argv[2], "w").write("from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n"
                             "@I.ir_module\nclass Module:\n" + f1 + "\n\n" + f2 + "\n")
EOF_PY
if run 0 "$TMP/mod.py" --trials 0 --db "file:$TMP/db2" "${QUICK[@]}"; then
  grep -qE '^gmm +2 +0 +0 ' "$TMP/out" || fail "expected one task 'gmm' of weight 2: $(cat "$TMP/out")"
  [ "$(grep -cE '^gmm2? ' "$TMP/out")" -eq 1 ] || fail "identical functions were not folded: $(cat "$TMP/out")"
fi
if run 0 "$TMP/mod.py" --trials 0 --func gmm2 --db "file:$TMP/db2" "${QUICK[@]}"; then
  grep -qE '^gmm2 +1 +0 +0 ' "$TMP/out" || fail "--func gmm2 did not tune gmm2 alone: $(cat "$TMP/out")"
fi
echo "ok: identical functions fold, --func"

# Refusals: exit 2 and one error line.
run 0 --help && has "$TMP/out" "usage: mlc-tune FILE"
run 2 "$TMP/gmm.py" --target llvm --trials abc && has "$TMP/err" "mlc-tune: error: --trials: 'abc' is not an integer"
run 2 "$TMP/gmm.py" --target llvm --trials 8 --bogus && has "$TMP/err" "unknown option '--bogus'"
run 2 "$TMP/gmm.py" --trials 8 && has "$TMP/err" "--target is required"
run 2 "$TMP/gmm.py" --target llvm && has "$TMP/err" "--trials is required"
run 2 "$TMP/gmm.py" --target llvm --trials 8 --model svm && has "$TMP/err" "--model: 'svm'"
run 2 "$TMP/gmm.py" --target llvm --trials 8 --search-threads 65 && has "$TMP/err" "--search-threads: '65' is not an integer in [0, 64]"
# a GPU target measured locally needs a GPU here: a clear message, at once
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  run 1 "$TMP/gmm.py" --target "cuda -arch=sm_80" --trials 8 --db "file:$TMP/dbcuda" && has "$TMP/err" "no CUDA device on this machine" &&
    has "$TMP/err" "--farm ENDPOINT"
fi
run 2 "$TMP/gmm.py" --target llvm --trials 8 --func nope --db "file:$TMP/db" && has "$TMP/err" "no function 'nope'"
run 2 "$TMP/missing.py" --target llvm --trials 8 && has "$TMP/err" "mlc-tune: error: "
grep -q "missing.py" "$TMP/err" || fail "the error does not name the missing file"
printf '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    for i in range(4)\n        A[i] = 1\n' >"$TMP/bad.py"
run 2 "$TMP/bad.py" --target llvm --trials 8 && grep -qE "^mlc-tune: error: .*bad.py:3:[0-9]+: " "$TMP/err" ||
  fail "a parse error is not reported as FILE:LINE:COL: $(cat "$TMP/err")"
echo "ok: refusals"

[ "$FAILS" -eq 0 ] || { echo "$FAILS check(s) failed" >&2; exit 1; }
echo "all ok"
