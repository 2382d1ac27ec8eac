#!/usr/bin/env bash
# Builds the libraries the Python extension carries privately, as one static
# archive of position-independent code:
#
#   PREFIX/lib/libshardfeed_private_deps.a   abseil + protobuf + libjpeg-turbo
#       + libspng (built here from Debian's source packages, the versions
#       whose headers are installed, with -fPIC) + Debian's own libz.a
#   PREFIX/lib/libspng.a                     libspng alone (--config=portable)
#
# Debian's static archives cannot go into a shared object: they are built
# -fPIE. abseil's and protobuf's thread-local variables then use the
# local-exec model (R_X86_64_TPOFF32) and libjpeg's jerror.c reaches libc's
# `stderr` PC-relative; the linker refuses both in a .so. Debian ships no
# static libspng. zlib has neither problem and is used as shipped. The
# extension links this archive with every symbol hidden (python/BUILD), so
# another protobuf/abseil in the process (TensorFlow's, PyTorch's) can never
# bind to ours, nor ours to theirs.
#
# Each library is built once into ${XDG_CACHE_HOME:-~/.cache}/shardfeed/
# private-deps/parts/NAME-KEY (KEY: its source version and the recipe: bump
# RECIPE when the build changes) and PREFIX = .../private-deps/KEY joins
# them: a second run (another worktree, CI on the same machine) finds it and
# is instant.
# Prints PREFIX on stdout; progress goes to stderr. Needs root (or sudo) the
# first time: it enables Debian's source index (deb-src) and installs
# dpkg-dev and cmake. ~6 minutes on 2 cores, once.
set -euo pipefail

cache="${XDG_CACHE_HOME:-$HOME/.cache}/shardfeed/private-deps"
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# The source versions that match the installed headers.
src_version() { dpkg-query -W -f='${source:Package}=${source:Version}' "$1"; }
absl="$(src_version libabsl-dev)"
protobuf="$(src_version libprotobuf-dev)"
jpeg="$(src_version libjpeg62-turbo-dev)"
spng="$(src_version libspng-dev)"
RECIPE=2
flags="-O2 -g0 -fPIC -fno-plt -w"
hash() { echo "$RECIPE $flags $*" | sha256sum | cut -c1-16; }
key="$(hash "$absl" "$protobuf" "$jpeg" "$spng")"
prefix="$cache/$key"
archive="$prefix/lib/libshardfeed_private_deps.a"
if [ -f "$archive" ]; then
  echo "$prefix"
  exit 0
fi

log() { echo "build_private_deps: $*" >&2; }

# One build at a time (worktrees, Bazel's repository rule and ./test.sh may
# ask together): the others wait, then find it built.
mkdir -p "$cache/parts"
exec 9> "$cache/.lock"
flock 9
if [ -f "$archive" ]; then
  echo "$prefix"
  exit 0
fi
log "building PIC $absl $protobuf $jpeg $spng into $prefix (once, a few minutes)"

# Debian's source index, beside the binary one the machine already uses.
if ! apt-get source --print-uris -qq "$absl" >/dev/null 2>&1; then
  list=/etc/apt/sources.list.d/shardfeed-deb-src.sources
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      as_root tee "$list" >/dev/null
  else
    grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
      as_root tee /etc/apt/sources.list.d/shardfeed-deb-src.list >/dev/null
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
fi
for p in dpkg-dev cmake make nasm; do  # nasm: libjpeg-turbo's SIMD code
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "$p" >/dev/null
  fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/shardfeed-private-deps.XXXXXX")"
trap 'rm -rf "$work"' EXIT
jobs="$(nproc)"

# part NAME SOURCE=VERSION: runs build_NAME in the unpacked source (unless
# cached) and leaves its static libraries in $cache/parts/NAME-KEY.
part() {
  local name="$1" source="$2" dir="$cache/parts/$1-$(hash "$2")"
  if [ ! -d "$dir" ]; then
    log "$name ($source)"
    rm -rf "$work/$name" && mkdir -p "$work/$name"
    (cd "$work/$name" && apt-get source -qq --only-source "$source" >/dev/null 2>&1 &&
       cd "$(find . -mindepth 1 -maxdepth 1 -type d | head -1)" && "build_$name" "$dir.tmp") ||
      { log "building $name failed"; exit 1; }
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

build_abseil() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF \
    -DABSL_PROPAGATE_CXX_STD=ON -DCMAKE_CXX_FLAGS="$flags" >/dev/null
  make -s -C build -j"$jobs" >/dev/null
  mkdir -p "$1" && find build -name 'libabsl_*.a' -exec cp {} "$1/" \;
}

build_protobuf() {
  cmake -S cmake -B build -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF -Dprotobuf_BUILD_TESTS=OFF \
    -Dprotobuf_BUILD_PROTOC_BINARIES=OFF -Dprotobuf_BUILD_LIBPROTOC=OFF -Dprotobuf_WITH_ZLIB=ON \
    -DCMAKE_CXX_FLAGS="$flags -DHAVE_PTHREAD=1" >/dev/null
  make -s -C build -j"$jobs" libprotobuf >/dev/null
  mkdir -p "$1" && cp build/libprotobuf.a "$1/"
}

build_jpeg() {  # libjpeg62-turbo's configuration: the libjpeg 6.2 API, SIMD
  cmake -S . -B build -DCMAKE_BUILD_TYPE=None -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DENABLE_SHARED=OFF -DENABLE_STATIC=ON -DWITH_TURBOJPEG=OFF -DWITH_JAVA=OFF -DWITH_SIMD=ON \
    -DCMAKE_C_FLAGS="$flags" >/dev/null
  make -s -C build -j"$jobs" jpeg-static >/dev/null
  mkdir -p "$1" && cp build/libjpeg.a "$1/"
}

build_spng() {
  gcc $flags -std=c99 -DSPNG_STATIC -c spng/spng.c -o spng.o
  mkdir -p "$1" && ar rcs "$1/libspng.a" spng.o
}

absl_dir="$(part abseil "$absl")"
protobuf_dir="$(part protobuf "$protobuf")"
jpeg_dir="$(part jpeg "$jpeg")"
spng_dir="$(part spng "$spng")"

# One archive (abseil's libraries depend on each other in circles; within one
# archive the linker resolves them in any order).
cd "$work"
{
  echo "create libshardfeed_private_deps.a"
  find "$absl_dir" -name 'libabsl_*.a' | sort | sed 's/^/addlib /'
  echo "addlib $protobuf_dir/libprotobuf.a"
  echo "addlib $jpeg_dir/libjpeg.a"
  echo "addlib $spng_dir/libspng.a"
  echo "addlib /usr/lib/x86_64-linux-gnu/libz.a"
  echo "save"
  echo "end"
} | ar -M
mkdir -p "$prefix.tmp.$$/lib"
mv libshardfeed_private_deps.a "$prefix.tmp.$$/lib/"
cp "$spng_dir/libspng.a" "$prefix.tmp.$$/lib/"
echo "$absl $protobuf $jpeg $spng" > "$prefix.tmp.$$/VERSIONS"
rm -rf "$prefix"
mv "$prefix.tmp.$$" "$prefix"
log "done: $archive ($(du -h "$archive" | cut -f1))"
echo "$prefix"
