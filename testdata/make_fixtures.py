"""Regenerates the small fixtures in testdata/ from ../shared/datasets.

Real bytes, cut down: the first N records of each CIFAR batch in both the
binary layout and the python (pickle) layout, keeping the pickles' original
opcode layout (protocol 2, BINSTRING pixel data); the first N MNIST test
images; a few real photos and CIFAR JPEGs. Usage:

    python3 testdata/make_fixtures.py ../shared/datasets testdata
"""
import gzip
import os
import pickletools
import shutil
import struct
import sys

N = 100
src, dst = sys.argv[1], sys.argv[2]


def cut_pickle(data, n):
    """The pickle with only its first n labels and n rows of pixel data."""
    out = bytearray()
    ops = list(pickletools.genops(data))
    in_labels = False
    kept = 0
    for k, (op, arg, pos) in enumerate(ops):
        end = ops[k + 1][2] if k + 1 < len(ops) else len(data)
        raw = data[pos:end]
        if op.name == "SHORT_BINSTRING" and arg in ("labels", "fine_labels", "coarse_labels"):
            in_labels, kept = True, 0
        elif in_labels and op.name in ("BININT1", "BININT2", "BININT"):
            kept += 1
            if kept > n:
                continue
        elif in_labels and op.name == "MARK" and kept >= n:
            continue
        elif in_labels and op.name == "APPENDS":
            if kept > n and out.endswith(b"e"):
                continue
        elif in_labels and op.name not in ("BINPUT", "EMPTY_LIST", "MARK", "APPENDS"):
            in_labels = False
        if op.name == "BININT2" and arg == 1017:
            raw = b"M" + struct.pack("<H", n)
        if op.name == "BINSTRING":
            raw = b"T" + struct.pack("<i", n * 3072) + data[pos + 5:pos + 5 + n * 3072]
        out += raw
    return bytes(out)


os.makedirs(f"{dst}/cifar10-bin", exist_ok=True)
os.makedirs(f"{dst}/cifar10-py", exist_ok=True)
for name in ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5",
             "test_batch"]:
    with open(f"{src}/cifar10-bin/{name}.bin", "rb") as f:
        open(f"{dst}/cifar10-bin/{name}.bin", "wb").write(f.read(N * 3073))
    with open(f"{src}/cifar10-py/{name}", "rb") as f:
        open(f"{dst}/cifar10-py/{name}", "wb").write(cut_pickle(f.read(), N))
shutil.copy(f"{src}/cifar10-bin/batches.meta.txt", f"{dst}/cifar10-bin/")
shutil.copy(f"{src}/cifar10-py/batches.meta", f"{dst}/cifar10-py/")

os.makedirs(f"{dst}/mnist", exist_ok=True)
for kind, header, item in [("images-idx3", 16, 784), ("labels-idx1", 8, 1)]:
    data = gzip.open(f"{src}/mnist/t10k-{kind}-ubyte.gz").read()
    cut = bytearray(data[:header + N * item])
    cut[4:8] = struct.pack(">I", N)
    with gzip.GzipFile(f"{dst}/mnist/t10k-{kind}-ubyte.gz", "wb", mtime=0) as f:
        f.write(bytes(cut))

for split in ["train", "val"]:
    for cls in ["ants", "bees"]:
        d = f"{src}/images/hymenoptera/{split}/{cls}"
        os.makedirs(f"{dst}/images/hymenoptera/{split}/{cls}", exist_ok=True)
        for name in sorted(os.listdir(d))[:4]:
            shutil.copy(f"{d}/{name}", f"{dst}/images/hymenoptera/{split}/{cls}/")
for cls in sorted(os.listdir(f"{src}/images/cifar10-test-jpg")):
    d = f"{src}/images/cifar10-test-jpg/{cls}"
    os.makedirs(f"{dst}/images/cifar10-jpg/{cls}", exist_ok=True)
    for name in sorted(os.listdir(d))[:5]:
        shutil.copy(f"{d}/{name}", f"{dst}/images/cifar10-jpg/{cls}/")
