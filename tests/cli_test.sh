#!/usr/bin/env bash
# End-to-end tests of the shardfeed binary: output formats, --help, exit
# codes (0 ok, 1 data problem, 2 usage or I/O), and that a corrupt input
# never leaves an output file behind.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
SF="$ROOT/cli/shardfeed"
DATA="$ROOT/testdata/interop"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/cli.XXXXXX")"
passed=0
failed=0

check() {  # check NAME COMMAND...: the command must succeed
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}

exit_code() { "$@" >/dev/null 2>&1; echo $?; }

# cat: Examples as canonical JSON, raw strings as base64.
out="$("$SF" cat "$DATA/pwnall_singles.tfrecords")"
check "cat prints one line per record" test "$(wc -l <<<"$out")" -eq 3
check "cat Example JSON" grep -q '{"features":{"feature":{"int_feature":{"int64List":{"value":\["42"\]}}}}}' <<<"$out"
check "cat raw strings as base64" test "$("$SF" cat "$DATA/magenta_tfrecord_iterator_test.tfrecord" | head -1)" = '"aGVsbG8gd29ybGQ="'
check "cat --raw" test "$("$SF" cat --raw "$DATA/pwnall_data.tfrecord" | cut -c1)" = '"'

# cat --count over every interop file, compressed ones included.
counts="$("$SF" cat --count "$DATA"/*.tfrecord*)"
check "count gzip" grep -qx ".*tfx_sequence_eval.tfrecord.gz 4500" <<<"$counts"
check "count total" grep -qx "total 5108" <<<"$counts"

# copy: none -> gzip -> zlib -> none keeps the records byte for byte.
check "copy to gzip" "$SF" copy "$DATA/tfx_cifar10_test_tiny.tfrecord" --output "$TMP/a.gz" --compression gzip
check "gzip magic" test "$(head -c2 "$TMP/a.gz" | od -An -tx1 | tr -d ' ')" = "1f8b"
check "copy to zlib" "$SF" copy "$TMP/a.gz" --output "$TMP/b.zlib" --compression zlib --compression-level 9
check "copy back to none" "$SF" copy "$TMP/b.zlib" --output "$TMP/c.tfrecord" --index
check "round trip is byte-identical" cmp -s "$DATA/tfx_cifar10_test_tiny.tfrecord" "$TMP/c.tfrecord"
check "copy --index wrote the index" test "$(wc -l <"$TMP/c.tfrecord.index")" -eq 100
check "copy refuses to overwrite" test "$(exit_code "$SF" copy "$TMP/a.gz" --output "$TMP/c.tfrecord")" -eq 2
check "copy concatenates" "$SF" copy "$DATA/pwnall_singles.tfrecords" "$DATA/pwnall_data.tfrecord" --output "$TMP/cat.tfrecord"
check "concatenated count" grep -qx ".*cat.tfrecord 4" <<<"$("$SF" cat --count "$TMP/cat.tfrecord")"

# copy --index with compressed output: the index (decompressed offsets, as
# `index` writes them) is written, not silently dropped.
check "copy --index to gzip" "$SF" copy "$DATA/tfx_cifar10_test_tiny.tfrecord" --output "$TMP/g.tfrecord.gz" --compression gzip --index
check "gzip copy's index equals the plain one" cmp -s "$TMP/g.tfrecord.gz.index" "$TMP/c.tfrecord.index"
check "copy --index to zlib" "$SF" copy "$DATA/tfx_cifar10_test_tiny.tfrecord" --output "$TMP/z.zlib" --compression zlib --index
cp "$TMP/z.zlib" "$TMP/z2.zlib" && "$SF" index "$TMP/z2.zlib" >/dev/null
check "zlib copy's index equals shardfeed index's" cmp -s "$TMP/z.zlib.index" "$TMP/z2.zlib.index"

# copy shows progress (forced on: stderr is not a terminal here), in bytes.
SHARDFEED_PROGRESS=1 "$SF" copy "$TMP/a.gz" --output "$TMP/p.tfrecord" 2>"$TMP/p.err"
check "copy shows progress" grep -q "copy: [0-9.]* [kMG]*B/[0-9.]* [kMG]*B" "$TMP/p.err"
check "copy --compression-level 10 refused" test "$(exit_code "$SF" copy "$TMP/a.gz" --output "$TMP/q.gz" --compression gzip --compression-level 10)" -eq 2

# index: DALI format, identical to what copy --index wrote.
cp "$DATA/tfx_cifar10_test_tiny.tfrecord" "$TMP/d.tfrecord"
check "index" "$SF" index "$TMP/d.tfrecord"
check "index equals writer's index" cmp -s "$TMP/d.tfrecord.index" "$TMP/c.tfrecord.index"
check "index first line" test "$(head -1 "$TMP/d.tfrecord.index" | cut -d' ' -f1)" = "0"

# Corruption: exit 1, file:offset in the message, no output left behind.
cp "$DATA/pwnall_singles.tfrecords" "$TMP/bad.tfrecord"
printf '\x00' | dd of="$TMP/bad.tfrecord" bs=1 seek=60 conv=notrunc 2>/dev/null
check "cat corrupt exits 1" test "$(exit_code "$SF" cat "$TMP/bad.tfrecord")" -eq 1
check "error names file and offset" grep -q "bad.tfrecord:40: corrupted record: data CRC mismatch" <<<"$("$SF" cat "$TMP/bad.tfrecord" 2>&1 >/dev/null)"
check "index corrupt exits 1" test "$(exit_code "$SF" index "$TMP/bad.tfrecord")" -eq 1
check "no index for corrupt shard" test ! -e "$TMP/bad.tfrecord.index"
check "copy corrupt exits 1" test "$(exit_code "$SF" copy "$TMP/bad.tfrecord" --output "$TMP/out.tfrecord")" -eq 1
check "copy left nothing" test -z "$(ls "$TMP" | grep '^out')"
head -c 50 "$DATA/pwnall_singles.tfrecords" >"$TMP/trunc.tfrecord"
check "truncated exits 1" test "$(exit_code "$SF" cat "$TMP/trunc.tfrecord")" -eq 1

# check --salvage never replaces an input shard, even with --overwrite.
mkdir -p "$TMP/dmg"
cp "$TMP/bad.tfrecord" "$TMP/dmg/bad.tfrecord" && cp "$TMP/bad.tfrecord" "$TMP/bad.orig"
check "salvage into the input folder exits 2" test "$(exit_code "$SF" check "$TMP/dmg" --salvage "$TMP/dmg" --overwrite)" -eq 2
check "salvage into the input folder says why" grep -q "would replace the input" <<<"$("$SF" check "$TMP/dmg" --salvage "$TMP/dmg/." --overwrite 2>&1)"
ln -s "$TMP/dmg" "$TMP/dmg-link"
check "salvage into a link to the input folder exits 2" test "$(exit_code "$SF" check "$TMP/dmg/bad.tfrecord" --salvage "$TMP/dmg-link" --overwrite)" -eq 2
check "the damaged shard is untouched" cmp -s "$TMP/bad.orig" "$TMP/dmg/bad.tfrecord"
check "salvage elsewhere still works" test "$(exit_code "$SF" check "$TMP/dmg" --salvage "$TMP/rescued")" -eq 1
check "salvaged shard written" test -e "$TMP/rescued/bad.tfrecord"

# check lists the temporaries an interrupted run left (a warning, exit 0).
sleep 0 & dead=$!; wait "$dead"
mkdir -p "$TMP/ds" && cp "$DATA/tfx_cifar10_test_tiny.tfrecord" "$TMP/ds/a.tfrecord"
touch "$TMP/ds/.train-00000.partial-$dead.tmp-$dead-0" "$TMP/ds/b.tfrecord.tmp-$dead-1"
out="$("$SF" check --raw "$TMP/ds")"; rc=$?
check "leftovers do not fail check" test "$rc" -eq 0
check "check names the partial shard" grep -q "^warning: $TMP/ds/.train-00000.partial-$dead.tmp-$dead-0: a temporary file" <<<"$out"
check "check names the copy temporary" grep -q "^warning: $TMP/ds/b.tfrecord.tmp-$dead-1: " <<<"$out"
check "check --json lists leftovers" grep -q "\"leftovers\":\[\"$TMP/ds/.train-00000.partial-$dead.tmp-$dead-0\"," <<<"$("$SF" check --raw --json "$TMP/ds")"

# An output that cannot be created: the error names it, not its temporary.
err="$("$SF" copy "$TMP/a.gz" --output "$TMP/no/such/dir/out.tfrecord" 2>&1 >/dev/null)"
check "copy names the output it cannot create" grep -q "$TMP/no/such/dir/out.tfrecord: cannot create: No such file or directory" <<<"$err"
check "copy does not name the temporary" test -z "$(grep '\.tmp-' <<<"$err")"

# Usage and I/O errors: exit 2.
check "missing file exits 2" test "$(exit_code "$SF" cat "$TMP/missing.tfrecord")" -eq 2
check "unknown flag exits 2" test "$(exit_code "$SF" cat --bogus x)" -eq 2
check "unknown command exits 2" test "$(exit_code "$SF" frobnicate)" -eq 2
check "no args exits 2" test "$(exit_code "$SF")" -eq 2
check "bad compression exits 2" test "$(exit_code "$SF" copy x --output y --compression lzma)" -eq 2

# --help everywhere.
for cmd in cat copy index; do
  check "$cmd --help" grep -q "^Usage: shardfeed $cmd" <<<"$("$SF" $cmd --help)"
done
check "top-level --help" grep -q "Commands:" <<<"$("$SF" --help)"
check "--version" grep -q "^shardfeed [0-9]" <<<"$("$SF" --version)"

echo "cli_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
