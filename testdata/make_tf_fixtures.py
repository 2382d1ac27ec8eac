"""Writes testdata/tf_written/ with TensorFlow (tf.io.TFRecordWriter): clean
data as real users have it, which `shardfeed check` must not flag, and
SequenceExamples. Run with a Python that has tensorflow:

    ~/.cache/shardfeed/venv/bin/python testdata/make_tf_fixtures.py testdata/tf_written
"""
import os
import sys

import tensorflow as tf


def feature(value):
    if isinstance(value, bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
    if isinstance(value, float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
    if isinstance(value, list):
        return tf.train.Feature(float_list=tf.train.FloatList(value=value))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def example(**features):
    return tf.train.Example(features=tf.train.Features(
        feature={k.replace("__", "/"): feature(v) for k, v in features.items()}))


def write(path, records):
    with tf.io.TFRecordWriter(path) as w:
        for r in records:
            w.write(r.SerializeToString())


def main(out):
    os.makedirs(os.path.join(out, "names"), exist_ok=True)
    # An optional feature: 'weight' in every third record only.
    write(os.path.join(out, "optional_weight.tfrecord"),
          [example(image__encoded=bytes([i]) * (10 + i), label=i % 10,
                   **({"weight": 0.5 + i} if i % 3 == 0 else {}))
           for i in range(40)])
    # Two shards in TensorFlow's naming, without extension; image/filename
    # is 8 bytes long in all 120 records of the first, 1 byte in the second;
    # bbox has 4 values in the first shard, 0 to 7 in the second.
    write(os.path.join(out, "names", "train-00000-of-00002"),
          [example(image__filename=b"img%05d" % i, image__class__label=i % 5,
                   bbox=[0.25] * 4) for i in range(120)])
    write(os.path.join(out, "names", "train-00001-of-00002"),
          [example(image__filename=b"abcdefghijklmnopqrst"[i:i + 1], image__class__label=i % 5,
                   bbox=[0.5] * (i % 8)) for i in range(20)])
    # A real conflict: 'label' int64 in 30 records, bytes in the last 5.
    write(os.path.join(out, "conflict.tfrecord"),
          [example(label=(i if i < 30 else b"cat")) for i in range(35)])
    # SequenceExamples: context features and feature lists.
    seqs = []
    for i in range(3):
        s = tf.train.SequenceExample()
        s.context.feature["length"].int64_list.value.append(i + 1)
        s.context.feature["name"].bytes_list.value.append(b"seq%d" % i)
        frames = s.feature_lists.feature_list["frames"]
        for j in range(i + 1):
            frames.feature.add().float_list.value.extend([float(j), 1.0])
        seqs.append(s)
    write(os.path.join(out, "sequence.tfrecord"), seqs)
    # SequenceExamples with context only (empty feature_lists).
    ctx = []
    for i in range(3):
        s = tf.train.SequenceExample()
        s.context.feature["label"].int64_list.value.append(i)
        ctx.append(s)
    write(os.path.join(out, "sequence_context_only.tfrecord"), ctx)


if __name__ == "__main__":
    main(sys.argv[1])
