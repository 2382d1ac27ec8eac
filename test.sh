#!/usr/bin/env bash
# Runs shardfeed's full test suite: installs what is missing (Debian
# packages; tensorflow-cpu in a cached virtual environment for the
# interoperability tests), builds, runs `bazel test //...`, and ends with
# "N passed, N failed". The emulated GPU suite (gpu/emu, the *_emu tests)
# runs again under --config=tsan and --config=asan, counted in that line.
# Extra arguments go to bazel (e.g. --config=asan) and skip those runs.
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
counted=("$(bazel info bazel-testlogs "$@" 2>/dev/null)" "${targets[@]}")

# The emulated GPU suite again under ThreadSanitizer and AddressSanitizer:
# gpu/emu's own tests and every *_emu / *_emu_test target (python_emu_test
# excepted: the interpreter is not instrumented). Each configuration builds
# into its own output directory (.bazelrc: --platform_suffix). Not with
# extra arguments (they may name a sanitizer already); SHARDFEED_SANITIZERS=0
# skips them.
if [ "$#" -eq 0 ] && [ "${SHARDFEED_SANITIZERS:-1}" != 0 ]; then
  mapfile -t emulated < <(bazel query 'tests(//gpu/emu/...) + attr(name, "_emu$|_emu_test$", tests(//...)) - //python:python_emu_test' 2>/dev/null)
  if [ "${#emulated[@]}" -eq 0 ]; then
    echo "shardfeed: the query for the emulated GPU suite found no tests" >&2
    status=1
  fi
  for config in tsan asan; do
    [ "${#emulated[@]}" -gt 0 ] || break
    bazel test --config="$config" "${test_env[@]}" "${emulated[@]}" || status=$?
    counted+=(-- "$(bazel info --config="$config" bazel-testlogs 2>/dev/null)" "${emulated[@]}")
  done
fi
python3 tools/count_tests.py "${counted[@]}"
exit "$status"
