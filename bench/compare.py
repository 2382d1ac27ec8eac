"""Side-by-side benchmarks: shardfeed against the tools users would pick
instead, on the same machine, data and run. Writes OUT/*.json and PNG plots.

  conversion    CIFAR-10 (binary and python layouts) and a JPEG folder:
                shardfeed convert vs TensorFlow's tutorial-style script vs cp
  reading       CIFAR shards into shuffled batches of 256 decoded tensors:
                shardfeed (C++ `bench`, Python Loader) vs tf.data vs the
                `tfrecord` package + PyTorch DataLoader vs plain pread
  verification  shardfeed check vs counting records with tf.data vs cat
  scaling       shardfeed bench/check with 1 and 2 threads
  decode        JPEG photos (SRC/images/hymenoptera, else the decode fixtures)
                to uint8 224x224 batches, RandomResizedCrop + flip and resize +
                center crop: shardfeed vs tf.data vs DALI (CPU) vs torchvision

Every peer runs in its own process, page cache warm, best of --repeats.
Usage: compare.py --shardfeed BIN --package DIR --data SRC --jpegs DIR --out OUT
                  [--records-per-batch N] [--repeats K] [--quick]
SRC holds cifar10-bin/ and cifar10-py/ (../shared/datasets or testdata/).
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import process_timing  # noqa: E402


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-3000:])
        raise SystemExit(f"compare: {os.path.basename(str(cmd[0]))} failed with status "
                         f"{r.returncode}")
    return r


def timed(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def warm(path):
    for root, _, files in os.walk(path):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                while fh.read(1 << 22):
                    pass


def entry(name, seconds, amount, unit, baseline_seconds=None, config=""):
    e = {"name": name, "seconds": round(seconds, 4), "throughput": amount / seconds,
         "unit": unit, "config": config}
    if baseline_seconds is not None:
        e["ratio"] = baseline_seconds / seconds
    return e


TF_JPEG_CONVERT = r"""
import os, sys, json, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import tensorflow as tf
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
def b(v): return tf.train.Feature(bytes_list=tf.train.BytesList(value=[v]))
def i(v): return tf.train.Feature(int64_list=tf.train.Int64List(value=[v]))
t0 = time.perf_counter()
with tf.io.TFRecordWriter(os.path.join(out, "train.tfrecord")) as w:
    for label, c in enumerate(classes):
        for f in sorted(os.listdir(os.path.join(src, c))):
            data = open(os.path.join(src, c, f), "rb").read()
            ex = tf.train.Example(features=tf.train.Features(feature={
                "image/encoded": b(data), "image/format": b(b"jpeg"),
                "image/class/label": i(label), "image/class/text": b(c.encode()),
                "image/filename": b(f.encode())}))
            w.write(ex.SerializeToString())
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""


def conversion(a, work):
    results = []
    full = os.path.join(work, "cifar")
    for layout in ("bin", "py"):
        src = os.path.join(full, f"cifar-10-batches-{layout}")
        nbytes = dir_bytes(src)
        warm(src)
        out = os.path.join(work, "conv-out")

        def cp():
            shutil.rmtree(out, ignore_errors=True)
            run(["cp", "-r", src, out])
            run(["sync", "-f", out])

        def sf():
            run([a.shardfeed, "convert", "cifar10", "--input", src, "--output", out, "--quiet",
                 "--overwrite"])
        t_cp = timed(cp, a.repeats)
        t_sf = timed(sf, a.repeats)
        results.append(entry(f"cp -r + sync ({layout})", t_cp, nbytes / 1e6, "MB/s", t_cp,
                             "baseline: cp of the input, then sync of the copy"))
        results.append(entry(f"shardfeed convert ({layout})", t_sf, nbytes / 1e6, "MB/s", t_cp,
                             "defaults: 100 MB shards, shuffled, index + manifest, synced"))
        if layout == "py":
            def tf_script():
                shutil.rmtree(out, ignore_errors=True)
                run([sys.executable, os.path.join(HERE, "tf_cifar10_convert.py"), src, out])
            t_tf = timed(tf_script, 1)
            results.append(entry("TensorFlow script (py)", t_tf, nbytes / 1e6, "MB/s", t_cp,
                                 "pickle.load + tf.train.Example + TFRecordWriter, incl. import"))
    src = a.jpegs
    nbytes = dir_bytes(src)
    warm(src)
    out = os.path.join(work, "conv-out")

    def cp_j():
        shutil.rmtree(out, ignore_errors=True)
        run(["cp", "-r", src, out])
        run(["sync", "-f", out])

    def sf_j():
        run([a.shardfeed, "convert", "image-folder", "--input", src, "--output", out, "--quiet",
             "--overwrite"])

    def tf_j():
        shutil.rmtree(out, ignore_errors=True)
        run([sys.executable, "-c", TF_JPEG_CONVERT, src, out])
    t_cp, t_sf, t_tf = timed(cp_j, a.repeats), timed(sf_j, a.repeats), timed(tf_j, 1)
    n = sum(len(f) for _, _, f in os.walk(src))
    results.append(entry(f"cp -r + sync ({n} JPEGs)", t_cp, nbytes / 1e6, "MB/s", t_cp, "baseline"))
    results.append(entry("shardfeed convert image-folder", t_sf, nbytes / 1e6, "MB/s", t_cp,
                         "reads JPEG headers for height/width"))
    results.append(entry("TensorFlow equivalent (JPEG folder)", t_tf, nbytes / 1e6, "MB/s", t_cp,
                         "read + tf.train.Example + TFRecordWriter, no header parsing"))
    return results


SF_PYTHON = r"""
import sys, json, time
import numpy as np
import shardfeed
ds, threads = sys.argv[1], int(sys.argv[2])
best, n = 1e9, 0
for _ in range(1):  # one pass: the harness times the whole process
    t0 = time.perf_counter(); n = 0
    for b in shardfeed.Loader(ds, split="train", batch_size=256, seed=1, io_threads=threads,
                              decode_threads=threads):
        img = np.from_dlpack(b["image"]); lab = np.from_dlpack(b["label"]); n += b.size
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"seconds": best, "records": n}))
"""

TF_READ = r"""
import os, sys, json, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import tensorflow as tf
files, variant = sys.argv[2:], sys.argv[1]
spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
AUTO = tf.data.AUTOTUNE
def decode(ex):
    return tf.reshape(tf.io.decode_raw(ex["image"], tf.uint8), [-1, 3, 32, 32]), ex["label"]
def make():
    ds = tf.data.TFRecordDataset(files, num_parallel_reads=AUTO).shuffle(10000, seed=1)
    if variant == "batch_then_parse":
        ds = ds.batch(256).map(lambda r: decode(tf.io.parse_example(r, spec)), num_parallel_calls=AUTO)
    else:
        ds = ds.map(lambda r: tf.io.parse_single_example(r, spec), num_parallel_calls=AUTO)
        ds = ds.batch(256).map(decode, num_parallel_calls=AUTO)
    return ds.prefetch(AUTO)
best, n = 1e9, 0
for _ in range(1):  # one pass: the harness times the whole process
    t0 = time.perf_counter(); n = 0
    for img, lab in make():
        n += int(lab.shape[0])
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"seconds": best, "records": n}))
"""

TORCH_READ = r"""
import sys, json, time, warnings
warnings.filterwarnings("ignore")
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info
import numpy as np
from tfrecord.torch.dataset import TFRecordDataset
files = sys.argv[1:]
def decode(r):  # the decoded tensors every peer delivers: uint8 [3, 32, 32], int64
    return {"image": np.frombuffer(r["image"], np.uint8).reshape(3, 32, 32),
            "label": np.asarray(r["label"], np.int64).reshape(())}
class Shards(IterableDataset):
    # tfrecord's dataset splits each shard between the DataLoader's workers
    # (by its index file), so every worker walks every shard's share.
    def __iter__(self):
        w = get_worker_info()
        n = w.num_workers if w else 1
        for f in files:
            yield from TFRecordDataset(f, f + ".index", {"image": "byte", "label": "int"},
                                       shuffle_queue_size=10000 // n, transform=decode)
best, count = 1e9, 0
for _ in range(1):  # one pass: the harness times the whole process
    t0 = time.perf_counter(); count = 0
    loader = DataLoader(Shards(), batch_size=256, num_workers=2, pin_memory=True)
    for b in loader:
        count += b["image"].shape[0]
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"seconds": best, "records": count}))
"""

DALI_READ = r"""
import sys, json, time, math
from nvidia.dali import pipeline_def, fn
import nvidia.dali.tfrecord as tfrec
files = sys.argv[2:]
threads = int(sys.argv[1])
@pipeline_def(batch_size=256, num_threads=threads, device_id=None, seed=1)
def pipe():
    # DALI reads our SHARD.index files directly (its tfrecord2idx format).
    r = fn.readers.tfrecord(path=files, index_path=[f + ".index" for f in files],
                            features={"image": tfrec.FixedLenFeature((), tfrec.string, ""),
                                      "label": tfrec.FixedLenFeature([1], tfrec.int64, -1)},
                            random_shuffle=True, initial_fill=10000, name="Reader")
    return fn.reshape(r["image"], shape=[3, 32, 32]), r["label"]
p = pipe()
p.build()
n = p.epoch_size("Reader")
best = 1e9
for _ in range(1):  # one pass: the harness times the whole process
    t0 = time.perf_counter()
    for _ in range(math.ceil(n / 256)):
        p.run()
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"seconds": best, "records": n}))
"""


def timed_process(cmd, repeats, records=None, env=None):
    """The fastest of `repeats` runs of cmd, each timed from outside (wall
    from fork to reap: start-up, imports and exit included, as a user's
    stopwatch sees it): (Timed, the JSON document of its last stdout line or
    None). records: the count the document must report."""
    best = None
    for _ in range(repeats):
        try:
            t = process_timing.run_timed(cmd, env=env)
        except RuntimeError as e:
            raise SystemExit(f"compare: {e}")
        lines = [l for l in t.stdout.splitlines() if l.startswith("{")]
        doc = json.loads(lines[-1]) if lines else None
        if records is not None:
            assert doc and doc["records"] == records, (cmd[:3], doc)
        if best is None or t.wall < best[0].wall:
            best = (t, doc)
    return best


def reading(a, work, ds):
    """Every contender reads the train split once, in its own process, timed
    from outside; the baseline is dd of the same train shards."""
    files = sorted(os.path.join(ds, f) for f in os.listdir(ds)
                   if f.startswith("train-") and f.endswith(".tfrecord"))
    nbytes = sum(os.path.getsize(f) for f in files)
    manifest = json.load(open(os.path.join(ds, "manifest.json")))
    records = sum(int(s.get("records", 0)) for s in manifest["shards"] if s["split"] == "train")
    warm(ds)
    env = dict(os.environ, PYTHONPATH=a.package)
    dd = ["sh", "-c", 'for f in "$@"; do dd if="$f" of=/dev/null bs=4M 2>/dev/null; done', "dd"]
    t_dd = timed_process(dd + files, a.repeats)[0].wall
    res = [entry("dd bs=4M of the train shards (physical limit)", t_dd, records, "records/s", t_dd,
                 "one process, the same files the others read")]

    def whole(name, t, config, doc=None):
        inner = f"; its own loop: {doc['seconds']:.3f} s" if doc and "seconds" in doc else ""
        return entry(name, t.wall, records, "records/s", t_dd,
                     f"{config}; whole process {t.wall:.3f} s, {t.cpu:.3f} CPU-s{inner}")
    scaling = []
    for threads in (2, 1):
        t, doc = timed_process([a.shardfeed, "bench", ds, "--split", "train", "--batch-size", "256",
                                "--epochs", "1", "--seed", "1", "--io-threads", str(threads),
                                "--decode-threads", str(threads), "--json"], a.repeats, records)
        e = whole(f"shardfeed bench (C++), {threads} threads", t,
                  f"{threads} workers, global shuffle (planned path)", doc)
        if threads == 2:
            res.append(e)
        scaling.append(e)
    t, doc = timed_process([sys.executable, "-c", SF_PYTHON, ds, "2"], a.repeats, records, env)
    res.append(whole("shardfeed.Loader (Python loop, DLPack to numpy)", t,
                     "2 + 2 threads, shuffle 10000, incl. Python start-up and import", doc))
    tf_best = None
    for variant in ("batch_then_parse", "parse_then_batch"):
        t, doc = timed_process([sys.executable, "-c", TF_READ, variant] + files, a.repeats, records)
        if tf_best is None or t.wall < tf_best[1].wall:
            tf_best = (variant, t, doc)
    res.append(whole("tf.data", tf_best[1],
                     f"TFRecordDataset(num_parallel_reads=AUTOTUNE).shuffle(10000) -> "
                     f"{tf_best[0].replace('_', ' ')} (fastest of two arrangements) -> "
                     "decode_raw -> prefetch(AUTOTUNE), incl. TensorFlow's import", tf_best[2]))
    try:
        t, doc = timed_process([sys.executable, "-c", DALI_READ, "2"] + files, a.repeats, records)
        res.append(whole("NVIDIA DALI TFRecord reader (CPU)", t,
                         "device_id=None, 2 threads, random_shuffle initial_fill 10000, "
                         "batch 256, our .index files", doc))
    except (SystemExit, AssertionError, ValueError) as e:
        print(f"DALI skipped: {e}", file=sys.stderr)
    t, doc = timed_process([a.shardfeed, "bench", ds, "--split", "train", "--batch-size", "256",
                            "--epochs", "1", "--seed", "1", "--streaming", "--json"], a.repeats,
                           records)
    res.append(whole("shardfeed bench, streaming path (v1 design)", t,
                     "2 + 2 threads, shuffle buffer 10000", doc))
    t, doc = timed_process([sys.executable, "-c", TORCH_READ] + files, a.repeats, records)
    res.append(whole("tfrecord package + torch DataLoader", t,
                     "2 workers (each reads its half of every shard), shuffle queue 10000, "
                     "batch 256, pin_memory=True", doc))
    return res, scaling, {"records": records, "bytes": nbytes, "files": len(files)}


TF_COUNT = r"""
import os, sys, json, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import tensorflow as tf
files = sys.argv[1:]
best = 1e9
for _ in range(1):  # one pass: the harness times the whole process
    t0 = time.perf_counter()
    n = int(tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)
            .reduce(tf.constant(0, tf.int64), lambda x, _: x + 1))
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"seconds": best, "records": n}))
"""


def verification(a, dirs):
    files = sorted(os.path.join(d, f) for d in dirs for f in os.listdir(d) if f.endswith(".tfrecord"))
    nbytes = sum(os.path.getsize(f) for f in files)
    for d in dirs:
        warm(d)
    t_cat = timed(lambda: run(["sh", "-c", 'cat "$@" > /dev/null', "cat"] + files), a.repeats)
    res = [entry("cat > /dev/null (baseline)", t_cat, nbytes / 1e6, "MB/s", t_cat)]
    scaling = []
    for threads in (2, 1):
        t = timed(lambda: run([a.shardfeed, "check", "--quiet", "--threads", str(threads)] + dirs),
                  a.repeats)
        e = entry(f"shardfeed check, {threads} threads", t, nbytes / 1e6, "MB/s", t_cat,
                  "framing, both CRCs, schema, index, manifest checksums")
        if threads == 2:
            res.append(e)
        scaling.append(e)
    t, r = timed_process([sys.executable, "-c", TF_COUNT] + files, a.repeats)
    res.append(entry("tf.data count (reduce)", t.wall, nbytes / 1e6, "MB/s", t_cat,
                     "TFRecordDataset(num_parallel_reads=AUTOTUNE).reduce: framing + CRCs; "
                     f"whole process incl. TensorFlow's import (its own loop: {r['seconds']:.3f} s)"))
    return res, scaling


def decode_images(a, work):
    """JPEG photos -> uint8 224x224 batches (bench/image_decode_bench.py, each
    pipeline in its own process): images/s relative to tf.data in the same
    mode and thread count, and images per CPU-second (the per-core rate)."""
    photos = os.path.join(a.data, "images", "hymenoptera")
    if not os.path.isdir(photos):  # the bundled fixtures: a smoke run only
        photos = os.path.join(HERE, "..", "testdata", "decode")
    out = os.path.join(work, "decode-rows.json")
    if a.quick:
        opts = ["--records", "300", "--threads", "1", "--modes", "train",
                "--only", "shardfeed,tf,dali"]
    else:
        opts = ["--records", "5000", "--threads", "1,2", "--modes", "train,eval",
                "--only", "shardfeed,maxside,tf,dali,torchvision", "--repeat", str(min(a.repeats, 2))]
    env = dict(os.environ, PYTHONPATH=a.package, SHARDFEED_CLI=a.shardfeed)
    r = run([sys.executable, os.path.join(HERE, "image_decode_bench.py"), "--photos", photos,
             "--json", out] + opts, env=env)
    print(r.stdout, end="", flush=True)
    rows = json.load(open(out))["rows"]
    only = opts[opts.index("--only") + 1].split(",")
    missing = sorted({f"{p} {m} {t}" for p in only for m in opts[opts.index("--modes") + 1].split(",")
                      for t in opts[opts.index("--threads") + 1].split(",")}
                     - {f"{r['pipeline']} {r['mode']} {r['threads']}" for r in rows})
    if missing:  # a pipeline failed (its error is in the output above)
        message = f"compare: decode pipelines without a result: {', '.join(missing)}"
        if a.quick:
            raise SystemExit(message)
        print(message, file=sys.stderr)
    names = {"shardfeed": "shardfeed Loader(decode=...)", "maxside": "shardfeed, --max-side 256 shards",
             "tf": "tf.data decode_and_crop_jpeg", "dali": "NVIDIA DALI on the CPU",
             "torchvision": "torchvision + PIL DataLoader"}
    res = []
    for r in rows:
        base = [b for b in rows if b["pipeline"] == "tf" and b["mode"] == r["mode"]
                and b["threads"] == r["threads"]]
        seconds = r["images"] / r["images_per_s"]
        base_seconds = base[0]["images"] / base[0]["images_per_s"] if base else seconds
        res.append(entry(f"{names[r['pipeline']]}, {r['mode']}, {r['threads']} thread(s)", seconds,
                         r["images"], "images/s", base_seconds,
                         f"{r['images_per_cpu_s']:.0f} images per CPU-second"))
    return res, photos


def plot(out, name, title, results):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [r["name"] for r in results]
    ratios = [r.get("ratio", 1.0) for r in results]
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(names) + 1.2))
    colors = ["#2a7ab0" if n.startswith("shardfeed") else "#999999" for n in names]
    ax.barh(range(len(names)), ratios, color=colors)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    for i, r in enumerate(results):
        ax.text(ratios[i], i, f" {r['ratio']:.2f}x ({r['throughput']:,.0f} {r['unit']})",
                va="center", fontsize=7)
    ax.set_xlim(right=max(ratios) * 6)
    ax.set_xlabel("throughput relative to the baseline (log scale)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"{name}.png"), dpi=110)
    plt.close(fig)


def versions():
    def ver(mod):
        try:
            return run([sys.executable, "-c",
                        f"import importlib.metadata as m; print(m.version({mod!r}))"],
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")).stdout.strip().splitlines()[-1]
        except SystemExit:
            return "absent"
    m = process_timing.machine()
    return {"cpu": m["cpu"], "cpu_flags": m["flags"], "load_average": m["load"],
            "cores": m["cores"], "python": platform.python_version(),
            "tensorflow": ver("tensorflow-cpu"), "torch": ver("torch"), "tfrecord": ver("tfrecord"),
            "numpy": ver("numpy"), "platform": platform.platform()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shardfeed", required=True)
    p.add_argument("--package", required=True, help="folder holding the shardfeed package")
    p.add_argument("--data", required=True)
    p.add_argument("--jpegs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--work", default=None)
    p.add_argument("--records-per-batch", type=int, default=10000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="small data, one repeat (CI smoke test)")
    a = p.parse_args()
    if a.quick:
        a.records_per_batch, a.repeats = min(a.records_per_batch, 1000), 1
    a.shardfeed = os.path.abspath(a.shardfeed)
    os.makedirs(a.out, exist_ok=True)
    work = a.work or os.path.join(a.out, "work")
    os.makedirs(work, exist_ok=True)
    t0 = time.perf_counter()
    print(process_timing.machine_line(), flush=True)
    cifar = os.path.join(work, "cifar")
    stamp = os.path.join(work, "cifar-records-per-batch")
    made = open(stamp).read().strip() if os.path.exists(stamp) else ""
    if made != str(a.records_per_batch):  # data made for another size: make it again
        shutil.rmtree(cifar, ignore_errors=True)
        run([sys.executable, os.path.join(HERE, "make_full_cifar.py"), a.data, cifar,
             str(a.records_per_batch)])
        with open(stamp, "w") as f:
            f.write(str(a.records_per_batch))
    ds = os.path.join(work, "ds")
    run([a.shardfeed, "convert", "cifar10", "--input", os.path.join(cifar, "cifar-10-batches-bin"),
         "--output", ds, "--quiet", "--overwrite"])
    meta = {"machine": versions(), "records_per_batch": a.records_per_batch,
            "repeats": a.repeats, "quick": a.quick,
            "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])}
    sections = {}
    sections["conversion"] = conversion(a, work)
    reading_res, reading_scaling, data = reading(a, work, ds)
    sections["reading"] = reading_res
    verify_res, verify_scaling = verification(a, [ds])
    sections["verification"] = verify_res
    # Thread scaling, relative to the 2-thread run (copies: the sections
    # above keep their own ratios).
    scaling = []
    for group in (reading_scaling, verify_scaling):
        for s in group:
            scaling.append(dict(s, ratio=group[0]["seconds"] / s["seconds"]))
    sections["scaling"] = scaling
    sections["decode"], photos = decode_images(a, work)
    titles = {"decode": f"JPEG photos to 224x224 uint8 batches vs tf.data ({os.path.basename(photos)})",
              "conversion": "Conversion (MB/s of input) vs cp -r + sync",
              "reading": "Shuffled batches of 256 decoded CIFAR records vs pread",
              "verification": "Verification vs cat > /dev/null",
              "scaling": "shardfeed thread scaling (relative to 2 threads)"}
    for name, results in sections.items():
        doc = dict(meta, section=name, data=photos if name == "decode" else data, results=results)
        with open(os.path.join(a.out, f"{name}.json"), "w") as f:
            json.dump(doc, f, indent=1)
        plot(a.out, name, titles[name] + (" [quick]" if a.quick else ""), results)
        print(f"== {name}")
        for r in results:
            print(f"  {r['name']:58s} {r['throughput']:14,.1f} {r['unit']:10s} "
                  f"{r.get('ratio', 1):6.2f}x")
    print(f"compare: done in {time.perf_counter() - t0:.0f} s; results in {a.out}")


if __name__ == "__main__":
    main()
