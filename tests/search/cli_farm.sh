#!/bin/bash
# cli_farm.sh - the farm end to end with the programs (docs/farm.md,
# docs/mlc-worker.md): mlc-broker on an ipc:// endpoint, two mlc-worker
# processes, and `mlc-tune --farm` tuning GMM-16 for 8 trials into a
# throwaway file database (every trial a record, measured by the farm's
# workers, no trace twice; each worker logs its jobs with their trace
# hashes); the same with CURVE keys (--curve-keys/--key on all three
# programs); `mlc-tune --local-farm 2` (its own broker and workers, nothing
# left behind); the workers stopping on SIGTERM with status 0; and the usage
# errors of both programs (exit 2).
#
# Usage: bash cli_farm.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=${1:?build dir}
SRC=${2:?source dir}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
TMP=$(mktemp -d /tmp/mlc-farm-cli-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
unset MLC_DB

source "$(dirname "${BASH_SOURCE[0]}")/../lib/cli.sh"

EP="ipc://$TMP/broker"
"$BUILD/mlc-tir" workload GMM --shape 16,16,16 >"$TMP/gmm.py" || fail "mlc-tir workload"
QUICK=(--target llvm --per-round 4 --min-repeat-ms 1 --number 1 --population 16 --generations 1 --model random --check)

# The farm: a broker and two workers (the workers log at info level).
MLC_LOG=warn "$BUILD/mlc-broker" --bind "$EP" 2>"$TMP/broker.err" &
PIDS+=($!)
for k in 0 1; do
  MLC_LOG=info "$BUILD/mlc-worker" --broker "$EP" --worker-id "cli-w$k" 2>"$TMP/w$k.err" &
  PIDS+=($!)
  WORKERS[$k]=$!
done

# Tuning through it (jobs wait in the broker's queue until workers are up).
export MLC_LOG=warn
if expect 0 "$BUILD/mlc-tune" "$TMP/gmm.py" --trials 8 --db "file:$TMP/db" --farm "$EP" "${QUICK[@]}" --json; then
  "$PY" - "$TMP/out" "$TMP/db/records.jsonl" <<'EOF' || fail "the farm's records"
import json, sys
summary = json.load(open(sys.argv[1]))
task = summary["tasks"][0]
assert task["trials"] == 8, task
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
recs = [r for r in recs if "trace_hash" in r]
assert len(recs) == 9, len(recs)                      # 8 trials + the default schedule
assert len({r["trace_hash"] for r in recs}) == 9      # no trace twice
assert all(r["worker_id"].startswith("cli-w") for r in recs), [r["worker_id"] for r in recs]
assert any(r["run_secs"] for r in recs)
EOF
fi
# Each worker logged its jobs: id, trace hash, time.
cat "$TMP/w0.err" "$TMP/w1.err" >"$TMP/workers.err"
has "$TMP/workers.err" "mlc-worker: info: job "
has "$TMP/workers.err" ": trace "
grep -qE "[um]s \(median of 1\)" "$TMP/workers.err" || fail "no timed job in the workers' logs"

# SIGTERM: the workers stop, exit 0.
for k in 0 1; do
  kill -TERM "${WORKERS[$k]}"
  wait "${WORKERS[$k]}"
  rc=$?
  [ "$rc" -eq 0 ] || fail "mlc-worker cli-w$k exited $rc on SIGTERM"
done
has "$TMP/w0.err" "stopped"

# With CURVE: one key directory for broker, worker and client on one machine.
K="$TMP/keys"
mkdir -p "$K/workers" "$K/clients"
"$BUILD/mlc-broker" keygen "$K" server >/dev/null 2>&1 || fail "keygen server"
"$BUILD/mlc-broker" keygen "$K/workers" cw >/dev/null 2>&1 || fail "keygen worker"
"$BUILD/mlc-broker" keygen "$K/clients" alice >/dev/null 2>&1 || fail "keygen client"
EPC="ipc://$TMP/broker-curve"
"$BUILD/mlc-broker" --bind "$EPC" --curve-keys "$K" 2>"$TMP/broker-curve.err" &
PIDS+=($!)
"$BUILD/mlc-worker" --broker "$EPC" --curve-keys "$K" --key cw --worker-id cli-curve 2>"$TMP/wc.err" &
PIDS+=($!)
if expect 0 "$BUILD/mlc-tune" "$TMP/gmm.py" --trials 4 --db "file:$TMP/dbc" --farm "$EPC" --curve-keys "$K" \
  --key alice "${QUICK[@]}" --json; then
  "$PY" -c "import json,sys; t=json.load(open('$TMP/out'))['tasks'][0]; sys.exit(0 if t['trials']==4 else 1)" ||
    fail "CURVE run: not 4 trials"
  grep -q '"worker_id":"cli-curve' "$TMP/dbc/records.jsonl" || fail "CURVE run: records not from cli-curve"
fi

# A local farm: its own broker and two workers, its directory removed after.
mkdir -p "$TMP/tmpdir"
if TMPDIR="$TMP/tmpdir" expect 0 "$BUILD/mlc-tune" "$TMP/gmm.py" --trials 4 --db "file:$TMP/db2" --local-farm 2 \
  "${QUICK[@]}"; then
  has "$TMP/out" "gmm"
  [ -z "$(ls -A "$TMP/tmpdir")" ] || fail "the local farm left $(ls "$TMP/tmpdir") behind"
fi

# Usage errors.
T=("$BUILD/mlc-tune" "$TMP/gmm.py" --target llvm --trials 4)
expect 2 "${T[@]}" --farm "$EP" --local-farm 2 && has "$TMP/err" "exclude each other"
expect 2 "${T[@]}" --curve-keys "$TMP" --key me && has "$TMP/err" "go with --farm"
expect 2 "${T[@]}" --farm "$EP" --curve-keys "$TMP" && has "$TMP/err" "go together"
expect 2 "${T[@]}" --farm "$EP" --workers 2 && has "$TMP/err" "--workers"
expect 2 "${T[@]}" --local-farm 0 && has "$TMP/err" "--local-farm"
expect 0 "$BUILD/mlc-worker" --help && has "$TMP/out" "--broker ENDPOINT"
expect 2 "$BUILD/mlc-worker" && has "$TMP/err" "mlc-worker: error: --broker ENDPOINT is required"
expect 2 "$BUILD/mlc-worker" --broker "$EP" --device 3 && has "$TMP/err" "one device"
if ! nvidia-smi -L >/dev/null 2>&1; then # the cuda backend says there is no GPU here
  expect 2 "$BUILD/mlc-worker" --broker "$EP" --target "cuda -arch=sm_90" && has "$TMP/err" "no CUDA device"
fi
expect 0 "$BUILD/mlc-worker" --version && has "$TMP/out" "mlc-worker "

if [ "$FAILS" -ne 0 ]; then
  echo "$FAILS check(s) failed" >&2
  exit 1
fi
echo "cli_farm: all checks passed"
