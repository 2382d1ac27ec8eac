"""Writes full-size CIFAR-10 (5 + 1 batches of 10,000) in both original
layouts, for benchmarks: the real archive is absent here, so the real records
in ../shared/datasets (1017 per batch) are cycled to 10,000, keeping the
python batches' exact protocol-2 opcode layout (BINSTRING pixels).

Usage: make_full_cifar.py DATASETS_DIR OUT_DIR [RECORDS_PER_BATCH]
(DATASETS_DIR holds cifar10-bin/ and cifar10-py/, as ../shared/datasets and
testdata/ do; RECORDS_PER_BATCH defaults to 10,000.)
"""
import os
import pickletools
import struct
import sys

N = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(f"{dst}/cifar-10-batches-bin", exist_ok=True)
os.makedirs(f"{dst}/cifar-10-batches-py", exist_ok=True)


def grow_pickle(data, n):
    ops = list(pickletools.genops(data))
    labels, pixels = [], b""
    for op, arg, pos in ops:
        if op.name == "BINSTRING":
            pixels = data[pos + 5:pos + 5 + struct.unpack("<i", data[pos + 1:pos + 5])[0]]
    out = bytearray()
    in_labels = False
    count = len(pixels) // 3072
    for k, (op, arg, pos) in enumerate(ops):
        end = ops[k + 1][2] if k + 1 < len(ops) else len(data)
        raw = data[pos:end]
        if op.name == "SHORT_BINSTRING" and arg == "labels":
            in_labels = True
        elif in_labels and op.name in ("BININT1", "BININT2", "BININT"):
            labels.append(arg)
            continue
        elif in_labels and op.name in ("MARK", "APPENDS"):
            continue
        elif in_labels and op.name not in ("BINPUT", "EMPTY_LIST"):
            in_labels = False
            full = [labels[i % len(labels)] for i in range(n)]
            for g in range(0, n, 1000):  # the original groups APPENDS by 1000
                out += b"(" + b"".join(b"K" + bytes([x]) for x in full[g:g + 1000]) + b"e"
        if op.name == "BININT2" and arg == count:
            raw = b"M" + struct.pack("<H", n)
        if op.name == "BINSTRING":
            reps = (pixels * (n // count + 1))[:n * 3072]
            raw = b"T" + struct.pack("<i", n * 3072) + reps
        out += raw
    return bytes(out)


for name in ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5",
             "test_batch"]:
    rec = open(f"{src}/cifar10-bin/{name}.bin", "rb").read()
    full = (rec * (N // (len(rec) // 3073) + 1))[:N * 3073]
    open(f"{dst}/cifar-10-batches-bin/{name}.bin", "wb").write(full)
    open(f"{dst}/cifar-10-batches-py/{name}", "wb").write(
        grow_pickle(open(f"{src}/cifar10-py/{name}", "rb").read(), N))
for d, meta in [("bin", "batches.meta.txt"), ("py", "batches.meta")]:
    s = f"{src}/cifar10-{d}/{meta}"
    open(f"{dst}/cifar-10-batches-{d}/{meta}", "wb").write(open(s, "rb").read())
