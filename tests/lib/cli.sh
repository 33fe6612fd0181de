# tests/lib/cli.sh - checks shared by the shell tests (tests/*/cli_*.sh),
# sourced, not run (CMake runs only files named cli_*.sh):
#   fail MESSAGE            counts a failed check in FAILS and says it;
#   show FILE               the last 20 lines of FILE, indented, on stderr;
#   has FILE TEXT           fails unless FILE contains TEXT (fixed string);
#   expect WANT_RC PROG ... runs PROG with its arguments, output in $TMP/out
#                           and $TMP/err (the caller sets TMP); fails, showing
#                           both, and returns 1 unless it exits WANT_RC.
# A script ends with: [ "$FAILS" -eq 0 ] || exit 1 (with its own message).
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
show() { sed 's/^/  | /' "$1" | tail -20 >&2; }
has() { grep -qF -- "$2" "$1" || { fail "expected '$2' in $1:"; show "$1"; }; }
expect() {
  local want=$1
  shift
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "$(basename "$1") ${*:2} exited $rc, expected $want"
    sed 's/^/  stdout: /' "$TMP/out" | head -20 >&2
    sed 's/^/  stderr: /' "$TMP/err" | head -20 >&2
    return 1
  fi
  return 0
}
