"""Decode-stage benchmark: JPEG photos -> uint8 224x224 batches, images/s.

Real photos (../shared/datasets/images/hymenoptera, ~500x375 JPEGs) cycled
to >= 5,000 records, converted with `shardfeed convert image-folder` (and
with --max-side 256). Pipelines, each with 1 and 2 threads, batch 256, the
same records:
  shardfeed   Loader(decode={"image/encoded": "image,random_resized_crop=224,flip"})
  tf.data     sample_distorted_bounding_box + decode_and_crop_jpeg + resize + flip
  DALI (CPU)  fn.readers.tfrecord + fn.decoders.image_random_crop + fn.resize + flip
  torchvision ImageFolder + RandomResizedCrop + RandomHorizontalFlip (PIL) in a
              DataLoader with N worker processes
and the evaluation path (resize 256 + center crop 224; TF: its padded center
crop), and "tfdefault": tf.data with TensorFlow's default thread pools and
AUTOTUNE (as users write it). Throughput is measured from the first batch to
the last (start-up excluded), and so is the CPU time of all the pipeline's
threads: images per CPU-second is the per-core rate (a pipeline told to use
1 thread may use more cores). torchvision's worker processes count
whole-run. Every pipeline's process is also timed from outside (start-up,
imports and exit included: what a user's stopwatch and `time` show):
"whole process" images per CPU-second. Usage (the venv of tools/setup.sh, a built shardfeed CLI and
Python extension on PYTHONPATH):
  python bench/image_decode_bench.py [--records 5000] [--threads 1,2] [--only shardfeed,tf]
      [--repeat 3] [--baseline DIR --only baseline,shardfeed]   (before/after, one run)
"""
import argparse
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import process_timing  # noqa: E402
PHOTOS = os.path.join(ROOT, "..", "shared", "datasets", "images", "hymenoptera")
TRAIN = "image,random_resized_crop=224,flip"
EVAL = "image,resize=256,center_crop=224"


def cli():
    return os.environ.get("SHARDFEED_CLI", os.path.join(ROOT, "bazel-bin", "cli", "shardfeed"))


def make_folder(work, records, photos):
    """A class-per-folder tree with the photos (every *.jpg under `photos`, the
    class being each file's folder) cycled (symlinks) to >= records."""
    files = sorted(glob.glob(os.path.join(photos, "**", "*.jpg"), recursive=True))
    if not files:
        raise SystemExit(f"image_decode_bench: no *.jpg under {photos}")
    folder = os.path.join(work, "photos")
    copies = -(-records // len(files))
    for c in range(copies):
        for f in files:
            cls = os.path.basename(os.path.dirname(f))
            d = os.path.join(folder, cls)
            os.makedirs(d, exist_ok=True)
            os.symlink(os.path.abspath(f), os.path.join(d, f"{c:03d}_{os.path.basename(f)}"))
    return folder, copies * len(files)


def convert(folder, out, extra=()):
    subprocess.run([cli(), "convert", "image-folder", "--input", folder, "--output", out,
                    "--num-shards", "8", "--quiet", *extra], check=True)
    return sorted(f for f in glob.glob(os.path.join(out, "train-*-of-*"))
                  if not f.endswith(".index"))


def dali_index(shards):
    """DALI's tfrecord index: 'offset size' per record."""
    out = []
    for s in shards:
        idx = s + ".dali_idx"
        with open(s, "rb") as f, open(idx, "w") as w:
            offset = 0
            while True:
                head = f.read(12)
                if len(head) < 12:
                    break
                n = struct.unpack("<Q", head[:8])[0]
                f.seek(n + 4, 1)
                w.write(f"{offset} {n + 16}\n")
                offset += n + 16
        out.append(idx)
    return out


def cpu_seconds():
    """CPU time of this process (all its threads) and of its reaped children."""
    import resource
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(batches, workers=False):
    """(images/s, images, CPU seconds per image). images/s runs from the
    first batch's arrival to the last (start-up excluded). The CPU time is
    every thread's over the same span; with `workers` (a DataLoader's worker
    processes, whose CPU time is only known once they exit and are reaped)
    it is the whole run's, processes included, over all images."""
    c_start = cpu_seconds()
    it = iter(batches)
    first = next(it)
    n0 = first
    t0 = time.perf_counter()
    c0 = cpu_seconds()
    n = 0
    for b in it:
        n += b
    dt = time.perf_counter() - t0
    cpu = cpu_seconds() - (c_start if workers else c0)
    per = cpu / (n + n0 if workers else n) if n else 0.0
    return n / dt if dt > 0 else 0.0, n + n0, per


def run_shardfeed(ds, threads, mode, n):
    import numpy as np
    import shardfeed
    loader = shardfeed.Loader(ds, split="train", batch_size=256, shuffle=True, seed=1,
                              features={"image/encoded": "bytes", "image/class/label": "int64"},
                              decode={"image/encoded": TRAIN if mode == "train" else EVAL},
                              decode_threads=threads, io_threads=1, epochs=1)

    def gen():
        for b in loader:
            yield np.from_dlpack(b["image/encoded"]).shape[0]
    return timed(gen())


def run_tf(shards, threads, mode, n, defaults=False):
    import tensorflow as tf
    if not defaults:
        tf.config.threading.set_inter_op_parallelism_threads(threads)
        tf.config.threading.set_intra_op_parallelism_threads(1)
    feats = {"image/encoded": tf.io.FixedLenFeature([], tf.string),
             "image/class/label": tf.io.FixedLenFeature([], tf.int64)}

    def train(rec):
        f = tf.io.parse_single_example(rec, feats)
        shape = tf.io.extract_jpeg_shape(f["image/encoded"])
        begin, size, _ = tf.image.sample_distorted_bounding_box(
            shape, bounding_boxes=tf.constant([0.0, 0.0, 1.0, 1.0], shape=[1, 1, 4]),
            min_object_covered=0.1, aspect_ratio_range=(3 / 4, 4 / 3), area_range=(0.08, 1.0),
            max_attempts=10, use_image_if_no_bounding_boxes=True)
        window = tf.stack([begin[0], begin[1], size[0], size[1]])
        img = tf.image.decode_and_crop_jpeg(f["image/encoded"], window, channels=3)
        img = tf.image.resize(img, [224, 224], method="bilinear")
        img = tf.image.random_flip_left_right(img)
        return tf.cast(img, tf.uint8), f["image/class/label"]

    def evaluate(rec):
        f = tf.io.parse_single_example(rec, feats)
        shape = tf.io.extract_jpeg_shape(f["image/encoded"])
        side = tf.cast(224 / 256 * tf.cast(tf.minimum(shape[0], shape[1]), tf.float32), tf.int32)
        oy, ox = (shape[0] - side + 1) // 2, (shape[1] - side + 1) // 2
        img = tf.image.decode_and_crop_jpeg(f["image/encoded"], tf.stack([oy, ox, side, side]),
                                            channels=3)
        img = tf.image.resize(img, [224, 224], method="bilinear")
        return tf.cast(img, tf.uint8), f["image/class/label"]

    ds = (tf.data.TFRecordDataset(shards).shuffle(1000, seed=1)
          .map(train if mode == "train" else evaluate,
               num_parallel_calls=tf.data.AUTOTUNE if defaults else threads)
          .batch(256).prefetch(tf.data.AUTOTUNE if defaults else 2))
    if not defaults:
        opts = tf.data.Options()
        opts.threading.private_threadpool_size = threads
        opts.threading.max_intra_op_parallelism = 1
        ds = ds.with_options(opts)
    return timed(int(x.shape[0]) for x, _ in ds)


def run_tf_default(shards, threads, mode, n):
    """tf.data as users write it: the same ops, TensorFlow's default thread
    pools (no inter/intra-op settings, no private pool), AUTOTUNE
    parallelism and prefetch. `threads` is not used: TensorFlow decides."""
    return run_tf(shards, threads, mode, n, defaults=True)


def run_dali(shards, threads, mode, n):
    from nvidia.dali import fn, pipeline_def, types
    import nvidia.dali.tfrecord as tfrec
    idx = dali_index(shards)

    @pipeline_def(batch_size=256, num_threads=threads, device_id=None, seed=1)
    def pipe():
        inputs = fn.readers.tfrecord(
            path=shards, index_path=idx, random_shuffle=True, initial_fill=1000,
            features={"image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                      "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1)})
        if mode == "train":
            img = fn.decoders.image_random_crop(inputs["image/encoded"], device="cpu",
                                                output_type=types.RGB,
                                                random_aspect_ratio=[0.75, 4 / 3],
                                                random_area=[0.08, 1.0], num_attempts=10)
            img = fn.resize(img, resize_x=224, resize_y=224)
            img = fn.flip(img, horizontal=fn.random.coin_flip())
        else:
            img = fn.decoders.image(inputs["image/encoded"], device="cpu", output_type=types.RGB)
            img = fn.resize(img, resize_shorter=256)
            img = fn.crop(img, crop=(224, 224))
        return img, inputs["image/class/label"]

    p = pipe()
    p.build()
    iters = -(-n // 256)
    return timed(len(p.run()[0]) for _ in range(iters))


def run_torchvision(folder, threads, mode, n):
    import torch
    from torchvision import datasets, transforms
    t = (transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.PILToTensor()]) if mode == "train" else
         transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                             transforms.PILToTensor()]))
    ds = datasets.ImageFolder(folder, transform=t)
    loader = torch.utils.data.DataLoader(ds, batch_size=256, shuffle=True, num_workers=threads,
                                         generator=torch.Generator().manual_seed(1))
    torch.set_num_threads(1)
    return timed((x.shape[0] for x, _ in loader), workers=True)


RUNNERS = {"shardfeed": run_shardfeed, "maxside": run_shardfeed, "baseline": run_shardfeed,
           "tf": run_tf, "tfdefault": run_tf_default, "dali": run_dali,
           "torchvision": run_torchvision}


def worker(args):
    """One pipeline in this process (TensorFlow, DALI and torch each load
    their own LLVM and cannot share a process): prints one JSON line."""
    data = json.loads(args.worker)
    rate, images, cpu = RUNNERS[data["name"]](data["input"], data["threads"], data["mode"],
                                               data["n"])
    print(json.dumps({"rate": rate, "images": images, "cpu_ms": cpu * 1e3}))


def env_for(name, baseline):
    """The environment of a worker: 'baseline' imports the other build first."""
    env = dict(os.environ)
    if name == "baseline":
        if not baseline:
            raise SystemExit("pipeline 'baseline' needs --baseline DIR")
        env["PYTHONPATH"] = os.pathsep.join([baseline, env.get("PYTHONPATH", "")])
    return env


def run_once(spec, env):
    """One pipeline in a fresh process, timed from outside too: {"rate",
    "images", "cpu_ms" (per image, first batch to last), "process_cpu_s",
    "process_wall_s" (the whole process: interpreter start-up, imports,
    building the pipeline, exit)} or {"error"}."""
    t = process_timing.run_timed([sys.executable, __file__, "--worker", spec], env=env,
                                 check=False)
    lines = [l for l in t.stdout.splitlines() if l.startswith("{")]
    if t.rc != 0 or not lines:
        return {"error": (t.stderr.strip().splitlines() or ["?"])[-1]}
    r = json.loads(lines[-1])
    r.update(process_cpu_s=t.cpu, process_wall_s=t.wall, load1=t.load1)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=5000)
    ap.add_argument("--photos", default=PHOTOS, help="folder of JPEGs (default: the hymenoptera photos)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="shardfeed,maxside,tf,dali,torchvision")
    ap.add_argument("--modes", default="train,eval")
    ap.add_argument("--json", default="")
    ap.add_argument("--worker", default="")
    ap.add_argument("--baseline", default="",
                    help="dir holding another build's shardfeed/ package (with _shardfeed.so): "
                         "pipeline 'baseline' runs it on the same records (before/after)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per pipeline; the best is kept")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    only = args.only.split(",")
    print(process_timing.machine_line(), flush=True)
    work = tempfile.mkdtemp(prefix="image_bench.")
    try:
        folder, n = make_folder(work, args.records, args.photos)
        shards = convert(folder, os.path.join(work, "ds"))
        small = (convert(folder, os.path.join(work, "ds256"), ["--max-side", "256"])
                 if "maxside" in only else [])
        size = sum(os.path.getsize(s) for s in shards) / 1e6
        size256 = sum(os.path.getsize(s) for s in small) / 1e6
        print(f"{n} records; shards {size:.0f} MB, with --max-side 256 {size256:.0f} MB", flush=True)
        inputs = {"shardfeed": os.path.join(work, "ds"), "maxside": os.path.join(work, "ds256"),
                  "baseline": os.path.join(work, "ds"), "tf": shards, "tfdefault": shards,
                  "dali": shards,
                  "torchvision": folder}
        rows = []
        for mode in args.modes.split(","):
            for t in [int(x) for x in args.threads.split(",")]:
                # Repeats alternate between the pipelines (a load swing then
                # hits all of them), and each keeps its best run.
                best = {name: {"error": "no run"} for name in only}
                for _ in range(max(args.repeat, 1)):
                    for name in only:
                        spec = json.dumps({"name": name, "input": inputs[name], "threads": t,
                                           "mode": mode, "n": n})
                        r = run_once(spec, env_for(name, args.baseline))
                        if r.get("rate", -1) > best[name].get("rate", -1):
                            best[name] = r
                        elif "rate" not in best[name]:
                            best[name] = r  # still failing: keep the latest error
                for name in only:
                    r = best[name]
                    if "rate" not in r:
                        print(f"{mode:5s} {name:12s} threads={t}: FAILED {r['error']}"[:300],
                              flush=True)
                        continue
                    per_cpu_s = 1e3 / r["cpu_ms"] if r["cpu_ms"] > 0 else 0.0
                    whole = r["images"] / r["process_cpu_s"] if r["process_cpu_s"] > 0 else 0.0
                    rows.append({"mode": mode, "pipeline": name, "threads": t,
                                 "images_per_s": round(r["rate"], 1), "images": r["images"],
                                 "cpu_ms_per_image": round(r["cpu_ms"], 3),
                                 "images_per_cpu_s": round(per_cpu_s, 1),
                                 "process_cpu_s": round(r["process_cpu_s"], 3),
                                 "process_wall_s": round(r["process_wall_s"], 3),
                                 "images_per_process_cpu_s": round(whole, 1),
                                 "load1": r["load1"]})
                    print(f"{mode:5s} {name:12s} threads={t}: {r['rate']:8.1f} images/s, "
                          f"{r['cpu_ms']:6.2f} ms CPU/image = {per_cpu_s:7.1f} images per "
                          f"CPU-second; whole process {r['process_cpu_s']:.2f} CPU-s, "
                          f"{r['process_wall_s']:.2f} s = {whole:7.1f} images per CPU-second "
                          f"({r['images']} images, load {r['load1']:.1f})", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"records": n, "rows": rows}, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
