#!/usr/bin/env bash
# The README's main job: tune a real workload on this CPU with the embedded
# database, then show what tuning bought.
#
#   1. `mlc-tir workload GMM --shape 512,512,512`: a 512x512x512 fp32 matmul;
#   2. `mlc-tune` tunes it for this machine's CPU (`--target llvm`): MetaSchedule's
#      design space, evolutionary search with an XGBoost cost model, every
#      candidate measured honestly; the summary shows the best kernel's GFLOP/s
#      and its speedup over the untuned default schedule, both measured the same way;
#   3. `mlc-db top` shows the winning record in the database, and
#      `mlc-sched apply` prints the tuned program it stands for.
#
# The database is the embedded one (./mlc-db unless MLC_DEMO_DB says otherwise):
# running the demo again resumes and measures only new candidates. A tuning curve
# goes to mlc-demo-curve.svg. MLC_DEMO_TRIALS sets the budget (default 256, a few
# minutes on a 2-core machine). `mlc-compile` (step 7) will build a library from
# the database; until then step 3 shows the tuned program itself.
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
