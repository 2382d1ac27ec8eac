#!/usr/bin/env bash
# Reader v2 benchmarks (issues 12, 22), one run, one machine, page cache warm:
# `shardfeed bench` vs `dd bs=4M` of the SAME shard files (CIFAR-10: the train
# split on both sides), every process timed from outside (wall, user + system
# CPU, peak RSS) beside the loader's own clock; the CPU model, its flags and
# the load average printed with every run; a markdown table at the end.
#  1. full-size CIFAR-10 (50,000 train records of 3 KB): 3 epochs and the
#     first epoch alone, global shuffle (2 and 1 threads, mapped or pread),
#     quasi, in order, and the streaming path (the v1 design);
#  2. 100-byte records (token/tabular rows);
#  3. peak RSS with 1x and 10x the data (hard links of the shards).
# The CIFAR-10 shards are converted last (just before the runs) by the binary
# under test, as a user would: `convert` ends its writes on 2 MiB boundaries,
# so the page cache holds them in 2 MiB folios, which the loader maps as huge
# pages (the table's "mapped as 2 MiB pages" column says how much). Shards
# evicted and read back by another tool (cat, dd) come back in smaller folios,
# and cost more CPU per shuffled record. On VMs that page out idle page cache
# (DAMON), keep the runs close together.
# The work is in bench/reader_v2_bench.py (see its --help: --baseline BIN for
# an A/B of two builds in one run, --callgrind for instructions per record).
# Usage:
#   bench/reader_v2_bench.sh [SHARDFEED_BINARY] [WORK_DIR] [REPEATS] [reader_v2_bench.py flags]
set -euo pipefail
cd "$(dirname "$0")/.."
SF="${1:-bazel-bin/cli/shardfeed}"
WORK="${2:-/tmp/shardfeed-reader-v2}"
REPEATS="${3:-5}"
shift $(($# < 3 ? $# : 3))
PY="${SHARDFEED_TF_PYTHON:-$HOME/.cache/shardfeed/venv/bin/python}"
DATASETS="${SHARDFEED_DATASETS:-../shared/datasets}"
[ -d "$DATASETS/cifar10-bin" ] || DATASETS=/work/shared/datasets
mkdir -p "$WORK"
if [ ! -e "$WORK/small/rows-3.tfrecord.index" ] && "$PY" -c "import tensorflow" 2>/dev/null; then
  mkdir -p "$WORK/small"  # 1,000,000 rows of ~100 bytes, written by TensorFlow
  "$PY" - "$WORK/small" <<'PY'
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np, tensorflow as tf
rng = np.random.default_rng(0)
for s in range(4):
    with tf.io.TFRecordWriter(f"{sys.argv[1]}/rows-{s}.tfrecord") as w:
        for i in range(250000):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "tokens": tf.train.Feature(bytes_list=tf.train.BytesList(value=[rng.bytes(64)])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}))
            w.write(ex.SerializeToString())
PY
  for f in "$WORK"/small/*.tfrecord; do "$SF" index "$f" >/dev/null; done
fi
if [ ! -e "$WORK/ds/manifest.json" ]; then
  python3 bench/make_full_cifar.py "$DATASETS" "$WORK/full"
  "$SF" convert cifar10 --input "$WORK/full/cifar-10-batches-bin" --output "$WORK/ds" --quiet
fi
if [ ! -d "$WORK/x10" ]; then  # 10x the train split: hard links
  mkdir -p "$WORK/x10"
  for k in $(seq 0 9); do
    for f in "$WORK"/ds/train-*.tfrecord; do
      b="$(basename "$f" .tfrecord)"
      ln "$f" "$WORK/x10/$b-copy$k.tfrecord"; ln "$f.index" "$WORK/x10/$b-copy$k.tfrecord.index"
    done
  done
fi
exec python3 bench/reader_v2_bench.py --shardfeed "$SF" --work "$WORK" --repeats "$REPEATS" "$@"
