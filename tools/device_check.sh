#!/usr/bin/env bash
# One command for the GPU path on a real GPU: builds the portable binaries
# and tests (bazel --config=portable, the real libcudart_static), then
#   1. runs every GPU test (the same parametrized suites CI runs on the
#      emulated GPU, here on the real device) with SHARDFEED_REQUIRE_GPU=1:
#      a GPU test that skips is a FAILURE on a machine with a GPU (no green
#      run that tested nothing); the kernels are checked against the host
#      reference (gpu:image_transform_test: 32-bit in-image indexing, the
#      2D grid per image and channel, the augmentation drawn once per image);
#   2. runs them again under compute-sanitizer (memcheck) where installed;
#   3. runs gpu_bench over a converted CIFAR-10 sample (the fused transform
#      against a device-to-device copy of the same bytes, and the rest);
#   4. a torch smoke test (tools/torch_smoke.py): torch.from_dlpack of
#      device batches on torch's current stream (default and a side stream),
#      values equal to the host loader's, and one training step;
# writing one report that names the GPU, the driver and the CUDA versions.
# Without a GPU it builds, runs the tests (their GPU cases skip), says so in
# the report and skips 2-4.
#
#   tools/device_check.sh [REPORT]      (default: device_check_report.txt)
#   SHARDFEED_PYTHON=/path/to/python    the Python with CUDA torch for step 4
#                                       (default: python3)
#
# Exit status: 0 all passed, 1 a test, gpu_bench or the torch smoke test
# failed (or skipped with a GPU present), 2 build failure.
set -uo pipefail
cd "$(dirname "$0")/.."
REPORT="${1:-device_check_report.txt}"
PY="${SHARDFEED_PYTHON:-python3}"
TESTS=(//gpu:device_test //gpu:device_guard_test //gpu:image_transform_test
       //reader:consumer_fence_test //reader:loader_test //reader:resident_loader_test
       //reader:decode_loader_test)
BINARIES=(//cli:shardfeed //bench:gpu_bench //python:_shardfeed.so)
status=0
GPU=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then GPU=1; fi
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
{
  echo "# shardfeed device check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)"
  echo "host: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  if [ "$GPU" = 1 ]; then
    nvidia-smi --query-gpu=index,name,memory.total,driver_version,compute_cap --format=csv,noheader |
      sed 's/^/gpu: /'
    echo "driver: $(nvidia-smi | grep -o 'Driver Version: [0-9.]*\|CUDA Version: [0-9.]*' | tr '\n' ' ')"
  else
    echo "gpu: none (nvidia-smi absent or no device): GPU cases skip; only the host path runs"
  fi
  echo "toolkit: $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo 'nvcc not found')"
} | tee "$REPORT"

echo "== build (--config=portable)" | tee -a "$REPORT"
if ! bazel build --config=portable "${BINARIES[@]}" "${TESTS[@]}" >>"$REPORT" 2>&1; then
  echo "BUILD FAILED (see above)" | tee -a "$REPORT"
  exit 2
fi
echo "build ok" | tee -a "$REPORT"

# Runs one test binary; with a GPU, a skipped test is a failure.
run_test() {  # LABEL COMMAND...
  local label="$1"
  shift
  if SHARDFEED_REQUIRE_GPU="$GPU" "$@" >"$LOG" 2>&1; then
    local skipped
    skipped="$(grep -E '^\[  SKIPPED \] .*\([0-9]+ ms\)$' "$LOG" | sed 's/^\[  SKIPPED \] //')"
    if [ "$GPU" = 1 ] && [ -n "$skipped" ]; then
      echo "FAIL $label: skipped on a GPU machine: $(echo "$skipped" | tr '\n' ' ')" | tee -a "$REPORT"
      grep -B2 -A3 'Skipped' "$LOG" | head -40 >>"$REPORT"
      status=1
    else
      echo "PASS $label ($(echo -n "$skipped" | grep -c .) skipped)" | tee -a "$REPORT"
    fi
  else
    echo "FAIL $label" | tee -a "$REPORT"
    tail -40 "$LOG" >>"$REPORT"
    status=1
  fi
}

echo "== tests" | tee -a "$REPORT"
SANITIZER=""
if [ "$GPU" = 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
  SANITIZER="$(command -v compute-sanitizer)"
elif [ "$GPU" = 1 ] && [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
  SANITIZER=/usr/local/cuda/bin/compute-sanitizer
fi
for t in "${TESTS[@]}"; do
  bin="bazel-bin/$(echo "${t#//}" | tr ':' '/')"
  run_test "$t" "$bin"
  if [ -n "$SANITIZER" ]; then
    run_test "$t under compute-sanitizer" "$SANITIZER" --error-exitcode 3 "$bin"
  fi
done
[ "$GPU" = 1 ] && [ -z "$SANITIZER" ] && echo "compute-sanitizer: not installed" | tee -a "$REPORT"

DATA="$(mktemp -d)"
trap 'rm -f "$LOG"; rm -rf "$DATA"' EXIT
echo "== gpu_bench" | tee -a "$REPORT"
if [ "$GPU" = 1 ]; then
  if bazel-bin/cli/shardfeed convert cifar10 --input testdata/cifar10-py --output "$DATA/c" \
       >>"$REPORT" 2>&1 && bazel-bin/bench/gpu_bench "$DATA/c" 2>&1 | tee -a "$REPORT"; then
    :
  else
    echo "FAIL gpu_bench" | tee -a "$REPORT"
    status=1
  fi
else
  echo "skipped: no GPU" | tee -a "$REPORT"
fi

echo "== torch smoke test" | tee -a "$REPORT"
if [ "$GPU" = 1 ]; then
  PKG="$DATA/pkg"
  mkdir -p "$PKG/shardfeed"
  cp python/shardfeed/*.py bazel-bin/python/_shardfeed.so "$PKG/shardfeed/"
  [ -d "$DATA/c" ] || bazel-bin/cli/shardfeed convert cifar10 --input testdata/cifar10-py \
    --output "$DATA/c" >>"$REPORT" 2>&1
  if PYTHONPATH="$PKG" "$PY" tools/torch_smoke.py "$DATA/c" 2>&1 | tee -a "$REPORT"; then
    :
  else
    echo "FAIL torch smoke test (SHARDFEED_PYTHON=$PY: needs torch with CUDA)" | tee -a "$REPORT"
    status=1
  fi
else
  echo "skipped: no GPU" | tee -a "$REPORT"
fi
echo "== result: $([ $status = 0 ] && echo PASS || echo FAIL)" | tee -a "$REPORT"
exit $status
