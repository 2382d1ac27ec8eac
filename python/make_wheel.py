"""Packs the built extension and the pure-Python layer into a wheel (the
format of PEP 427, written with the standard library only):

    shardfeed/*.py, shardfeed/_shardfeed.so (debug info stripped),
    shardfeed-V.dist-info/{METADATA,WHEEL,entry_points.txt,RECORD}

tagged cpXY-cpXY-linux_x86_64 for the CPython whose headers the extension
was built against. `auditwheel repair` then makes it a manylinux wheel
(python/build_wheel.sh does both). The console script `shardfeed` runs the
command inside the extension (shardfeed/_cli.py).

Usage: make_wheel.py --extension SO --python-dir DIR --version-header H
                     --python-header PATCHLEVEL_H --out DIR
Prints the wheel's path. Errors: exits non-zero with a message naming the
file it could not read.
"""
import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile


def _read_define(path, name):
    with open(path) as f:
        m = re.search(r'#define %s\s+"([^"]+)"' % name, f.read())
    if not m:
        sys.exit(f"make_wheel: {path}: no #define {name}")
    return m.group(1)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _stripped(path):
    """The extension without debug sections (smaller wheel; symbols were hidden already)."""
    strip = shutil.which("strip")
    if strip is None:
        with open(path, "rb") as f:
            return f.read()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "x.so")
        subprocess.run([strip, "--strip-debug", "-o", out, path], check=True)
        with open(out, "rb") as f:
            return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--extension", required=True)
    ap.add_argument("--python-dir", required=True)
    ap.add_argument("--version-header", required=True)
    ap.add_argument("--python-header", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    version = _read_define(a.version_header, "SHARDFEED_VERSION")
    py_major, py_minor = _read_define(a.python_header, "PY_VERSION").split(".")[:2]
    tag = f"cp{py_major}{py_minor}"
    dist = f"shardfeed-{version}"
    info = f"{dist}.dist-info"
    files = []
    package = os.path.join(a.python_dir, "shardfeed")
    for name in sorted(n for n in os.listdir(package) if n.endswith(".py")):
        with open(os.path.join(package, name), "rb") as f:
            files.append((f"shardfeed/{name}", f.read(), 0o644))
    files.append(("shardfeed/_shardfeed.so", _stripped(a.extension), 0o755))
    metadata = "\n".join([
        "Metadata-Version: 2.1",
        "Name: shardfeed",
        f"Version: {version}",
        "Summary: TFRecord shards into training loops from C++ threads, zero-copy through DLPack",
        f"Requires-Python: =={py_major}.{py_minor}.*",
        "",
        "shardfeed packs small files into ~100 MB TFRecord shards, verifies them and",
        "streams them into PyTorch, TensorFlow or JAX training loops (DLPack, no copy).",
        "The wheel carries its C++ dependencies privately (abseil, protobuf, zlib,",
        "libjpeg-turbo, libspng, the CUDA runtime): any TensorFlow, PyTorch or protobuf",
        "version can live in the same process. The `shardfeed` command is included.",
        "",
    ])
    wheel = "\n".join([
        "Wheel-Version: 1.0",
        "Generator: shardfeed make_wheel.py",
        "Root-Is-Purelib: false",
        f"Tag: {tag}-{tag}-linux_x86_64",
        "",
    ])
    entry_points = "[console_scripts]\nshardfeed = shardfeed._cli:main\n"
    files += [(f"{info}/METADATA", metadata.encode(), 0o644),
              (f"{info}/WHEEL", wheel.encode(), 0o644),
              (f"{info}/entry_points.txt", entry_points.encode(), 0o644)]
    record = [_record_line(name, data) for name, data, _ in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))

    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"{dist}-{tag}-{tag}-linux_x86_64.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            zi = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    print(path)


if __name__ == "__main__":
    main()
