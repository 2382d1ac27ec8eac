#!/usr/bin/env bash
# Convert an image folder with a Slurm job array: each array task writes its
# share of the shards (the same shards a single `shardfeed convert` would
# write), then one dependent job merges them into one dataset.
#
#   sbatch --array=0-15 examples/slurm/convert_array.sh /data/imagenet/train /data/shards/in1k
#   sbatch --dependency=afterok:<array job id> --wrap "shardfeed merge /data/shards/in1k"
#
# or let the script submit the merge itself (SUBMIT_MERGE=1, the default).
# `shardfeed convert` takes the task from SLURM_ARRAY_TASK_ID (minus
# SLURM_ARRAY_TASK_MIN, over SLURM_ARRAY_TASK_STEP) and the count from
# SLURM_ARRAY_TASK_COUNT. A preempted or failed task can be requeued or run
# again (`sbatch --array=7 ...`): it replaces only its own part. `merge`
# names any task that is missing or damaged and then writes nothing.
#SBATCH --job-name=shardfeed-convert
#SBATCH --cpus-per-task=8
#SBATCH --mem=8G
#SBATCH --time=04:00:00
#SBATCH --requeue
#SBATCH --output=shardfeed-convert-%A_%a.log
set -euo pipefail
INPUT="${1:?usage: sbatch --array=0-N convert_array.sh INPUT_FOLDER OUTPUT_FOLDER}"
OUTPUT="${2:?usage: sbatch --array=0-N convert_array.sh INPUT_FOLDER OUTPUT_FOLDER}"
SHARDFEED="${SHARDFEED:-shardfeed}"

# Every task lists the same input and computes the same global shuffle.
"$SHARDFEED" convert image-folder --input "$INPUT" --output "$OUTPUT" \
  --shard-size 100MB --seed 42 --threads "${SLURM_CPUS_PER_TASK:-0}"

# The first task submits the merge, to run once every task has succeeded.
if [ "${SUBMIT_MERGE:-1}" = 1 ] && [ "${SLURM_ARRAY_TASK_ID:-}" = "${SLURM_ARRAY_TASK_MIN:-0}" ]; then
  sbatch --dependency="afterok:${SLURM_ARRAY_JOB_ID}" --job-name=shardfeed-merge \
    --output="shardfeed-merge-%j.log" --wrap "$SHARDFEED merge '$OUTPUT'"
fi
