#!/bin/bash
# cli_tune_leases.sh - two mlc-tune jobs on one file database never measure
# the same task at the same time (docs/mlc-tune.md, "Several jobs on one
# database"). A module of two functions (GMM-32 and GMM-16, two tasks):
#   1. two jobs started together on the whole module: both finish (exit 0),
#      and per workload the records of one job (its worker id names its pid)
#      span a created_at interval that does not overlap the other job's;
#   2. job A on GMM-16 alone, then, once A holds its lease, job B on the whole
#      module: B tunes GMM-32 meanwhile, says in its JSON summary that GMM-16
#      was held by A (skips, A's owner name), and again nothing overlaps;
#   3. --no-lease takes no lease (leases.json never names the job);
#   4. as 1 on PostgreSQL, when its server programs are installed (a
#      throwaway cluster on a unix socket, as deploy/local-farm makes; the
#      records checked from an `mlc-db export` into a file database).
#
# Usage: bash cli_tune_leases.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=${1:?build dir}
BIN=$BUILD/mlc-tune
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
TMP=$(mktemp -d /tmp/mlc-tune-lease-XXXXXX)
PIDS=()
PG_AS=()
PG_BIN=
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  [ -n "$PG_BIN" ] && "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$TMP/pg/data" -m immediate -w stop >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
unset MLC_DB MLC_FARM
export MLC_LOG=info

source "$(dirname "${BASH_SOURCE[0]}")/../lib/cli.sh"

"$BUILD/mlc-tir" workload GMM --shape 32,32,32 >"$TMP/g32.py" || fail "mlc-tir workload"
"$BUILD/mlc-tir" workload GMM --shape 16,16,16 >"$TMP/g16.py" || fail "mlc-tir workload"
"$PY" - "$TMP/g32.py" "$TMP/g16.py" "$TMP/mod.py" <<'EOF_PY'
import sys
def body(path, name):
    src = open(path).read()
    b = src[src.index("@T.prim_func"):]
    b = b.replace("def gmm(", "def %s(" % name).replace('"global_symbol": "gmm"', '"global_symbol": "%s"' % name)
    return "\n".join("    " + l if l else l for l in b.splitlines())
open(sys.argv[3], "w").write("from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n"
                             "@I.ir_module\nclass Module:\n" + body(sys.argv[1], "g32") + "\n\n" +
                             body(sys.argv[2], "g16") + "\n")
EOF_PY
QUICK=(--target llvm --per-round 4 --min-repeat-ms 1 --number 1 --population 16 --generations 1 --workers 1)

# overlap DB: per workload, the created_at interval of each job's records;
# fails when two jobs' intervals of one workload overlap. Prints a summary.
overlap() {
  "$PY" - "$1/records.jsonl" <<'EOF_PY'
import json, sys, collections
spans = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "trace_hash" not in r:
        continue
    w, job, t = r["workload"], r["worker_id"], r["created_at"]
    lo, hi = spans[w].get(job, (t, t))
    spans[w][job] = (min(lo, t), max(hi, t))
bad = 0
for w, jobs in spans.items():
    iv = sorted(jobs.values())
    print(w, len(jobs), "job(s)", " ".join("%s..%s" % p for p in iv))
    for a, b in zip(iv, iv[1:]):
        if b[0] <= a[1]:
            print("overlap on", w, a, b)
            bad = 1
sys.exit(bad)
EOF_PY
}

# 1. Two jobs started together.
"$BIN" "$TMP/mod.py" --trials 8 --db "file:$TMP/db1" --json "${QUICK[@]}" >"$TMP/a.out" 2>"$TMP/a.err" &
PA=$!
"$BIN" "$TMP/mod.py" --trials 8 --db "file:$TMP/db1" --json "${QUICK[@]}" --seed 2 >"$TMP/b.out" 2>"$TMP/b.err" &
PB=$!
PIDS=("$PA" "$PB")
wait "$PA" || { fail "job A exited $?"; show "$TMP/a.err"; }
wait "$PB" || { fail "job B exited $?"; show "$TMP/b.err"; }
overlap "$TMP/db1" >"$TMP/ov1" || { fail "two jobs measured one task at the same time"; show "$TMP/ov1"; }
grep -q "leases on tasks as mlc-tune@" "$TMP/a.err" || fail "job A took no leases"
for j in a b; do
  "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if sum(t["trials"] for t in d["tasks"]) == 8 else 1)' \
    "$TMP/$j.out" || { fail "job $j did not spend its 8 trials"; show "$TMP/$j.out"; }
done
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["leases"] == [] else 1)' "$TMP/db1/leases.json" ||
  fail "leases left behind: $(cat "$TMP/db1/leases.json")"
echo "ok: two jobs at once: $(tr '\n' ';' <"$TMP/ov1")"

# 2. A holds g16; B tunes the module meanwhile and skips g16 until A is done.
"$BIN" "$TMP/mod.py" --func g16 --trials 8 --db "file:$TMP/db2" --json "${QUICK[@]}" >"$TMP/a2.out" 2>"$TMP/a2.err" &
PA=$!
PIDS=("$PA")
for _ in $(seq 100); do
  grep -q '"owner"' "$TMP/db2/leases.json" 2>/dev/null && break
  sleep 0.1
done
grep -q '"owner"' "$TMP/db2/leases.json" 2>/dev/null || fail "job A took no lease within 10 s"
"$BIN" "$TMP/mod.py" --trials 12 --db "file:$TMP/db2" --json "${QUICK[@]}" >"$TMP/b2.out" 2>"$TMP/b2.err"
rc=$?
[ "$rc" -eq 0 ] || { fail "job B exited $rc"; show "$TMP/b2.err"; }
wait "$PA" || { fail "job A exited $?"; show "$TMP/a2.err"; }
overlap "$TMP/db2" >"$TMP/ov2" || { fail "two jobs measured one task at the same time"; show "$TMP/ov2"; }
"$PY" - "$TMP/b2.out" <<'EOF_PY' || { fail "B's summary does not say that A held g16"; show "$TMP/b2.out"; }
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in d["tasks"]}
l = t["g16"]["lease"]
assert l["skips"] >= 1 and l["holder"].startswith("mlc-tune@"), l
assert t["g32"]["trials"] >= 4, t["g32"]
assert t["g32"]["lease"]["skips"] == 0
EOF_PY
grep -q "g16: another job mlc-tune@" "$TMP/b2.err" || fail "B's log does not say g16 was skipped: $(grep g16 "$TMP/b2.err")"
echo "ok: a held task is skipped and the others tuned: $(tr '\n' ';' <"$TMP/ov2")"

# 3. --no-lease: no lease taken, the summary has none.
"$BIN" "$TMP/mod.py" --func g16 --trials 4 --db "file:$TMP/db3" --json --no-lease "${QUICK[@]}" >"$TMP/c.out" \
  2>"$TMP/c.err" || { fail "--no-lease run failed"; show "$TMP/c.err"; }
grep -q "leases on tasks" "$TMP/c.err" && fail "--no-lease took leases"
[ -e "$TMP/db3/leases.json" ] && grep -q owner "$TMP/db3/leases.json" && fail "--no-lease wrote a lease"
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["tasks"][0]["lease"] is None else 1)' \
  "$TMP/c.out" || fail "--no-lease summary has lease notes"
echo "ok: --no-lease"

# 4. PostgreSQL: two jobs at once, as in 1.
start_pg() {
  local d
  d=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -1)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then PG_BIN=$d
  elif d=$(command -v initdb 2>/dev/null); then PG_BIN=$(dirname "$d")
  else echo "skip: PostgreSQL: no initdb here"; return 1; fi
  mkdir -p "$TMP/pg"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "skip: PostgreSQL: root and no postgres user"; PG_BIN=; return 1; }
    PG_AS=(runuser -u postgres --)
    chmod 755 "$TMP" && chown postgres: "$TMP/pg"
  fi
  "${PG_AS[@]}" "$PG_BIN/initdb" -D "$TMP/pg/data" -A trust -U "$(id -un)" -E UTF8 --locale=C -N \
    >"$TMP/pg/initdb.log" 2>&1 || { fail "initdb: $(tail -3 "$TMP/pg/initdb.log")"; PG_BIN=; return 1; }
  printf "listen_addresses = ''\nunix_socket_directories = '%s'\nport = 5432\nfsync = off\n" "$TMP/pg" \
    >>"$TMP/pg/data/postgresql.conf"
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$TMP/pg/data" -l "$TMP/pg/server.log" -w -t 30 start >/dev/null 2>&1 ||
    { fail "PostgreSQL did not start: $(tail -3 "$TMP/pg/server.log")"; return 1; }
  "$PG_BIN/createdb" -h "$TMP/pg" -p 5432 mlc 2>"$TMP/pg/createdb.log" || { fail "createdb failed"; return 1; }
}
if start_pg; then
  PGURI="postgresql:///mlc?host=$TMP/pg&port=5432"
  "$BUILD/mlc-db" --db "$PGURI" init >/dev/null 2>&1 || fail "mlc-db init on PostgreSQL"
  "$BIN" "$TMP/mod.py" --trials 8 --db "$PGURI" --json "${QUICK[@]}" >"$TMP/pa.out" 2>"$TMP/pa.err" &
  PA=$!
  "$BIN" "$TMP/mod.py" --trials 8 --db "$PGURI" --json "${QUICK[@]}" --seed 2 >"$TMP/pb.out" 2>"$TMP/pb.err" &
  PB=$!
  PIDS=("$PA" "$PB")
  wait "$PA" || { fail "PostgreSQL job A exited $?"; show "$TMP/pa.err"; }
  wait "$PB" || { fail "PostgreSQL job B exited $?"; show "$TMP/pb.err"; }
  "$BUILD/mlc-db" --db "$PGURI" export --to "file:$TMP/pgcopy" >/dev/null 2>"$TMP/export.err" ||
    { fail "mlc-db export"; show "$TMP/export.err"; }
  overlap "$TMP/pgcopy" >"$TMP/ov4" || { fail "PostgreSQL: two jobs measured one task at once"; show "$TMP/ov4"; }
  echo "ok: PostgreSQL, two jobs at once: $(tr '\n' ';' <"$TMP/ov4")"
fi

[ "$FAILS" -eq 0 ] || { echo "$FAILS check(s) failed" >&2; exit 1; }
echo "all ok"
