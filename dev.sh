#!/usr/bin/env bash
# The two entry points of the README's quick start:
#   ./dev.sh demo   install what is missing, build, and run the main job
#   ./dev.sh test   install what is missing, build (normal + ASan/UBSan), run every test
# Options (environment): JOBS (default: nproc), BUILD_DIR (default: build),
# FUZZ_SECONDS (default 30; 0 skips the fuzz run).
set -euo pipefail
cd "$(dirname "$0")"

jobs=${JOBS:-$(nproc)}
build=${BUILD_DIR:-build}

configure_and_build() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

demo() {
  scripts/install-deps.sh
  configure_and_build "$build"
  exec scripts/demo.sh "$build"
}

run_tests() {
  scripts/install-deps.sh
  local failed=0
  echo "== normal build =="
  configure_and_build "$build"
  (cd "$build" && ctest --output-on-failure -j "$jobs") || failed=1
  echo "== sanitizer build (ASan + UBSan) =="
  configure_and_build "$build-asan" -DCMAKE_BUILD_TYPE=Debug -DMLC_SANITIZE=ON
  (cd "$build-asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j "$jobs") || failed=1
  if [ "${FUZZ_SECONDS:-30}" != 0 ] && command -v clang >/dev/null; then
    echo "== fuzzing: TVMScript parser and rpc codec (${FUZZ_SECONDS:-30} s in all) =="
    scripts/fuzz.sh "$build-fuzz" "${FUZZ_SECONDS:-30}" || failed=1
  else
    echo "== fuzzing skipped (clang missing or FUZZ_SECONDS=0) =="
  fi
  if [ $failed -ne 0 ]; then echo "dev.sh test: FAILED"; exit 1; fi
  echo "dev.sh test: all passed"
}

case "${1:-}" in
  demo) demo ;;
  test) run_tests ;;
  *) echo "usage: ./dev.sh demo|test" >&2; exit 2 ;;
esac
