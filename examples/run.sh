#!/bin/bash
# run.sh - the whole path of examples/README.md in one go: tune the MLP
# module, query the database, compile with it, build the C program, make
# inputs and the interpreter's expected outputs, and run the program on
# them (it exits nonzero when an output differs).
#
# Usage: examples/run.sh [BUILD_DIR [WORK_DIR [TRIALS]]]
#   BUILD_DIR  where mlc-tune, mlc-db, mlc-compile and mlc-tir are (default build)
#   WORK_DIR   the database, the library and the data go here (default mlp-work)
#   TRIALS     the tuning budget over the three functions (default 48)
# Run it from the source tree's root. Set TARGET to tune for another target
# string (default "llvm": this CPU).
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-mlp-work}
TRIALS=${3:-48}
TARGET=${TARGET:-llvm}
HERE=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}

for prog in mlc-tune mlc-db mlc-compile mlc-tir; do
  [ -x "$BUILD/$prog" ] || { echo "run.sh: $BUILD/$prog is missing: build the project first (README.md)" >&2; exit 2; }
done
mkdir -p "$WORK/lib"
DB="file:$WORK/db"
step() { printf '\n$ %s\n' "$*"; "$@"; }

# 1. Tune: every measurement goes into the database (a rerun resumes).
step "$BUILD/mlc-tune" "$HERE/mlp.py" --target "$TARGET" --trials "$TRIALS" --per-round 8 --db "$DB"
# 2. Query: the best record of each function, and one in full.
step "$BUILD/mlc-db" --db "$DB" top --table
best=$("$BUILD/mlc-db" --db "$DB" top --workload dense_relu1 | cut -f7 | head -1)
[ -z "$best" ] || step "$BUILD/mlc-db" --db "$DB" show "$best"
# 3. Compile with the database: libmlp.so and libmlp.h.
step "$BUILD/mlc-compile" "$HERE/mlp.py" -o "$WORK/lib/libmlp.so" --target "$TARGET" --db "$DB" --report
# 4. The C program (dlopen; see the README for linking instead).
step "$CC" -std=c11 -O2 -Wall -o "$WORK/mlp_main" "$HERE/mlp_main.c"
# 5. Inputs, and what the reference interpreter computes from them.
step "$WORK/mlp_main" init "$WORK/data"
EVAL=("$BUILD/mlc-tir" eval "$HERE/mlp.py" --output-dir "$WORK/expect")
step "${EVAL[@]}" --func dense_relu1 --input X="$WORK/data/X.npy" --input W1="$WORK/data/W1.npy" \
  --input b1="$WORK/data/b1.npy"
step "${EVAL[@]}" --func dense_relu2 --input H1="$WORK/expect/H1.npy" --input W2="$WORK/data/W2.npy" \
  --input b2="$WORK/data/b2.npy"
step "${EVAL[@]}" --func softmax --input H2="$WORK/expect/H2.npy"
# 6. Call the library and compare.
step "$WORK/mlp_main" run "$WORK/data" --lib "$WORK/lib/libmlp.so" --expect "$WORK/expect"
