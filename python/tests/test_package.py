"""The shardfeed Python package: exactly-once iteration, DLPack round trips
(numpy, torch, tensorflow) with exact values, tensor lifetime, rank/world
from the environment, errors as exceptions, Ctrl-C, convert/check reports
equal to the CLI's JSON, transforms and the resident cache."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import shardfeed
from conftest import ROOT

CLI = os.environ.get("SHARDFEED_CLI", "shardfeed")


def tf_records(directory, split):
    """(image bytes, label) of every record, in file order, read by TensorFlow."""
    tf = pytest.importorskip("tensorflow")
    files = sorted(str(p) for p in directory.glob(f"{split}-*.tfrecord"))
    spec = {"image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}
    out = []
    for raw in tf.data.TFRecordDataset(files):
        ex = tf.io.parse_single_example(raw, spec)
        out.append((ex["image"].numpy(), int(ex["label"].numpy())))
    return out


def test_convert_report_equals_the_cli_json(cifar, tmp_path):
    out, report = cifar
    cli = subprocess.run([CLI, "convert", "cifar10", "--input",
                          str(ROOT / "testdata/cifar10-py"), "--output",
                          str(tmp_path / "c"), "--shard-size", "400000", "--json"],
                         capture_output=True, text=True, check=True)
    cli_report = json.loads(cli.stdout)
    for key in ("records", "bytes", "shards", "skipped_inputs", "shard_files"):
        assert report[key] == cli_report[key], key
    assert report["records"] == 600 and report["shards"] >= 3


def test_every_record_exactly_once_with_tensorflows_values(cifar):
    out, _ = cifar
    truth = tf_records(out, "train")
    seen = []
    with shardfeed.Loader(out, split="train", batch_size=64, seed=3) as loader:
        assert len(loader) == (len(truth) + 63) // 64
        for batch in loader:
            images = np.from_dlpack(batch["image"])
            labels = np.from_dlpack(batch["label"])
            assert images.dtype == np.uint8 and images.shape == (batch.size, 3, 32, 32)
            assert labels.dtype == np.int64 and labels.shape == (batch.size,)
            seen += [(images[i].tobytes(), int(labels[i])) for i in range(batch.size)]
    assert sorted(seen) == sorted(truth)


def test_in_order_values_are_exact_in_numpy_torch_and_tensorflow(cifar):
    out, _ = cifar
    truth = tf_records(out, "test")
    torch = pytest.importorskip("torch", reason="torch is not installed in this Python")
    tf = pytest.importorskip("tensorflow")
    loader = shardfeed.Loader(out, split="test", batch_size=32, shuffle=False)
    row = 0
    for batch in loader:
        t = batch["image"]
        assert t.__dlpack_device__() == (1, 0) and t.dtype == "uint8"
        want = np.stack([np.frombuffer(img, np.uint8).reshape(3, 32, 32)
                         for img, _ in truth[row:row + batch.size]])
        want_labels = np.array([label for _, label in truth[row:row + batch.size]])
        np.testing.assert_array_equal(np.from_dlpack(t), want)
        np.testing.assert_array_equal(torch.from_dlpack(t).numpy(), want)
        np.testing.assert_array_equal(tf.experimental.dlpack.from_dlpack(t.__dlpack__()).numpy(),
                                      want)
        np.testing.assert_array_equal(torch.from_dlpack(batch["label"]).numpy(), want_labels)
        row += batch.size
    assert row == len(truth)


def test_held_arrays_outlive_the_ring(cifar):
    out, _ = cifar
    # Slots: the held batch, the loop variable's previous batch, one to fill.
    loader = shardfeed.Loader(out, split="train", batch_size=16, prefetch=3, shuffle=False)
    first = next(loader)
    held = np.from_dlpack(first["image"])
    snapshot = held.copy()
    capsule = first["label"].__dlpack__()  # a bare capsule keeps its batch too
    del first
    count = sum(1 for _ in loader)  # far more batches than ring slots
    assert count > 4
    np.testing.assert_array_equal(held, snapshot)

    class Wrap:  # numpy takes objects with __dlpack__, not bare capsules
        def __dlpack__(self, **_):
            return capsule

        def __dlpack_device__(self):
            return (1, 0)

    labels = np.from_dlpack(Wrap())
    assert labels.shape == (16,)


def test_holding_every_batch_grows_the_ring(cifar):
    out, _ = cifar
    loader = shardfeed.Loader(out, split="train", batch_size=16, prefetch=2, shuffle=False)
    kept = [np.from_dlpack(b["image"]) for b in loader]  # every batch held at once
    again = shardfeed.Loader(out, split="train", batch_size=16, prefetch=2, shuffle=False)
    copies = [np.from_dlpack(b["image"]).copy() for b in again]
    assert len(kept) == len(copies) > 2
    for a, b in zip(kept, copies):
        np.testing.assert_array_equal(a, b)


def test_without_growth_holding_every_slot_raises_instead_of_waiting(cifar):
    out, _ = cifar
    loader = shardfeed.Loader(out, split="train", batch_size=16, prefetch=2, grow_ring=False)
    a, b = next(loader), next(loader)
    with pytest.raises(shardfeed.Error, match="held"):
        next(loader)
    del a
    assert next(loader).size == 16
    del b


@pytest.mark.parametrize("env,expected", [
    ({"RANK": "3", "WORLD_SIZE": "8"}, (3, 8)),
    ({"SLURM_PROCID": "1", "SLURM_NTASKS": "4"}, (1, 4)),
    ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "3"}, (2, 3)),
    ({}, (0, 1)),
])
def test_rank_and_world_size_from_the_environment(env, expected):
    assert shardfeed.rank_and_world_size(env) == expected


def test_ranks_from_the_environment_split_every_epoch(cifar, monkeypatch):
    out, _ = cifar
    parts = []
    for rank in range(2):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        loader = shardfeed.Loader(out, split="train", batch_size=50, seed=9)
        assert (loader.rank, loader.world_size) == (rank, 2)
        parts.append([img.tobytes() for b in loader for img in np.from_dlpack(b["image"])])
    assert len(parts[0]) == len(parts[1]) == 250
    assert set(parts[0]).isdisjoint(parts[1])
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(ValueError):
        shardfeed.Loader(out, split="train")


def test_errors_are_exceptions_with_file_and_offset(cifar, tmp_path):
    out, _ = cifar
    shard = sorted(out.glob("train-*.tfrecord"))[0]
    bad = tmp_path / "bad.tfrecord"
    data = bytearray(shard.read_bytes())
    data[5000] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(shardfeed.DataLossError, match=r"bad\.tfrecord:\d+"):
        for _ in shardfeed.Loader(bad, features={"image": "uint8[3,32,32]", "label": "int64"}):
            pass
    with pytest.raises(ValueError):
        shardfeed.Loader(out, features={"image": "uint9[3]"})
    with pytest.raises(shardfeed.Error):
        shardfeed.Loader(tmp_path / "missing")


def test_check_report_equals_the_cli_json(cifar, tmp_path):
    out, _ = cifar
    clean = shardfeed.check(out)
    assert clean["problems"] == [] and clean["records"] == 600
    shard = sorted(out.glob("train-*.tfrecord"))[0]
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    data = bytearray(shard.read_bytes())
    data[100] ^= 0x01
    (damaged / shard.name).write_bytes(bytes(data))
    report = shardfeed.check(damaged / shard.name)
    cli = subprocess.run([CLI, "check", "--json", str(damaged / shard.name)], capture_output=True,
                         text=True)
    assert cli.returncode == 1
    cli_report = json.loads(cli.stdout)
    assert report["problems"] and report["problems"] == cli_report["problems"]


def test_transforms_and_resident_cache(cifar):
    out, _ = cifar
    plain = shardfeed.Loader(out, split="test", batch_size=25, shuffle=False)
    images = np.concatenate([np.from_dlpack(b["image"]) for b in plain]).astype(np.float32)
    loader = shardfeed.Loader(out, split="test", batch_size=25, shuffle=False, cache=True,
                              transforms={"image": "chw,float32,cifar10"})
    assert "resident cache" in loader.cache_note
    got = np.concatenate([np.from_dlpack(b["image"]) for b in loader])
    mean = np.array([0.4914, 0.4822, 0.4465], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.2470, 0.2435, 0.2616], np.float32).reshape(1, 3, 1, 1)
    np.testing.assert_allclose(got, (images / 255 - mean) / std, rtol=1e-5, atol=1e-5)


def test_ctrl_c_stops_promptly(cifar, tmp_path):
    out, _ = cifar
    script = tmp_path / "forever.py"
    script.write_text(textwrap.dedent(f"""
        import sys, shardfeed
        loader = shardfeed.Loader({str(out)!r}, split="train", batch_size=8, epochs=0,
                                  decode_threads=1, io_threads=1)
        print("started", flush=True)
        try:
            for batch in loader:
                pass
        except KeyboardInterrupt:
            loader.close()
            print("interrupted", flush=True)
            sys.exit(42)
    """))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    time.sleep(1.0)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=10) == 42
    assert time.monotonic() - t0 < 3
    assert p.stdout.read().strip() == "interrupted"
