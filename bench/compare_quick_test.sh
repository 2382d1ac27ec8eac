#!/usr/bin/env bash
# CI smoke test of the comparison harness (bench/compare --quick, on the
# bundled fixtures): every peer runs, delivers every record (compare.py
# asserts the counts), and the JSON results and PNG plots are written. The
# numbers are not checked: benchmarks measure, tests check behaviour.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
PY="${SHARDFEED_TF_PYTHON:-}"
have_peers() {  # one process each: tfrecord's protos clash with TensorFlow's
  for m in tensorflow torch tfrecord matplotlib; do "$PY" -c "import $m" 2>/dev/null || return 1; done
}
if [ -z "$PY" ] || ! have_peers; then
  if [ "${SHARDFEED_REQUIRE_TF:-0}" = 1 ]; then
    echo "FAIL: SHARDFEED_TF_PYTHON='$PY' lacks tensorflow/torch/tfrecord/matplotlib (run ./test.sh)"
    exit 1
  fi
  echo "SKIPPED: set SHARDFEED_TF_PYTHON to the Python ./test.sh prepares"
  exit 0
fi
T="$(mktemp -d "${TEST_TMPDIR:-/tmp}/compare.XXXXXX")"
mkdir -p "$T/pkg/shardfeed"
cp "$ROOT"/python/shardfeed/*.py "$T/pkg/shardfeed/"
cp "$ROOT/python/_shardfeed.so" "$T/pkg/shardfeed/"
PYTHONPATH="$T/pkg" "$PY" "$ROOT/bench/compare.py" --quick --shardfeed "$ROOT/cli/shardfeed" \
  --package "$T/pkg" --data "$ROOT/testdata" --jpegs "$ROOT/testdata/images/cifar10-jpg" \
  --out "$T/out" --work "$T/work" || { echo "FAIL: bench/compare.py --quick"; exit 1; }
for s in conversion reading verification scaling decode; do
  [ -s "$T/out/$s.json" ] || { echo "FAIL: no $s.json"; exit 1; }
  [ -s "$T/out/$s.png" ] || { echo "FAIL: no $s.png"; exit 1; }
  "$PY" - "$T/out/$s.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["results"], "no results"
for r in doc["results"]:
    assert r["throughput"] > 0 and r["ratio"] > 0, r
PY
done
echo "PASS: bench/compare --quick wrote every section"
