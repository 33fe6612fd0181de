#!/bin/bash
# cli_mlc_compile_gpu.sh - mlc-compile for GPU targets without a GPU
# (docs/compiler/gpu.md): the example MLP module (examples/mlp.py) compiled
# with default schedules for `cuda -arch=sm_80` into PTX that ptxas
# assembles for sm_80, into a host shared library exporting every function
# (the PTX embedded, launching through the runtime), into an HSACO for
# rocm -mcpu=gfx90a when ld.lld is installed, and the mismatches refused.
# Exit 77 (skip) with the reason when ptxas is not installed.
#
# Usage: bash cli_mlc_compile_gpu.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
BUILD=$1
SRC=$2
MLC_COMPILE=$BUILD/mlc-compile
PTXAS=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ ! -x "$PTXAS" ]; then
  echo "skip: ptxas not found (PATH, /usr/local/cuda/bin, \$PTXAS)"
  exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
export MLC_DB="$TMP/none.db"

"$MLC_COMPILE" "$SRC/examples/mlp.py" -o mlp.ptx --target "cuda -arch=sm_80" 2>err.txt ||
  fail "compiling to PTX: $(cat err.txt)"
grep -q '^.target sm_80' mlp.ptx || fail "mlp.ptx is not PTX for sm_80"
for f in dense_relu1 dense_relu2 softmax; do
  grep -q "^.visible .entry ${f}_kernel0" mlp.ptx || fail "no kernel for $f in mlp.ptx"
done
"$PTXAS" -arch=sm_80 mlp.ptx -o /dev/null 2>err.txt || fail "ptxas rejected mlp.ptx: $(cat err.txt)"

"$MLC_COMPILE" "$SRC/examples/mlp.py" -o mlp.so --target "cuda -arch=sm_80" 2>err.txt ||
  fail "compiling the host library: $(cat err.txt)"
for f in dense_relu1 dense_relu2 softmax; do
  nm -D mlp.so | grep -q " T $f\$" || fail "mlp.so does not export $f"
done
nm -D mlp.so | grep -q " T mlc_rt_gpu_launch\$" || fail "mlp.so lacks the runtime's launcher"
[ -f mlp.h ] && grep -q "int32_t softmax(DLTensor \*args, int32_t num_args);" mlp.h || fail "mlp.h lacks the prototypes"

if command -v ld.lld >/dev/null || command -v ld.lld-14 >/dev/null; then
  "$MLC_COMPILE" "$SRC/examples/mlp.py" -o mlp.hsaco --target "rocm -mcpu=gfx90a" 2>err.txt ||
    fail "compiling the HSACO: $(cat err.txt)"
  head -c 4 mlp.hsaco | grep -q ELF || fail "mlp.hsaco is not an ELF code object"
else
  echo "note: ld.lld not installed, HSACO not tried"
fi

"$MLC_COMPILE" "$SRC/examples/mlp.py" -o k.ptx --target "rocm -mcpu=gfx90a" 2>err.txt
[ $? -eq 2 ] && grep -q "needs --target 'cuda" err.txt || fail ".ptx for rocm not refused: $(cat err.txt)"
"$MLC_COMPILE" "$SRC/examples/mlp.py" -o k.ptx 2>err.txt
[ $? -eq 2 ] || fail ".ptx for llvm not refused"
echo "ok"
