#!/usr/bin/env bash
# The install (`bazel run //:install -- PREFIX`) as a C++ user outside this
# repository meets it: installs into a temporary prefix, then
#  - every installed header compiles on its own with only -I PREFIX/include
#    (nothing internal, generated-but-missing or CUDA is needed);
#  - the version agrees everywhere (shardfeed --version, SHARDFEED_VERSION,
#    pkg-config, the CMake version file);
#  - examples/cpp builds through find_package(shardfeed) and through one
#    g++ line with `pkg-config --cflags --libs shardfeed`, links no CUDA
#    toolkit, and prints exactly what `shardfeed cat --fingerprint` prints
#    for a converted dataset.
# Args: the install tree (//:install_tree).
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
TREE="$ROOT/${1#./}"
SF="$ROOT/cli/shardfeed"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/install.XXXXXX")"
export HOME="$TMP"  # cmake's user package registry, if it looks
PREFIX="$TMP/prefix"
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
logged() {  # runs "$@" with output in $TMP/$1.log, shown when it fails
  local log="$TMP/$1.log"; shift
  "$@" >"$log" 2>&1 || { cat "$log"; return 1; }
}

check "install" logged install "$ROOT/build_defs/install.sh" "$TREE" "$PREFIX"
for f in include/shardfeed/shardfeed.h include/shardfeed/status_macros.h \
         include/shardfeed/proto/manifest.pb.h lib/libshardfeed.a \
         lib/pkgconfig/shardfeed.pc lib/cmake/shardfeed/shardfeedConfig.cmake \
         lib/cmake/shardfeed/shardfeedConfigVersion.cmake; do
  check "installed $f" test -f "$PREFIX/$f"
done
check "install again over it" logged reinstall "$ROOT/build_defs/install.sh" "$TREE" "$PREFIX"
check "no internal-only header installed" test ! -e "$PREFIX/include/shardfeed/gpu/cuda_status.h"
check "CUDA runtime inside the archive" grep -q " T cudaMalloc$" <(nm "$PREFIX/lib/libshardfeed.a" 2>/dev/null)

# Each header on its own, with no include path but the prefix's.
headers=$(cd "$PREFIX/include" && find shardfeed -name '*.h' | sort)
for h in $headers; do
  check "$h compiles alone" logged "header_${h//\//_}" \
    g++ -std=c++17 -fsyntax-only -I"$PREFIX/include" -x c++ - <<<"#include <$h>"
done

# One version.
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
version=$("$SF" --version | awk '{print $2}')
check "version looks like X.Y.Z" grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' <<<"$version"
check "SHARDFEED_VERSION" grep -q "#define SHARDFEED_VERSION \"$version\"" "$PREFIX/include/shardfeed/version.h"
check "pkg-config --modversion" test "$(pkg-config --modversion shardfeed)" = "$version"
check "CMake version file" grep -q "set(PACKAGE_VERSION \"$version\")" \
  "$PREFIX/lib/cmake/shardfeed/shardfeedConfigVersion.cmake"
check "no CUDA on the link line" test -z "$(pkg-config --cflags --libs shardfeed | grep -i cuda)"

# The reference: a converted dataset and its fingerprint from the CLI.
"$SF" convert cifar10 --input "$ROOT/testdata/cifar10-bin" --output "$TMP/ds" --quiet
expected=$("$SF" cat --fingerprint "$TMP/ds")
check "reference fingerprint (train: the default split)" grep -q '^records=500 fingerprint=' <<<"$expected"

# Route 1: CMake, find_package(shardfeed).
check "cmake configure" logged cmake_configure \
  cmake -S "$ROOT/examples/cpp" -B "$TMP/build" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release
check "cmake build" logged cmake_build cmake --build "$TMP/build"
check "CMake-built train_loop prints the CLI's fingerprint" \
  test "$("$TMP/build/train_loop" "$TMP/ds")" = "$expected"
check "and with partial batches" test "$("$TMP/build/train_loop" "$TMP/ds" 7)" = "$expected"
compatible() {  # what find_package(shardfeed $1.$2) decides
  echo 'include("${VERSION_FILE}")
message("${PACKAGE_VERSION_COMPATIBLE}")' >"$TMP/compatible.cmake"
  cmake -DVERSION_FILE="$PREFIX/lib/cmake/shardfeed/shardfeedConfigVersion.cmake" \
    -DPACKAGE_FIND_VERSION="$1.$2" -DPACKAGE_FIND_VERSION_MAJOR="$1" \
    -DPACKAGE_FIND_VERSION_MINOR="$2" -DCMAKE_SIZEOF_VOID_P=8 -P "$TMP/compatible.cmake" 2>&1
}
IFS=. read -r major minor _ <<<"$version"
check "find_package accepts its own version" test "$(compatible "$major" "$minor")" = TRUE
check "find_package refuses a newer major" test "$(compatible $((major + 1)) 0)" = FALSE

# Route 2: pkg-config and one g++ line.
# shellcheck disable=SC2046  # the flags are words
check "g++ with pkg-config" logged gxx \
  g++ -O1 "$ROOT/examples/cpp/train_loop.cc" -o "$TMP/train_loop_pc" $(pkg-config --cflags --libs shardfeed)
check "pkg-config-built train_loop prints the CLI's fingerprint" \
  test "$("$TMP/train_loop_pc" "$TMP/ds")" = "$expected"

echo "install_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
