#!/usr/bin/env bash
# The README's main job: tune a real workload on this CPU with the embedded
# database, then show what tuning bought.
#
#   1. `mlc-tir workload GMM --shape 512,512,512`: a 512x512x512 fp32 matmul;
#   2. `mlc-tune` tunes it for this machine's CPU (`--target llvm`): MetaSchedule's
#      design space, evolutionary search with an XGBoost cost model, every
#      candidate measured honestly; the summary shows the best kernel's GFLOP/s
#      and its speedup over the default schedule (what mlc-compile builds without
#      tuning: outer loops parallel, inner vectorized, the matmul tiled), both
#      measured the same way;
#   3. `mlc-db top` shows the winning record in the database, and
#      `mlc-sched apply` prints the tuned program it stands for;
#   4. `mlc-compile` builds a shared library with the database (the record's
#      schedule) and one without it (the default schedule), and
#      examples/gemm_main.c calls both through the DLPack ABI, checks them
#      against a float64 reference and shows the speedup.
#
# The database is the embedded one (./mlc-db unless MLC_DEMO_DB says otherwise):
# running the demo again resumes and measures only new candidates. A tuning curve
# goes to mlc-demo-curve.svg. MLC_DEMO_TRIALS sets the budget (default 256, a few
# minutes on a 2-core machine).
set -euo pipefail
build=${1:-build}
trials=${MLC_DEMO_TRIALS:-256}
db=${MLC_DEMO_DB:-file:mlc-db}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== 1. the workload: mlc-tir workload GMM --shape 512,512,512 =="
"$build/mlc-tir" workload GMM --shape 512,512,512 > "$work/gmm512.py"
cat "$work/gmm512.py"
echo
echo "== 2. mlc-tune gmm512.py --target llvm --trials $trials --db $db =="
"$build/mlc-tune" "$work/gmm512.py" --target llvm --trials "$trials" --db "$db" \
  --plot mlc-demo-curve.svg
echo "(tuning curve: mlc-demo-curve.svg)"
echo
echo "== 3. the best record: mlc-db top --workload gmm --db $db =="
"$build/mlc-db" top --workload gmm --db "$db"
id=$("$build/mlc-db" top --workload gmm --db "$db" --json |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["records"][0]["id"])')
"$build/mlc-db" show "$id" --db "$db" --json |
  /usr/bin/python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["trace"]))' > "$work/best.json"
echo
echo "== the tuned program: mlc-sched apply --trace best.json gmm512.py =="
"$build/mlc-sched" apply --trace "$work/best.json" "$work/gmm512.py"
echo
echo "== 4. compile with the database and without it, call both =="
mkdir -p "$work/tuned" "$work/default"
"$build/mlc-compile" "$work/gmm512.py" -o "$work/tuned/libgmm.so" --db "$db" --report
"$build/mlc-compile" "$work/gmm512.py" -o "$work/default/libgmm.so" --db "file:$work/no-db" 2>/dev/null
echo "(the second library: no database, so mlc-compile used its default schedule)"
${CC:-cc} -std=c11 -O2 -o "$work/gemm_main" examples/gemm_main.c -lm
"$work/gemm_main" 512 512 512 "$work/default/libgmm.so" "$work/tuned/libgmm.so"
