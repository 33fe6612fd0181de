#!/bin/bash
# cli_mlc_compile.sh - mlc-compile end to end (issue 8; docs/mlc-compile.md,
# examples/README.md): the example MLP module (examples/mlp.py) tuned with a
# small budget into a file database, compiled with it into a shared library,
# called from the example C program (examples/mlp_main.c, built here with the
# system compiler, dlopen and linked) on real data, its outputs compared with
# the reference interpreter's (`mlc-tir eval`); then
#   - an empty database: default schedules, a warning naming every function
#     with its key, the program still correct;
#   - --require-tuned with the empty database: exit 1 with the list, no
#     library written;
#   - records of another target ignored (-num-cores differs): the warning
#     again, the program still correct;
#   - .o, .ll and .s outputs that are what they claim, --header, --func,
#     --json, and the refusals (bad extension, missing file) exiting 2.
# The hash-collision case (a record whose stored workload differs) is in the
# cmocka test tests/compiler/test_compile.c.
#
# Usage: bash cli_mlc_compile.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
BUILD=${1:?build dir}
SRC=${2:?source dir}
BIN=$BUILD/mlc-compile
PY=$(command -v python3 || echo /usr/bin/python3)
MLP=$SRC/examples/mlp.py
unset MLC_DB
export MLC_LOG=warn

# The example program is built with the build's C compiler: in a sanitizer
# build the emitted libraries carry the instrumented runtime and load only
# into a program built with the same sanitizers.
CC=$(sed -n 's/^CMAKE_C_COMPILER:FILEPATH=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
[ -n "$CC" ] && [ -x "$CC" ] || CC=$(command -v cc || true)
if [ -z "$CC" ]; then
  echo "SKIP: no C compiler (cc): mlc-compile links shared libraries with it and the example program needs it"
  exit 77 # ctest reports a skip (SKIP_RETURN_CODE)
fi
SAN=()
grep -q '^MLC_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null && SAN=(-fsanitize=address,undefined)
for prog in mlc-compile mlc-tune mlc-tir mlc-db; do
  [ -x "$BUILD/$prog" ] || { echo "FAIL: $BUILD/$prog not built" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/mlc-compile-cli-XXXXXX)
trap 'rm -rf "$TMP"' EXIT

FAILS=0
SECTION_FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
# pass SECTION: reports a section of checks (ok when none of them failed).
pass() {
  if [ "$FAILS" -eq "$SECTION_FAILS" ]; then echo "ok: $*"; else echo "not ok: $*"; fi
  SECTION_FAILS=$FAILS
}

# run WANT_RC ARGS...: runs mlc-compile, output in $TMP/out and $TMP/err.
run() {
  local want=$1
  shift
  "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "mlc-compile $* exited $rc, expected $want"
    sed 's/^/  stdout: /' "$TMP/out" | head -20 >&2
    sed 's/^/  stderr: /' "$TMP/err" | head -20 >&2
    return 1
  fi
  return 0
}
has() { grep -qF -- "$2" "$1" || { fail "expected '$2' in $1:"; sed 's/^/  | /' "$1" | head -20 >&2; }; }
hasnt() { ! grep -qF -- "$2" "$1" || { fail "did not expect '$2' in $1:"; sed 's/^/  | /' "$1" | head -20 >&2; }; }
# line_has FILE A B: some line of FILE holds both A and B.
line_has() {
  grep -F -- "$2" "$1" | grep -qF -- "$3" ||
    { fail "expected a line with '$2' and '$3' in $1:"; sed 's/^/  | /' "$1" | head -20 >&2; }
}
# pyjson EXPR: evaluates EXPR with `d` = the JSON on $TMP/out; fails unless true.
pyjson() {
  "$PY" -c "import json,sys; d=json.load(open('$TMP/out')); sys.exit(0 if ($1) else 1)" ||
    { fail "JSON check failed: $1"; head -c 600 "$TMP/out" >&2; echo >&2; }
}

# mlp LIB_DIR: runs the example program on the library LIB_DIR/libmlp.so and
# checks every output against the interpreter's (exit 0, "all outputs match").
mlp() {
  if ! "$TMP/mlp_main" run "$TMP/data" --lib "$1/libmlp.so" --expect "$TMP/expect" --runs 3 >"$TMP/mlp.out" 2>&1; then
    fail "mlp_main on $1/libmlp.so failed:"
    sed 's/^/  | /' "$TMP/mlp.out" >&2
    return 1
  fi
  has "$TMP/mlp.out" "all outputs match"
}

# Output directories (mlc-compile writes into existing ones, as cc -o does).
mkdir -p "$TMP"/{tuned,default,json,release,other,o}
TARGET="llvm -num-cores=2"
OTHER="llvm -num-cores=1" # the same CPU, another target: its records do not apply
FUNCS=(dense_relu1 dense_relu2 softmax)

# --- the example program, its data and the interpreter's outputs -------------
"$CC" -std=c11 -O1 -Wall -Wextra -Werror "${SAN[@]}" -o "$TMP/mlp_main" "$SRC/examples/mlp_main.c" ||
  { echo "FAIL: examples/mlp_main.c does not compile" >&2; exit 1; }
"$TMP/mlp_main" init "$TMP/data" >/dev/null || { echo "FAIL: mlp_main init" >&2; exit 1; }
E=("$BUILD/mlc-tir" eval "$MLP" --output-dir "$TMP/expect")
"${E[@]}" --func dense_relu1 --input X="$TMP/data/X.npy" --input W1="$TMP/data/W1.npy" --input b1="$TMP/data/b1.npy" >/dev/null &&
  "${E[@]}" --func dense_relu2 --input H1="$TMP/expect/H1.npy" --input W2="$TMP/data/W2.npy" --input b2="$TMP/data/b2.npy" >/dev/null &&
  "${E[@]}" --func softmax --input H2="$TMP/expect/H2.npy" >/dev/null || { echo "FAIL: mlc-tir eval" >&2; exit 1; }
# The workload keys, by function name.
declare -A KEY
while read -r key name; do KEY[$name]=$key; done < <("$BUILD/mlc-tir" hash "$MLP")
[ "${#KEY[@]}" -eq 3 ] || { echo "FAIL: mlc-tir hash found ${#KEY[@]} functions in $MLP" >&2; exit 1; }
pass "the example program builds; inputs and the interpreter's outputs"

# --- (a) tune, compile with the database, call ----------------------------------
DB="file:$TMP/db"
"$BUILD/mlc-tune" "$MLP" --target "$TARGET" --trials 12 --per-round 4 --min-repeat-ms 1 --number 1 \
  --population 32 --generations 1 --db "$DB" >"$TMP/tune.out" 2>&1 ||
  { fail "mlc-tune failed:"; sed 's/^/  | /' "$TMP/tune.out" >&2; }
# The best record of each function for the target (what the compiler must use).
declare -A BEST
"$BUILD/mlc-db" --db "$DB" top --target "$TARGET" --json >"$TMP/top.json" || fail "mlc-db top"
while read -r name id; do BEST[$name]=$id; done < <("$PY" -c '
import json, sys
for w in json.load(open(sys.argv[1])):
    print(w["workload"], w["records"][0]["id"])' "$TMP/top.json")
[ "${#BEST[@]}" -eq 3 ] || fail "expected a best record for each of the 3 functions, got ${#BEST[@]}"

if run 0 "$MLP" -o "$TMP/tuned/libmlp.so" --target "$TARGET" --db "$DB" --report; then
  [ -s "$TMP/tuned/libmlp.so" ] || fail "no library at $TMP/tuned/libmlp.so"
  [ -s "$TMP/tuned/libmlp.h" ] || fail "no header beside the library ($TMP/tuned/libmlp.h)"
  for f in "${FUNCS[@]}"; do
    has "$TMP/tuned/libmlp.h" "int32_t $f(DLTensor *args, int32_t num_args);"
    line_has "$TMP/out" "$f" "${BEST[$f]:-no-best-record}" # --report: the record used
    hasnt "$TMP/err" "${KEY[$f]}"                            # nothing untuned to warn about
  done
  hasnt "$TMP/out" "default schedule"
  mlp "$TMP/tuned"
  # The same program linked with the library instead of dlopen (README's other way).
  if "$CC" -std=c11 -O1 -Wall -Werror "${SAN[@]}" -DMLP_LINKED -I"$TMP/tuned" -o "$TMP/mlp_linked" \
    "$SRC/examples/mlp_main.c" -L"$TMP/tuned" -lmlp -Wl,-rpath,"$TMP/tuned"; then
    "$TMP/mlp_linked" run "$TMP/data" --expect "$TMP/expect" --runs 1 >"$TMP/mlp.out" 2>&1 ||
      { fail "the linked program failed:"; sed 's/^/  | /' "$TMP/mlp.out" >&2; }
  else
    fail "examples/mlp_main.c -DMLP_LINKED does not compile or link against libmlp.so"
  fi
fi
pass "(a) tuned: every function from its best record (--report), numerics equal the interpreter"

# --- (b) an empty database: default schedules, a warning with every key --------
"$BUILD/mlc-db" --db "file:$TMP/empty" init >/dev/null || fail "mlc-db init"
if run 0 "$MLP" -o "$TMP/default/libmlp.so" --target "$TARGET" --db "file:$TMP/empty" --report; then
  for f in "${FUNCS[@]}"; do
    line_has "$TMP/err" "$f" "${KEY[$f]}"  # the warning lists it with its key
    line_has "$TMP/out" "$f" "default schedule"
  done
  mlp "$TMP/default"
fi
run 0 "$MLP" -o "$TMP/json/libmlp.so" --target "$TARGET" --db "file:$TMP/empty" --json &&
  pyjson "[(f['name'], f['key'], f['schedule']) for f in d['functions']] == [('dense_relu1', '${KEY[dense_relu1]}', 'default'), ('dense_relu2', '${KEY[dense_relu2]}', 'default'), ('softmax', '${KEY[softmax]}', 'default')] and all(f['why_default'] for f in d['functions']) and d['output'] == '$TMP/json/libmlp.so'"
pass "(b) empty database: default schedules, every function warned with its key, numerics equal the interpreter"

# --- (c) --require-tuned: exit 1 with the list, nothing written ---------------
if run 1 "$MLP" -o "$TMP/release/libmlp.so" --target "$TARGET" --db "file:$TMP/empty" --require-tuned; then
  for f in "${FUNCS[@]}"; do line_has "$TMP/err" "$f" "${KEY[$f]}"; done
  [ ! -e "$TMP/release/libmlp.so" ] || fail "--require-tuned failed but wrote $TMP/release/libmlp.so"
fi
# With the tuned database it succeeds.
run 0 "$MLP" -o "$TMP/release/libmlp.so" --target "$TARGET" --db "$DB" --require-tuned &&
  { [ -s "$TMP/release/libmlp.so" ] || fail "--require-tuned with every function tuned wrote no library"; }
pass "(c) --require-tuned"

# --- (d) records of another target are ignored -----------------------------------
if run 0 "$MLP" -o "$TMP/other/libmlp.so" --target "$OTHER" --db "$DB" --report; then
  for f in "${FUNCS[@]}"; do
    line_has "$TMP/err" "$f" "${KEY[$f]}"
    line_has "$TMP/out" "$f" "default schedule"
    hasnt "$TMP/out" "${BEST[$f]:-no-best-record}"
  done
  mlp "$TMP/other"
fi
pass "(d) another target's records are not used"

# --- (f) other outputs, --header, --func, refusals ------------------------------
if run 0 "$MLP" -o "$TMP/o/mlp.o" --target "$TARGET" --db "$DB"; then
  [ "$(head -c 4 "$TMP/o/mlp.o" | od -An -c | tr -d ' ')" = '177ELF' ] || fail "mlp.o is not an ELF file"
  [ "$(od -An -tu2 -j16 -N2 "$TMP/o/mlp.o" | tr -d ' ')" = 1 ] || fail "mlp.o is not a relocatable object"
  [ -s "$TMP/o/mlp.h" ] || fail "no header beside mlp.o"
fi
if run 0 "$MLP" -o "$TMP/o/mlp.ll" --target "$TARGET" --db "$DB"; then
  has "$TMP/o/mlp.ll" "define"
  for f in "${FUNCS[@]}"; do has "$TMP/o/mlp.ll" "@$f("; done
fi
if run 0 "$MLP" -o "$TMP/o/mlp.s" --target "$TARGET" --db "$DB"; then
  for f in "${FUNCS[@]}"; do has "$TMP/o/mlp.s" "$f:"; done
  hasnt "$TMP/o/mlp.s" "define"
fi
if run 0 "$MLP" -o "$TMP/o/one.so" --target "$TARGET" --db "$DB" --func softmax --header "$TMP/o/softmax_api.h"; then
  has "$TMP/o/softmax_api.h" "int32_t softmax(DLTensor *args, int32_t num_args);"
  hasnt "$TMP/o/softmax_api.h" "dense_relu1"
  [ ! -e "$TMP/o/one.h" ] || fail "--header given, but a header was also written beside the library"
fi
run 2 "$MLP" -o "$TMP/o/mlp.txt" --target "$TARGET" --db "$DB" && has "$TMP/err" "mlc-compile: error"
[ ! -e "$TMP/o/mlp.txt" ] || fail "a refused output was written"
run 2 "$TMP/missing.py" -o "$TMP/o/x.so" --target "$TARGET" --db "$DB" && has "$TMP/err" "missing.py"
run 2 "$MLP" --target "$TARGET" --db "$DB" && has "$TMP/err" "mlc-compile: error"
run 2 "$MLP" -o "$TMP/o/x.so" --target "$TARGET" --db "$DB" --func nope && has "$TMP/err" "nope"
pass "(f) .o, .ll and .s outputs, --header, --func, refusals"

[ "$FAILS" -eq 0 ] || { echo "$FAILS check(s) failed" >&2; exit 1; }
echo "all ok"
