#!/usr/bin/env bash
# Remote reading benchmark (issue 23): shardfeed vs MosaicML Streaming vs
# NVIDIA DALI, the same CIFAR-10 train records in the same SeaweedFS bucket
# on loopback, through tests/fault_proxy.py (30 +- 10 ms first byte, a cap
# per connection and in total), whole processes timed from outside; the CPU
# model, flags and load average printed; a markdown table at the end. The
# work is in bench/remote_bench.py (--help; e.g. --baseline OLD_BINARY for
# before/after in one run, --only shardfeed,local).
# Usage:
#   bench/remote_bench.sh [SHARDFEED_BINARY] [WORK_DIR] [remote_bench.py flags]
set -euo pipefail
cd "$(dirname "$0")/.."
SF="$(realpath "${1:-bazel-bin/cli/shardfeed}")"
WORK="${2:-/tmp/shardfeed-remote-bench}"
shift $(($# < 2 ? $# : 2))
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/shardfeed/venv"
PY="${SHARDFEED_TF_PYTHON:-$VENV/bin/python}"
WEED="${SHARDFEED_WEED:-$VENV/bin/weed}"
DATASETS="${SHARDFEED_DATASETS:-../shared/datasets}"
[ -d "$DATASETS/cifar10-bin" ] || DATASETS=/work/shared/datasets
[ -d "$DATASETS/cifar10-bin" ] || DATASETS=testdata  # the fixture: 1,017 records per batch
mkdir -p "$WORK"
if [ ! -e "$WORK/ds/manifest.json" ]; then
  python3 bench/make_full_cifar.py "$DATASETS" "$WORK/full"
  "$SF" convert cifar10 --input "$WORK/full/cifar-10-batches-bin" --output "$WORK/ds" --quiet
fi
exec python3 bench/remote_bench.py --shardfeed "$SF" --dataset "$WORK/ds" --work "$WORK" \
  --venv-python "$PY" --weed "$WEED" "$@"
