#!/usr/bin/env bash
# Runs a Python test script (first argument, relative to the workspace) with
# the Python named by SHARDFEED_TF_PYTHON (one with tensorflow-cpu; ./test.sh
# makes it in a cached virtual environment). The script gets the shardfeed
# binary, the workspace root and a scratch directory as arguments.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
PY="${SHARDFEED_TF_PYTHON:-}"
if [ -z "$PY" ] || ! "$PY" -c "import tensorflow" 2>/dev/null; then
  if [ "${SHARDFEED_REQUIRE_TF:-0}" = 1 ]; then
    echo "FAIL: SHARDFEED_TF_PYTHON='$PY' is not a Python with TensorFlow (run ./test.sh)"
    exit 1
  fi
  echo "SKIPPED: set SHARDFEED_TF_PYTHON to a Python with tensorflow-cpu (./test.sh does)"
  exit 0
fi
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/py.XXXXXX")"
exec "$PY" "$ROOT/$1" "$ROOT/cli/shardfeed" "$ROOT" "$TMP"
