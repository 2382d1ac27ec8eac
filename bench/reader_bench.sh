#!/usr/bin/env bash
# Decoder benchmark (issue: reader): the reader's Example decoder vs
# tf.io.parse_example, same records, same batch size, one core each.
# The host path (shardfeed bench vs dd of the same shards, whole processes
# timed from outside) is bench/reader_v2_bench.sh; this script's old pread
# comparison read every shard (train and test) against a bench of train
# only, with the loader's internal clock, and was removed.
# Usage: bench/reader_bench.sh [DATASETS_DIR] [SCRATCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS="${1:-../shared/datasets}"
WORK="${2:-/tmp/shardfeed-reader-bench}"
source tools/setup.sh
shardfeed_tf_python
bazel build //cli:shardfeed //bench:decode_bench >/dev/null 2>&1
BIN="$(bazel info bazel-bin 2>/dev/null)"
SF="$BIN/cli/shardfeed"
mkdir -p "$WORK"
[ -d "$WORK/full/cifar-10-batches-bin" ] ||
  "$SHARDFEED_TF_PYTHON" bench/make_full_cifar.py "$DATASETS" "$WORK/full"
[ -e "$WORK/ds/manifest.json" ] ||
  "$SF" convert cifar10 --input "$WORK/full/cifar-10-batches-bin" --output "$WORK/ds" --quiet
first="$(ls "$WORK"/ds/train-*.tfrecord | head -1)"
"$BIN/bench/decode_bench" "$first" "image:uint8[3,32,32],label:int64" 256
"$SHARDFEED_TF_PYTHON" bench/tf_parse_bench.py "$first" 256
