#!/usr/bin/env bash
# shardfeed's main job on the bundled sample data: installs what is missing,
# builds the `shardfeed` binary, converts the bundled CIFAR-10 batches (real
# records, cut down) into shards with index and manifest, checks them, reads
# them through the loader pipeline, then indexes and reads the real TFRecord
# files in testdata/interop
# (written by TensorFlow, Apache Beam and others).
# Output goes to ./demo-out (or the directory given as $1).
set -euo pipefail
cd "$(dirname "$0")"
source tools/setup.sh
shardfeed_install_debs

# Bazel's progress goes to stderr; .bazelrc keeps the sandbox's debug log off
# (Debian's /etc/bazel/bazelrc turns it on).
bazel build //cli:shardfeed
sf="$(bazel info bazel-bin 2>/dev/null)/cli/shardfeed"
out="${1:-demo-out}"
mkdir -p "$out"
"$sf" --version

echo "== convert CIFAR-10 (python pickle layout) into pre-shuffled shards"
"$sf" convert cifar10 --input testdata/cifar10-py --output "$out/cifar10" --shard-size 1MB --overwrite
ls -l "$out/cifar10"

echo "== check them (every CRC, the schema, the index files and the manifest)"
"$sf" check "$out/cifar10"

echo "== read them through the loader pipeline (host memory: this machine may have no GPU)"
"$sf" bench "$out/cifar10" --batch-size 64 --epochs 2

echo "== resident cache + fused transform (uint8 planar CIFAR -> normalized NCHW float16, crop, flip)"
"$sf" bench "$out/cifar10" --split train --batch-size 64 --epochs 3 --cache \
  --transform 'image=chw,float16,cifar10,pad=4,flip'

echo "== exactly once: the loader's fingerprint equals a sequential decode"
"$sf" bench "$out/cifar10" --epochs 1 --fingerprint | tail -1
"$sf" cat --fingerprint "$out/cifar10"

echo "== the first record, as JSON"
"$sf" cat "$out/cifar10/test-00000-of-00001.tfrecord" > "$out/test.jsonl"
head -1 "$out/test.jsonl" | cut -c1-160
echo "..."

echo "== copy the sample shards (re-encoding the gzip ones to plain TFRecord)"
shards=()
for f in testdata/interop/*.tfrecord*; do
  name="$(basename "$f")"
  shards+=("$out/${name%.gz}")
  "$sf" copy "$f" --output "${shards[-1]}" --compression none --overwrite
done

echo "== index them (every CRC verified)"
"$sf" index "${shards[@]}"

echo "== count records"
"$sf" cat --count "${shards[@]}"

echo "== the first records of a TensorFlow-written file, as JSON"
"$sf" cat "$out/pwnall_singles.tfrecords"
echo "demo: done; results in $out/"
