#!/bin/bash
# cli_worker_health.sh - `mlc-worker --health-file` and `mlc-worker health`,
# the probes of deploy/ (docs/mlc-worker.md): a worker connected to a broker
# is healthy; once the broker is gone it is live but not ready; a stopped
# (frozen) worker's file goes stale; a worker that exits removes its file;
# bad usage and bad files give exit 2 and 1 with the reason. The worker
# asks for prefetch (--prefetch 2) and the broker hears it; a bad
# --prefetch is exit 2.
#
# Usage: bash cli_worker_health.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=${1:?build dir}
TMP=$(mktemp -d /tmp/mlc-health-cli-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# health WANT_RC ARGS...: runs `mlc-worker health ARGS`, stderr in $TMP/err.
health() {
  local want=$1
  shift
  timeout 10 "$BUILD/mlc-worker" health "$@" 2>"$TMP/err"
  local rc=$?
  [ "$rc" -eq "$want" ] || { fail "health $* exited $rc, expected $want: $(cat "$TMP/err")"; }
}
has() { grep -qF -- "$1" "$TMP/err" || fail "expected '$1' in: $(cat "$TMP/err")"; }

# Waits up to $2 seconds until `health $1...` exits 0.
wait_healthy() {
  local end=$((SECONDS + $2))
  while [ $SECONDS -lt $end ]; do
    "$BUILD/mlc-worker" health "$1" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

EP="ipc://$TMP/broker"
HF="$TMP/health.json"

health 2
has "which health file"
health 2 "$HF" --max-age 0
has "--max-age"
health 1 "$HF"
has "no health file"
echo '{"connected": true}' >"$TMP/bad.json"
health 1 "$TMP/bad.json"
has "not a worker health file"
echo '{not json' >"$TMP/bad.json"
health 1 "$TMP/bad.json"
has "unreadable health file"

timeout 10 "$BUILD/mlc-worker" --broker "$EP" --prefetch many 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] || fail "--prefetch many exited $rc, expected 2"
has "--prefetch: 'many' is not a number of jobs in [0, 1024]"

MLC_LOG=info "$BUILD/mlc-broker" --bind "$EP" 2>"$TMP/broker.log" &
BROKER=$!
PIDS+=("$BROKER")
MLC_LOG=warn "$BUILD/mlc-worker" --broker "$EP" --health-file "$HF" --worker-id probe-test --prefetch 2 \
  2>"$TMP/worker.log" &
WORKER=$!
PIDS+=("$WORKER")

if wait_healthy "$HF" 40; then
  grep -q '"worker_id":"probe-test"' "$HF" || fail "health file lacks the worker id: $(cat "$HF")"
  grep -q '"connected":true' "$HF" || fail "health file does not say connected: $(cat "$HF")"
  grep -qF "worker probe-test ready for" "$TMP/broker.log" && grep -qF "(capacity 1, prefetch 2)" "$TMP/broker.log" ||
    fail "the broker did not hear the prefetch: $(grep ready "$TMP/broker.log")"
  # The broker goes away: still live, no longer ready (3 missed beats).
  kill -KILL "$BROKER"
  end=$((SECONDS + 15))
  while [ $SECONDS -lt $end ] && "$BUILD/mlc-worker" health "$HF" 2>/dev/null; do sleep 0.3; done
  health 1 "$HF"
  has "not connected to its broker"
  health 0 "$HF" --live
  # A frozen worker's file goes stale.
  kill -STOP "$WORKER"
  sleep 2.5
  health 1 "$HF" --live --max-age 1.5
  has "stale"
  kill -CONT "$WORKER"
  # A worker that stops removes its file.
  kill -TERM "$WORKER"
  wait "$WORKER" || fail "the worker exited $? on SIGTERM, expected 0"
  [ ! -e "$HF" ] || fail "the stopped worker left its health file"
else
  fail "the worker never became healthy: $(cat "$HF" 2>/dev/null) $(tail -5 "$TMP/worker.log")"
fi

if [ "$FAILS" -ne 0 ]; then
  echo "cli_worker_health: $FAILS failure(s)" >&2
  exit 1
fi
echo "cli_worker_health: ok"
