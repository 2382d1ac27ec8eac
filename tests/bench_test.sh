#!/usr/bin/env bash
# Exactly-once proof end to end: `shardfeed bench --epochs 1 --fingerprint`
# equals `shardfeed cat --fingerprint` of the same shards, whatever the seed,
# thread counts or number of ranks (fingerprints summed over ranks). Also the
# bench report, the no-GPU note, and a corrupt shard.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
SF="$ROOT/cli/shardfeed"
FX="$ROOT/testdata"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/bench.XXXXXX")"
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
fp() { grep -o 'fingerprint=[0-9a-f]*' | cut -d= -f2; }
records() { grep -o 'records=[0-9]*' | cut -d= -f2; }

"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/ds" --shard-size 200KB --quiet
# Without --split, a dataset with train and test reads train (and says so):
# 500 of the 600 records, never both splits mixed.
want="$("$SF" cat --fingerprint "$TMP/ds" 2>"$TMP/err")"
check "cat --fingerprint counts every train record" test "$(records <<<"$want")" = 500
check "the default split is said" grep -q "holds the splits train, test: reading 'train'" "$TMP/err"
for seed in 0 1 42; do
  for threads in 1 2; do
    for world in 1 2 4 5; do
      sum=0; total=0
      for rank in $(seq 0 $((world - 1))); do
        out="$("$SF" bench "$TMP/ds" --epochs 1 --fingerprint --seed "$seed" --io-threads "$threads" \
               --decode-threads "$threads" --batch-size 48 --shuffle-buffer 200 --rank "$rank" --world-size "$world")"
        sum=$(python3 -c "print(($sum + 0x$(fp <<<"$out")) % 2**64)")
        total=$((total + $(records <<<"$out")))
      done
      check "seed $seed threads $threads world $world: every record once" test "$total" = 500
      check "seed $seed threads $threads world $world: fingerprint" test "$(printf %016x "$sum")" = "$(fp <<<"$want")"
    done
  done
done

# A different spec sees different values.
other="$("$SF" cat --fingerprint --spec 'label:int64' "$TMP/ds")"
check "another spec, another fingerprint" test "$(fp <<<"$other")" != "$(fp <<<"$want")"
check "bench --spec agrees with cat --spec" test "$("$SF" bench "$TMP/ds" --spec 'label:int64' --fingerprint | fp)" = "$(fp <<<"$other")"

out="$("$SF" bench "$TMP/ds" --epochs 2 --device 0 2>"$TMP/err")"
check "bench reports throughput" grep -q "^throughput .* records/s" <<<"$out"
check "bench reports a verdict" grep -Eq "^verdict +(I/O-bound|decode-bound|copy-bound|consumer-bound)" <<<"$out"
check "two epochs" grep -q "^records      1000 in" <<<"$out"
if grep -q "no CUDA device" "$TMP/err"; then
  check "no GPU: says so and uses host memory" grep -q "delivering batches in host memory" "$TMP/err"
fi
cp -r "$TMP/ds" "$TMP/bad"; f="$(ls "$TMP"/bad/train-00001-*.tfrecord)"
printf '\x00' | dd of="$f" bs=1 seek=5000 conv=notrunc 2>/dev/null
"$SF" bench "$TMP/bad" >/dev/null 2>"$TMP/err"; rc=$?
check "corrupt shard: exit 1" test "$rc" -eq 1
check "corrupt shard: file and offset" grep -q "$(basename "$f"):3175: corrupted record: data CRC mismatch" "$TMP/err"
check "skip-corrupt: one record skipped" grep -q "^records      499 in .* (1 skipped)" <<<"$("$SF" bench "$TMP/bad" --skip-corrupt)"
# --json: a data error is a JSON document on stdout too (old code: nothing).
"$SF" bench "$TMP/bad" --json >"$TMP/out.json" 2>/dev/null; rc=$?
check "corrupt shard, --json: exit 1" test "$rc" -eq 1
check "corrupt shard, --json: an error document" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] is False and d["code"] == "DATA_LOSS" and ":3175: corrupted record" in d["error"], d' "$TMP/out.json"
# The whole run beside the loader's clock (issue 22): the time since the
# process started covers the loader's, start-up and all, and stays within
# what a stopwatch outside the process sees; --json adds the teardown.
t0=$(date +%s.%N)
"$SF" bench "$TMP/ds" --epochs 2 --json >"$TMP/whole.json" 2>/dev/null
t1=$(date +%s.%N)
check "--json: whole-process figures" python3 - "$TMP/whole.json" "$(python3 -c "print($t1 - $t0)")" <<'PY'
import json, sys
d, outside = json.load(open(sys.argv[1])), float(sys.argv[2])
assert d["records"] == 1000, d
assert 0 < d["startup_s"] <= d["process_seconds"], d
assert d["seconds"] <= d["process_seconds"] + 1e-3, d  # the loader's clock starts later
assert d["process_seconds"] + d["teardown_s"] <= outside, (d, outside)  # the stopwatch sees more
assert d["teardown_s"] >= 0 and d["process_cpu_s"] > 0, d
assert abs(d["process_records_per_s"] - d["records"] / d["process_seconds"]) <= 0.02 * d["process_records_per_s"], d
PY
out="$("$SF" bench "$TMP/ds" --epochs 1 2>/dev/null)"
check "text: the whole run, start-up and teardown" grep -Eq "^whole run +[0-9]+ records/s over [0-9.]+ s since the process started \(start-up [0-9.]+ s.*teardown [0-9.]+ s" <<<"$out"
# --cache serves epochs from a resident table, reading no record bytes: its
# MB/s is that of the batches delivered (was "0.0 MB/s", issue 20).
out="$("$SF" bench "$TMP/ds" --epochs 3 --cache 2>/dev/null)"
check "--cache: MB/s of the batches, not 0.0" python3 -c 'import re,sys; m=re.search(r"^throughput +[0-9]+ records/s, ([0-9.]+) MB/s of batches", sys.argv[1], re.M); assert m and float(m.group(1)) > 0, sys.argv[1]' "$out"
"$SF" bench "$TMP/ds" --epochs 3 --cache --json >"$TMP/cache.json" 2>/dev/null
check "--cache --json: mb_per_s of the batches" python3 -c 'import json,sys; d, w = (json.load(open(f)) for f in sys.argv[1:]); assert d["mb_per_s"] > 0 and d["mb_per_s_of"] == "batches" and 2 * d["batch_bytes"] == 3 * w["batch_bytes"] > 0, d' "$TMP/cache.json" "$TMP/whole.json"
check "--help" grep -q "^Usage: shardfeed bench" <<<"$("$SF" bench --help)"
echo "bench_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
