#!/usr/bin/env bash
# Reader benchmarks (issue: reader), in one run on one machine:
#  1. host path: `shardfeed bench` records/s into host batches vs plain
#     pread of the same shard bytes (page cache warm), 2 I/O + 2 decode threads;
#  2. decode: the reader's decoder vs tf.io.parse_example, same records,
#     same batch size, one core each.
# Usage: bench/reader_bench.sh [DATASETS_DIR] [SCRATCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS="${1:-../shared/datasets}"
WORK="${2:-/tmp/shardfeed-reader-bench}"
source tools/setup.sh
shardfeed_tf_python
bazel build //cli:shardfeed //bench:decode_bench //bench:record_read_bench >/dev/null 2>&1
BIN="$(bazel info bazel-bin 2>/dev/null)"
SF="$BIN/cli/shardfeed"
mkdir -p "$WORK"
[ -d "$WORK/full/cifar-10-batches-bin" ] ||
  "$SHARDFEED_TF_PYTHON" bench/make_full_cifar.py "$DATASETS" "$WORK/full"
[ -e "$WORK/ds/manifest.json" ] ||
  "$SF" convert cifar10 --input "$WORK/full/cifar-10-batches-bin" --output "$WORK/ds" --quiet
shards=$(ls "$WORK"/ds/*.tfrecord)
bytes=$(cat $shards | wc -c)
cat $shards >/dev/null
echo "machine: $(nproc) cores; CIFAR-10 shards: $(echo $shards | wc -w) files, $((bytes / 1000000)) MB, 60000 records"

pread_s() {  # best of 5: plain pread of every shard, 4 MiB chunks
  python3 - "$@" <<'PY'
import os, sys, time
best = 1e9
for _ in range(5):
    t0 = time.perf_counter()
    for p in sys.argv[1:]:
        fd = os.open(p, os.O_RDONLY); off = 0
        while True:
            b = os.pread(fd, 4 << 20, off)
            if not b: break
            off += len(b)
        os.close(fd)
    best = min(best, time.perf_counter() - t0)
print(best)
PY
}
t_pread=$(pread_s $shards)
best_rps=0
for i in 1 2 3; do
  rps=$("$SF" bench "$WORK/ds" --epochs 3 --batch-size 256 --io-threads 2 --decode-threads 2 --json |
        python3 -c "import json,sys; print(json.load(sys.stdin)['records_per_s'])")
  best_rps=$(python3 -c "print(max($best_rps, $rps))")
done
python3 - <<PY
b, t, rps = $bytes, $t_pread, $best_rps
per_record = b / 60000
print(f"pread of the shards (baseline)          {b / t / 1e9:6.2f} GB/s = {b / t / per_record:9.0f} records/s")
print(f"shardfeed bench, host batches of 256    {rps * per_record / 1e9:6.2f} GB/s = {rps:9.0f} records/s  {rps * per_record / (b / t):.2f}x pread")
PY
first="$(ls "$WORK"/ds/train-*.tfrecord | head -1)"
"$BIN/bench/decode_bench" "$first" "image:uint8[3,32,32],label:int64" 256
"$SHARDFEED_TF_PYTHON" bench/tf_parse_bench.py "$first" 256
