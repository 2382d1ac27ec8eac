"""tf.io.parse_example (TensorFlow's fast C++ Example parser) on the records
of a shard, in batches, on one thread: the peer of bench/decode_bench.cc.
Usage: tf_parse_bench.py SHARD BATCH
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.threading.set_intra_op_parallelism_threads(1)
shard, batch = sys.argv[1], int(sys.argv[2])
records = [r.numpy() for r in tf.data.TFRecordDataset(shard).take(20000)]
batches = [tf.constant(records[i:i + batch]) for i in range(0, len(records), batch)]
spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
parse = tf.function(lambda b: tf.io.parse_example(b, spec))
for b in batches[:3]:
    parse(b)
best = 1e9
for _ in range(5):
    t0 = time.perf_counter()
    for b in batches:
        out = parse(b)
    _ = out["label"].numpy()
    best = min(best, time.perf_counter() - t0)
print(f"tf.io.parse_example: {len(records)} records in {best:.4f} s = {len(records) / best:.0f} records/s "
      f"(one thread, batch {batch})")
