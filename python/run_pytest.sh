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
# SHARDFEED_EXTENSION: another build of the extension (python_emu_test's,
# linked against the emulated CUDA runtime); arguments: test files under
# ROOT to run instead of all of python/tests.
cp "$ROOT/${SHARDFEED_EXTENSION:-python/_shardfeed.so}" "$PKG/shardfeed/_shardfeed.so"
export PYTHONPATH="$PKG"
export SHARDFEED_ROOT="$ROOT"
export SHARDFEED_CLI="$ROOT/cli/shardfeed"
cd "${TEST_TMPDIR:-/tmp}"
junit=()
[ -n "${XML_OUTPUT_FILE:-}" ] && junit=(--junitxml="$XML_OUTPUT_FILE")
tests=("$ROOT/python/tests")
if [ "$#" -gt 0 ]; then
  tests=()
  for t in "$@"; do tests+=("$ROOT/$t"); done
fi
exec "$PY" -m pytest -q -p no:cacheprovider "${junit[@]}" "${tests[@]}"
