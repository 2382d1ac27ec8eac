"""PySpark (local mode) converts a DataFrame: one Writer task per partition
(mapPartitions), one merge, then the Loader and TensorFlow read the dataset."""
import os
import sys

import numpy as np
import pytest

import shardfeed

pyspark = pytest.importorskip("pyspark")


def _write_partition(out, task_count):
    def run(rows):
        import shardfeed as sf  # in the Spark worker
        from pyspark import TaskContext

        index = TaskContext.get().partitionId()
        with sf.Writer(out, shard_size="8kB", task_index=index, task_count=task_count) as w:
            for row in rows:
                w.write({"id": row.id, "image": bytes(row.image), "label": row.label})
        yield index, w.summary["records"]

    return run


def test_spark_dataframe_to_one_dataset(tmp_path):
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (SparkSession.builder.master("local[2]").appName("shardfeed-writer-test")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "512m")
             .getOrCreate())
    try:
        rng = np.random.default_rng(3)
        images = rng.integers(0, 256, (600, 2, 3, 3), dtype=np.uint8)
        rows = [(i, bytearray(images[i].tobytes()), i % 10) for i in range(600)]
        df = spark.createDataFrame(rows, "id long, image binary, label long").repartition(5)
        n = df.rdd.getNumPartitions()
        out = str(tmp_path / "spark-ds")
        written = dict(df.rdd.mapPartitions(_write_partition(out, n)).collect())
    finally:
        spark.stop()
    assert sorted(written) == list(range(n)) and sum(written.values()) == 600

    summary = shardfeed.merge(out)
    assert summary["records"] == 600
    assert shardfeed.check(out)["problems"] == []

    # The Loader: every record exactly once, image bytes intact.
    loader = shardfeed.Loader(out, split="train", batch_size=600, shuffle=False,
                              features={"id": "int64", "label": "int64", "image": "uint8[18]"})
    batch = next(iter(loader))
    ids = np.from_dlpack(batch["id"])
    assert sorted(ids.tolist()) == list(range(600))
    got = np.from_dlpack(batch["image"])
    for row, i in enumerate(ids):
        assert (got[row] == images[i].reshape(-1)).all()
        assert np.from_dlpack(batch["label"])[row] == i % 10

    # TensorFlow reads the same shards.
    tf = pytest.importorskip("tensorflow")
    files = sorted(str(p) for p in (tmp_path / "spark-ds").glob("train-*.tfrecord"))
    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "image": tf.io.FixedLenFeature([], tf.string)}
    seen = {}
    for raw in tf.data.TFRecordDataset(files):
        ex = tf.io.parse_single_example(raw, spec)
        seen[int(ex["id"])] = ex["image"].numpy()
    assert len(seen) == 600
    assert all(seen[i] == images[i].tobytes() for i in range(600))
