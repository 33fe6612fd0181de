#!/usr/bin/env bash
# cli_mlc_tir.sh - shell-level tests of the mlc-tir program.
# Usage: bash cli_mlc_tir.sh BUILD_DIR SOURCE_DIR
#
# Runs the built program the way a user does and checks exit statuses, the
# shape of its output and error messages: fmt is idempotent on the corpus and
# on every built-in workload, hash prints keys, workload --list lists the set,
# eval of a small GMM writes C.npy equal to A @ B (checked with NumPy when it
# is installed), and bad input gets exit 2 with "mlc-tir: error: FILE:L:C:".
# Prints one PASS/FAIL line per check; exits non-zero if any failed.
set -euo pipefail

build=${1:?usage: cli_mlc_tir.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: cli_mlc_tir.sh BUILD_DIR SOURCE_DIR}
tir="$build/mlc-tir"
corpus="$src/tests/tir/corpus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
check() { # NAME COMMAND...: PASS when the command succeeds
  local name=$1
  shift
  if "$@"; then
    echo "PASS: $name"
    passed=$((passed + 1))
  else
    echo "FAIL: $name"
    failed=$((failed + 1))
  fi
}

# run COMMAND...: runs it, keeping its status in $rc and output in out/err.
run() {
  rc=0
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}
status_is() { [ "$rc" -eq "$1" ] || { echo "  exit status $rc, wanted $1; stderr:"; sed 's/^/    /' "$tmp/err"; return 1; }; }
out_has() { grep -qE -- "$1" "$tmp/out" || { echo "  stdout lacks /$1/"; return 1; }; }
err_has() { grep -qE -- "$1" "$tmp/err" || { echo "  stderr lacks /$1/:"; sed 's/^/    /' "$tmp/err"; return 1; }; }

[ -x "$tir" ] || { echo "FAIL: $tir is not built"; exit 1; }

# --- global flags ---------------------------------------------------------
t_help() { run "$tir" --help && status_is 0 && out_has '^usage: mlc-tir' && out_has 'eval'; }
check "--help exits 0 and lists the commands" t_help
t_sub_help() { run "$tir" eval --help && status_is 0 && out_has '^usage: mlc-tir eval'; }
check "eval --help exits 0" t_sub_help
t_version() { run "$tir" --version && status_is 0 && out_has '^mlc-tir [0-9]+\.[0-9]+'; }
check "--version prints the version" t_version
t_unknown() { run "$tir" frobnicate x && status_is 2 && err_has "^mlc-tir: error: unknown command 'frobnicate'"; }
check "unknown subcommand exits 2" t_unknown
t_no_args() { run "$tir" && status_is 2 && err_has '^usage:'; }
check "no arguments exits 2 with usage" t_no_args
t_bad_opt() { run "$tir" fmt --frob x.py && status_is 2 && err_has "unknown option '--frob'"; }
check "unknown option exits 2" t_bad_opt

# --- workload ---------------------------------------------------------------
t_list() {
  run "$tir" workload --list && status_is 0 || return 1
  for w in GMM BMM GMV C1D C2D C3D DEP DIL GRP T2D NRM SFM LN 'D\+B\+R'; do out_has "^$w " || return 1; done
  out_has '^C2D +N,H,W,CI,CO,KH,KW,stride,pad +1,56,56,64,64,3,3,1,1 '
}
check "workload --list lists the Ansor set with dims and defaults" t_list
t_list_json() {
  run "$tir" workload --list --json && status_is 0 &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [w["name"] for w in d][0] == "GMM"' "$tmp/out"
}
check "workload --list --json is JSON" t_list_json
t_wl_named() {
  run "$tir" workload GMM --shape M=8,K=4 && status_is 0 &&
    out_has 'def gmm\(A: T.Buffer\(\(8, 4\), "float32"\), B: T.Buffer\(\(4, 1024\), "float32"\)'
}
check "workload --shape NAME=V keeps other defaults" t_wl_named
t_wl_dtype() { run "$tir" workload GMM --shape 4,4,4 --dtype float16 && status_is 0 && out_has 'T.Cast\("float32", A\[v_i, v_k\]\)'; }
check "workload --dtype float16 accumulates in float32" t_wl_dtype
t_wl_bad_count() { run "$tir" workload GMM --shape 1,2 && status_is 2 && err_has 'GMM takes 3 shape values'; }
check "workload with a wrong count of dims exits 2" t_wl_bad_count
t_wl_bad_dim() { run "$tir" workload GMM --shape Q=3 && status_is 2 && err_has "no dimension 'Q'"; }
check "workload with an unknown dim name exits 2" t_wl_bad_dim
t_wl_unknown() { run "$tir" workload XYZ && status_is 2 && err_has "unknown workload 'XYZ'"; }
check "unknown workload exits 2" t_wl_unknown
t_wl_sfm_int() { run "$tir" workload SFM --dtype int8 && status_is 2 && err_has 'float dtype'; }
check "SFM with int8 exits 2" t_wl_sfm_int

# --- fmt ----------------------------------------------------------------------
# fmt FILE | fmt - gives the same bytes.
fmt_idempotent() {
  "$tir" fmt "$1" >"$tmp/fmt1" 2>"$tmp/err" || { echo "  fmt $1 failed:"; sed 's/^/    /' "$tmp/err"; return 1; }
  "$tir" fmt - <"$tmp/fmt1" >"$tmp/fmt2" 2>"$tmp/err" || { echo "  fmt of fmt $1 failed:"; sed 's/^/    /' "$tmp/err"; return 1; }
  cmp -s "$tmp/fmt1" "$tmp/fmt2" || { echo "  fmt $1 is not idempotent:"; diff "$tmp/fmt1" "$tmp/fmt2" | head -20; return 1; }
}
t_fmt_corpus() {
  local n=0 bad=0
  for f in "$corpus"/*.py; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    fmt_idempotent "$f" || bad=$((bad + 1))
  done
  echo "  $n corpus files, $bad not idempotent"
  [ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
}
check "fmt | fmt gives the same bytes on the corpus" t_fmt_corpus
t_fmt_workloads() {
  local names
  names=$("$tir" workload --list | awk 'NR > 1 { print $1 }')
  for w in $names; do
    "$tir" workload "$w" >"$tmp/wl.py" || return 1
    "$tir" fmt "$tmp/wl.py" >"$tmp/wl_fmt.py" 2>"$tmp/err" || { echo "  fmt of workload $w failed:"; sed 's/^/    /' "$tmp/err"; return 1; }
    cmp -s "$tmp/wl.py" "$tmp/wl_fmt.py" || { echo "  workload $w is not canonical:"; diff "$tmp/wl.py" "$tmp/wl_fmt.py" | head -20; return 1; }
  done
}
check "every workload prints canonically (fmt leaves it unchanged)" t_fmt_workloads
printf 'from tvm.script import tir as T\n\n@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    for i in range(4):\n        A[i] = = 1\n' >"$tmp/bad.py"
t_fmt_bad() { run "$tir" fmt "$tmp/bad.py" && status_is 2 && err_has "^mlc-tir: error: $tmp/bad.py:[0-9]+:[0-9]+: " && err_has '\^'; }
check "bad TVMScript exits 2 with FILE:LINE:COL and a caret" t_fmt_bad
t_fmt_missing() { run "$tir" fmt "$tmp/nonexistent.py" && status_is 2 && err_has '^mlc-tir: error: .*nonexistent.py'; }
check "fmt of a missing file exits 2" t_fmt_missing

# --- hash ---------------------------------------------------------------------
t_make_gmm() { "$tir" workload GMM --shape 8,6,5 >"$tmp/gmm.py" && grep -q '^def gmm' "$tmp/gmm.py"; }
check "workload GMM --shape 8,6,5 prints a function" t_make_gmm
t_hash() { run "$tir" hash "$tmp/gmm.py" && status_is 0 && out_has '^[0-9a-f]{16}  gmm$'; }
check "hash prints 16 hex digits and the name" t_hash
t_hash_json() {
  run "$tir" hash --json "$tmp/gmm.py" && status_is 0 &&
    python3 -c 'import json,re,sys; d=json.load(open(sys.argv[1])); assert re.fullmatch("[0-9a-f]{16}", d["gmm"])' "$tmp/out"
}
check "hash --json prints an object" t_hash_json
t_hash_stable() {
  "$tir" hash "$tmp/gmm.py" >"$tmp/h1" && "$tir" fmt "$tmp/gmm.py" | "$tir" hash - >"$tmp/h2" && cmp -s "$tmp/h1" "$tmp/h2"
}
check "hash is the same after fmt" t_hash_stable

# --- eval ---------------------------------------------------------------------
t_eval() {
  run "$tir" eval "$tmp/gmm.py" --output-dir "$tmp/out1" --seed 3 && status_is 0 &&
    out_has '^C  shape=\(8, 6\)  dtype=float32  sum=[-+.0-9e]+  min=[-+.0-9e]+  max=[-+.0-9e]+  xxh64=[0-9a-f]{16}$' &&
    [ -s "$tmp/out1/C.npy" ] && [ ! -e "$tmp/out1/A.npy" ]
}
check "eval of a small GMM writes C.npy and a summary" t_eval
t_eval_seed() {
  "$tir" eval "$tmp/gmm.py" --seed 3 >"$tmp/s1" && "$tir" eval "$tmp/gmm.py" --seed 3 >"$tmp/s2" &&
    "$tir" eval "$tmp/gmm.py" --seed 4 >"$tmp/s3" && cmp -s "$tmp/s1" "$tmp/s2" && ! cmp -s "$tmp/s1" "$tmp/s3"
}
check "eval is deterministic for a seed and differs across seeds" t_eval_seed
t_eval_json() {
  run "$tir" eval "$tmp/gmm.py" --json && status_is 0 &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); o=d["outputs"][0]; assert o["name"]=="C" and o["shape"]==[8,6] and 1*5 <= o["min"] and o["max"] < 100*5' "$tmp/out"
}
check "eval --json summarises the output (values of 5 products in [1, 100))" t_eval_json
t_eval_bad_input() { run "$tir" eval "$tmp/gmm.py" --input A="$tmp/out1/C.npy" && status_is 2 && err_has 'A: .* in dimension 1'; }
check "eval with an input of the wrong shape exits 2 naming the parameter" t_eval_bad_input
t_eval_bad_name() { run "$tir" eval "$tmp/gmm.py" --input Q=x.npy && status_is 2 && err_has 'no parameter of that name'; }
check "eval with an unknown input name exits 2" t_eval_bad_name
t_eval_bad_func() { run "$tir" eval "$tmp/gmm.py" --func nope && status_is 2 && err_has "no function 'nope'"; }
check "eval with an unknown --func exits 2" t_eval_bad_func

printf 'from tvm.script import tir as T\n\n@T.prim_func\ndef oob(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):\n    for i in range(4):\n        B[i] = A[i + 1]\n' >"$tmp/oob.py"
t_eval_oob() { run "$tir" eval "$tmp/oob.py" && status_is 1 && err_has '^mlc-tir: error: eval: .*oob'; }
check "eval of an out-of-bounds read exits 1" t_eval_oob

# NumPy may live with the system python (python3-numpy) rather than the first
# python3 on PATH (pyenv, venvs).
py=""
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import numpy' 2>/dev/null; then
    py=$cand
    break
  fi
done
if [ -n "$py" ]; then
  t_numpy() {
    "$py" - "$tmp" <<'EOF' || return 1
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(0)
np.save(d + "/A.npy", rng.uniform(-1, 1, (8, 5)).astype("float32"))
np.save(d + "/B.npy", rng.uniform(-1, 1, (5, 6)).astype("float32"))
EOF
    run "$tir" eval "$tmp/gmm.py" --input A="$tmp/A.npy" --input "B=$tmp/B.npy" --output-dir "$tmp/out2" && status_is 0 &&
      "$py" - "$tmp" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
a, b, c = (np.load(d + "/" + n + ".npy") for n in ("A", "B", "out2/C"))
assert c.dtype == np.float32 and c.shape == (8, 6), (c.dtype, c.shape)
np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
EOF
  }
  check "eval with .npy inputs: numpy finds C == A @ B" t_numpy
  t_numpy_random() {
    "$tir" eval "$tmp/gmm.py" --output-dir "$tmp/out3" --seed 9 >/dev/null &&
      "$py" -c 'import numpy as np,sys; c=np.load(sys.argv[1]); assert c.shape==(8,6) and (c >= 5).all() and (c < 500).all()' "$tmp/out3/C.npy"
  }
  check "eval with random inputs writes a C.npy numpy reads" t_numpy_random
else
  echo "SKIP: numpy checks (python3 with numpy is not installed)"
fi

echo "cli_mlc_tir: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
