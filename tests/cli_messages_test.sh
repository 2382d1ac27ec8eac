#!/usr/bin/env bash
# End-to-end tests of consistent, honest command-line behavior: every command
# names shards the same way (folder, quoted glob, dataset, --split); a
# missing input is NOT_FOUND; check --json on a folder of leftovers prints
# its document; check --salvage writes a manifest and accepts a folder of
# undamaged shards; convert files @LIST takes a header and string labels;
# plurals, no doubled slashes, one-line manifest errors.
set -u
source "${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}/tests/harness.sh" cli_messages
no_double_slash() { ! grep -q '//' "$@"; }

"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/ds" --quiet
TRAIN="$(cd "$TMP/ds" && ls train-*.tfrecord)"
TEST="$(cd "$TMP/ds" && ls test-*.tfrecord)"
n_train=$("$SF" cat --count "$TMP/ds/$TRAIN" | tail -1 | cut -d' ' -f2)
n_test=$("$SF" cat --count "$TMP/ds/$TEST" | tail -1 | cut -d' ' -f2)

# A missing input is NOT_FOUND (exit 2), not "the output is inside the input".
for missing in /does/not/exist /nope "$TMP/none/*.tfrecord"; do
  check "convert tfrecord --input $missing exits 2" \
    test "$(exit_code "$SF" convert tfrecord --input "$missing" --output "$TMP/x/")" -eq 2
  check "convert tfrecord --input $missing: not found" \
    grep -Eq "no such file or directory|no file matches" "$TMP/last.err"
  check "convert tfrecord --input $missing: not 'inside'" test "$(grep -c inside "$TMP/last.err")" -eq 0
done
check "convert image-folder --input missing: not found" \
  test "$(exit_code "$SF" convert image-folder --input "$TMP/none" --output "$TMP/x")" -eq 2 -a \
       "$(grep -c "no such file or directory" "$TMP/last.err")" -eq 1

# One way of naming shards: cat, copy and index take what check and bench take.
check "cat --count a dataset folder" test "$(exit_code "$SF" cat --count "$TMP/ds")" -eq 0
check "cat of a dataset reads train, saying so" out_has "total $n_train"
check "... and says so" err_has "reading 'train' (choose with split=, --split)"
check "cat --split test" test "$(exit_code "$SF" cat --count --split test "$TMP/ds")" -eq 0
check "cat --split test reads the test shard" out_has "total $n_test"
check "cat --count a quoted glob" test "$(exit_code "$SF" cat --count "$TMP/ds/*.tfrecord")" -eq 0
check "... every shard it matches" out_has "total $((n_train + n_test))"
check "cat --split on shard names" test "$(exit_code "$SF" cat --count --split test "$TMP/ds/*.tfrecord")" -eq 0
check "... the test shard only" out_has "total $n_test"
check "cat an unknown split exits 2" test "$(exit_code "$SF" cat --count --split nope "$TMP/ds")" -eq 2
fp_cat=$("$SF" cat --fingerprint --split test "$TMP/ds" 2>/dev/null)
fp_bench=$("$SF" bench "$TMP/ds" --split test --epochs 1 --fingerprint --no-shuffle 2>/dev/null | tail -1)
check "cat --fingerprint --split equals bench's" test -n "$fp_cat" -a "$fp_cat" = "$fp_bench"
mkdir -p "$TMP/loose"; cp "$TMP/ds/$TRAIN" "$TMP/ds/$TEST" "$TMP/loose/"
check "copy a folder of shards" test "$(exit_code "$SF" copy "$TMP/loose" --output "$TMP/all.tfrecord")" -eq 0
check "copy of train-/test- shards takes train, as bench does" \
  test "$("$SF" cat --count "$TMP/all.tfrecord" | tail -1)" = "total $n_train"
check "... saying so" err_has "reading 'train' (choose with split=, --split)"
check "copy a quoted glob" test "$(exit_code "$SF" copy "$TMP/loose/*" --output "$TMP/glob.tfrecord")" -eq 0
check "copy took every shard the glob names" \
  test "$("$SF" cat --count "$TMP/glob.tfrecord" | tail -1)" = "total $((n_train + n_test))"
check "copy --split" test "$(exit_code "$SF" copy "$TMP/ds" --split test --output "$TMP/test.tfrecord")" -eq 0
check "copy --split took the split" test "$("$SF" cat --count "$TMP/test.tfrecord" | tail -1)" = "total $n_test"
check "copy keeps the order given" test "$(exit_code "$SF" copy "$TMP/loose/$TEST" "$TMP/loose/$TRAIN" --output "$TMP/order.tfrecord")" -eq 0
check "... test records first" test "$("$SF" cat --raw "$TMP/order.tfrecord" | head -1)" = "$("$SF" cat --raw "$TMP/loose/$TEST" | head -1)"
check "index a folder" test "$(exit_code "$SF" index "$TMP/loose")" -eq 0
check "index wrote both" test -f "$TMP/loose/$TRAIN.index" -a -f "$TMP/loose/$TEST.index"
rm "$TMP/loose/"*.index
check "index a quoted glob --split" test "$(exit_code "$SF" index --split test "$TMP/loose/*.tfrecord")" -eq 0
check "index --split wrote only the split" test -f "$TMP/loose/$TEST.index" -a ! -f "$TMP/loose/$TRAIN.index"
check "index --manifest --split is refused" test "$(exit_code "$SF" index --manifest --split test "$TMP/loose")" -eq 2

# check --json on a folder holding only what a killed run left.
sleep 0 & dead=$!; wait "$dead"
mkdir -p "$TMP/killed"; head -c 100 "$TMP/ds/$TRAIN" >"$TMP/killed/.train-00000.partial-$dead"
check "check --json on leftovers only exits 1" test "$(exit_code "$SF" check --json "$TMP/killed/")" -eq 1
check "... and prints its JSON document" python3 -c "
import json
r = json.load(open('$TMP/last.out'))
assert r['ok'] is False and r['shards'] == 0, r
assert r['leftovers'] == ['$TMP/killed/.train-00000.partial-$dead'], r['leftovers']
"
check "check (text) on leftovers only names them" test "$(exit_code "$SF" check "$TMP/killed")" -eq 1 -a \
  "$(grep -c "warning: $TMP/killed/.train-00000.partial-$dead" "$TMP/last.out")" -eq 1

# check --salvage: a manifest with the dataset's schema; a salvage folder that
# names only undamaged shards is fine.
cp -r "$TMP/ds" "$TMP/damaged"
printf 'A' | dd of="$TMP/damaged/$TRAIN" bs=1 seek=5000 conv=notrunc 2>/dev/null
check "salvage exits 1 (problems)" test "$(exit_code "$SF" check "$TMP/damaged" --salvage "$TMP/rescued/")" -eq 1
check "salvage names the manifest it wrote" out_has "wrote $TMP/rescued/manifest.json"
check "salvage paths have no doubled slash" no_double_slash "$TMP/last.out"
check "the salvage manifest keeps dtype and shape" python3 -c "
import json
m = json.load(open('$TMP/rescued/manifest.json'))
f = {x['name']: x for x in m['features']}
assert f['image']['dtype'] == 'uint8' and [int(d) for d in f['image']['shape']] == [3, 32, 32], f['image']
assert [s['file'] for s in m['shards']] == ['$TRAIN'] and int(m['total_records']) == $n_train - 1, m['shards']
"
check "the salvaged dataset checks clean" test "$(exit_code "$SF" check "$TMP/rescued")" -eq 0
mkdir -p "$TMP/undamaged"; cp "$TMP/ds/$TEST" "$TMP/undamaged/"
check "salvaging into the folder of an undamaged shard" \
  test "$(exit_code "$SF" check "$TMP/damaged/$TRAIN" "$TMP/undamaged/$TEST" --salvage "$TMP/undamaged" --quiet)" -eq 1
check "... salvages the damaged one there" test -f "$TMP/undamaged/$TRAIN" -a "$(grep -c "would replace" "$TMP/last.err")" -eq 0
check "salvaging over a damaged input is still refused" \
  test "$(exit_code "$SF" check "$TMP/damaged" --salvage "$TMP/damaged")" -eq 2
check "... saying so" err_has "would replace the input"

# convert files @LIST: a header row and string labels.
H="$FX/images/hymenoptera/train"
a1="$H/ants/$(ls "$H/ants" | head -1)"; a2="$H/ants/$(ls "$H/ants" | sed -n 2p)"; b1="$H/bees/$(ls "$H/bees" | head -1)"
printf 'path,label\n%s,bee\n%s,ant\n%s,ant\n' "$b1" "$a1" "$a2" >"$TMP/list.csv"
check "files @list.csv with a header and names" \
  test "$(exit_code "$SF" convert files --input "@$TMP/list.csv" --output "$TMP/named" --no-shuffle)" -eq 0
check "names become indices in sorted order, listed" python3 -c "
import json, subprocess
m = json.load(open('$TMP/named/manifest.json'))
assert m['class_names'] == ['ant', 'bee'], m['class_names']
rows = [json.loads(l)['features']['feature'] for l in subprocess.check_output(['$SF', 'cat', '$TMP/named']).splitlines()]
labels = [int(r['label']['int64List']['value'][0]) for r in rows]
assert labels == [1, 0, 0], labels
"
printf '%s,3\n%s,5\n' "$a1" "$b1" >"$TMP/numbers.csv"
"$SF" convert files --input "@$TMP/numbers.csv" --output "$TMP/numbered" --no-shuffle --quiet
check "numeric labels stay numbers" python3 -c "
import json
m = json.load(open('$TMP/numbered/manifest.json'))
assert m['class_names'] == [], m['class_names']
"

# Plurals and slashes.
printf '%s\n' "$a1" >"$TMP/one.csv"
check "one record converts" test "$(exit_code "$SF" convert files --input "@$TMP/one.csv" --output "$TMP/one/")" -eq 0
check "'1 record ... 1 shard'" grep -q "^converted 1 record (.*) into 1 shard in " "$TMP/last.err"
check "index says '1 record'" test "$("$SF" index "$TMP/one" | grep -c ' 1 record$')" -eq 1
mkdir -p "$TMP/imgs/ants"; cp "$a1" "$TMP/imgs/ants/"; printf 'not an image' >"$TMP/imgs/ants/notes.txt"
"$SF" convert image-folder --input "$TMP/imgs/" --output "$TMP/imgds/" 2>"$TMP/last.err"
check "image-folder warning names the file" err_has "skipped $TMP/imgs/ants/notes.txt: not a JPEG"
check "convert messages have no doubled slash" no_double_slash "$TMP/last.err"

for i in 0 1; do
  "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/tasks/" --task-index "$i" --task-count 2 \
    --shard-size 1MB 2>>"$TMP/tasks.err"
done
check "task summaries have no doubled slash" no_double_slash "$TMP/tasks.err"
check "merge OUT/ merges" test "$(exit_code "$SF" merge "$TMP/tasks/")" -eq 0
check "merge messages have no doubled slash" no_double_slash "$TMP/last.err"
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/half/" --task-index 0 --task-count 2 --quiet
check "merge of a missing task exits 1" test "$(exit_code "$SF" merge "$TMP/half/")" -eq 1
check "... '1 problem', no doubled slash" grep -q "^shardfeed merge: $TMP/half: 1 problem in the task parts" "$TMP/last.err"
check "... and no doubled slash there" no_double_slash "$TMP/last.err"

# A manifest that does not parse: one line naming the file.
cp -r "$TMP/ds" "$TMP/badm"; printf '{"shards": [ {"file": 3' >"$TMP/badm/manifest.json"
check "bad manifest exits 1" test "$(exit_code "$SF" check "$TMP/badm")" -eq 1
check "bad manifest: one line naming the file" \
  grep -q "^$TMP/badm/manifest.json: not a valid manifest (.*)$" "$TMP/last.out"
check "no protobuf caret line" test "$(grep -c '^ *^' "$TMP/last.out")" -eq 0
check "cat: the same one line" test "$(exit_code "$SF" cat "$TMP/badm")" -eq 1 -a "$(wc -l <"$TMP/last.err")" -eq 1

finish
