#!/usr/bin/env bash
# shardfeed's main job on the bundled sample data: installs what is missing,
# builds the `shardfeed` binary, then indexes and reads the real TFRecord
# files in testdata/interop (written by TensorFlow, Apache Beam and others).
# Output goes to ./demo-out (or the directory given as $1).
set -euo pipefail
cd "$(dirname "$0")"
source tools/setup.sh
shardfeed_install_debs

bazel build //cli:shardfeed 2>/dev/null || bazel build //cli:shardfeed
sf="$(bazel info bazel-bin 2>/dev/null)/cli/shardfeed"
out="${1:-demo-out}"
mkdir -p "$out"
"$sf" --version

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
