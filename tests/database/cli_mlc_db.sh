#!/bin/bash
# cli_mlc_db.sh - mlc-db end to end (docs/mlc-db.md): a file database filled by
# importing the fixture tests/database/fixtures/small (3 workloads, 13 records,
# 4 of them failures, 2 targets), then every command in its tab-separated,
# table and JSON forms, export/import round trips that are idempotent, prune,
# the exit statuses (0 ok, 1 the work failed, 2 bad usage or input) and the
# damaged fixture (bad lines, a trace that is not a trace, a torn tail).
#
# Usage: bash cli_mlc_db.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=${1:?build dir}
SRC=${2:?source dir}
BIN=$BUILD/mlc-db
PY=$(command -v python3 || echo /usr/bin/python3)
TMP=$(mktemp -d /tmp/mlc-db-cli-XXXXXX)
PGDIR=""
PG_AS=()
PG_BIN=""
cleanup() {
  if [ -n "$PGDIR" ]; then
    "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PGDIR/data" -m immediate -w stop >/dev/null 2>&1
    rm -rf "$PGDIR"
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
unset MLC_DB
export MLC_LOG=warn

FAILS=0
SECTION_FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
# pass SECTION: reports a section of checks (ok when none of them failed).
pass() {
  if [ "$FAILS" -eq "$SECTION_FAILS" ]; then echo "ok: $*"; else echo "not ok: $*"; fi
  SECTION_FAILS=$FAILS
}

# run WANT_RC ARGS...: runs mlc-db, output in $TMP/out and $TMP/err.
run() {
  local want=$1
  shift
  "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "mlc-db $* exited $rc, expected $want"
    sed 's/^/  stdout: /' "$TMP/out" | head -20 >&2
    sed 's/^/  stderr: /' "$TMP/err" | head -20 >&2
    return 1
  fi
  return 0
}

# has FILE TEXT: FILE contains TEXT (fixed string).
has() { grep -qF -- "$2" "$1" || { fail "expected '$2' in $1:"; sed 's/^/  | /' "$1" | head -20 >&2; }; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "did not expect '$2' in $1"; }
lines() { [ "$(wc -l <"$1")" -eq "$2" ] || fail "expected $2 lines in $1, got $(wc -l <"$1")"; }
# pyjson EXPR: evaluates EXPR with `d` = the JSON on $TMP/out; fails unless true.
pyjson() {
  "$PY" -c "import json,sys; d=json.load(open('$TMP/out')); sys.exit(0 if ($1) else 1)" ||
    { fail "JSON check failed: $1"; head -c 600 "$TMP/out" >&2; echo >&2; }
}
# fixture NAME: a private copy (opening a database takes its lock file, a
# writer cuts a torn tail: the source tree must not change).
fixture() { cp -r "$SRC/tests/database/fixtures/$1" "$TMP/$1" && echo "file:$TMP/$1"; }

A="file:$TMP/a"
B="file:$TMP/b"
GMM=e0769caa07222be3
SFM=bace597d0c4c8ee9
CPU="llvm -mcpu=znver4 -num-cores=4"
GPU="cuda -arch=sm_90"
BEST_CPU=9a8e70831a344080 # gmm on the cpu: 1.01 ms
BEST_GPU=da691b53da68ddb4 # gmm on the gpu: 0.0251 ms

[ -x "$BIN" ] || { echo "FAIL: $BIN not built" >&2; exit 1; }

# --- help and usage ----------------------------------------------------------
run 0 --help && has "$TMP/out" "export" && has "$TMP/out" "--db URI"
for c in init top show list failures stats export import prune; do
  run 0 "$c" --help && has "$TMP/out" "usage: mlc-db $c"
done
run 0 help top && has "$TMP/out" "usage: mlc-db top"
run 2 && has "$TMP/err" "usage:"
run 2 frobnicate && has "$TMP/err" "mlc-db: error: unknown command 'frobnicate'"
run 2 --db "$A" top --frob && has "$TMP/err" "mlc-db: error: top: unknown option '--frob'"
run 2 --db "$A" top -k 0 && has "$TMP/err" "-k wants a whole number"
run 2 --db "$A" top -k && has "$TMP/err" "option -k needs a value"
run 2 --db "$A" prune && has "$TMP/err" "missing --keep"
run 2 --db "$A" prune --keep 0 && has "$TMP/err" "at least 1"
run 2 --db "$A" export && has "$TMP/err" "missing --to"
run 2 --db "$A" import && has "$TMP/err" "missing --from"
run 2 --db "$A" show && has "$TMP/err" "missing ID"
run 2 --db "$A" show not-an-id && has "$TMP/err" "is not a record id"
run 2 --db "$A" list extra && has "$TMP/err" "unknown option 'extra'"
pass "help and bad usage"

# --- init ---------------------------------------------------------------------
run 0 --db "$A" init && has "$TMP/out" "schema version 1"
run 0 --db "$A" init --json && pyjson "d['schema_version'] == 1 and d['db'] == '$A'"
pass "init"

# --- import the fixture (idempotent) --------------------------------------------
SMALL=$(fixture small)
run 0 --db "$A" import --from "$SMALL" && has "$TMP/out" "copied 13 records"
run 0 --db "$A" import --from "$SMALL" && has "$TMP/out" "copied 0 records"
run 0 --db "$A" --json import --from "$SMALL" && pyjson "d['copied'] == 0"
pass "import"

# --- stats ----------------------------------------------------------------------
run 0 --db "$A" stats
has "$TMP/out" "$(printf 'workloads\t\t3')"
has "$TMP/out" "$(printf 'records\t\t13')"
has "$TMP/out" "$(printf 'failures\t\t4')"
has "$TMP/out" "$(printf 'failures\tbuild\t1')"
has "$TMP/out" "$(printf 'failures\twrong-result\t1')"
has "$TMP/out" "$(printf 'target\t%s\t10' "$CPU")"
has "$TMP/out" "$(printf 'target\t%s\t3' "$GPU")"
run 0 --db "$A" stats --json &&
  pyjson "d['records'] == 13 and d['failures'] == 4 and d['workloads'] == 3 and d['failures_by_kind']['crash'] == 1 and d['records_per_target']['$GPU'] == 3"
run 0 --db "$A" stats --table && has "$TMP/out" "what" && hasnt "$TMP/out" "$(printf '\t')"
MLC_DB="$A" run 0 stats && has "$TMP/out" "$(printf 'records\t\t13')" # $MLC_DB names the database
pass "stats"

# --- list -----------------------------------------------------------------------
run 0 --db "$A" list && lines "$TMP/out" 4
has "$TMP/out" "$(printf '%s\tgmm\t%s\t7\t2\t1.01\t%s' $GMM "$CPU" $BEST_CPU)"
has "$TMP/out" "$(printf '%s\tgmm\t%s\t3\t1\t0.0251\t%s' $GMM "$GPU" $BEST_GPU)"
has "$TMP/out" "$(printf '%s\tsfm\t%s\t3\t1\t' $SFM "$CPU")"
has "$TMP/out" "$(printf '\tc2d\t-\t0\t0\t-\t-')"
run 0 --db "$A" list --json &&
  pyjson "len(d) == 3 and [w for w in d if w['workload'] == 'gmm'][0]['records'] == 10 and [w for w in d if w['workload'] == 'c2d'][0]['targets'] == []"
run 0 --db "$A" list --table && has "$TMP/out" "best_ms"
pass "list"

# --- failures -------------------------------------------------------------------
run 0 --db "$A" failures && lines "$TMP/out" 4
head -1 "$TMP/out" | grep -q "^93afe659d6fe3329	sfm	$CPU	crash	" || fail "newest failure first: $(head -1 "$TMP/out")"
has "$TMP/out" "$(printf '590cf693baef112a\tgmm\t%s\ttimeout\t2024-05-01 12:35:02\trun exceeded 10 s' "$CPU")"
run 0 --db "$A" failures --kind wrong-result && lines "$TMP/out" 1 && has "$TMP/out" 2812d46d4f3a20f1
run 0 --db "$A" failures --workload gmm --target "$CPU" --limit 1 && lines "$TMP/out" 1 && has "$TMP/out" 590cf693baef112a
run 0 --db "$A" failures --workload sfm --kind build && lines "$TMP/out" 0
run 0 --db "$A" failures --json --limit 2 &&
  pyjson "[r['id'] for r in d] == ['93afe659d6fe3329', '2812d46d4f3a20f1'] and d[0]['error_msg'] == 'signal 11 (SIGSEGV)'"
run 2 --db "$A" failures --kind fine && has "$TMP/err" "is not a failure kind"
run 2 --db "$A" failures --limit -1 && has "$TMP/err" "--limit wants a whole number"
pass "failures"

# --- top ------------------------------------------------------------------------
run 0 --db "$A" top && lines "$TMP/out" 3 # gmm x 2 targets, sfm x 1; c2d has none
has "$TMP/out" "$(printf '%s\tgmm\t%s\t1\t1.01\t3\t%s\t2024-05-01 12:34:57' $GMM "$CPU" $BEST_CPU)"
run 0 --db "$A" top --workload gmm --target "$GPU" && lines "$TMP/out" 1 && has "$TMP/out" $BEST_GPU
# failures are never best: 5 measurements of 7 records, fastest first; the
# target given in another spelling finds the canonical one.
run 0 --db "$A" top --workload $GMM --target "llvm -num-cores=4 -mcpu=znver4" -k 10 && lines "$TMP/out" 5
[ "$(cut -f5 "$TMP/out" | tr '\n' ' ')" = "1.01 1.23 1.87 3.02 11.4 " ] || fail "top -k 10 order: $(cut -f5 "$TMP/out" | tr '\n' ' ')"
run 0 --db "$A" top --target "rocm -mcpu=gfx90a" && lines "$TMP/out" 0
run 1 --db "$A" top --workload nosuch && has "$TMP/err" "no workload named 'nosuch'"
run 0 --db "$A" top -k 2 --json &&
  pyjson "len(d) == 3 and all(len(g['records']) <= 2 for g in d) and [g for g in d if g['target'] == '$GPU'][0]['records'][0]['id'] == '$BEST_GPU'"
run 0 --db "$A" --json top --workload sfm &&
  pyjson "d[0]['records'][0]['run_secs'] == [4e-06, 4.01e-06, 4.02e-06] and d[0]['records'][0]['created_at'] == '2024-05-01T12:35:06.000000Z'"
run 0 --db "$A" top --table && has "$TMP/out" "median_ms"
pass "top"

# --- show -----------------------------------------------------------------------
run 0 --db "$A" show $BEST_CPU
has "$TMP/out" 'b0 = sch.get_block(name="C", func_name="gmm")'
has "$TMP/out" 'sch.split(loop=l1, factors=[v4, v5]'
has "$TMP/out" "$(printf 'outcome\tmeasured')"
has "$TMP/out" "$(printf 'workload\t%s (gmm)' $GMM)"
run 0 --db "$A" show 9A8E && has "$TMP/out" "$(printf 'id\t%s' $BEST_CPU)" # a unique prefix, any case
run 0 --db "$A" show 9A8E70831A344080 && has "$TMP/out" "$(printf 'id\t%s' $BEST_CPU)" # a full id, any case
run 0 --db "$A" show 067d6806dd10ae8c && has "$TMP/out" "$(printf 'error\tlowering failed')" &&
  has "$TMP/out" "$(printf 'outcome\tbuild')" && has "$TMP/out" "$(printf 'median_ms\t-')"
run 0 --db "$A" show $BEST_CPU --json &&
  pyjson "d['id'] == '$BEST_CPU' and d['workload'] == 'gmm' and d['trace_python'].startswith('b0 = sch.get_block') and d['trace'][0][0][0] == 'GetBlock' and d['device']['cores'] == 4 and len(d['run_secs']) == 3 and d['tvmscript'].startswith('# from tvm.script')"
run 0 --db "$A" show $BEST_CPU --tvmscript && has "$TMP/out" "def gmm("
run 1 --db "$A" show 0123456789abcdef && has "$TMP/err" "mlc-db: error: no record with id 0123456789abcdef"
pass "show"

# --- export / import between two file databases ----------------------------------
run 0 --db "$A" export --to "$B" && has "$TMP/out" "copied 13 records"
run 0 --db "$A" export --to "$B" && has "$TMP/out" "copied 0 records"
run 0 --db "$B" import --from "$A" && has "$TMP/out" "copied 0 records"
"$BIN" --db "$A" --json stats >"$TMP/sa" && "$BIN" --db "$B" --json stats >"$TMP/sb" && cmp -s "$TMP/sa" "$TMP/sb" ||
  fail "stats differ after export: $(cat "$TMP/sa") vs $(cat "$TMP/sb")"
"$BIN" --db "$A" --json top -k 100 >"$TMP/ta" && "$BIN" --db "$B" --json top -k 100 >"$TMP/tb" && cmp -s "$TMP/ta" "$TMP/tb" ||
  fail "every record is not the same after export"
pass "export and import"

# --- the same on PostgreSQL -------------------------------------------------------
# A throwaway cluster as tests/database/pg_cluster.h starts one: initdb and
# pg_ctl on a temp dir, a unix socket there, fsync off; the server runs as
# the `postgres` user when we are root (initdb refuses root).
pg_start() {
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
    echo "SKIP postgresql: no server binaries (/usr/lib/postgresql/*/bin/initdb); install the postgresql package"
    return 1
  fi
  PGDIR=$(mktemp -d /tmp/mlc-db-cli-pg-XXXXXX)
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$PGDIR" && PG_AS=(runuser -u postgres --)
  fi
  "${PG_AS[@]}" "$PG_BIN/initdb" -D "$PGDIR/data" -A trust -U "$(id -un)" -E UTF8 --locale=C -N >"$PGDIR/initdb.log" 2>&1 &&
    printf "listen_addresses = ''\nunix_socket_directories = '%s'\nport = 5432\nfsync = off\n" "$PGDIR" >>"$PGDIR/data/postgresql.conf" &&
    "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 30 start >/dev/null 2>&1 ||
    { fail "could not start a PostgreSQL cluster"; cat "$PGDIR"/*.log >&2; return 1; }
}
# same_output FILE1 FILE2: byte for byte (both backends keep every field,
# JSON texts included, exactly as committed).
same_output() {
  cmp -s "$1" "$2" || { fail "$1 and $2 differ:"; diff <(tr , '\n' <"$1") <(tr , '\n' <"$2") | head >&2; }
}
if pg_start; then
  PG="postgresql:///postgres?host=$PGDIR&port=5432"
  run 0 --db "$PG" init && has "$TMP/out" "schema version 1"
  run 0 --db "$PG" init && has "$TMP/out" "schema version 1" # again: nothing to migrate
  run 0 --db "$PG" import --from "$SMALL" && has "$TMP/out" "copied 13 records"
  run 0 --db "$PG" import --from "$SMALL" && has "$TMP/out" "copied 0 records"
  "$BIN" --db "$PG" --json stats >"$TMP/sp" && same_output "$TMP/sa" "$TMP/sp"
  "$BIN" --db "$PG" --json top -k 100 >"$TMP/tp" && same_output "$TMP/ta" "$TMP/tp"
  "$BIN" --db "$PG" --json list >"$TMP/lp" && "$BIN" --db "$A" --json list >"$TMP/la" && same_output "$TMP/la" "$TMP/lp"
  run 0 --db "$PG" list && has "$TMP/out" "$(printf '%s\tgmm\t%s\t7\t2\t1.01\t%s' $GMM "$CPU" $BEST_CPU)"
  run 0 --db "$PG" show $BEST_CPU && has "$TMP/out" 'b0 = sch.get_block(name="C", func_name="gmm")'
  run 0 --db "$PG" show 9a8e && has "$TMP/out" "$(printf 'id\t%s' $BEST_CPU)" # a prefix: the scan
  run 1 --db "$PG" show 0123456789abcdef && has "$TMP/err" "no record with id"
  run 0 --db "$PG" export --to "file:$TMP/c" && has "$TMP/out" "copied 13 records"
  "$BIN" --db "file:$TMP/c" --json top -k 100 >"$TMP/tc" && same_output "$TMP/ta" "$TMP/tc" # file -> postgresql -> file
  run 0 --db "$PG" prune --keep 1 && has "$TMP/out" "removed 6 records"
  run 0 --db "$PG" --json stats && pyjson "d['records'] == 7 and d['failures'] == 4"
  run 2 --db "postgresql:///nosuchdb?host=$PGDIR&port=5432" stats && has "$TMP/err" "cannot open database"
  pass "postgresql"
fi

# --- prune ----------------------------------------------------------------------
# the best measurement per workload x target stays, and every failure (the
# cost model learns from them): 13 - 3 - 4 = 6 go.
run 0 --db "$B" prune --help && has "$TMP/out" "Failed trials are all kept"
run 0 --db "$B" prune --keep 1 && has "$TMP/out" "removed 6 records"
run 0 --db "$B" --json prune --keep 1 && pyjson "d['removed'] == 0"
run 0 --db "$B" top -k 5 && lines "$TMP/out" 3 && has "$TMP/out" $BEST_CPU && has "$TMP/out" $BEST_GPU
run 0 --db "$B" stats --json && pyjson "d['records'] == 7 and d['failures'] == 4 and d['failures_by_kind']['build'] == 1"
pass "prune"

# --- bad databases ----------------------------------------------------------------
run 2 --db "bogus://nowhere" stats && has "$TMP/err" "mlc-db: error: cannot open database"
run 2 --db "postgresql://alice:s3cr3t@127.0.0.1:1/mlc?connect_timeout=2" stats &&
  has "$TMP/err" "mlc-db: error: cannot open database" && hasnt "$TMP/err" "s3cr3t"
run 2 --db "$A" export --to "bogus://nowhere" && has "$TMP/err" "cannot open database"
cp -r "$SRC/tests/database/fixtures/small" "$TMP/newer" # written by a future mlc-tune
sed -i '1s/.*/{"mlc_db_schema": 99}/' "$TMP/newer/records.jsonl" "$TMP/newer/workloads.jsonl"
run 2 --db "file:$TMP/newer" stats && has "$TMP/err" "newer"
pass "bad databases"

# --- damaged records ----------------------------------------------------------------
DAMAGED=$(fixture damaged)
run 0 --db "$DAMAGED" stats && has "$TMP/out" "$(printf 'records\t\t8')" && has "$TMP/err" "warning"
# sfm's only "measurement" has no run times: listed, never best
run 0 --db "$DAMAGED" list --json && pyjson "[w for w in d if w['workload'] == 'sfm'][0]['targets'][0]['best_id'] is None"
run 0 --db "$DAMAGED" list && has "$TMP/out" "$(printf '%s\tsfm\t%s\t1\t0\t-\t-' $SFM "$CPU")"
run 0 --db "$DAMAGED" top -k 10
run 1 --db "$DAMAGED" show d00dfeed00000001 && has "$TMP/err" "trace does not load" && has "$TMP/out" "$(printf 'id\td00dfeed00000001')"
run 0 --db "$DAMAGED" show d00dfeed00000006 && has "$TMP/out" "$(printf 'median_ms\t-')" # no run times
# the valid record A lacks arrives; the measurement without run times is
# named and refused (bad input: exit 2)
run 2 --db "$A" import --from "$DAMAGED" && has "$TMP/err" "1 damaged record(s) not copied" &&
  has "$TMP/err" "d00dfeed00000006" && has "$TMP/err" "1 records were copied"
run 1 --db "$A" show d00dfeed00000001 && has "$TMP/out" "$(printf 'id\td00dfeed00000001')" # it arrived
pass "damaged records"

if [ "$FAILS" -ne 0 ]; then
  echo "$FAILS check(s) failed" >&2
  exit 1
fi
echo "all mlc-db checks passed"
