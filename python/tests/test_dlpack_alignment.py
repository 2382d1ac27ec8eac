"""Batch tensors are aligned for every DLPack consumer: 64 bytes on the host
(TensorFlow's Eigen kernels abort with `Check failed: IsAligned()` below
that), 256 on a GPU. The README's TensorFlow route runs end to end: one
Keras train_on_batch step on batches from the Loader, in its own
interpreter (an abort there is a failed test, not a dead session)."""
import textwrap

import numpy as np
import pytest

import shardfeed
from conftest import run_script

HOST_ALIGNMENT = 64


def _address(tensor):
    return np.from_dlpack(tensor).__array_interface__["data"][0]


def _assert_aligned(batch):
    for name, tensor in batch.items():
        assert tensor.__dlpack_device__() == (1, 0)
        address = _address(tensor)
        assert address % HOST_ALIGNMENT == 0, (
            f"{name}: {tensor.dtype} {tensor.shape} at {address:#x} is "
            f"{address % HOST_ALIGNMENT} bytes past a {HOST_ALIGNMENT}-byte boundary")


@pytest.mark.parametrize("options", [
    {},                                                       # raw rows, streaming
    {"shuffle": False, "transforms": {"image": "chw,float32,cifar10"}},
    {"cache": True},                                          # the resident table's slots
    {"features": {"image": "bytes", "label": "int64"}},       # variable bytes + offsets
], ids=["rows", "transformed", "resident", "variable"])
def test_every_host_tensor_is_64_byte_aligned(cifar, options):
    out, _ = cifar
    batches = 0
    # Odd batch sizes: row bytes that are not a multiple of 64 for most features.
    for batch_size in (1, 3, 7, 50):
        for batch in shardfeed.Loader(out, split="test", batch_size=batch_size, epochs=1,
                                      **options):
            _assert_aligned(batch)
            batches += 1
            if batches % 10 == 0:
                break
    assert batches > 4


def test_tensorflow_keras_trains_on_loader_batches(cifar, tmp_path):
    pytest.importorskip("tensorflow")
    out, _ = cifar
    # shardfeed is imported first: this case is about alignment, not the
    # import order (test_coexistence.py).
    stdout = run_script(tmp_path, textwrap.dedent(f"""
        import shardfeed
        import numpy as np
        import tensorflow as tf
        from_dlpack = tf.experimental.dlpack.from_dlpack
        model = tf.keras.Sequential([
            tf.keras.Input((3, 32, 32)),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(10),
        ])
        model.compile(optimizer="sgd",
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        steps = 0
        for raw in (False, True):
            transforms = {{}} if raw else {{"image": "chw,float32,cifar10"}}
            for batch in shardfeed.Loader({str(out)!r}, split="train", batch_size=50, seed=2,
                                          epochs=1, transforms=transforms):
                x = from_dlpack(batch["image"].__dlpack__())
                y = from_dlpack(batch["label"].__dlpack__())
                m = float(tf.reduce_mean(tf.cast(x, tf.float32)))   # the README's first steps
                assert np.isfinite(m)
                loss = model.train_on_batch(tf.cast(x, tf.float32), y)
                assert np.isfinite(float(np.ravel(loss)[0]))
                steps += 1
                if steps % 3 == 0:
                    break
        print("steps", steps)
    """))
    assert "steps 6" in stdout


def test_torch_and_numpy_compute_on_loader_batches(cifar):
    torch = pytest.importorskip("torch")
    out, _ = cifar
    for batch in shardfeed.Loader(out, split="test", batch_size=7, shuffle=False, epochs=1,
                                  transforms={"image": "chw,float32,cifar10"}):
        x = torch.from_dlpack(batch["image"])
        a = np.from_dlpack(batch["image"])
        assert x.shape == (batch.size, 3, 32, 32)
        np.testing.assert_allclose(x.mean(dim=(1, 2, 3)).numpy(), a.mean(axis=(1, 2, 3)),
                                   rtol=1e-5, atol=1e-5)
        y = torch.from_dlpack(batch["label"])
        assert torch.equal(y, torch.from_numpy(np.from_dlpack(batch["label"]).copy()))
