#!/usr/bin/env bash
# Installs the Debian packages mlc-tune needs, when they are missing.
# Idempotent; uses apt-get only (no other downloads); sudo when not root.
# Used by both README commands and by CI (through ./dev.sh).
set -euo pipefail

# Needed to build and test.
packages=(
  build-essential cmake pkg-config git
  libjansson-dev libxxhash-dev libcmocka-dev libdlpack-dev
  clang libclang-rt-14-dev      # libFuzzer for the parser fuzz target
  python3 python3-numpy         # checks of .npy outputs in the CLI tests
  llvm-dev                      # code generation (LLVM 14, Debian 12's default)
  libopenblas-dev               # the peer in bench/ (sgemm)
  libdnnl-dev                   # the peer in bench/ for convolution, softmax, layernorm (oneDNN)
  libpq-dev postgresql          # the PostgreSQL backend; tests start a throwaway cluster
  libxgboost-dev                # the cost model (XGBoost's C API)
  libzmq3-dev                   # the tuning farm's transport (ZeroMQ)
  lld                           # links AMDGPU code objects (HSACO)
  yamllint python3-yaml         # checks of deploy/'s Kubernetes manifests
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
