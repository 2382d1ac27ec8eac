#!/usr/bin/env bash
# Runs tests/tf_interop.py with the Python named by SHARDFEED_TF_PYTHON (one
# with tensorflow-cpu; ./test.sh makes it in a cached virtual environment).
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
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/tf.XXXXXX")"
exec "$PY" "$ROOT/tests/tf_interop.py" "$ROOT/cli/shardfeed" "$ROOT/testdata/interop" "$TMP"
