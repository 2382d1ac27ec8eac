"""An equivalent of TensorFlow's CIFAR-10 conversion script
(generate_cifar10_tfrecords.py from the tensorflow/models tutorial): pickle
load, one tf.train.Example per image, tf.io.TFRecordWriter. The peer in the
conversion benchmark. Usage: tf_cifar10_convert.py PY_BATCH_DIR OUT_DIR
"""
import os
import pickle
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)


def int64(v):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[v]))


def convert(names, path):
    with tf.io.TFRecordWriter(path) as w:
        for name in names:
            d = pickle.load(open(os.path.join(src, name), "rb"), encoding="bytes")
            for img, label in zip(d[b"data"], d[b"labels"]):
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[img.tobytes()])),
                    "label": int64(label)}))
                w.write(ex.SerializeToString())


convert([f"data_batch_{i}" for i in range(1, 5)], os.path.join(out, "train.tfrecords"))
convert(["data_batch_5"], os.path.join(out, "validation.tfrecords"))
convert(["test_batch"], os.path.join(out, "eval.tfrecords"))
