#!/usr/bin/env bash
# Writing to a bucket (issue 23), in one run on one machine: whole
# processes timed from outside, best of N each, the same input and flags:
#   shardfeed convert cifar10 --output DIR         (local disk, synced)
#   shardfeed convert cifar10 --output s3://...    (SeaweedFS on loopback;
#       default settings: 100 MB shards go up as multipart, 16 MiB parts)
#   the same with SHARDFEED_UPLOAD_THRESHOLD=5GiB  (one PUT per shard)
#   baseline: curl -T of the local convert's files, one after the other
#       (curl's own SigV4 signer, SHA-256 by sha256sum): the server's speed
# Input: full-size CIFAR-10 (binary layout, 60,000 records, generated from
# the real records by bench/make_full_cifar.py). Prints MB/s of shard bytes
# and the ratio to the local convert, with the CPU model and load average.
# Usage: bench/bucket_write_bench.sh [DATASETS_DIR] [SCRATCH_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS="${1:-../shared/datasets}"
WORK="${2:-/tmp/shardfeed-bucket-bench}"
RUNS="${3:-3}"
source tools/setup.sh
shardfeed_object_store_servers
bazel build //cli:shardfeed >/dev/null 2>&1
SF="$(bazel info bazel-bin 2>/dev/null)/cli/shardfeed"
mkdir -p "$WORK"
[ -f "$WORK/full/cifar-10-batches-bin/test_batch.bin" ] || python3 bench/make_full_cifar.py "$DATASETS" "$WORK/full"
IN="$WORK/full/cifar-10-batches-bin"
rm -rf "$WORK/weed" "$WORK/staging"
mkdir -p "$WORK/staging"
source tests/seaweed_mini.sh
start_seaweed "$WORK/weed" AKIDBENCH 'bench/s3cr3t'
trap 'kill $WEED_PID 2>/dev/null; wait $WEED_PID 2>/dev/null' EXIT
export TMPDIR="$WORK/staging"

best_of() {  # best_of COMMAND...: the fastest wall time of RUNS runs
  local best=999999
  for _ in $(seq "$RUNS"); do
    rm -rf "$WORK/out"
    local t0 t1; t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    best=$(python3 -c "print(min($best, $t1 - $t0))")
  done
  echo "$best"
}
local_convert() { "$SF" convert cifar10 --input "$IN" --output "$WORK/out" --quiet && sync -f "$WORK/out"; }
bucket_convert() { "$SF" convert cifar10 --input "$IN" --output "s3://data/run-$(date +%s%N)/" --quiet; }
single_put() { SHARDFEED_UPLOAD_THRESHOLD=5GiB bucket_convert; }
curl_upload() {  # the files of $WORK/local, as they are, to a new prefix
  local f sha prefix="curl-$(date +%s%N)"
  for f in "$WORK"/local/*; do
    sha=$(sha256sum "$f" | cut -d' ' -f1)
    curl -sf --max-time 600 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
      -H "x-amz-content-sha256: $sha" -T "$f" "$AWS_ENDPOINT_URL/data/$prefix/$(basename "$f")" -o /dev/null
  done
}

rm -rf "$WORK/local"
"$SF" convert cifar10 --input "$IN" --output "$WORK/local" --quiet  # also warms the page cache
bytes=$(du -sb "$WORK/local" | cut -f1)
t_local=$(best_of local_convert)
t_curl=$(best_of curl_upload)
t_multi=$(best_of bucket_convert)
t_single=$(best_of single_put)
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$bytes" "$t_local" "$t_multi" "$t_single" "$t_curl" <<'PY'
import sys
b, local, multi, single, curl = int(sys.argv[1]), *map(float, sys.argv[2:])
print(f"CIFAR-10 (60,000 records, {b / 1e6:.1f} MB of shards + indexes), best of runs, whole process:")
for name, t in (("convert to local disk (synced)", local),
                ("convert to s3:// (SeaweedFS, multipart 16 MiB parts)", multi),
                ("convert to s3:// (one PUT per shard)", single),
                ("baseline: curl -T of the local output, one by one", curl)):
    print(f"  {name:55s} {t:6.2f} s  {b / 1e6 / t:6.1f} MB/s  {t / local:5.2f}x local time")
print(f"  convert to s3:// vs local convert + curl upload: {min(multi, single) / (local + curl):.2f}x the time")
PY
