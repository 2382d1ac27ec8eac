#!/usr/bin/env bash
# End-to-end tests of `shardfeed check`: every single-byte corruption of a
# small shard is reported at the right record; truncation at every offset;
# bad length CRC; trailing garbage; stale index; manifest with a missing,
# extra or altered shard; gzip corruption; schema deviations; salvage keeps
# every record outside the damaged ones; JSON output and exit codes.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
SF="$ROOT/cli/shardfeed"
FX="$ROOT/testdata"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/check.XXXXXX")"
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
exit_code() { "$@" >"$TMP/last.out" 2>"$TMP/last.err"; echo $?; }
poke() { printf "\\x$(printf %02x "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }
byte_at() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }

SINGLES="$FX/interop/pwnall_singles.tfrecords"  # records at 0, 40, 85; 130 bytes
check "clean shard exits 0" test "$(exit_code "$SF" check "$FX/interop/tfx_cifar10_test_tiny.tfrecord")" -eq 0
check "clean summary" grep -q "OK: no problems found" "$TMP/last.out"
check "clean framing exits 0" test "$(exit_code "$SF" check --raw "$SINGLES")" -eq 0
# pwnall_singles holds three records with one feature each: without a
# manifest, a feature missing from some records is optional, not a problem.
check "optional features exit 0" test "$(exit_code "$SF" check "$SINGLES")" -eq 0
check "optional features in the summary" grep -q "int_feature  int64  1 value, optional" "$TMP/last.out"

# Every single-byte corruption: exit 1, reported at the damaged record.
bad_flip=0
for i in $(seq 0 129); do
  cp "$SINGLES" "$TMP/flip.tfrecord"
  poke "$TMP/flip.tfrecord" "$i" $(( $(byte_at "$SINGLES" "$i") ^ 0x41 ))
  rec=0; [ "$i" -ge 40 ] && rec=40; [ "$i" -ge 85 ] && rec=85
  rc=$(exit_code "$SF" check --raw --quiet "$TMP/flip.tfrecord")
  if [ "$rc" -ne 1 ] || ! grep -q "^$TMP/flip.tfrecord:$rec: " "$TMP/last.out"; then
    echo "byte $i: rc=$rc $(head -1 "$TMP/last.out")"; bad_flip=$((bad_flip + 1))
  fi
done
check "every flipped byte reported at its record" test "$bad_flip" -eq 0

# Truncation at every offset: clean only at record boundaries.
bad_cut=0
for n in $(seq 1 129); do
  head -c "$n" "$SINGLES" >"$TMP/cut.tfrecord"
  rc=$(exit_code "$SF" check --raw --quiet "$TMP/cut.tfrecord")
  want=1; [ "$n" -eq 40 ] || [ "$n" -eq 85 ] && want=0
  if [ "$rc" -ne "$want" ]; then echo "length $n: rc=$rc"; bad_cut=$((bad_cut + 1)); fi
  if [ "$want" -eq 1 ] && ! grep -q "truncated record" "$TMP/last.out"; then
    echo "length $n: $(cat "$TMP/last.out")"; bad_cut=$((bad_cut + 1))
  fi
done
check "truncation at every offset" test "$bad_cut" -eq 0

cp "$SINGLES" "$TMP/lencrc.tfrecord"; poke "$TMP/lencrc.tfrecord" 48 0
check "bad length CRC" grep -q "lencrc.tfrecord:40: corrupted record header: length CRC mismatch" <<<"$("$SF" check --raw "$TMP/lencrc.tfrecord")"
{ cat "$SINGLES"; printf 'garbage!'; } >"$TMP/trail.tfrecord"
check "trailing garbage" grep -q "trail.tfrecord:130: truncated record header: the data ends after 8 of 12" <<<"$("$SF" check --raw "$TMP/trail.tfrecord")"

# Gzip stream corruption.
"$SF" copy "$FX/interop/tfx_cifar10_test_tiny.tfrecord" --output "$TMP/z.tfrecord.gz" --compression gzip 2>/dev/null
cp "$TMP/z.tfrecord.gz" "$TMP/zbad.tfrecord.gz"; poke "$TMP/zbad.tfrecord.gz" 5000 0; poke "$TMP/zbad.tfrecord.gz" 5001 0
check "gzip shard clean" test "$(exit_code "$SF" check "$TMP/z.tfrecord.gz")" -eq 0
check "gzip corruption exits 1" test "$(exit_code "$SF" check "$TMP/zbad.tfrecord.gz")" -eq 1
check "gzip corruption named" grep -Eq "corrupt compressed data|CRC mismatch|compressed" "$TMP/last.out"

# A converted dataset: index and manifest checks.
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/ds" --shard-size 300KB --quiet
check "converted dataset is clean" test "$(exit_code "$SF" check "$TMP/ds")" -eq 0
check "manifest.json path works too" test "$(exit_code "$SF" check "$TMP/ds/manifest.json")" -eq 0
first="$(ls "$TMP"/ds/train-00000-of-*.tfrecord)"
cp -r "$TMP/ds" "$TMP/stale"; sed -i '3s/.*/1 2 3/' "$(ls "$TMP"/stale/train-00000-of-*.index)" 2>/dev/null
head -n 5 "$first.index" >"$TMP/stale/$(basename "$first").index"
check "stale index exits 1" test "$(exit_code "$SF" check "$TMP/stale")" -eq 1
check "stale index named" grep -q "$(basename "$first").index: stale: lists 5 records, the shard holds" "$TMP/last.out"
cp -r "$TMP/ds" "$TMP/noidx"; rm "$TMP/noidx/$(basename "$first").index"
check "missing index named" grep -q "no index file" <<<"$("$SF" check "$TMP/noidx")"
cp -r "$TMP/ds" "$TMP/missing"; rm "$TMP/missing/$(basename "$first")"
check "missing shard exits 1" test "$(exit_code "$SF" check "$TMP/missing")" -eq 1
check "missing shard named" grep -q "manifest.json: lists shard $(basename "$first"), which is missing" "$TMP/last.out"
cp -r "$TMP/ds" "$TMP/extra"; cp "$first" "$TMP/extra/stray-00000-of-00001.tfrecord"
check "extra shard named" grep -q "stray-00000-of-00001.tfrecord: shard present but not listed" <<<"$("$SF" check "$TMP/extra")"
cp -r "$TMP/ds" "$TMP/altered"; f="$TMP/altered/$(basename "$first")"
"$SF" copy "$TMP/ds/test-00001-of-00002.tfrecord" --output "$f" --overwrite 2>/dev/null
check "altered shard exits 1" test "$(exit_code "$SF" check "$TMP/altered")" -eq 1
check "altered shard: records differ" grep -q "records, the manifest says" "$TMP/last.out"
check "altered shard: checksum differs" grep -q "differs from the manifest's" "$TMP/last.out"

# With a manifest its schema is the contract, also for a shard given by
# path (the manifest beside it is used), and deviations are reported with
# the record's offset.
cp -r "$TMP/ds" "$TMP/contract"; c="$TMP/contract/$(basename "$first")"
"$SF" copy "$FX/interop/pwnall_data.tfrecord" --output "$c" --overwrite 2>/dev/null
check "shard beside its manifest: contract" test "$(exit_code "$SF" check "$c")" -eq 1
check "contract: missing feature" grep -q "$(basename "$first"):0: missing feature 'depth'.*unexpected feature 'answer'" "$TMP/last.out"
check "contract: manifest's counts" grep -q "$(basename "$first"): holds 1 records, the manifest says" "$TMP/last.out"
check "contract: schema source" grep -q "schema (from $TMP/contract/manifest.json)" "$TMP/last.out"
check "--raw skips the schema" test "$(exit_code "$SF" check --raw "$FX/interop/pwnall_data.tfrecord" "$first")" -eq 0
# A glob over a converted dataset matches manifest.json and the .index
# files: the dataset, not shards with CRC errors.
check "glob over a dataset exits 0" test "$(exit_code "$SF" check "$TMP/ds/*")" -eq 0
check "glob over a dataset: manifest used" grep -q "schema (from $TMP/ds/manifest.json)" "$TMP/last.out"
check "only an index file: usage error" test "$(exit_code "$SF" check "$first.index")" -eq 2
check "only an index file: said" grep -q "an index file, not a shard" "$TMP/last.err"

# Clean TensorFlow-written data is clean (testdata/tf_written).
TW="$FX/tf_written"
check "optional weight exits 0" test "$(exit_code "$SF" check "$TW/optional_weight.tfrecord")" -eq 0
check "optional weight in the schema" grep -q "weight  float  1 value, optional" "$TMP/last.out"
check "extensionless TF shard names found" test "$(exit_code "$SF" check "$TW/names")" -eq 0
check "across shards: lengths vary" test "$(exit_code "$SF" check "$TW/names/*")" -eq 0
check "variable length in the schema" grep -q "bbox  float  variable length" "$TMP/last.out"
check "schema in --json" grep -q '"schemas":\[{"source":"inferred from 140 records in 2 shards","inferred":true,"features":\[{"name":"bbox","kind":"float","length":0,"optional":false' <<<"$("$SF" check --json "$TW/names")"
check "kind conflict exits 1" test "$(exit_code "$SF" check "$TW/conflict.tfrecord")" -eq 1
check "kind conflict named" grep -q "conflict.tfrecord:1020: feature 'label' is bytes in 5 records of this shard (the first here), int64 in 30" "$TMP/last.out"
check "SequenceExamples exit 0" test "$(exit_code "$SF" check "$TW/sequence.tfrecord")" -eq 0
check "feature_lists in the summary" grep -q "SequenceExample feature_lists (values not checked): frames" "$TMP/last.out"
# SequenceExamples: `cat` prints them as JSON; the reader takes their context
# features and refuses feature_lists, naming them.
check "cat: SequenceExample as JSON" grep -q '^{"context":{"feature":{.*"featureLists":{"featureList":{"frames":' <<<"$("$SF" cat "$TW/sequence.tfrecord")"
check "reader: context features" test "$(exit_code "$SF" bench "$TW/sequence_context_only.tfrecord" --spec label:int64 --batch-size 3 --epochs 1)" -eq 0
check "reader: feature_lists refused" test "$(exit_code "$SF" bench "$TW/sequence.tfrecord" --spec length:int64 --batch-size 3 --epochs 1)" -ne 0
check "reader: feature_lists named" grep -q "a SequenceExample with feature_lists ('frames')" "$TMP/last.err"

# convert tfrecord: TensorFlow's shards (no extension; gzip too) resharded
# into a shardfeed dataset: every record once, the schema inferred from all.
"$SF" convert tfrecord --input "$TW/names" --output "$TMP/tfc" --num-shards 3 --quiet
check "convert tfrecord: clean dataset" test "$(exit_code "$SF" check "$TMP/tfc")" -eq 0
check "convert tfrecord: manifest schema" grep -q "bbox  float  variable length" "$TMP/last.out"
# (--raw: protobuf's JSON prints map entries in no fixed order)
"$SF" cat --raw "$TW/names/train-00000-of-00002" "$TW/names/train-00001-of-00002" | sort >"$TMP/in.txt"
"$SF" cat --raw "$TMP"/tfc/train-*.tfrecord | sort >"$TMP/out.txt"
check "convert tfrecord: every record once" cmp -s "$TMP/in.txt" "$TMP/out.txt"
check "convert tfrecord: shuffled" test "$("$SF" cat --raw "$TMP"/tfc/train-*.tfrecord | head -3)" != "$("$SF" cat --raw "$TW/names/train-00000-of-00002" | head -3)"
mkdir -p "$TMP/gzin"
"$SF" copy "$TW/optional_weight.tfrecord" --output "$TMP/gzin/data-00000-of-00001" --compression gzip 2>/dev/null
"$SF" convert tfrecord --input "$TMP/gzin" --output "$TMP/tfgz" --quiet
check "convert tfrecord (gzip input): clean" test "$(exit_code "$SF" check "$TMP/tfgz")" -eq 0
check "convert tfrecord: optional feature in the manifest" grep -q '"optional": true' "$TMP/tfgz/manifest.json"
check "convert tfrecord: split from the names" grep -q '"split": "data"' "$TMP/tfgz/manifest.json"
check "convert tfrecord (gzip input): same records" cmp -s <("$SF" cat --raw "$TW/optional_weight.tfrecord" | sort) <("$SF" cat --raw "$TMP"/tfgz/data-*.tfrecord | sort)

# index --manifest: index files and a manifest beside existing shards,
# nothing copied or changed; the folder is then a shardfeed dataset.
cp -r "$TW/names" "$TMP/inplace"; cp "$TW/optional_weight.tfrecord" "$TMP/inplace/"
check "index --manifest exits 0" test "$(exit_code "$SF" index --manifest "$TMP/inplace")" -eq 0
check "index --manifest: index files" test -f "$TMP/inplace/train-00001-of-00002.index"
check "index --manifest: shards unchanged" cmp -s "$TW/names/train-00001-of-00002" "$TMP/inplace/train-00001-of-00002"
check "index --manifest: the dataset checks clean" test "$(exit_code "$SF" check "$TMP/inplace")" -eq 0
check "index --manifest: the manifest is the contract" grep -q "schema (from $TMP/inplace/manifest.json)" "$TMP/last.out"
check "index --manifest: optional weight" grep -q "weight  float  1 value, optional" "$TMP/last.out"
check "index --manifest: no silent replacement" test "$(exit_code "$SF" index --manifest "$TMP/inplace")" -eq 2
check "index --manifest --overwrite" test "$(exit_code "$SF" index --manifest --overwrite "$TMP/inplace")" -eq 0

# A zero-byte shard is empty: said; a problem when the manifest lists records.
: >"$TMP/empty.tfrecord"
check "empty shard exits 0" test "$(exit_code "$SF" check "$TMP/empty.tfrecord")" -eq 0
check "empty shard said" grep -q "empty.tfrecord: empty shard (0 bytes, no records)" "$TMP/last.out"
cp -r "$TMP/ds" "$TMP/zero"; : >"$TMP/zero/$(basename "$first")"
check "listed empty shard exits 1" test "$(exit_code "$SF" check "$TMP/zero")" -eq 1
check "listed empty shard named" grep -q "$(basename "$first"): is empty (0 bytes); the manifest lists [0-9]* records for it" "$TMP/last.out"

# Salvage: damage two records of a shard; every other record comes back.
cp -r "$TMP/ds" "$TMP/dmg"; d="$TMP/dmg/$(basename "$first")"
n=$(wc -l <"$d.index")
o2=$(sed -n 3p "$d.index" | cut -d' ' -f1); o7=$(sed -n 8p "$d.index" | cut -d' ' -f1)
poke "$d" $((o2 + 100)) 7; poke "$d" $((o7 + 3)) 9
check "damaged exits 1" test "$(exit_code "$SF" check "$TMP/dmg" --salvage "$TMP/salvaged")" -eq 1
check "damaged record 2 reported" grep -q "$(basename "$first"):$o2: corrupted record: data CRC mismatch" "$TMP/last.out"
check "damaged record 7 reported" grep -q "$(basename "$first"):$o7: corrupted record header: length CRC mismatch" "$TMP/last.out"
check "salvage summary" grep -q "kept $((n - 2)) records, dropped 2 records in 2 regions" "$TMP/last.out"
check "salvaged shard is clean" test "$(exit_code "$SF" check "$TMP/salvaged/$(basename "$first")")" -eq 0
"$SF" cat --raw "$first" | sed -e '3d' -e '8d' >"$TMP/want.txt"
"$SF" cat --raw "$TMP/salvaged/$(basename "$first")" >"$TMP/got.txt"
check "salvage kept every other record, in order" cmp -s "$TMP/want.txt" "$TMP/got.txt"
check "original untouched" test "$(exit_code "$SF" check --raw "$d")" -eq 1

# JSON and usage.
check "json ok" grep -q '"ok":true' <<<"$("$SF" check --json "$TMP/ds")"
check "json problems" grep -q '"ok":false.*"problems":\[{"file"' <<<"$("$SF" check --json "$TMP/missing")"
check "missing path exits 2" test "$(exit_code "$SF" check "$TMP/nope.tfrecord")" -eq 2
check "no args exits 2" test "$(exit_code "$SF" check)" -eq 2
check "--help" grep -q "^Usage: shardfeed check" <<<"$("$SF" check --help)"

echo "check_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
