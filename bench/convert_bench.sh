#!/usr/bin/env bash
# Conversion benchmark (issue: converter), in one run on one machine:
#   shardfeed convert  vs  `cp -r` + `sync` of the same input bytes
#                      vs  an equivalent of TensorFlow's CIFAR-10 script.
# Inputs: full-size CIFAR-10 in both layouts (generated from the real records
# when the real archive is absent) and the 10,000-JPEG folder.
# Usage: bench/convert_bench.sh [DATASETS_DIR] [SCRATCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS="${1:-../shared/datasets}"
WORK="${2:-/tmp/shardfeed-convert-bench}"
source tools/setup.sh
shardfeed_tf_python
bazel build //cli:shardfeed >/dev/null 2>&1
SF="$(bazel info bazel-bin 2>/dev/null)/cli/shardfeed"
mkdir -p "$WORK"
[ -d "$WORK/full/cifar-10-batches-py" ] ||
  "$SHARDFEED_TF_PYTHON" bench/make_full_cifar.py "$DATASETS" "$WORK/full"

best_of() {  # best_of N COMMAND...: the fastest wall time in seconds
  local n=$1 best=999999; shift
  for _ in $(seq "$n"); do
    rm -rf "$WORK/out"
    local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    best=$(python3 -c "print(min($best, $t1 - $t0))")
  done
  echo "$best"
}
copy() { cp -r "$1" "$WORK/out" && sync -f "$WORK/out"; }

report() {  # report NAME BYTES SECONDS BASELINE_SECONDS
  python3 -c "print(f'{\"$1\":58s} {$2/$3/1e6:9.1f} MB/s  {$4/$3:6.2f}x cp')"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for layout in bin py; do
  in="$WORK/full/cifar-10-batches-$layout"
  bytes=$(du -sb "$in" | cut -f1)
  cat "$in"/* >/dev/null
  t_cp=$(best_of 3 copy "$in")
  t_sf=$(best_of 3 "$SF" convert cifar10 --input "$in" --output "$WORK/out" --quiet)
  report "cp -r + sync ($layout, $((bytes / 1000000)) MB)" "$bytes" "$t_cp" "$t_cp"
  report "shardfeed convert cifar10 ($layout)" "$bytes" "$t_sf" "$t_cp"
  if [ "$layout" = py ]; then
    t_tf=$(best_of 1 "$SHARDFEED_TF_PYTHON" bench/tf_cifar10_convert.py "$in" "$WORK/out")
    report "TensorFlow script (pickle + tf.train.Example + writer)" "$bytes" "$t_tf" "$t_cp"
    python3 -c "print(f'shardfeed is {$t_tf/$t_sf:.1f}x faster than the TensorFlow script')"
  fi
done
in="$DATASETS/images/cifar10-test-jpg"
bytes=$(du -sb "$in" | cut -f1)
find "$in" -type f -exec cat {} + >/dev/null
t_cp=$(best_of 3 copy "$in")
t_sf=$(best_of 3 "$SF" convert image-folder --input "$in" --output "$WORK/out" --quiet)
report "cp -r + sync (10,000 JPEGs, $((bytes / 1000000)) MB)" "$bytes" "$t_cp" "$t_cp"
report "shardfeed convert image-folder" "$bytes" "$t_sf" "$t_cp"
