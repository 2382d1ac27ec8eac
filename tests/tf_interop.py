"""Interoperability with real TensorFlow (tensorflow-cpu).

1. TensorFlow reads and parses files that shardfeed writes (NONE, ZLIB, GZIP).
2. shardfeed reads files that TensorFlow writes (NONE, ZLIB, GZIP): every
   record, as the same Example.

Usage: tf_interop.py SHARDFEED_BINARY WORKSPACE_ROOT TMP_DIR
"""
import base64
import json
import os
import random
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import json_format  # noqa: E402

SF, ROOT, TMP = sys.argv[1:4]
INTEROP = os.path.join(ROOT, "testdata", "interop")
COMPRESSIONS = {"none": "", "zlib": "ZLIB", "gzip": "GZIP"}
failures = []
passes = 0


def check(name, ok, detail=""):
    global passes
    if ok:
        passes += 1
    else:
        failures.append(name)
        print(f"FAIL: {name} {detail}", flush=True)


def tf_records(path, compression):
    return [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]


def normalize(value):
    """JSON values with floats rounded to float32, as stored."""
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, float):
        return float(np.float32(value))
    return value


# --- 1. TensorFlow reads what shardfeed writes -------------------------------
source = os.path.join(INTEROP, "tfx_cifar10_test_tiny.tfrecord")
expected = tf_records(source, "")
spec = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "id": tf.io.FixedLenFeature([], tf.string),
}
for name, tf_name in COMPRESSIONS.items():
    out = os.path.join(TMP, f"ours.{name}")
    subprocess.run([SF, "copy", source, "--output", out, "--compression", name], check=True)
    got = tf_records(out, tf_name)
    check(f"TF reads our {name} file: record count", len(got) == len(expected), len(got))
    check(f"TF reads our {name} file: records", got == expected)
    parsed = [tf.io.parse_single_example(r, spec) for r in got]
    want = [tf.io.parse_single_example(r, spec) for r in expected]
    check(f"TF parses our {name} Examples",
          all(int(a["label"]) == int(b["label"]) and a["image"].numpy() == b["image"].numpy()
              for a, b in zip(parsed, want)))

# --- 2. shardfeed reads what TensorFlow writes -------------------------------
rng = random.Random(7)


def random_example(i):
    ex = tf.train.Example()
    f = ex.features.feature
    f["index"].int64_list.value.append(i)
    f["ints"].int64_list.value.extend(rng.randrange(-2**63, 2**63) for _ in range(rng.randrange(0, 20)))
    f["floats"].float_list.value.extend(rng.uniform(-1e6, 1e6) for _ in range(rng.randrange(0, 20)))
    f["bytes"].bytes_list.value.extend(os.urandom(rng.randrange(0, 300)) for _ in range(rng.randrange(0, 4)))
    if i % 7 == 0:
        f["big"].bytes_list.value.append(os.urandom(3 << 20))  # a multi-MB record
    if i % 5 == 0:
        f["empty"].CopyFrom(tf.train.Feature())
    return ex


examples = [random_example(i) for i in range(60)] + [tf.train.Example()]
for name, tf_name in COMPRESSIONS.items():
    path = os.path.join(TMP, f"theirs-{name}.tfrecord")
    with tf.io.TFRecordWriter(path, options=tf.io.TFRecordOptions(compression_type=tf_name)) as w:
        for ex in examples:
            w.write(ex.SerializeToString())
        w.write(b"not an example \xff")
    result = subprocess.run([SF, "cat", path], check=True, capture_output=True, text=True)
    lines = result.stdout.splitlines()
    check(f"we read TF's {name} file: record count", len(lines) == len(examples) + 1, len(lines))
    same = all(normalize(json.loads(line)) == normalize(json_format.MessageToDict(ex))
               for line, ex in zip(lines, examples))
    check(f"we read TF's {name} file: every Example equal", same)
    check(f"we read TF's {name} file: raw record as base64",
          json.loads(lines[-1]) == base64.b64encode(b"not an example \xff").decode())
    count = subprocess.run([SF, "cat", "--count", path], check=True, capture_output=True, text=True)
    check(f"count of TF's {name} file", count.stdout.splitlines()[-1] == f"total {len(examples) + 1}")

# Our index of a TF-written file matches the framing TF used.
path = os.path.join(TMP, "theirs-none.tfrecord")
subprocess.run([SF, "index", path], check=True, capture_output=True)
offset = 0
ok = True
with open(path + ".index") as f:
    entries = [tuple(map(int, line.split())) for line in f]
records = tf_records(path, "")
for (off, size), rec in zip(entries, records):
    ok &= off == offset and size == len(rec) + 16
    offset += len(rec) + 16
check("index of TF's file matches its framing", ok and len(entries) == len(records))

print(f"tf_interop (TensorFlow {tf.__version__}): {passes} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
