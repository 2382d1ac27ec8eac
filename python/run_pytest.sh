#!/usr/bin/env bash
# Runs the Python package's pytest suite against the freshly built
# extension, with the Python named by SHARDFEED_TF_PYTHON (./test.sh makes a
# virtual environment with numpy, pytest, torch and tensorflow-cpu).
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
PY="${SHARDFEED_TF_PYTHON:-}"
if [ -z "$PY" ] || ! "$PY" -c "import pytest, numpy" 2>/dev/null; then
  if [ "${SHARDFEED_REQUIRE_TF:-0}" = 1 ]; then
    echo "FAIL: SHARDFEED_TF_PYTHON='$PY' lacks pytest/numpy (run ./test.sh)"
    exit 1
  fi
  echo "SKIPPED: set SHARDFEED_TF_PYTHON to a Python with pytest and numpy (./test.sh does)"
  exit 0
fi
PKG="$(mktemp -d "${TEST_TMPDIR:-/tmp}/pkg.XXXXXX")"
mkdir -p "$PKG/shardfeed"
cp "$ROOT"/python/shardfeed/*.py "$PKG/shardfeed/"
cp "$ROOT/python/_shardfeed.so" "$PKG/shardfeed/"
export PYTHONPATH="$PKG"
export SHARDFEED_ROOT="$ROOT"
export SHARDFEED_CLI="$ROOT/cli/shardfeed"
cd "${TEST_TMPDIR:-/tmp}"
junit=()
[ -n "${XML_OUTPUT_FILE:-}" ] && junit=(--junitxml="$XML_OUTPUT_FILE")
exec "$PY" -m pytest -q -p no:cacheprovider "${junit[@]}" "$ROOT/python/tests"
