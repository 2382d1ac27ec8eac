"""DLPack export of device batches, checked through the extension's own
consumer (`_shardfeed._copy_from_dlpack`: CPU torch cannot import CUDA
tensors): __dlpack_device__, every `stream=` a consumer may pass, capsules
outliving their batch and loader, transforms, and copy/dl_device refused
clearly; the fence and teardown wiring of issue 21 defects 8 and 10. Needs
GPU 0: python_emu_test runs it on the emulated CUDA runtime (gpu/emu);
elsewhere it skips (fails with SHARDFEED_REQUIRE_GPU=1)."""
import os
import threading
import time

import numpy as np
import pytest

import shardfeed
from shardfeed import _shardfeed as ext
from conftest import run_script

KW = dict(split="train", batch_size=64, shuffle=False, epochs=1, prefetch=2)


def gpu_loader(out, **kw):
    loader = shardfeed.Loader(out, device=0, **KW, **kw)
    if loader.device < 0:
        if os.environ.get("SHARDFEED_REQUIRE_GPU") == "1":
            pytest.fail("SHARDFEED_REQUIRE_GPU=1 but " + loader.device_note)
        pytest.skip("no CUDA device: " + loader.device_note)
    return loader


def host_batches(out, names, **kw):
    return [{n: bytes(np.from_dlpack(b[n]).copy().view(np.uint8).reshape(-1)) for n in names}
            for b in shardfeed.Loader(out, **KW, **kw)]


def test_device_tensors_say_cuda_0_and_host_tensors_cpu(cifar):
    out, _ = cifar
    b = next(iter(gpu_loader(out)))
    assert b["image"].__dlpack_device__() == (2, 0)  # kDLCUDA, GPU 0
    host = next(iter(shardfeed.Loader(out, **KW)))
    assert host["image"].__dlpack_device__() == (1, 0)  # kDLCPU


@pytest.mark.parametrize("stream", [None, -1, 1, 2, "own"])
def test_every_stream_argument_gives_the_batch_bytes(cifar, stream):
    out, _ = cifar
    want = host_batches(out, ["image", "label"])
    loader = gpu_loader(out)  # skips (or fails) before any CUDA call when there is no GPU
    own = ext._cuda_stream_create(0) if stream == "own" else None
    try:
        s = own if stream == "own" else stream
        got = [{n: ext._copy_from_dlpack(b[n], s) for n in ("image", "label")}
               for b in loader]
    finally:
        if own is not None:
            ext._cuda_stream_destroy(own)
    assert len(got) == len(want) > 2
    assert got == want


def test_capsules_and_tensors_outlive_their_batch_and_loader(cifar):
    out, _ = cifar
    want = host_batches(out, ["image"])
    loader = gpu_loader(out)
    kept = [b["image"] for _, b in zip(range(3), loader)]  # the batches themselves dropped
    unused = kept[0].__dlpack__(stream=1)  # a capsule nobody consumes
    loader.close()
    del unused  # its destructor releases its hold; nothing breaks
    s = ext._cuda_stream_create(0)
    try:
        assert [ext._copy_from_dlpack(t, s) for t in kept] == [w["image"] for w in want[:3]]
    finally:
        ext._cuda_stream_destroy(s)


def test_transforms_on_the_device_equal_the_host_reference(cifar):
    out, _ = cifar
    tf = {"image": "chw,float16,cifar10,pad=4,flip,seed=3"}
    want = host_batches(out, ["image"], transforms=tf)
    got = [ext._copy_from_dlpack(b["image"], 1) for b in gpu_loader(out, transforms=tf)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        a = np.frombuffer(g, np.float16).astype(np.float32)
        b = np.frombuffer(w["image"], np.float16).astype(np.float32)
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)  # one float16 step (FMA on a GPU)


def test_copy_and_other_devices_are_refused_clearly(cifar):
    out, _ = cifar
    t = next(iter(gpu_loader(out)))["image"]
    with pytest.raises(BufferError, match="copy=True refused"):
        t.__dlpack__(stream=1, copy=True)
    with pytest.raises(BufferError, match=r"dl_device=\(1, 0\) refused: this tensor is on \(2, 0\)"):
        t.__dlpack__(stream=1, dl_device=(1, 0))
    # Where it is, and no copy asked for: fine.
    assert ext._copy_from_dlpack(t, 1) == bytes(ext._copy_from_dlpack(t, None))
    t.__dlpack__(stream=1, dl_device=(2, 0), copy=False)


def test_a_consumer_may_destroy_its_stream_once_it_freed_the_capsule(cifar, tmp_path):
    """Issue 21 defect 8: the consumer's stream is fenced when it frees its
    capsule. Old code fenced every stream given to __dlpack__ when the batch
    died, recording an event on a stream the consumer had destroyed by then
    (the emulated runtime aborts: "cuda_emu: ... destroyed stream"). In its
    own interpreter: an abort there is this test's failure, not the
    session's."""
    out, _ = cifar
    gpu_loader(out).close()  # skips (or fails) here when there is no GPU
    run_script(tmp_path, f"""
import shardfeed
from shardfeed import _shardfeed as ext
loader = shardfeed.Loader({str(out)!r}, device=0, split="train", batch_size=64,
                          shuffle=False, epochs=1, prefetch=2)
assert loader.device == 0, loader.device_note
it = iter(loader)
b = next(it)
s = ext._cuda_stream_create(0)
ext._copy_from_dlpack(b["image"], s)  # imported on s, capsule freed: s is fenced now
ext._cuda_stream_destroy(s)  # the consumer is done with its stream
del b  # the batch dies: nothing may touch s any more
assert sum(1 for _ in it) > 2  # its slot and the others are refilled
loader.close()
print("ok")
""")


def test_the_last_release_tearing_the_ring_down_lets_other_threads_run(cifar):
    """Issue 21 defect 10: a closed loader's ring is torn down by the last
    batch's last holder (here a Tensor freed by Python, as a DLPack deleter
    or the garbage collector would), which waits for the consumer's fence.
    Old code waited with the GIL held: every other Python thread stopped
    until the consumer's stream was done."""
    out, _ = cifar
    loader = gpu_loader(out)
    t = next(iter(loader))["image"]  # the batch itself dropped: t is its last holder
    loader.close()  # the ring lives on in the batch
    s = ext._cuda_stream_create(0)
    try:
        ext._cuda_stream_hold(0, s, 1.5)  # the consumer's stream is busy for 1.5 s ...
        capsule = t.__dlpack__(stream=s)
        del capsule  # ... and the batch's fence is queued behind that
        ticks = []
        stop = threading.Event()

        def tick():
            while not stop.is_set():
                ticks.append(time.monotonic())
                time.sleep(0.005)

        ticker = threading.Thread(target=tick)
        ticker.start()
        try:
            time.sleep(0.05)
            before, start = len(ticks), time.monotonic()
            del t  # the ring's teardown: waits for the fence behind the hold
            elapsed, during = time.monotonic() - start, len(ticks) - before
        finally:
            stop.set()
            ticker.join()
    finally:
        ext._cuda_stream_destroy(s)
    assert elapsed > 0.5, f"the teardown took {elapsed:.3f} s: it did not wait for the stream"
    # Unblocked, the ticker runs every ~5 ms; with the GIL held it ran ~never.
    assert during >= 20, f"another thread ran {during} times in {elapsed:.2f} s of teardown"
