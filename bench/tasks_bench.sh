#!/usr/bin/env bash
# One `shardfeed convert` process (--threads 2) against 2 tasks (--threads 1
# each, concurrently, then `merge`) on the same input, on this machine; checks
# that both give byte-identical datasets. Usage:
#   bench/tasks_bench.sh SHARDFEED TYPE INPUT [convert flags...]
#   bench/tasks_bench.sh bazel-bin/cli/shardfeed cifar10 ../shared/datasets/cifar10-bin
set -euo pipefail
SF="$1" TYPE="$2" INPUT="$3"; shift 3
TMP="$(mktemp -d /tmp/tasks_bench.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
now() { date +%s.%N; }
best_one=999999 best_two=999999
for rep in 1 2 3; do
  rm -rf "$TMP/one" "$TMP/two"
  t0=$(now)
  "$SF" convert "$TYPE" --input "$INPUT" --output "$TMP/one" --threads 2 --quiet "$@"
  t1=$(now)
  "$SF" convert "$TYPE" --input "$INPUT" --output "$TMP/two" --threads 1 --task-index 0 --task-count 2 --quiet "$@" &
  "$SF" convert "$TYPE" --input "$INPUT" --output "$TMP/two" --threads 1 --task-index 1 --task-count 2 --quiet "$@"
  wait
  t2=$(now)
  "$SF" merge "$TMP/two" --quiet
  t3=$(now)
  diff -r "$TMP/one" "$TMP/two" >/dev/null || { echo "NOT byte-identical"; exit 1; }
  one=$(echo "$t1 - $t0" | bc); two=$(echo "$t3 - $t1" | bc); merge=$(echo "$t3 - $t2" | bc)
  echo "run $rep: 1 process ${one}s; 2 tasks + merge ${two}s (merge ${merge}s)"
done
echo "records: $(python3 -c "import json,sys; print(json.load(open('$TMP/one/manifest.json'))['total_records'])") bytes: $(du -sb "$TMP/one" | cut -f1)"
