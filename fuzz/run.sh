#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (Debian's clang-14; libFuzzer,
# AddressSanitizer and UBSan from libclang-rt-14-dev) against the system
# libraries, and runs each for SECONDS (default 600) from the seed corpus in
# testdata/fuzz/. Crashes are written to fuzz/out/. Usage:
#   fuzz/run.sh [SECONDS] [record_reader|example|decode ...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-600}"; shift || true
TARGETS=("${@:-record_reader example decode}")
[ $# -eq 0 ] && TARGETS=(record_reader example decode)
OUT=fuzz/out; mkdir -p "$OUT/gen/proto"
protoc --proto_path=. --cpp_out="$OUT/gen" proto/feature.proto proto/example.proto
FLAGS=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I. -I"$OUT/gen" -DSHARDFEED_HAVE_ISAL=1)
LIBS=(-lprotobuf -labsl_status -labsl_statusor -labsl_strings -labsl_str_format_internal
      -labsl_cord -labsl_int128 -labsl_raw_logging_internal -labsl_throw_delegate
      -labsl_base -labsl_spinlock_wait -lz -lisal -lpthread -ljpeg -lspng)
RECORD_SRCS=(record/crc32c.cc record/compression.cc record/file.cc record/index.cc
             record/input_stream.cc record/record_reader.cc record/record_scanner.cc
             record/record_writer.cc)
for t in "${TARGETS[@]}"; do
  case "$t" in
    record_reader) srcs=(fuzz/record_reader_fuzzer.cc "${RECORD_SRCS[@]}") ;;
    example) srcs=(fuzz/example_fuzzer.cc reader/example_wire.cc "$OUT"/gen/proto/*.pb.cc) ;;
    decode) srcs=(fuzz/decode_fuzzer.cc reader/decode/decode_spec.cc reader/decode/crop_geometry.cc
                  reader/decode/resize.cc reader/decode/image_decoder.cc reader/decode/jpeg_codec.cc
                  reader/decode/png_codec.cc reader/decode/wav_decoder.cc) ;;
    *) echo "unknown target $t" >&2; exit 2 ;;
  esac
  clang++ "${FLAGS[@]}" "${srcs[@]}" "${LIBS[@]}" -o "$OUT/${t}_fuzzer"
  rm -f "$OUT/$t"-*
  mkdir -p "$OUT/corpus_$t"
  echo "== fuzzing $t for ${SECONDS_EACH}s"
  "$OUT/${t}_fuzzer" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$OUT/$t-" -print_final_stats=1 "$OUT/corpus_$t" "testdata/fuzz/$t" 2>&1 |
    grep -E "^#[0-9]+.*(pulse|DONE)|ERROR|SUMMARY|stat::number_of_executed_units|stat::peak_rss|Done" || true
  if compgen -G "$OUT/$t-*" >/dev/null; then
    echo "FOUND PROBLEMS in $t:"; ls "$OUT/$t"-*; exit 1
  fi
done
echo "fuzz: no crash, hang or sanitizer report"
