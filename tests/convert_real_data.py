"""Every record of the real data converts, and TensorFlow decodes the shards
(tf.data.TFRecordDataset + tf.io.parse_single_example) back to exactly the
source pixels, bytes and labels, compared as multisets (shards are shuffled).

Uses $SHARDFEED_DATASETS (../shared/datasets) when set, else says so and
checks the bundled fixtures only.
Usage: convert_real_data.py SHARDFEED_BINARY WORKSPACE_ROOT TMP_DIR
"""
import collections
import glob
import gzip
import hashlib
import json
import os
import pickle
import subprocess
import sys
import tarfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

SF, ROOT, TMP = sys.argv[1:4]
DATASETS = os.environ.get("SHARDFEED_DATASETS")
failures, passes = [], 0


def check(name, ok, detail=""):
    global passes
    if ok:
        passes += 1
    else:
        failures.append(name)
        print(f"FAIL: {name} {detail}", flush=True)


def convert(kind, source, out, *flags):
    subprocess.run([SF, "convert", kind, "--input", source, "--output", out, "--quiet",
                    "--shard-size", "20MB", *flags], check=True)
    return json.load(open(os.path.join(out, "manifest.json")))


def read_split(out, split, spec):
    files = sorted(glob.glob(os.path.join(out, f"{split}-*-of-*.tfrecord")))
    ds = tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, spec))
    return list(ds.as_numpy_iterator())


def digest(*parts):
    h = hashlib.sha1()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"|")
    return h.hexdigest()


CIFAR_SPEC = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "height": tf.io.FixedLenFeature([], tf.int64),
    "width": tf.io.FixedLenFeature([], tf.int64),
    "depth": tf.io.FixedLenFeature([], tf.int64),
}


def cifar_source_bin(folder, names):
    out = []
    for n in names:
        raw = np.fromfile(os.path.join(folder, n + ".bin"), dtype=np.uint8).reshape(-1, 3073)
        out += [digest(r[1:].tobytes(), int(r[0])) for r in raw]
    return collections.Counter(out)


def cifar_source_py(folder, names):
    out = []
    for n in names:
        d = pickle.load(open(os.path.join(folder, n), "rb"), encoding="bytes")
        out += [digest(img.tobytes(), lab) for img, lab in zip(d[b"data"], d[b"labels"])]
    return collections.Counter(out)


def cifar_shards(out, split):
    recs = read_split(out, split, CIFAR_SPEC)
    ok = all(r["height"] == 32 and r["width"] == 32 and r["depth"] == 3 for r in recs)
    return collections.Counter(digest(r["image"], int(r["label"])) for r in recs), ok


def check_cifar(tag, folder, layout):
    train = [f"data_batch_{i}" for i in range(1, 6)]
    src = cifar_source_bin if layout == "bin" else cifar_source_py
    for variant, source in [("folder", folder), ("archive", None)]:
        if variant == "archive":
            source = os.path.join(TMP, f"{tag}-{layout}.tar.gz")
            with tarfile.open(source, "w:gz", dereference=True) as t:
                for name in sorted(os.listdir(folder)):
                    if not name.startswith("truncated"):
                        t.add(os.path.join(folder, name), f"cifar-10-batches-{layout}/{name}")
        out = os.path.join(TMP, f"{tag}-{layout}-{variant}")
        m = convert("cifar10", source, out)
        for split, names in [("train", train), ("test", ["test_batch"])]:
            got, shape_ok = cifar_shards(out, split)
            want = src(folder, names)
            check(f"{tag} {layout} {variant} {split}: every record, exact pixels and labels",
                  got == want and sum(got.values()) > 0,
                  f"{sum(got.values())} vs {sum(want.values())}")
            check(f"{tag} {layout} {variant} {split}: height/width/depth", shape_ok)
        check(f"{tag} {layout} {variant}: class names", m["class_names"][0] == "airplane")


def check_images(tag, folder):
    out = os.path.join(TMP, f"{tag}-images")
    m = convert("image-folder", folder, out)
    spec = {k: tf.io.FixedLenFeature([], t) for k, t in [
        ("image/encoded", tf.string), ("image/format", tf.string), ("image/class/label", tf.int64),
        ("image/class/text", tf.string), ("image/filename", tf.string),
        ("image/height", tf.int64), ("image/width", tf.int64)]}
    classes = m["class_names"]
    got, want = collections.Counter(), collections.Counter()
    dims_ok = True
    for split in [s["name"] for s in m["splits"]]:
        base = folder if len(m["splits"]) == 1 else os.path.join(folder, split)
        for r in read_split(out, split, spec):
            label = int(r["image/class/label"])
            got[digest(r["image/encoded"], classes[label], r["image/class/text"].decode(),
                       r["image/filename"].decode())] += 1
            if r["image/format"] == b"jpeg" and len(r["image/encoded"]) < 200_000:
                img = tf.io.decode_image(r["image/encoded"])
                dims_ok &= img.shape[0] == r["image/height"] and img.shape[1] == r["image/width"]
        for cls in classes:
            d = os.path.join(base, cls)
            for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                want[digest(open(os.path.join(d, name), "rb").read(), cls, cls, name)] += 1
    check(f"{tag}: every image file, exact bytes, labels and names",
          got == want and sum(got.values()) > 0, f"{sum(got.values())} vs {sum(want.values())}")
    check(f"{tag}: height/width from the header match the decoded image", dims_ok)


def check_mnist(tag, folder):
    out = os.path.join(TMP, f"{tag}-mnist")
    convert("mnist", folder, out)
    images = np.frombuffer(gzip.open(os.path.join(folder, "t10k-images-idx3-ubyte.gz")).read()[16:],
                           np.uint8).reshape(-1, 784)
    labels = np.frombuffer(gzip.open(os.path.join(folder, "t10k-labels-idx1-ubyte.gz")).read()[8:],
                           np.uint8)
    want = collections.Counter(digest(i.tobytes(), int(l)) for i, l in zip(images, labels))
    spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
    got = collections.Counter(digest(r["image"], int(r["label"])) for r in read_split(out, "test", spec))
    check(f"{tag}: every MNIST image and label", got == want and len(want) > 0,
          f"{sum(got.values())} vs {sum(want.values())}")


fixtures = os.path.join(ROOT, "testdata")
check_cifar("fixtures", os.path.join(fixtures, "cifar10-bin"), "bin")
check_cifar("fixtures", os.path.join(fixtures, "cifar10-py"), "py")
check_images("fixtures-hymenoptera", os.path.join(fixtures, "images", "hymenoptera"))
check_mnist("fixtures", os.path.join(fixtures, "mnist"))
if DATASETS:
    check_cifar("real", os.path.join(DATASETS, "cifar10-bin"), "bin")
    check_cifar("real", os.path.join(DATASETS, "cifar10-py"), "py")
    check_images("real-hymenoptera", os.path.join(DATASETS, "images", "hymenoptera"))
    check_images("real-cifar10-test-jpg", os.path.join(DATASETS, "images", "cifar10-test-jpg"))
    check_mnist("real", os.path.join(DATASETS, "mnist"))
else:
    print("SKIPPED the full real data: SHARDFEED_DATASETS is not set (../shared/datasets absent)")

print(f"convert_real_data (TensorFlow {tf.__version__}): {passes} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
