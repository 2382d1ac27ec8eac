#!/usr/bin/env bash
# Bounded memory (issue: reader): peak RSS of `shardfeed bench` over 1x and
# 10x the same CIFAR-10 shards (the 10x dataset is 10 links to each shard),
# same options. The loader's working set is the ring, the shuffle buffer and
# fixed read-ahead, so the two peaks should be about equal.
# Usage: bench/memory_bench.sh [DATASETS_DIR] [SCRATCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS="${1:-../shared/datasets}"
WORK="${2:-/tmp/shardfeed-reader-bench}"
source tools/setup.sh
shardfeed_tf_python
bazel build //cli:shardfeed >/dev/null 2>&1
SF="$(bazel info bazel-bin 2>/dev/null)/cli/shardfeed"
mkdir -p "$WORK"
[ -d "$WORK/full/cifar-10-batches-bin" ] ||
  "$SHARDFEED_TF_PYTHON" bench/make_full_cifar.py "$DATASETS" "$WORK/full"
[ -e "$WORK/ds/manifest.json" ] ||
  "$SF" convert cifar10 --input "$WORK/full/cifar-10-batches-bin" --output "$WORK/ds" --quiet
rm -rf "$WORK/ds10" && mkdir -p "$WORK/ds10"
for k in $(seq 0 9); do
  for f in "$WORK"/ds/train-*.tfrecord; do  # the split the 1x run reads
    ln -s "$f" "$WORK/ds10/copy$k-$(basename "$f")"
    ln -s "$f.index" "$WORK/ds10/copy$k-$(basename "$f").index"
  done
done
spec="image:uint8[3,32,32],label:int64"
for name in ds ds10; do
  if [ "$name" = ds ]; then paths=("$WORK/ds/manifest.json" --split train); else paths=("$WORK/ds10/*.tfrecord"); fi
  "$SF" bench "${paths[@]}" --spec "$spec" --epochs 1 --batch-size 256 --json |
    python3 -c "import json,sys; r=json.load(sys.stdin); print(f'$name: {r[\"records\"]:>8} records, {r[\"bytes\"]/1e6:8.0f} MB read, peak RSS {r[\"peak_rss_mb\"]:6.1f} MB')"
done
