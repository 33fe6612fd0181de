#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time:
# the TVMScript parser (seeded with the TVMScript corpus) for two thirds of
# SECONDS, the farm's message codec (seeded with tests/rpc/corpus) for the
# rest. Fails on any crash, leak or timeout.
# usage: scripts/fuzz.sh BUILD_DIR SECONDS
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-fuzz}
secs=${2:-30}
codec_secs=$((secs / 3 > 0 ? secs / 3 : 1))
parser_secs=$((secs - codec_secs > 0 ? secs - codec_secs : 1))
CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DMLC_FUZZ=ON >/dev/null
cmake --build "$dir" -j "${JOBS:-$(nproc)}" --target fuzz_tir_parse fuzz_rpc_codec
work=$(mktemp -d)
work_rpc=$(mktemp -d)
trap 'rm -rf "$work" "$work_rpc"' EXIT
cp tests/tir/corpus/*.py "$work"/ 2>/dev/null || true
"$dir/fuzz/fuzz_tir_parse" -max_total_time="$parser_secs" -timeout=10 -rss_limit_mb=2048 \
  -max_len=8192 -print_final_stats=1 -dict=fuzz/tir_parse.dict "$work" 2>&1 | tail -n 15
cp tests/rpc/corpus/* "$work_rpc"/ 2>/dev/null || true
"$dir/fuzz/fuzz_rpc_codec" -max_total_time="$codec_secs" -timeout=10 -rss_limit_mb=2048 \
  -max_len=8192 -print_final_stats=1 -dict=fuzz/rpc_codec.dict "$work_rpc" 2>&1 | tail -n 15
