#!/bin/bash
# cli_tune_farm_ux.sh - mlc-tune and a farm with no worker for its device key
# (docs/mlc-tune.md, docs/farm.md): the farm comes from $MLC_FARM; the start
# warns that no worker for the device key is connected; the first Ctrl-C
# stops at once (nothing of the round was measured, so nothing is recorded)
# with the summary and exit 130; --farm on the command line wins over
# $MLC_FARM, and --no-farm sets it aside (--workers then is no conflict).
#
# Usage: bash cli_tune_farm_ux.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=${1:?build dir}
BIN=$BUILD/mlc-tune
TMP=$(mktemp -d /tmp/mlc-tune-farmux-XXXXXX)
BROKER=
cleanup() {
  [ -n "$BROKER" ] && kill "$BROKER" 2>/dev/null && wait "$BROKER" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
unset MLC_DB MLC_FARM
export MLC_LOG=info

source "$(dirname "${BASH_SOURCE[0]}")/../lib/cli.sh"

"$BUILD/mlc-tir" workload GMM --shape 16,16,16 >"$TMP/g.py" || fail "mlc-tir workload"
EP="ipc://$TMP/broker"
MLC_LOG=warn "$BUILD/mlc-broker" --bind "$EP" --log-stats 0 2>"$TMP/broker.err" &
BROKER=$!
for _ in $(seq 50); do [ -S "$TMP/broker" ] && break; sleep 0.1; done

# $MLC_FARM, no worker: a warning, then Ctrl-C ends it at once.
MLC_FARM=$EP "$BIN" "$TMP/g.py" --target llvm --trials 8 --per-round 4 --db "file:$TMP/db" >"$TMP/out" 2>"$TMP/err" &
TUNER=$!
for _ in $(seq 100); do grep -q "no worker for device key" "$TMP/err" && break; sleep 0.1; done
has "$TMP/err" "measuring on the farm at $EP (\$MLC_FARM)"
has "$TMP/err" "no worker for device key llvm-"
has "$TMP/err" "is connected to the broker at $EP; jobs wait until one connects"
sleep 0.5
t0=$(date +%s.%N)
kill -INT "$TUNER"
wait "$TUNER"
rc=$?
t1=$(date +%s.%N)
[ "$rc" -eq 130 ] || { fail "Ctrl-C: exit $rc, expected 130"; show "$TMP/err"; }
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 5) }' || fail "Ctrl-C took $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}') s"
has "$TMP/err" "stopping now: nothing of this round has been measured"
has "$TMP/out" "stopped by Ctrl-C"
n=$(grep -c '"trace_hash"' "$TMP/db/records.jsonl" 2>/dev/null)
[ "${n:-0}" -eq 0 ] || fail "$n records of jobs that were never measured"
echo "ok: \$MLC_FARM, the no-worker warning, Ctrl-C at once"

# --farm wins over $MLC_FARM; --no-farm sets it aside.
MLC_FARM=tcp://127.0.0.1:1 "$BIN" "$TMP/g.py" --target llvm --trials 8 --workers 2 >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "--workers with \$MLC_FARM set should be refused"
has "$TMP/err" "add --no-farm"
MLC_FARM=tcp://127.0.0.1:1 "$BIN" "$TMP/g.py" --target llvm --trials 0 --no-farm --workers 1 --min-repeat-ms 1 \
  --db "file:$TMP/db2" >"$TMP/out" 2>"$TMP/err" || { fail "--no-farm run failed"; show "$TMP/err"; }
grep -q "farm" "$TMP/err" && { fail "--no-farm still used the farm"; show "$TMP/err"; }
"$BIN" "$TMP/g.py" --target llvm --trials 8 --farm "$EP" --no-farm >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "exclude each other" "$TMP/err" || fail "--farm with --no-farm should be refused"
echo "ok: precedence of --farm, --no-farm and \$MLC_FARM"

[ "$FAILS" -eq 0 ] || { echo "$FAILS check(s) failed" >&2; exit 1; }
echo "all ok"
