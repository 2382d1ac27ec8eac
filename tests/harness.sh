# Shared by the end-to-end shell tests that source it: where the binary and
# fixtures are, a scratch folder, and the check/exit_code helpers.
#   source "${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}/tests/harness.sh" NAME
# defines ROOT, SF (the shardfeed binary), FX (testdata), TMP (removed by
# finish), check NAME CMD..., exit_code CMD... (stdout and stderr to
# $TMP/last.out and $TMP/last.err), out_has/err_has TEXT, and finish
# (prints "N passed, N failed"; its status is the test's).
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
SF="$ROOT/cli/shardfeed"
FX="$ROOT/testdata"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/${1:-test}.XXXXXX")"
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
exit_code() { "$@" >"$TMP/last.out" 2>"$TMP/last.err"; echo $?; }
out_has() { grep -q -- "$1" "$TMP/last.out"; }
err_has() { grep -q -- "$1" "$TMP/last.err"; }
finish() {
  echo "$passed passed, $failed failed"
  rm -rf "$TMP"
  [ "$failed" -eq 0 ]
}
