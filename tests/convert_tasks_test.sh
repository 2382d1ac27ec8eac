#!/usr/bin/env bash
# Conversion as independent tasks, then `merge`: byte-identical to the
# single-process conversion (cifar10 by size and by count with gzip, an
# image folder, a file list); tasks running as concurrent processes, one
# killed mid-write (blocked on a FIFO) and run again; task numbers from Slurm
# and Kubernetes variables; a missing, damaged or foreign task named by merge,
# which then changes nothing; a re-run task replaces only its own shards.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
SF="$ROOT/cli/shardfeed"
FX="$ROOT/testdata"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/tasks.XXXXXX")"
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
# tasks OUT N ARGS...: runs the N tasks (concurrently) then merges.
tasks() {
  local out="$1" n="$2"; shift 2
  local pids=() i
  for ((i = 0; i < n; i++)); do
    "$SF" convert "$@" --output "$out" --task-index "$i" --task-count "$n" --quiet & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || return 1; done
  "$SF" merge "$out" --quiet
}

# --- Byte-identical to one process -----------------------------------------
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/one" --shard-size 200KB --quiet
check "3 tasks + merge" tasks "$TMP/three" 3 cifar10 --input "$FX/cifar10-bin" --shard-size 200KB
check "cifar10: 3 tasks byte-identical to one process" diff -r "$TMP/one" "$TMP/three"
check "no _parts left after merge" test ! -e "$TMP/three/_parts"
check "more tasks than shards" tasks "$TMP/many" 13 cifar10 --input "$FX/cifar10-bin" --shard-size 200KB
check "13 tasks (some empty) byte-identical" diff -r "$TMP/one" "$TMP/many"
"$SF" convert cifar10 --input "$FX/cifar10-py" --output "$TMP/gz1" --num-shards 4 --compression gzip --seed 3 --quiet
tasks "$TMP/gz2" 2 cifar10 --input "$FX/cifar10-py" --num-shards 4 --compression gzip --seed 3
check "--num-shards --compression gzip: byte-identical" diff -r "$TMP/gz1" "$TMP/gz2"
IMG="$FX/images/hymenoptera"
"$SF" convert image-folder --input "$IMG" --output "$TMP/img1" --shard-size 300KB --quiet
tasks "$TMP/img2" 4 image-folder --input "$IMG" --shard-size 300KB
check "image-folder: byte-identical" diff -r "$TMP/img1" "$TMP/img2"

# --- Concurrent processes, one killed mid-write and run again ---------------
mkdir -p "$TMP/files"
for i in $(seq 0 39); do head -c $((1000 + i * 37)) /dev/urandom >"$TMP/files/f$i.bin"; done
ls "$TMP"/files/*.bin >"$TMP/list.txt"
mkfifo "$TMP/files/zz-blocks.bin"   # size 0 when listed; reading it blocks
echo "$TMP/files/zz-blocks.bin" >>"$TMP/list.txt"
pids=()
for i in 0 1 2; do
  "$SF" convert files --input "@$TMP/list.txt" --output "$TMP/k" --shard-size 8KB --allow-small-shards \
    --task-index $i --task-count 3 --quiet 2>/dev/null & pids+=($!)
done
for _ in $(seq 100); do [ "$(ls "$TMP"/k/_parts/*.json 2>/dev/null | wc -l)" = 2 ] && break; sleep 0.1; done
stuck=""
for i in 0 1 2; do [ -e "$TMP/k/_parts/task-0000$i-of-00003.json" ] || stuck=$i; done
check "two tasks finished, one blocked" test -n "$stuck"
stuck="${stuck:-0}"
for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null
"$SF" merge "$TMP/k" >/dev/null 2>"$TMP/merge.err"
check "merge refuses: exit 1" test $? = 1
check "merge names the killed task" grep -q "task $stuck of 3: missing" "$TMP/merge.err"
check "merge wrote nothing" test ! -e "$TMP/k/manifest.json"
rm "$TMP/files/zz-blocks.bin"; : >"$TMP/files/zz-blocks.bin"   # the same size as listed: 0
before="$(ls -l --time-style=+%s.%N "$TMP"/k/_parts/*/*.tfrecord | grep -v "task-0000$stuck")"
check "re-run of the killed task" "$SF" convert files --input "@$TMP/list.txt" --output "$TMP/k" \
  --shard-size 8KB --allow-small-shards --task-index "$stuck" --task-count 3 --quiet
check "the re-run touched only its own shards" test "$before" = \
  "$(ls -l --time-style=+%s.%N "$TMP"/k/_parts/*/*.tfrecord | grep -v "task-0000$stuck")"
check "merge after the re-run" "$SF" merge "$TMP/k" --quiet
"$SF" convert files --input "@$TMP/list.txt" --output "$TMP/k1" --shard-size 8KB --allow-small-shards --quiet
check "files: killed + re-run tasks byte-identical to one process" diff -r "$TMP/k1" "$TMP/k"

# --- Task numbers from Slurm and Kubernetes ----------------------------------
for i in 1 2; do  # sbatch --array=1-2
  SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=2 \
    "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/slurm" --shard-size 200KB --quiet
done
check "Slurm array 1-2 -> tasks 0 and 1" test -e "$TMP/slurm/_parts/task-00000-of-00002.json" -a -e "$TMP/slurm/_parts/task-00001-of-00002.json"
check "merge of Slurm tasks" "$SF" merge "$TMP/slurm" --quiet
check "Slurm: byte-identical" diff -r "$TMP/one" "$TMP/slurm"
for i in 0 1; do
  JOB_COMPLETION_INDEX=$i "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/k8s" \
    --shard-size 200KB --task-count 2 --quiet
done
check "Kubernetes indexed job + merge" "$SF" merge "$TMP/k8s" --quiet
check "Kubernetes: byte-identical" diff -r "$TMP/one" "$TMP/k8s"
JOB_COMPLETION_INDEX=0 "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/k8s2" --quiet 2>"$TMP/err"
check "JOB_COMPLETION_INDEX without --task-count: exit 2" test $? = 2
check "... says --task-count is needed" grep -q "task-count" "$TMP/err"
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/bad" --task-index 3 --task-count 3 --quiet 2>/dev/null
check "--task-index out of range: exit 2" test $? = 2

# --- The examples run these commands ------------------------------------------
for i in 0 1 2; do  # what sbatch --array=0-2 runs, without the merge submission
  SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=3 SUBMIT_MERGE=0 SHARDFEED="$SF" \
    bash "$ROOT/examples/slurm/convert_array.sh" "$IMG" "$TMP/ex-slurm" 2>/dev/null
done
check "examples/slurm/convert_array.sh tasks + merge" "$SF" merge "$TMP/ex-slurm" --quiet
"$SF" convert image-folder --input "$IMG" --output "$TMP/ex-one" --shard-size 100MB --seed 42 --quiet
check "the Slurm example's dataset is the single run's" diff -r "$TMP/ex-one" "$TMP/ex-slurm"
YAML="$ROOT/examples/kubernetes/convert-job.yaml"
check "Kubernetes example: --task-count equals completions" test \
  "$(grep -o 'completions: [0-9]*' "$YAML" | grep -o '[0-9]*')" = \
  "$(grep -o '"--task-count", "[0-9]*"' "$YAML" | grep -o '[0-9]*"$' | tr -d '"')"

# --- Damaged and foreign parts -------------------------------------------------
mkdir "$TMP/dmg"
for i in 0 1; do "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/dmg" --shard-size 200KB --task-index $i --task-count 2 --quiet; done
victim="$(ls "$TMP"/dmg/_parts/task-00001-of-00002/*.tfrecord | head -1)"
printf 'X' | dd of="$victim" bs=1 seek=100 conv=notrunc 2>/dev/null
"$SF" merge "$TMP/dmg" 2>"$TMP/merge.err" >/dev/null
check "damaged shard: merge exit 1" test $? = 1
check "damaged shard named with its task" grep -q "task 1: .*$(basename "$victim"): CRC32C" "$TMP/merge.err"
check "damaged: nothing merged" test ! -e "$TMP/dmg/manifest.json" -a -e "$TMP/dmg/_parts/task-00000-of-00002.json"
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/dmg" --shard-size 200KB --task-index 1 --task-count 2 --quiet
check "re-run of the damaged task, then merge" "$SF" merge "$TMP/dmg" --quiet
check "repaired: byte-identical" diff -r "$TMP/one" "$TMP/dmg"
mkdir "$TMP/mix"
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/mix" --shard-size 200KB --task-index 0 --task-count 2 --quiet
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/mix" --shard-size 200KB --seed 9 --task-index 1 --task-count 2 --quiet
"$SF" merge "$TMP/mix" 2>"$TMP/merge.err" >/dev/null
check "tasks of different runs: exit 1" test $? = 1
check "... names the foreign task" grep -q "task 1: from another run" "$TMP/merge.err"
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/one" --task-index 0 --task-count 2 --quiet 2>/dev/null
check "a task into a merged dataset: refused" test $? = 2

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
