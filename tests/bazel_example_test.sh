#!/usr/bin/env bash
# examples/bazel/ builds and runs: a separate Bazel workspace that uses this
# checkout as the external repository @shardfeed (local_repository,
# shardfeed_dependencies()), builds examples/cpp/train_loop.cc against
# @shardfeed//:shardfeed, and prints exactly what `shardfeed cat
# --fingerprint` prints.
#
# Runs a second Bazel (its own output root under TEST_TMPDIR, --batch, no
# convenience symlinks) on the real checkout, so the test is tagged local.
# The disk cache of the checkout's user.bazelrc, if any, makes reruns quick;
# a first run compiles shardfeed once more as an external repository.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
SF="$ROOT/cli/shardfeed"
SRC="$(cd "$(dirname "$(readlink -f "$ROOT/tests/bazel_example_test.sh")")/.." && pwd)"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/bazel_example.XXXXXX")"
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}

"$SF" convert cifar10 --input "$ROOT/testdata/cifar10-bin" --output "$TMP/ds" --quiet
expected=$("$SF" cat --fingerprint "$TMP/ds")
check "reference fingerprint" grep -Eq '^records=[1-9][0-9]* fingerprint=[0-9a-f]{16}$' <<<"$expected"

cd "$SRC/examples/bazel" || exit 1
got=$(bazel --batch --output_user_root="$TMP/bazel" run --symlink_prefix=/ \
        --noshow_progress //:train_loop -- "$TMP/ds" 2>"$TMP/bazel.log")
rc=$?
check "bazel run //:train_loop in examples/bazel" test "$rc" -eq 0 || tail -40 "$TMP/bazel.log"
check "it prints the CLI's fingerprint" test "$got" = "$expected"
# The external repository really is this checkout, built under external/.
check "shardfeed built as an external repository" \
  grep -q "external/shardfeed" <(find "$TMP/bazel" -path '*external/shardfeed/proto/manifest.pb.h' 2>/dev/null)
chmod -R u+w "$TMP/bazel" 2>/dev/null  # Bazel's install base is read-only

echo "bazel_example_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
