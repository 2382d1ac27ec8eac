#!/usr/bin/env bash
# gpu_bench --quick on the emulated CUDA runtime (gpu/emu/): every section
# runs to the end with the race check on (SHARDFEED_CUDA_EMU_RACES=abort).
# Regression (issue 21 defect 12): the device-to-device baseline copied
# twice the bytes its source buffer held (the emulator refuses the copy).
# The figures of an emulated run mean nothing and are not checked.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
T="$(mktemp -d "${TEST_TMPDIR:-/tmp}/gpu_bench.XXXXXX")"
"$ROOT/cli/shardfeed" convert cifar10 --input "$ROOT/testdata/cifar10-py" --output "$T/c" \
  >"$T/convert.log" 2>&1 || { cat "$T/convert.log"; echo "FAIL: convert"; exit 1; }
export SHARDFEED_CUDA_EMU_RACES=abort
if ! timeout 600 "$ROOT/bench/gpu_bench_emu" "$T/c" --quick >"$T/out.txt" 2>&1; then
  cat "$T/out.txt"
  echo "FAIL: gpu_bench --quick on the emulated GPU"
  exit 1
fi
cat "$T/out.txt"
for row in "device-to-device cudaMemcpy" "normalize uint8 -> float16 NCHW + crop/flip" \
           "epochs/s from the device cache" "compute kernel while the loader streams"; do
  grep -q "$row" "$T/out.txt" || { echo "FAIL: no row '$row'"; exit 1; }
done
echo "PASS"
