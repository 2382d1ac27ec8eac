#!/usr/bin/env bash
# Installs shardfeed for C++ users outside Bazel:
#   bazel run //:install -- PREFIX
# writes PREFIX/include/shardfeed/..., PREFIX/lib/libshardfeed.a,
# PREFIX/lib/pkgconfig/shardfeed.pc and PREFIX/lib/cmake/shardfeed/ (see
# build_defs/install.bzl). Files already there are replaced; others are left.
# A relative PREFIX is relative to the directory bazel was run from.
set -euo pipefail
if [[ $# -ne 2 || "$2" == -* ]]; then
  echo "usage: bazel run //:install -- PREFIX" >&2
  exit 2
fi
tree="$1"
prefix="$2"
if [[ "$prefix" != /* ]]; then
  prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix"
fi
mkdir -p "$prefix"
# -L: the tree is a set of symlinks in runfiles; the copies are writable, so
# a later install can replace them.
cp -RL --no-preserve=mode "$tree"/. "$prefix"/
echo "shardfeed installed in $prefix" \
  "($(grep '^Version:' "$tree/lib/pkgconfig/shardfeed.pc" | cut -d' ' -f2))"
