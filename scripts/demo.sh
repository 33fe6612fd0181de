#!/usr/bin/env bash
# The README's main job. At this stage of the project (step 1 of 9) it shows the
# TIR core on a built-in workload: print it as TVMScript, take its workload key,
# and run it in the reference interpreter on NumPy inputs, checking the result
# against NumPy. Later steps replace this with: tune on this CPU, compile with
# the result, and show the speedup.
set -euo pipefail
build=${1:-build}
tir="$build/mlc-tir"
py=/usr/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== mlc-tir workload GMM --shape 64,64,64 =="
"$tir" workload GMM --shape 64,64,64 | tee "$out/gmm.py"
echo
echo "== mlc-tir hash (workload key) =="
"$tir" hash "$out/gmm.py"
echo
echo "== mlc-tir eval (reference interpreter) on NumPy inputs =="
$py -c "
import numpy as np
rng = np.random.default_rng(0)
np.save('$out/A.npy', rng.uniform(1, 10, (64, 64)).astype(np.float32))
np.save('$out/B.npy', rng.uniform(1, 10, (64, 64)).astype(np.float32))"
"$tir" eval "$out/gmm.py" --input A="$out/A.npy" --input B="$out/B.npy" --output-dir "$out"
$py - "$out" <<'PY'
import sys, numpy as np
d = sys.argv[1]
a, b, c = (np.load(f"{d}/{n}.npy") for n in "ABC")
ref = a.astype(np.float64) @ b.astype(np.float64)
err = np.max(np.abs(c - ref) / np.abs(ref))
print(f"numpy check: C == A @ B, max relative error {err:.2e}")
sys.exit(0 if err < 1e-5 else 1)
PY
