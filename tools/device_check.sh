#!/usr/bin/env bash
# One command for the GPU path: builds the portable binaries and tests
# (bazel --config=portable), then, on a machine with a CUDA device, runs
# every GPU test (the device-vs-reference tests under compute-sanitizer when
# it is installed) and gpu_bench over a converted CIFAR-10 sample, writing
# one report. Without a GPU it builds, runs the same tests (their GPU cases
# skip) and says so in the report.
#
#   tools/device_check.sh [REPORT]      (default: device_check_report.txt)
#
# Exit status: 0 all passed, 1 a test or gpu_bench failed, 2 build failure.
set -uo pipefail
cd "$(dirname "$0")/.."
REPORT="${1:-device_check_report.txt}"
TESTS=(//gpu:device_test //gpu:device_guard_test //gpu:image_transform_test
       //reader:consumer_fence_test //reader:loader_test //reader:resident_loader_test)
BINARIES=(//cli:shardfeed //bench:gpu_bench)
status=0
GPU=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then GPU=1; fi
{
  echo "# shardfeed device check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)"
  echo "host: $(uname -srm), $(nproc) cores"
  if [ "$GPU" = 1 ]; then
    echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
  else
    echo "gpu: none (nvidia-smi absent or no device): GPU cases skip; only the host path runs"
  fi
} | tee "$REPORT"

echo "== build (--config=portable)" | tee -a "$REPORT"
if ! bazel build --config=portable "${BINARIES[@]}" "${TESTS[@]}" >>"$REPORT" 2>&1; then
  echo "BUILD FAILED (see above)" | tee -a "$REPORT"
  exit 2
fi
echo "build ok" | tee -a "$REPORT"

echo "== tests" | tee -a "$REPORT"
for t in "${TESTS[@]}"; do
  bin="bazel-bin/$(echo "${t#//}" | tr ':' '/')"
  if "$bin" >"/tmp/device_check.$$.log" 2>&1; then
    echo "PASS $t ($(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "/tmp/device_check.$$.log") skipped)" | tee -a "$REPORT"
  else
    echo "FAIL $t" | tee -a "$REPORT"
    tail -40 "/tmp/device_check.$$.log" >>"$REPORT"
    status=1
  fi
  if [ "$GPU" = 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
    if compute-sanitizer --error-exitcode 3 "$bin" >"/tmp/device_check.$$.log" 2>&1; then
      echo "PASS $t under compute-sanitizer" | tee -a "$REPORT"
    else
      echo "FAIL $t under compute-sanitizer" | tee -a "$REPORT"
      tail -40 "/tmp/device_check.$$.log" >>"$REPORT"
      status=1
    fi
  fi
done
rm -f "/tmp/device_check.$$.log"

echo "== gpu_bench" | tee -a "$REPORT"
if [ "$GPU" = 1 ]; then
  DATA="$(mktemp -d)"
  if bazel-bin/cli/shardfeed convert cifar10 --input testdata/cifar10-py --output "$DATA/c" \
       >>"$REPORT" 2>&1 && bazel-bin/bench/gpu_bench "$DATA/c" 2>&1 | tee -a "$REPORT"; then
    :
  else
    echo "FAIL gpu_bench" | tee -a "$REPORT"
    status=1
  fi
  rm -rf "$DATA"
else
  echo "skipped: no GPU" | tee -a "$REPORT"
fi
echo "== result: $([ $status = 0 ] && echo PASS || echo FAIL)" | tee -a "$REPORT"
exit $status
