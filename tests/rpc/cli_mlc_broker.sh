#!/bin/bash
# cli_mlc_broker.sh - mlc-broker end to end (docs/farm.md): --help for each
# form, exit statuses (0 ok, 1 the work failed, 2 bad usage or input),
# keygen, a broker serving on an ephemeral port (its endpoint read from the
# log), `stats` in table and JSON forms, the periodic log line, CURVE keys,
# a port already taken, and a clean stop on SIGTERM and SIGINT.
#
# Usage: bash cli_mlc_broker.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=${1:?build dir}
BIN=$BUILD/mlc-broker
TMP=$(mktemp -d /tmp/mlc-broker-cli-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
export MLC_LOG=info

FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# run WANT_RC ARGS...: runs mlc-broker, output in $TMP/out and $TMP/err.
run() {
  local want=$1
  shift
  timeout 20 "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "mlc-broker $* exited $rc, expected $want"
    sed 's/^/  stdout: /' "$TMP/out" | head -10 >&2
    sed 's/^/  stderr: /' "$TMP/err" | head -10 >&2
  fi
}
has() { grep -qF -- "$2" "$1" || { fail "expected '$2' in $1:"; sed 's/^/  | /' "$1" | head -10 >&2; }; }

# serve LOG ARGS...: starts a broker in the background; sets PID and EP.
serve() {
  local log=$1
  shift
  "$BIN" "$@" 2>"$log" &
  PID=$!
  PIDS+=("$PID")
  EP=""
  for _ in $(seq 100); do
    EP=$(sed -n 's/.*listening on \([^,]*\).*/\1/p' "$log" | head -1)
    [ -n "$EP" ] && return 0
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.05
  done
  fail "broker $* did not start:"
  sed 's/^/  | /' "$log" >&2
}

# stop SIGNAL: stops $PID with SIGNAL and checks it exits 0.
stop() {
  kill -"$1" "$PID"
  wait "$PID"
  local rc=$?
  [ "$rc" -eq 0 ] || fail "broker stopped by SIG$1 exited $rc"
}

# --- help and usage -------------------------------------------------------
run 0 --help
has "$TMP/out" "usage: mlc-broker [--bind ENDPOINT]"
run 0 stats --help
has "$TMP/out" "usage: mlc-broker stats ENDPOINT"
run 0 keygen --help
has "$TMP/out" "usage: mlc-broker keygen DIR NAME"
run 0 --version
has "$TMP/out" "mlc-broker "
run 2 --bogus
has "$TMP/err" "mlc-broker: error: unknown option '--bogus'"
run 2 --queue-bound 0
has "$TMP/err" "--queue-bound"
run 2 --log-stats soon
run 2 --bind
has "$TMP/err" "needs a value"
run 2 stats
has "$TMP/err" "which broker?"
run 2 keygen "$TMP/keys"
run 2 --bind nonsense://nowhere
has "$TMP/err" "mlc-broker: error: broker: cannot bind nonsense://nowhere"
run 1 stats tcp://127.0.0.1:1 --timeout 200
has "$TMP/err" "mlc-broker: error: stats:"
echo "ok: help and usage"

# --- keygen ---------------------------------------------------------------
run 0 keygen "$TMP/keys" server
has "$TMP/out" "$TMP/keys/server.key"
[ "$(stat -c %a "$TMP/keys/server.key")" = 600 ] || fail "server.key is not mode 600"
run 1 keygen "$TMP/keys" server
has "$TMP/err" "exists"
run 2 keygen "$TMP/keys" ../escape
run 0 keygen "$TMP/keys/clients" alice
echo "ok: keygen"

# --- serving, stats, stop -------------------------------------------------
serve "$TMP/b1.log" --bind 'tcp://127.0.0.1:*' --log-stats 1
case "$EP" in tcp://127.0.0.1:[0-9]*) ;; *) fail "endpoint '$EP' is not a resolved port" ;; esac
run 0 stats "$EP"
has "$TMP/out" "no device keys yet"
run 0 stats "$EP" --json
[ "$(tr -d ' \n' <"$TMP/out")" = "{}" ] || fail "stats --json of an empty broker: $(cat "$TMP/out")"
run 1 --bind "$EP"
has "$TMP/err" "cannot bind"
sleep 1.3
has "$TMP/b1.log" "no workers and no jobs yet"
stop TERM
has "$TMP/b1.log" "broker: stopped"
echo "ok: serve, stats, SIGTERM"

# --- CURVE ----------------------------------------------------------------
serve "$TMP/b2.log" --bind 'tcp://127.0.0.1:*' --curve-keys "$TMP/keys" --queue-bound 8
run 0 stats "$EP" --curve-keys "$TMP/keys" --json
run 1 stats "$EP" --timeout 300
stop INT
has "$TMP/b2.log" "CURVE keys in $TMP/keys"
mkdir -p "$TMP/empty"
run 2 --bind 'tcp://127.0.0.1:*' --curve-keys "$TMP/empty"
has "$TMP/err" "server.key"
echo "ok: CURVE"

if [ "$FAILS" -ne 0 ]; then
  echo "cli_mlc_broker: $FAILS failures"
  exit 1
fi
echo "cli_mlc_broker: all passed"
