#!/usr/bin/env bash
# Reader v2 benchmarks (issue 12), one run, one machine, page cache warm:
#  1. host path on full-size CIFAR-10 shards (70,000 records of 3 KB), 3
#     epochs, batch 256: records/s as a fraction of `dd bs=4M` of the same
#     shards (3 passes), CPU us per record (getrusage / records), time to the
#     first batch, peak RSS; planned path (global shuffle; mapped or pread),
#     quasi, in order, and the streaming path (the v1 design) for contrast;
#     thread scaling 1 -> 2;
#  2. 100-byte records (token/tabular rows): records/s vs dd of those shards;
#  3. peak RSS with 1x and 10x the data (hard links of the shards).
# Each number is the best of REPEATS runs. Usage:
#   bench/reader_v2_bench.sh [SHARDFEED_BINARY] [WORK_DIR] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
SF="${1:-bazel-bin/cli/shardfeed}"
WORK="${2:-/tmp/shardfeed-reader-v2}"
REPEATS="${3:-3}"
PY="${SHARDFEED_TF_PYTHON:-$HOME/.cache/shardfeed/venv/bin/python}"
mkdir -p "$WORK"
if [ ! -e "$WORK/ds/manifest.json" ]; then
  "$PY" bench/make_full_cifar.py ../shared/datasets "$WORK/full"
  "$SF" convert cifar10 --input "$WORK/full/cifar-10-batches-bin" --output "$WORK/ds" --quiet
fi
if [ ! -e "$WORK/small/rows-0.tfrecord.index" ]; then  # 1,000,000 rows of ~100 bytes
  mkdir -p "$WORK/small"
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
if [ ! -d "$WORK/x10" ]; then
  mkdir -p "$WORK/x10"
  for k in $(seq 0 9); do
    for f in "$WORK"/ds/train-*.tfrecord; do
      b="$(basename "$f" .tfrecord)"
      ln "$f" "$WORK/x10/$b-copy$k.tfrecord"; ln "$f.index" "$WORK/x10/$b-copy$k.tfrecord.index"
    done
  done
fi

dd_seconds() {  # best of REPEATS: dd bs=4M of every file given, 3 passes
  "$PY" - "$REPEATS" "$@" <<'PY'
import subprocess, sys, time
best = 1e9
for _ in range(int(sys.argv[1])):
    t0 = time.perf_counter()
    for _ in range(3):
        for p in sys.argv[2:]:
            subprocess.run(["dd", f"if={p}", "of=/dev/null", "bs=4M"], check=True, capture_output=True)
    best = min(best, time.perf_counter() - t0)
print(best)
PY
}

# bench DATASET DD_SECONDS LABEL FLAGS...: best of REPEATS, one line.
bench() {
  local ds="$1" dd="$2" label="$3"; shift 3
  local files; files=$(ls "$ds"/*.tfrecord)
  local bytes; bytes=$(cat $files | wc -c)
  local best=""
  for _ in $(seq "$REPEATS"); do
    local r; r=$("$SF" bench "$ds" --epochs 3 --batch-size 256 --json "$@" 2>/dev/null)
    best=$("$PY" -c "import json,sys; a=json.loads(sys.argv[1]); b=json.loads(sys.argv[2]) if sys.argv[2] else None; print(json.dumps(a if b is None or a['seconds'] < b['seconds'] else b))" "$r" "$best")
  done
  "$PY" - "$best" "$bytes" "$dd" "$label" <<'PY'
import json, sys
d, nbytes, dd, label = json.loads(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
ratio = (3 * nbytes / d["seconds"]) / (3 * nbytes / dd)
print(f"{label:44s} {d['records_per_s']:10.0f} rec/s  {ratio:5.2f}x dd  "
      f"{d['cpu_us_per_record']:5.2f} us CPU/rec  first batch {d['first_batch_s'] * 1e3:6.1f} ms  "
      f"peak RSS {d['peak_rss_mb']:6.1f} MB")
PY
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
cat "$WORK"/ds/*.tfrecord "$WORK"/small/*.tfrecord >/dev/null
t=$(dd_seconds "$WORK"/ds/*.tfrecord)
echo "CIFAR-10 full (60,000 x 3 KB, $(du -sm "$WORK/ds" | cut -f1) MB): dd bs=4M, 3 passes: $t s"
bench "$WORK/ds" "$t" "planned, global shuffle, 2 threads (mapped)"
bench "$WORK/ds" "$t" "planned, global shuffle, 1 thread (mapped)" --io-threads 1 --decode-threads 1
bench "$WORK/ds" "$t" "planned, global shuffle, 2 threads (pread)" --no-mmap
bench "$WORK/ds" "$t" "planned, quasi shuffle, 2 threads" --quasi-shuffle
bench "$WORK/ds" "$t" "planned, in order, 2 threads" --no-shuffle
bench "$WORK/ds" "$t" "streaming (v1 design), shuffle buffer 10000" --streaming
t=$(dd_seconds "$WORK"/small/*.tfrecord)
echo "100-byte rows (1,000,000, $(du -sm "$WORK/small" | cut -f1) MB): dd bs=4M, 3 passes: $t s"
S="tokens:uint8[64],label:int64"
bench "$WORK/small" "$t" "planned, global shuffle, 2 threads (mapped)" --spec "$S"
bench "$WORK/small" "$t" "planned, global shuffle, 2 threads (pread)" --spec "$S" --no-mmap
bench "$WORK/small" "$t" "planned, in order, 2 threads" --spec "$S" --no-shuffle
bench "$WORK/small" "$t" "streaming (v1 design)" --spec "$S" --streaming
echo "peak RSS, 1x vs 10x the data (one epoch, global shuffle):"
C="image:uint8[3,32,32],label:int64"
for flags in "" "--no-mmap" "--streaming"; do
  for ds in "$WORK/ds" "$WORK/x10"; do
    r=$("$SF" bench "$ds" --spec "$C" --epochs 1 --json $flags 2>/dev/null)
    echo "  ${flags:-mapped} $(basename "$ds"): $("$PY" -c "import json,sys; d=json.loads(sys.argv[1]); print(d['records'], 'records, peak RSS', d['peak_rss_mb'], 'MB, anonymous', d['rss_anon_mb'], 'MB')" "$r")"
  done
done
