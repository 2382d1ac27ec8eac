#!/usr/bin/env bash
# Runs shardfeed's full test suite: installs what is missing (Debian
# packages; tensorflow-cpu in a cached virtual environment for the
# interoperability tests), builds, runs `bazel test //...`, and ends with
# "N passed, N failed". Extra arguments go to bazel (e.g. --config=asan).
set -euo pipefail
cd "$(dirname "$0")"
source tools/setup.sh
shardfeed_install_debs
shardfeed_tf_python
shardfeed_object_store_servers
shardfeed_wheel_tools

test_env=(--test_env=SHARDFEED_TF_PYTHON="$SHARDFEED_TF_PYTHON" --test_env=SHARDFEED_REQUIRE_TF=1)
test_env+=(--test_env=SHARDFEED_WEED="$SHARDFEED_WEED" --test_env=SHARDFEED_RCLONE="$SHARDFEED_RCLONE")
if datasets="$(shardfeed_datasets_dir)"; then
  test_env+=(--test_env=SHARDFEED_DATASETS="$datasets")
else
  echo "shardfeed: ../shared/datasets not found; tests over the full real data will skip" >&2
fi

status=0
bazel test //... "${test_env[@]}" "$@" || status=$?
mapfile -t targets < <(bazel query 'tests(//...)' 2>/dev/null)
python3 tools/count_tests.py "$(bazel info bazel-testlogs "$@" 2>/dev/null)" "${targets[@]}"
exit "$status"
