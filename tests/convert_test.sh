#!/usr/bin/env bash
# End-to-end tests of `shardfeed convert` on the bundled fixtures: naming and
# size limits, index and manifest agreement, determinism (two runs; 1 vs 2
# threads), every bad-input case, no partial dataset on failure, refusal to
# overwrite, and an interrupted run.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
SF="$ROOT/cli/shardfeed"
FX="$ROOT/testdata"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/convert.XXXXXX")"
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
exit_code() { "$@" >"$TMP/last.out" 2>"$TMP/last.err"; echo $?; }
no_dataset() {  # no manifest and no complete-looking shard under $1
  [ ! -e "$1/manifest.json" ] && [ -z "$(find "$1" -name '*-of-*' 2>/dev/null)" ]
}
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d" + sys.argv[2]))' "$1" "$2"; }

# --- A conversion, its names, index and manifest ---------------------------
check "convert cifar10 bin" "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/a" --shard-size 200KB --quiet
n_train=$(ls "$TMP"/a/train-*-of-*.tfrecord | wc -l)
check "several train shards" test "$n_train" -ge 8
check "train shard names" test -e "$TMP/a/train-00000-of-$(printf %05d "$n_train").tfrecord" -a -e "$TMP/a/train-$(printf %05d $((n_train - 1)))-of-$(printf %05d "$n_train").tfrecord"
check "test shard names" test -e "$TMP/a/test-00000-of-00002.tfrecord"
for f in "$TMP"/a/*.tfrecord; do
  size=$(stat -c %s "$f")
  last=$(tail -1 "$f.index" | cut -d' ' -f2)
  # A shard may exceed the target only by its last record.
  check "$(basename "$f") within 200 kB but for its last record" test $((size - last)) -lt 200000
  cp "$f" "$TMP/copy.tfrecord"; rm -f "$TMP/copy.tfrecord.index"
  "$SF" index "$TMP/copy.tfrecord" >/dev/null
  check "$(basename "$f") index agrees" cmp -s "$f.index" "$TMP/copy.tfrecord.index"
done
check "manifest total" test "$(json_get "$TMP/a/manifest.json" "['total_records']")" = 600
check "manifest shard count" test "$(json_get "$TMP/a/manifest.json" "['shards'].__len__()")" = "$(ls "$TMP"/a/*.tfrecord | wc -l)"
check "manifest records agree with cat" test "$("$SF" cat --count "$TMP"/a/*.tfrecord | tail -1)" = "total 600"
first_train="$(ls "$TMP"/a/train-00000-of-*.tfrecord)"
check "manifest bytes agree" test "$(json_get "$TMP/a/manifest.json" "['shards'][0]['bytes']")" = "$(stat -c %s "$first_train")"
check "class names" test "$(json_get "$TMP/a/manifest.json" "['class_names'][9]")" = truck

# --- Determinism -------------------------------------------------------------
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/b" --shard-size 200KB --quiet --threads 1
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/c" --shard-size 200KB --quiet --threads 2
check "1 vs 2 threads byte-identical" diff -r "$TMP/b" "$TMP/c"
check "two runs byte-identical" diff -r "$TMP/a" "$TMP/c"
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/d" --shard-size 200KB --quiet --seed 7
check "another seed, another order" test -n "$(cmp "$first_train" "$TMP/d/$(basename "$first_train")" 2>&1)"
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/e" --quiet --no-shuffle --num-shards 3 --compression gzip
check "--num-shards 3 --compression gzip" test -e "$TMP/e/train-00002-of-00003.tfrecord.gz"
check "gzip shards read back" test "$("$SF" cat --count "$TMP"/e/*.gz | tail -1)" = "total 600"

# --- Every source type on the fixtures ------------------------------------
check "cifar10 python layout" "$SF" convert cifar10 --input "$FX/cifar10-py" --output "$TMP/py" --quiet
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/bin1" --quiet
check "py and bin layouts give identical records" cmp -s "$TMP/py/train-00000-of-00001.tfrecord" "$TMP/bin1/train-00000-of-00001.tfrecord"
check "validation split" "$SF" convert cifar10 --input "$FX/cifar10-py" --output "$TMP/val" --quiet --validation-from data_batch_5
check "validation split names" test -e "$TMP/val/validation-00000-of-00001.tfrecord" -a -e "$TMP/val/eval-00000-of-00001.tfrecord"
check "mnist" "$SF" convert mnist --input "$FX/mnist" --output "$TMP/mnist" --quiet
check "image-folder with splits" "$SF" convert image-folder --input "$FX/images/hymenoptera" --output "$TMP/hym" --quiet
check "image-folder split names" test -e "$TMP/hym/train-00000-of-00001.tfrecord" -a -e "$TMP/hym/val-00000-of-00001.tfrecord"
mkdir -p "$TMP/imgs/cat" && cp "$FX"/images/cifar10-jpg/cat/* "$TMP/imgs/cat/" && echo "not an image" >"$TMP/imgs/cat/notes.txt"
check "image-folder skips non-images" test "$("$SF" convert image-folder --input "$TMP/imgs" --output "$TMP/imgs-out" --json 2>/dev/null | json_get /dev/stdin "['skipped_inputs']")" = 1
check "--strict makes it an error" test "$(exit_code "$SF" convert image-folder --input "$TMP/imgs" --output "$TMP/strict" --strict)" -eq 1
check "strict error names the file" grep -q "notes.txt" "$TMP/last.err"
# A truncated JPEG (its frame header cut off) is skipped with a warning like a
# non-image, or a data error (exit 1) with --strict; a GIF is stored with a
# warning that the decode stage cannot read it. (Old code: exit 2, whole run
# aborted, no GIF warning.)
mkdir -p "$TMP/broken/cat" && cp "$FX"/images/cifar10-jpg/cat/* "$TMP/broken/cat/"
head -c 300 "$FX/images/hymenoptera/train/ants/0013035.jpg" >"$TMP/broken/cat/cut.jpg"
printf 'GIF89a\001\000\001\000\000\000\000;' >"$TMP/broken/cat/tiny.gif"
check "a truncated JPEG is skipped" test "$(exit_code "$SF" convert image-folder --input "$TMP/broken" --output "$TMP/broken-out" --json)" -eq 0
check "... and counted" test "$(json_get "$TMP/last.out" "['skipped_inputs']")" = 1
check "... with a warning naming it" grep -q "skipped .*cut.jpg: JPEG: no frame header" "$TMP/last.err"
check "a GIF gets a decode warning" grep -q "1 GIF image is stored as it is.*tiny.gif" "$TMP/last.err"
check "warnings are in --json too" python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["warnings"]; assert any("cut.jpg" in x for x in w) and any("GIF" in x for x in w), w' "$TMP/last.out"
check "--strict: a truncated JPEG is a data error" test "$(exit_code "$SF" convert image-folder --input "$TMP/broken" --output "$TMP/broken-strict" --strict)" -eq 1
check "... naming it" grep -q "cut.jpg: JPEG: no frame header.*(--strict)" "$TMP/last.err"
check "... and leaving no output folder" test ! -e "$TMP/broken-strict"
# A broken header found only while writing (a JPEG whose frame header lies
# beyond the first 4 KB, cut short): DATA_LOSS, exit 1, and the folder this
# run created is gone again (old code: exit 2 and an empty folder left).
mkdir -p "$TMP/late/cat" && cp "$FX"/images/cifar10-jpg/cat/* "$TMP/late/cat/"
python3 -c 'import struct,sys; open(sys.argv[1],"wb").write(b"\xff\xd8\xff\xe1" + struct.pack(">H", 6002) + b"E" * 6000 + b"\xff")' "$TMP/late/cat/exif_cut.jpg"
check "a header broken past 4 KB: exit 1" test "$(exit_code "$SF" convert image-folder --input "$TMP/late" --output "$TMP/late-out")" -eq 1
check "... naming the file" grep -q "exif_cut.jpg: JPEG: no frame header" "$TMP/last.err"
check "... and removing the folder it created" test ! -e "$TMP/late-out"
mkdir -p "$TMP/late-mine" && echo mine >"$TMP/late-mine/keep.txt"
exit_code "$SF" convert image-folder --input "$TMP/late" --output "$TMP/late-mine" >/dev/null
check "... but never a folder it did not create" test "$(cat "$TMP/late-mine/keep.txt")" = mine
printf '%s,3\n%s,4\n' "$FX/images/cifar10-jpg/cat/$(ls "$FX/images/cifar10-jpg/cat" | head -1)" "$FX/mnist/t10k-labels-idx1-ubyte.gz" >"$TMP/list.csv"
check "files from a list with labels" "$SF" convert files --input "@$TMP/list.csv" --output "$TMP/files" --quiet
check "files records" test "$("$SF" cat --count "$TMP"/files/*.tfrecord | tail -1)" = "total 2"

# --- Bad input: clear errors, exit codes, nothing left behind ---------------
mkdir -p "$TMP/bad1" && cp "$FX"/cifar10-bin/* "$TMP/bad1/" && head -c 100000 "$FX/cifar10-bin/data_batch_3.bin" >"$TMP/bad1/data_batch_3.bin"
check "partial record exits 1" test "$(exit_code "$SF" convert cifar10 --input "$TMP/bad1" --output "$TMP/out1")" -eq 1
check "partial record error" grep -q "data_batch_3.bin:98336: batch size 100000 is not a whole number of 3073-byte records" "$TMP/last.err"
check "nothing left (partial record)" no_dataset "$TMP/out1"
mkdir -p "$TMP/bad2" && cp "$FX"/cifar10-bin/* "$TMP/bad2/" && printf '\x0c' | dd of="$TMP/bad2/test_batch.bin" bs=1 seek=$((3073 * 7)) conv=notrunc 2>/dev/null
check "label out of range exits 1" test "$(exit_code "$SF" convert cifar10 --input "$TMP/bad2" --output "$TMP/out2")" -eq 1
check "label error names file and offset" grep -q "test_batch.bin:21511: record 7: label 12 is out of range 0..9" "$TMP/last.err"
check "nothing left (label)" no_dataset "$TMP/out2"
mkdir -p "$TMP/bad3" && cp "$FX"/cifar10-py/* "$TMP/bad3/" && head -c 200000 "$FX/cifar10-py/data_batch_2" >"$TMP/bad3/data_batch_2"
check "truncated pickle exits 1" test "$(exit_code "$SF" convert cifar10 --input "$TMP/bad3" --output "$TMP/out3")" -eq 1
check "truncated pickle error" grep -q "data_batch_2:[0-9]*: pickle opcode 0x54: truncated pickle" "$TMP/last.err"
(cd "$FX" && tar czhf "$TMP/cifar.tar.gz" cifar10-bin)
head -c 500000 "$TMP/cifar.tar.gz" >"$TMP/cut.tar.gz"
check "archive converts" "$SF" convert cifar10 --input "$TMP/cifar.tar.gz" --output "$TMP/tar" --quiet
check "archive gives the folder's shards" diff -r -x manifest.json "$TMP/tar" "$TMP/bin1"
check "truncated archive exits 1" test "$(exit_code "$SF" convert cifar10 --input "$TMP/cut.tar.gz" --output "$TMP/out4")" -eq 1
check "truncated archive error" grep -q "cut.tar.gz:500000: compressed (gzip) stream is truncated" "$TMP/last.err"
check "nothing left (archive)" no_dataset "$TMP/out4"
mkdir -p "$TMP/empty"
check "empty input exits 2" test "$(exit_code "$SF" convert cifar10 --input "$TMP/empty" --output "$TMP/out5")" -eq 2
check "empty input error" grep -q "no CIFAR-10 batches found" "$TMP/last.err"
mkdir -p "$TMP/bad6" && cp "$FX"/cifar10-bin/* "$TMP/bad6/" && rm "$TMP/bad6/data_batch_4.bin" && mkdir "$TMP/bad6/data_batch_4.bin"
check "unreadable batch exits 2" test "$(exit_code "$SF" convert cifar10 --input "$TMP/bad6" --output "$TMP/out6")" -eq 2
check "unreadable batch error" grep -q "data_batch_4.bin: is a directory" "$TMP/last.err"
check "missing input exits 2" test "$(exit_code "$SF" convert mnist --input "$TMP/nope" --output "$TMP/out7")" -eq 2
check "unknown type exits 2" test "$(exit_code "$SF" convert imagenet --input x --output y)" -eq 2
check "--json error" grep -q '"ok":false' <<<"$("$SF" convert mnist --input "$TMP/nope" --output "$TMP/out7" --json 2>/dev/null)"
# The error document is JSON whatever the message holds (old code C-escaped
# it: a ' in a path came out as \', which no JSON parser reads).
"$SF" convert mnist --input "$TMP/it's gone" --output "$TMP/out7" --json >"$TMP/err.json" 2>/dev/null
check "--json error is JSON" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] is False and "it'"'"'s gone" in d["error"] and d["code"], d' "$TMP/err.json"

long="$(printf 'p%.0s' $(seq 240))"
check "a shard that cannot be created exits 2" test "$(exit_code "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/long" --prefix "$long")" -eq 2
check "the error names the folder and shard, not the hidden temporary" grep -q "$TMP/long (shard $long-t[a-z]*-00000): cannot create: File name too long" "$TMP/last.err"
check "the error does not show the temporary" test -z "$(grep -e '\.partial' -e '\.tmp-' "$TMP/last.err")"

# --- Every flag checked (issue 14): exit 2 with a message, never an abort ----
check "--threads 100000 refused" test "$(exit_code "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/f1" --threads 100000)" -eq 2
check "--threads message" grep -q -- "--threads must be between 0 and 1024, not 100000" "$TMP/last.err"
check "--shard-size nan refused" test "$(exit_code "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/f1" --shard-size nan)" -eq 2
check "--shard-size 16 refused" test "$(exit_code "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/f1" --shard-size 16)" -eq 2
check "says how to force it" grep -q -- "--allow-small-shards" "$TMP/last.err"
check "nothing written for refused flags" test ! -e "$TMP/f1"
check "--shard-size 100mb accepted" "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/f2" --shard-size 100mb --quiet
check "--shard-size 100Mb accepted" "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/f3" --shard-size 100Mb --quiet
check "any case, same shards" diff -r "$TMP/f2" "$TMP/f3"
check "--allow-small-shards forces it" "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/f4" --shard-size 20kB --allow-small-shards --quiet
check "small shards written" test "$(ls "$TMP"/f4/test-*.tfrecord | wc -l)" -ge 10
check "--num-shards above a split's records" test "$(exit_code "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/f5" --num-shards 150)" -eq 0
check "says what happened" grep -q "split 'test' has 100 records: wrote 100 shards (one record each), not --num-shards 150" "$TMP/last.err"
check "one shard per test record" test -e "$TMP/f5/test-00099-of-00100.tfrecord"
check "150 train shards" test -e "$TMP/f5/train-00149-of-00150.tfrecord"
check "bench --batch-size 10000000 refused" test "$(exit_code timeout 60 "$SF" bench "$TMP/a" --batch-size 10000000)" -eq 2
check "bench --batch-size message" grep -q -- "--batch-size must be between 1 and" "$TMP/last.err"
check "bench --epochs -1 refused" test "$(exit_code timeout 60 "$SF" bench "$TMP/a" --epochs -1)" -eq 2
check "bench --decode-threads -3 refused" test "$(exit_code timeout 60 "$SF" bench "$TMP/a" --decode-threads -3)" -eq 2
check "bench --io-threads 100000 refused" test "$(exit_code timeout 60 "$SF" bench "$TMP/a" --io-threads 100000)" -eq 2
check "bench --cache-features without --cache refused" test "$(exit_code timeout 60 "$SF" bench "$TMP/a" --cache-features label)" -eq 2
check "bench: a batch larger than the data is bounded" test "$(exit_code timeout 60 "$SF" bench "$TMP/a" --split test --batch-size 1000000)" -eq 0
check "bench says so" grep -q "note: --batch-size 1000000 is more than the 100 records per rank; using 100" "$TMP/last.err"
check "check --threads 100000 refused" test "$(exit_code "$SF" check "$TMP/a" --threads 100000)" -eq 2

# --- Progress (forced on: stderr is not a terminal here) ----------------------
SHARDFEED_PROGRESS=1 "$SF" check "$TMP/f5" 2>"$TMP/p.err" >/dev/null
check "check progress counts bytes" grep -q "check: [0-9.]* [kMG]*B/[0-9.]* [kMG]*B" "$TMP/p.err"
check "check progress says no records" test -z "$(grep records "$TMP/p.err")"
SHARDFEED_PROGRESS=1 "$SF" bench "$TMP/f5" --split train --batch-size 16 2>"$TMP/p.err" >/dev/null
check "bench progress counts batches" grep -q "bench: [0-9]*/32 batches" "$TMP/p.err"
check "bench progress says no records" test -z "$(grep records "$TMP/p.err")"
ls "$FX"/images/cifar10-jpg/*/* | head -40 >"$TMP/files.txt"
SHARDFEED_PROGRESS=1 "$SF" convert files --input "@$TMP/files.txt" --output "$TMP/f6" 2>"$TMP/p.err" >/dev/null
check "convert files shows progress before the end" grep -q "train: 1/40 records" "$TMP/p.err"

# --- Existing output ---------------------------------------------------------
check "refuses to overwrite" test "$(exit_code "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/a")" -eq 2
check "says --overwrite" grep -q "use --overwrite" "$TMP/last.err"
check "overwrite works" "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/a" --overwrite --quiet --shard-size 100MB
check "stale shards removed on overwrite" test "$(ls "$TMP"/a/train-*.tfrecord | wc -l)" -eq 1

# --overwrite replaces only what a shardfeed manifest there lists (issue 14).
mkdir -p "$TMP/tfw" && cp "$FX/cifar10-py/test_batch" "$TMP/tfw/train-00000-of-00004.tfrecord"
cp "$TMP/tfw/train-00000-of-00004.tfrecord" "$TMP/tf-original"
check "refuses to replace a TensorFlow-written shard" test "$(exit_code "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/tfw" --overwrite)" -eq 2
check "names the foreign shard" grep -q "train-00000-of-00004.tfrecord" "$TMP/last.err"
check "the foreign shard is intact" cmp -s "$TMP/tf-original" "$TMP/tfw/train-00000-of-00004.tfrecord"
check "wrote nothing beside it" test "$(ls -A "$TMP/tfw")" = "train-00000-of-00004.tfrecord"
mkdir -p "$TMP/mine" && echo '{"my": "own manifest"}' >"$TMP/mine/manifest.json"
check "refuses to replace a foreign manifest.json" test "$(exit_code "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/mine" --overwrite)" -eq 2
check "names the foreign manifest" grep -q "manifest.json" "$TMP/last.err"
check "the foreign manifest is intact" test "$(cat "$TMP/mine/manifest.json")" = '{"my": "own manifest"}'
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/own" --quiet --shard-size 200KB
cp "$TMP/tf-original" "$TMP/own/test-00000-of-00009.tfrecord"
check "refuses a foreign shard beside a shardfeed dataset" test "$(exit_code "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/own" --overwrite)" -eq 2
check "names only the unlisted shard" grep -q "lists them): test-00000-of-00009.tfrecord; " "$TMP/last.err"
rm "$TMP/own/test-00000-of-00009.tfrecord"
echo "keep me" >"$TMP/own/notes.txt"
check "overwrite with another prefix" "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/own" --overwrite --quiet --prefix c10
check "the previous dataset's shards are gone" test -z "$(ls "$TMP"/own/train-* "$TMP"/own/test-* 2>/dev/null)"
check "other files stay" test "$(cat "$TMP/own/notes.txt")" = "keep me"

# image-folder: no output inside the input, no input inside the output.
mkdir -p "$TMP/tree/cat" && cp "$FX"/images/cifar10-jpg/cat/* "$TMP/tree/cat/"
check "refuses an output inside the input" test "$(exit_code "$SF" convert image-folder --input "$TMP/tree" --output "$TMP/tree/out")" -eq 2
check "says why" grep -q "is inside the input folder" "$TMP/last.err"
check "created nothing inside the input" test ! -e "$TMP/tree/out"
check "refuses the input folder itself" test "$(exit_code "$SF" convert image-folder --input "$TMP/tree" --output "$TMP/tree/cat/../")" -eq 2
check "refuses an input inside the output" test "$(exit_code "$SF" convert image-folder --input "$TMP/tree/cat/.." --output "$TMP")" -eq 2
check "says the input is inside" grep -q "is inside the output folder" "$TMP/last.err"
check "a sibling output is fine" "$SF" convert image-folder --input "$TMP/tree" --output "$TMP/tree-out" --quiet

# tfrecord: no output in the input's folder (the shards would land beside the
# input's; with --overwrite, replacing "the previous dataset" removed the input).
sum_a="$(cat "$TMP"/a/*.tfrecord | md5sum)"
check "tfrecord: refuses the input folder as output" test "$(exit_code "$SF" convert tfrecord --input "$TMP/a" --output "$TMP/a/" --overwrite)" -eq 2
check "tfrecord: says why" grep -q "is inside the input folder" "$TMP/last.err"
check "tfrecord: refuses a folder inside the manifest's" test "$(exit_code "$SF" convert tfrecord --input "$TMP/a/manifest.json" --output "$TMP/a/sub")" -eq 2
check "tfrecord: refuses a glob's folder" test "$(exit_code "$SF" convert tfrecord --input "$TMP/a/train-*.tfrecord" --output "$TMP/a")" -eq 2
check "tfrecord: the input is intact" test "$(cat "$TMP"/a/*.tfrecord | md5sum)" = "$sum_a" -a ! -e "$TMP/a/sub"
check "tfrecord: a sibling output is fine" "$SF" convert tfrecord --input "$TMP/a" --output "$TMP/a-tf" --quiet

# Leftovers of a killed run: the next convert removes its own (not a live
# run's, not another prefix's) and says so.
sleep 0 & dead=$!; wait "$dead"
mkdir -p "$TMP/left"
for f in ".train-00000.partial-$dead" ".train-00001.partial-$dead.tmp-$dead-3" "manifest.json.tmp-$dead-0" \
         ".train-00002.partial-$$" ".other-00000.partial-$dead" "data.bin.tmp-$dead-0"; do
  echo x >"$TMP/left/$f"
done
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/left" 2>"$TMP/left.err" >/dev/null
check "convert removed its leftovers" test -z "$(ls -A "$TMP/left" | grep -e "partial-$dead" -e "manifest.json.tmp" | grep -v other)"
check "and said so" grep -q "removed 3 temporary file(s) an interrupted run left in .*partial-$dead" "$TMP/left.err"
check "kept a live run's temporary" test -e "$TMP/left/.train-00002.partial-$$"
check "kept another prefix's temporary" test -e "$TMP/left/.other-00000.partial-$dead"
check "kept files it does not write" test -e "$TMP/left/data.bin.tmp-$dead-0"

# --- Interrupted runs --------------------------------------------------------
mkdir -p "$TMP/big"
for i in $(seq 1 150); do head -c 1000000 /dev/urandom >"$TMP/big/f$i.bin"; done
"$SF" convert files --input "$TMP/big/*.bin" --output "$TMP/killed" --shard-size 5MB --threads 1 --compression gzip --compression-level 9 &
pid=$!; sleep 0.5; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
check "SIGKILL mid-way leaves no complete-looking shard and no manifest" no_dataset "$TMP/killed"
"$SF" convert files --input "$TMP/big/*.bin" --output "$TMP/killed" --shard-size 5MB 2>/dev/null
check "the next convert leaves no temporary behind" test -z "$(ls -A "$TMP/killed" | grep '^\.')"
# Progress advances within one large gzip shard (not only per shard).
"$SF" convert files --input "$TMP/big/*.bin" --output "$TMP/onegz" --num-shards 1 --compression gzip --compression-level 1 --quiet
shard="$(ls "$TMP"/onegz/*.gz)"
SHARDFEED_PROGRESS=1 "$SF" check "$shard" 2>"$TMP/p.err" >/dev/null
# A line "check: DONE/TOTAL" with DONE < TOTAL, before the last.
partial="$(tr '\r' '\n' <"$TMP/p.err" | grep -o 'check: [^ ]* [kMG]*B/[^ ]* [kMG]*B' | sed 's/^check: //' | awk -F/ '$1 != $2' | head -1)"
check "check progress within a gzip shard ($partial)" test -n "$partial"
"$SF" convert files --input "$TMP/big/*.bin" --output "$TMP/interrupted" --shard-size 5MB --threads 1 --compression gzip --compression-level 9 2>"$TMP/int.err" &
pid=$!; sleep 0.5; kill -INT $pid 2>/dev/null; wait $pid; rc=$?
check "SIGINT exits non-zero" test "$rc" -ne 0
check "SIGINT leaves nothing at all" test -z "$(ls -A "$TMP/interrupted" 2>/dev/null)"
# Ctrl-C stops between records, not after a chunk of 128 (the old code took
# 5 s or more here: a chunk is 128 MB to compress at level 9).
"$SF" convert files --input "$TMP/big/*.bin" --output "$TMP/int2" --shard-size 200MB --threads 1 --compression gzip --compression-level 9 2>/dev/null &
pid=$!; sleep 1; start=$(date +%s%N); kill -INT $pid 2>/dev/null; wait $pid; stop_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "SIGINT stops within 3 s (took ${stop_ms} ms)" test "$stop_ms" -lt 3000
check "and leaves nothing" test -z "$(ls -A "$TMP/int2" 2>/dev/null)"

check "--help" grep -q "^Usage: shardfeed convert" <<<"$("$SF" convert --help)"
echo "convert_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
