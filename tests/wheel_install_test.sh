#!/usr/bin/env bash
# The wheel installs and works on a machine that has nothing but Python:
#
#  1. builds it as users get it (python/build_wheel.sh: make_wheel.py +
#     auditwheel repair) and requires a manylinux_2_X_x86_64 tag, a wheel
#     whose extension exports only PyInit__shardfeed and needs no library
#     outside the manylinux set (auditwheel grafted the rest into the wheel);
#  2. installs it into a fresh venv inside a minimal Debian chroot
#     (debootstrap --variant=minbase + python3, python3-venv: no Bazel, no
#     compiler, no -dev package, no abseil/protobuf/zlib/jpeg/spng library);
#  3. there runs the `shardfeed` console script (--version, convert, check,
#     cat --fingerprint) and wheel_smoke.py (convert, check, Loader, decode,
#     Writer), and requires the same results as the extension and binary
#     built from source on the host.
#
# The base chroot is cached as a tarball in ~/.cache/shardfeed/chroot (made
# once, ~3 minutes; then ~15 s to unpack). Needs root (chroot, mounts) and
# debootstrap (tools/setup.sh installs it); without them the test fails when
# SHARDFEED_REQUIRE_TF=1 (./test.sh, CI) and skips otherwise. Tagged local +
# exclusive in tests/BUILD. The chroot lives in a private mount namespace
# (unshare -m): its /proc mount disappears with the test, whatever happens.
set -euo pipefail
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
user_home="$(getent passwd "$(id -u)" | cut -d: -f6)"
CACHE="${SHARDFEED_CACHE_DIR:-$user_home/.cache/shardfeed}"

skip_or_fail() {
  if [ "${SHARDFEED_REQUIRE_TF:-0}" = 1 ]; then echo "FAIL: $*"; exit 1; fi
  echo "SKIPPED: $*"
  exit 0
}
[ "$(id -u)" = 0 ] || skip_or_fail "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || skip_or_fail "debootstrap is not installed (tools/setup.sh)"
host_python="${SHARDFEED_TF_PYTHON:-}"
[ -n "$host_python" ] || skip_or_fail "SHARDFEED_TF_PYTHON is not set (./test.sh sets it)"
venv="$(cd "$(dirname "$host_python")/.." && pwd)"
[ -x "$venv/bin/auditwheel" ] || skip_or_fail "no auditwheel in $venv (tools/setup.sh)"

step() { echo "== $*"; }

# 1. The wheel.
step "building the wheel"
wheel="$(RUNFILES_DIR="${TEST_SRCDIR:-}" SHARDFEED_AUDITWHEEL_VENV="$venv" \
  "$ROOT/python/build_wheel.sh" "$TMP/dist" 2> "$TMP/build_wheel.log" | tail -1)" || {
  cat "$TMP/build_wheel.log"; echo "FAIL: build_wheel.sh"; exit 1; }
cat "$TMP/build_wheel.log"
name="$(basename "$wheel")"
echo "wheel: $name ($(stat -c %s "$wheel") bytes)"
[[ "$name" =~ ^shardfeed-[0-9.]+-cp3[0-9]+-cp3[0-9]+-manylinux_2_[0-9]+_x86_64(\.manylinux[_0-9a-z]+)*\.whl$ ]] ||
  { echo "FAIL: not a manylinux wheel name: $name"; exit 1; }
grep -qE "is consistent with the following platform tag|constrains the platform tag to" "$TMP/build_wheel.log" ||
  { echo "FAIL: auditwheel show did not report a platform tag"; exit 1; }

# 2. The clean room: cached minimal Debian with python3 + python3-venv.
mirror() {  # the Debian mirror this machine's apt uses (first URIs/deb line)
  local m
  m="$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | head -1 | awk '{print $2}')"
  [ -n "$m" ] || m="$(grep -hs '^deb ' /etc/apt/sources.list | head -1 | awk '{print $2}')"
  echo "$m"
}
suite="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
base="$CACHE/chroot/$suite-minbase-python3.tar"
mkdir -p "$CACHE/chroot"
(
  flock 9
  if [ ! -f "$base" ]; then
    step "debootstrap $suite (once; cached in $base)"
    build="$(mktemp -d "$CACHE/chroot/build.XXXXXX")"
    trap 'rm -rf "$build"' EXIT
    debootstrap --variant=minbase --include=python3,python3-venv "$suite" "$build/root" \
      "$(mirror)" > "$build/debootstrap.log" 2>&1 || {
      tail -30 "$build/debootstrap.log"; echo "FAIL: debootstrap"; exit 1; }
    rm -rf "$build/root/var/cache/apt/archives/"*.deb "$build/root/var/lib/apt/lists/"*
    tar -C "$build/root" -cf "$base.tmp" . && mv "$base.tmp" "$base"
  fi
) 9> "$CACHE/chroot/.lock"
[ -f "$base" ] || { echo "FAIL: no base chroot"; exit 1; }
step "unpacking the chroot"
root="$TMP/root"
mkdir -p "$root"
tar -C "$root" -xf "$base"
# What the extension links privately must not be there to be found.
for lib in libprotobuf libabsl_ libjpeg libturbojpeg libspng libisal; do
  if ls "$root/usr/lib/x86_64-linux-gnu/" | grep -q "^$lib"; then
    echo "FAIL: the clean room has $lib"; exit 1
  fi
done
mkdir -p "$root/work/data/images"
cp "$wheel" "$root/work/"
cp -rL "$ROOT/testdata/cifar10-py" "$root/work/data/"
cp -rL "$ROOT/testdata/images/hymenoptera/train/ants" "$ROOT/testdata/images/hymenoptera/train/bees" \
  "$root/work/data/images/"
mkdir -p "$root/work/data/images/png"
cp -L "$ROOT"/testdata/decode/*.png "$root/work/data/images/png/"
cp -L "$ROOT/tests/wheel_smoke.py" "$root/work/"

step "installing the wheel into a fresh venv in the chroot"
cat > "$root/work/run.sh" <<EOF
set -eu
mount -t proc proc /proc
cd /work
python3 -m venv /work/venv
/work/venv/bin/pip install --no-index --disable-pip-version-check -q /work/$name
/work/venv/bin/shardfeed --version
cd /work/data
/work/venv/bin/shardfeed convert cifar10 --input cifar10-py --output /work/cli-c10 --shard-size 400000
/work/venv/bin/shardfeed check /work/cli-c10
cd /work
/work/venv/bin/shardfeed cat --fingerprint cli-c10 > /work/cli-fingerprint
mkdir /work/smoke
/work/venv/bin/python /work/wheel_smoke.py /work/data /work/smoke > /work/smoke.json
EOF
if ! unshare -m chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/work LANG=C.UTF-8 \
     /bin/sh /work/run.sh 2>&1 | sed 's/^/  chroot: /'; then
  echo "FAIL: the wheel in the chroot"
  exit 1
fi

# 3. The same work with what was built from source, on the host.
step "the same with the source build on the host"
host="$TMP/host"
pkg="$host/pkg/shardfeed"
mkdir -p "$pkg" "$host/smoke"
cp "$ROOT"/python/shardfeed/*.py "$ROOT/python/_shardfeed.so" "$pkg/"
(cd "$root/work/data" && "$ROOT/cli/shardfeed" convert cifar10 --input cifar10-py \
   --output "$host/cli-c10" --shard-size 400000 >/dev/null)
(cd "$host" && "$ROOT/cli/shardfeed" cat --fingerprint cli-c10 > "$host/cli-fingerprint")
(cd "$host" && PYTHONPATH="$host/pkg" "$host_python" "$ROOT/tests/wheel_smoke.py" "$root/work/data" \
   "$host/smoke" > "$host/smoke.json")
status=0
if ! cmp -s "$root/work/cli-fingerprint" "$host/cli-fingerprint"; then
  echo "FAIL: cat --fingerprint differs"; diff "$root/work/cli-fingerprint" "$host/cli-fingerprint" || true
  status=1
fi
for f in $(cd "$host/cli-c10" && ls); do
  cmp -s "$root/work/cli-c10/$f" "$host/cli-c10/$f" || { echo "FAIL: convert's $f differs"; status=1; }
done
if ! diff "$root/work/smoke.json" "$host/smoke.json"; then
  echo "FAIL: wheel_smoke.py's results differ (< chroot, > host)"
  status=1
fi
cat "$host/smoke.json"
[ "$status" = 0 ] && echo "PASS: $name installs and works in a minimal $suite chroot"
exit "$status"
