#!/usr/bin/env python3
"""Writing the same records from Python, in one run on one machine:
shardfeed.Writer vs tf.io.TFRecordWriter + tf.train.Example vs MosaicML
Streaming's MDSWriter.

    PYTHONPATH=<folder with shardfeed/ and _shardfeed.so> \\
      ~/.cache/shardfeed/venv/bin/python bench/writer_bench.py [--records N] [--json OUT]

Records: a CIFAR-like 3072-byte image (numpy uint8 [3, 32, 32]), an int64
label and a short name. Each writer runs in its own Python process
(TensorFlow and Streaming's numba cannot share one: duplicate LLVM options),
`--repeats` times (best time kept), writing into a fresh folder in /tmp; the
numbers are records/s and MB/s of output.
"""
import subprocess
import sys
import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np


def make_records(n):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
    return [{"image": images[i], "label": int(i % 10), "name": f"img-{i:07d}.png"}
            for i in range(n)]


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def run_shardfeed(records, out):
    import shardfeed
    with shardfeed.Writer(out, prefix="train", shard_size="100MB") as w:
        for r in records:
            w.write(r)


def run_tensorflow(records, out):
    import tensorflow as tf
    os.makedirs(out)
    with tf.io.TFRecordWriter(os.path.join(out, "train.tfrecord")) as w:
        for r in records:
            ex = tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[r["image"].tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[r["label"]])),
                "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[r["name"].encode()])),
            }))
            w.write(ex.SerializeToString())


def run_mds(records, out):
    from streaming import MDSWriter
    columns = {"image": "ndarray:uint8:3,32,32", "label": "int", "name": "str"}
    with MDSWriter(out=out, columns=columns, size_limit=100_000_000) as w:
        for r in records:
            w.write(r)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--records", type=int, default=50_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json")
    p.add_argument("--only", help=argparse.SUPPRESS)  # one writer, in a child process
    a = p.parse_args()
    writers = {"shardfeed.Writer": run_shardfeed,
               "tf.io.TFRecordWriter+tf.train.Example": run_tensorflow,
               "streaming.MDSWriter": run_mds}
    if a.only is None:
        results = {}
        for name in writers:
            out = subprocess.run([sys.executable, __file__, "--records", str(a.records),
                                  "--repeats", str(a.repeats), "--only", name],
                                 stdout=subprocess.PIPE, text=True, check=True).stdout
            results[name] = json.loads(out.strip().splitlines()[-1])
            r = results[name]
            print(f"{name:40s} {r['seconds']:7.2f} s  {r['records_per_s']:10d} records/s  "
                  f"{r['mb_per_s']:7.1f} MB/s", flush=True)
        base = results["shardfeed.Writer"]["seconds"]
        for r in results.values():
            r["time_vs_shardfeed"] = round(r["seconds"] / base, 2)
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"records": a.records, "results": results}, f, indent=1)
        return
    records = make_records(a.records)
    for name, fn in ((a.only, writers[a.only]),):
        best, size = None, 0
        for _ in range(a.repeats):
            root = tempfile.mkdtemp(prefix="writer_bench.")
            out = os.path.join(root, "out")
            t = time.perf_counter()
            fn(records, out)
            dt = time.perf_counter() - t
            size = folder_bytes(out)
            shutil.rmtree(root)
            best = dt if best is None else min(best, dt)
        print(json.dumps({"seconds": round(best, 3), "records_per_s": round(a.records / best),
                          "mb_per_s": round(size / 1e6 / best, 1),
                          "output_mb": round(size / 1e6, 1)}))


if __name__ == "__main__":
    main()
