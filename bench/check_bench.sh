#!/usr/bin/env bash
# Verification benchmark (issue: check), in one run: `shardfeed check` vs
# `cat` of the same shards to /dev/null, on >= 1 GB of CIFAR-shaped shards in
# the page cache. Usage: bench/check_bench.sh [DATASETS_DIR] [SCRATCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS="${1:-../shared/datasets}"
WORK="${2:-/tmp/shardfeed-check-bench}"
source tools/setup.sh
bazel build //cli:shardfeed >/dev/null 2>&1
SF="$(bazel info bazel-bin 2>/dev/null)/cli/shardfeed"
mkdir -p "$WORK"
if [ ! -d "$WORK/full/cifar-10-batches-bin" ]; then
  shardfeed_tf_python
  "$SHARDFEED_TF_PYTHON" bench/make_full_cifar.py "$DATASETS" "$WORK/full"
fi
dirs=()
for seed in 1 2 3 4 5 6; do
  [ -e "$WORK/ds$seed/manifest.json" ] ||
    "$SF" convert cifar10 --input "$WORK/full/cifar-10-batches-bin" --output "$WORK/ds$seed" --seed "$seed" --quiet
  dirs+=("$WORK/ds$seed")
done
shards=$(ls "$WORK"/ds*/*.tfrecord)
bytes=$(cat $shards | wc -c)
cat $shards >/dev/null  # warm the page cache

best_of() {
  local n=$1 best=999999; shift
  for _ in $(seq "$n"); do
    local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N)
    best=$(python3 -c "print(min($best, $t1 - $t0))")
  done
  echo "$best"
}
t_cat=$(best_of 5 sh -c "cat $(echo $shards) >/dev/null")
t_raw=$(best_of 5 "$SF" check --raw --quiet "${dirs[@]}")
t_full=$(best_of 5 "$SF" check --quiet "${dirs[@]}")
t_raw1=$(best_of 3 "$SF" check --raw --quiet --threads 1 "${dirs[@]}")
echo "machine: $(nproc) cores; $(echo $shards | wc -w) shards, $((bytes / 1000000)) MB in the page cache"
python3 - <<PY
b, c = $bytes, $t_cat
for name, t in [("cat > /dev/null (baseline)", c),
                ("shardfeed check --raw (framing + CRCs), 2 threads", $t_raw),
                ("shardfeed check --raw, 1 thread", $t_raw1),
                ("shardfeed check (+ schema, index, manifest checksums)", $t_full)]:
    print(f"{name:56s} {b / t / 1e9:6.2f} GB/s  {c / t:5.2f}x cat")
PY
