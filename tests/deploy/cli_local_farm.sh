#!/bin/bash
# cli_local_farm.sh - deploy/local-farm end to end (docs/guide/farm.md): `up`
# with two CPU workers (a throwaway PostgreSQL, mlc-db init, mlc-broker on a
# free port), `mlc-tune --farm` tuning GMM-32 for 6 trials into that
# PostgreSQL database, `mlc-db top`/`stats` showing the records the farm's
# workers measured, `mlc-compile --db` building a .so that reports the
# function as tuned, the workers' health files (when mlc-worker has
# --health-file), `status`, the errors of `up` (port in use, a farm already
# there), and `down` leaving no process and no directory behind.
#
# Usage: bash cli_local_farm.sh BUILD_DIR SOURCE_DIR
# Exit 77 (skip) when PostgreSQL's server programs are missing.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
SRC=$(cd "${2:?source dir}" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
FARM="$SRC/deploy/local-farm"

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null; then
  echo "SKIP: no PostgreSQL server programs (initdb); install the postgresql package"
  exit 77
fi
if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
  echo "SKIP: running as root without a 'postgres' user for the server (initdb refuses root)"
  exit 77
fi

TMP=$(mktemp -d /tmp/mlc-lf-XXXXXX)
chmod 755 "$TMP"
DIR=$TMP/farm
export MLC_BIN=$BUILD
unset MLC_DB MLC_FARM_DIR
cleanup() {
  [ -d "$DIR" ] && "$FARM" down --dir "$DIR" >/dev/null 2>&1
  [ -n "${BUSY_PID:-}" ] && kill "$BUSY_PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

source "$(dirname "${BASH_SOURCE[0]}")/../lib/cli.sh"
pyjson() { "$PY" -c "import json,sys; d=json.load(open('$TMP/out')); sys.exit(0 if ($1) else 1)" || fail "JSON check failed: $1: $(head -c 400 "$TMP/out")"; }

# --- up -----------------------------------------------------------------------
expect 0 "$FARM" up --workers 2 --port auto --dir "$DIR" || {
  echo "local-farm up failed; nothing else can run" >&2
  exit 1
}
has "$TMP/out" "export MLC_FARM=tcp://127.0.0.1:"
has "$TMP/out" "export MLC_DB='postgresql:///mlc?host=$DIR/pg"
eval "$(cat "$TMP/out")"
PIDS="$(cat "$DIR"/*.pid) $(head -1 "$DIR/pg/data/postmaster.pid")"
expect 0 "$FARM" env --dir "$DIR" && has "$TMP/out" "export MLC_FARM=$MLC_FARM"
expect 0 "$FARM" status --dir "$DIR" && has "$TMP/out" "worker-1   running"
grep -qE "^llvm-[a-z0-9_-]+ +2 " "$TMP/out" || fail "status: the broker does not count 2 workers: $(cat "$TMP/out")"

# Refusals: the same directory again; a port that is taken.
expect 1 "$FARM" up --dir "$DIR" && has "$TMP/err" "a farm is already at $DIR"
PORT=${MLC_FARM##*:}
expect 1 "$FARM" up --dir "$TMP/farm2" --port "$PORT" && has "$TMP/err" "port $PORT is in use"
[ ! -e "$TMP/farm2" ] || fail "a refused up left $TMP/farm2 behind"
expect 2 "$FARM" up --workers 0 --dir "$TMP/farm3" && has "$TMP/err" "--workers"

# --- tune through it into PostgreSQL ------------------------------------------
export MLC_LOG=warn
"$BUILD/mlc-tir" workload GMM --shape 32,32,32 >"$TMP/gmm.py" || fail "mlc-tir workload"
QUICK=(--target llvm --per-round 3 --min-repeat-ms 1 --number 1 --population 16 --generations 1 --model random)
if expect 0 "$BUILD/mlc-tune" "$TMP/gmm.py" --trials 6 --farm "$MLC_FARM" --db "$MLC_DB" "${QUICK[@]}" --json; then
  pyjson "d['tasks'][0]['trials'] == 6 and d['db'].startswith('postgresql://') and d['tasks'][0]['best_secs'] is not None"
fi

# --- query with mlc-db -----------------------------------------------------------
KEY=$("$BUILD/mlc-tir" hash "$TMP/gmm.py" | awk '{print $1}')
expect 0 "$BUILD/mlc-db" --db "$MLC_DB" stats --json && pyjson "d['records'] == 7 and d['workloads'] == 1"
expect 0 "$BUILD/mlc-db" --db "$MLC_DB" top --json &&
  pyjson "d[0]['workload_key'] == '$KEY' and d[0]['records'][0]['worker_id'].startswith('local-farm-w')"
expect 0 "$BUILD/mlc-db" --db "$MLC_DB" top && has "$TMP/out" "$KEY"

# --- compile with the tuned schedule -----------------------------------------------
if expect 0 "$BUILD/mlc-compile" "$TMP/gmm.py" --target llvm --db "$MLC_DB" -o "$TMP/libgmm.so" --report; then
  has "$TMP/out" "gmm $KEY: record "
  has "$TMP/out" "(worker local-farm-w"
  if [ ! -s "$TMP/libgmm.so" ] || [ ! -s "$TMP/libgmm.h" ]; then fail "mlc-compile wrote no libgmm.so/libgmm.h"; fi
fi
expect 0 "$BUILD/mlc-compile" "$TMP/gmm.py" --target llvm --db "$MLC_DB" -o "$TMP/libgmm2.so" --require-tuned --json &&
  pyjson "d['functions'][0]['schedule'] == 'tuned'"

# --- the workers' health files (mlc-worker --health-file) ---------------------------
if "$BUILD/mlc-worker" --help 2>/dev/null | grep -q -- --health-file; then
  for k in 0 1; do
    expect 0 "$BUILD/mlc-worker" health "$DIR/worker-$k.health" ||
      fail "worker $k is not healthy: $(cat "$DIR/worker-$k.health" 2>&1)"
  done
else
  echo "note: mlc-worker has no --health-file yet: health files not checked"
fi

# --- down: nothing left -----------------------------------------------------------
expect 0 "$FARM" down --dir "$DIR" && has "$TMP/err" "removed $DIR"
[ ! -e "$DIR" ] || fail "down left $DIR behind"
for ((i = 0; i < 50; i++)); do
  left=""
  for p in $PIDS; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || fail "processes still running after down:$left ($(ps -o pid=,args= -p "${left// /,}" 2>/dev/null))"
expect 1 "$FARM" status --dir "$DIR" && has "$TMP/out" "no farm at $DIR"

if [ "$FAILS" -ne 0 ]; then
  echo "$FAILS check(s) failed" >&2
  exit 1
fi
echo "cli_local_farm: all checks passed"
