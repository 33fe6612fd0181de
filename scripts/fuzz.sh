#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time,
# seeded with the TVMScript corpus. Fails on any crash, leak or timeout.
# usage: scripts/fuzz.sh BUILD_DIR SECONDS
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-fuzz}
secs=${2:-30}
CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DMLC_FUZZ=ON >/dev/null
cmake --build "$dir" -j "${JOBS:-$(nproc)}" --target fuzz_tir_parse
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp tests/tir/corpus/*.py "$work"/ 2>/dev/null || true
"$dir/fuzz/fuzz_tir_parse" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -max_len=8192 -print_final_stats=1 -dict=fuzz/tir_parse.dict "$work" 2>&1 | tail -n 15
