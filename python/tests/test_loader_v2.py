"""Reader v2 from Python, as a PyTorch user would: each iter() is the next
epoch, len() is what one iteration yields, set_epoch, state_dict /
load_state_dict (JSON), close() racing next() on another thread, clear errors
after close(), and pickling (DataLoader workers) failing at once."""
import json
import pickle
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import shardfeed


def labels_of(batches):
    return [np.from_dlpack(b["label"]).copy() for b in batches]


def test_each_iter_is_the_next_epoch(cifar):
    out, _ = cifar
    loader = shardfeed.Loader(out, split="train", batch_size=64, seed=1)
    epochs = []
    for epoch in range(3):
        got = [(b.epoch, b.size, np.from_dlpack(b["image"]).copy()) for b in loader]
        assert len(got) == len(loader) > 0, epoch  # was 0 batches for epochs 1 and 2
        assert {e for e, _, _ in got} == {epoch}
        epochs.append(np.concatenate([img for _, _, img in got]))
    for e in epochs[1:]:  # the same records, in another order
        assert e.shape == epochs[0].shape
        assert not np.array_equal(e, epochs[0])
        key = lambda a: sorted(map(bytes, a.reshape(len(a), -1)))  # noqa: E731
        assert key(e) == key(epochs[0])


def test_len_is_what_one_iteration_yields(cifar):
    out, _ = cifar
    loader = shardfeed.Loader(out, split="train", batch_size=64, epochs=3)
    assert len(loader) == sum(1 for _ in loader)  # was 10 vs 30
    assert sum(1 for _ in loader) == 0  # all epochs were delivered


def test_set_epoch_matches_a_fresh_loader(cifar):
    out, _ = cifar
    fresh = shardfeed.Loader(out, split="train", batch_size=50, seed=4)
    third = None
    for _ in range(3):
        third = labels_of(fresh)
    loader = shardfeed.Loader(out, split="train", batch_size=50, seed=4)
    loader.set_epoch(2)
    got = labels_of(loader)
    assert len(got) == len(third)
    for a, b in zip(got, third):
        np.testing.assert_array_equal(a, b)


def test_state_dict_resumes_exactly_and_is_json(cifar):
    out, _ = cifar
    kwargs = dict(split="train", batch_size=32, seed=9)
    full = shardfeed.Loader(out, **kwargs)
    expected = labels_of(full) + labels_of(full)
    loader = shardfeed.Loader(out, **kwargs)
    it = iter(loader)
    first = [np.from_dlpack(next(it)["label"]).copy() for _ in range(5)]
    state = json.loads(json.dumps(loader.state_dict()))
    assert len(json.dumps(state)) < 200
    loader.close()
    again = shardfeed.Loader(out, **kwargs)
    again.load_state_dict(state)
    rest = labels_of(again) + labels_of(again)
    assert len(first) + len(rest) == len(expected)
    for a, b in zip(first + rest, expected):
        np.testing.assert_array_equal(a, b)
    other = shardfeed.Loader(out, split="train", batch_size=16, seed=9)
    with pytest.raises(shardfeed.InvalidArgumentError, match="resume"):
        other.load_state_dict(state)


def test_reopening_closes_the_old_engine_before_building_the_new(cifar, monkeypatch):
    """Regression (issue 21, defect 2): set_epoch()/load_state_dict() built the
    new engine before closing the old one, so with cache=True the resident
    table existed twice (on a GPU: the new loader streamed instead)."""
    out, _ = cifar
    events, real = [], shardfeed._shardfeed.Loader

    class Recording:
        def __init__(self, *args):
            events.append("build")
            self._engine = real(*args)  # raises before "built" on a bad state
            events.append("built")

        def close(self):
            events.append("close")
            self._engine.close()

        def __getattr__(self, name):
            return getattr(self._engine, name)

    monkeypatch.setattr(shardfeed._shardfeed, "Loader", Recording)
    loader = shardfeed.Loader(out, split="train", batch_size=50, seed=4, cache=True)
    assert loader.path_note == "resident"
    first = np.from_dlpack(next(loader)["label"]).copy()
    loader.set_epoch(2)
    state = loader.state_dict()
    loader.load_state_dict(state)
    assert events == ["build", "built", "close", "build", "built", "close", "build", "built"]
    assert loader.path_note == "resident"
    # A state the new engine refuses: the error is raised and the loader goes
    # on where it stood (reopened there).
    loader.set_epoch(0)
    expected = labels_of(shardfeed.Loader(out, split="train", batch_size=50, seed=4))
    np.testing.assert_array_equal(expected[0], first)
    bad = dict(state, fingerprint="12345")
    with pytest.raises(shardfeed.InvalidArgumentError, match="resume"):
        loader.load_state_dict(bad)
    got = labels_of(loader)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


class _Scripted:
    """Wraps the C++ engine: `fail` holds what the next builds raise (one
    entry a build, None: a real build); `state_fails` makes state() raise."""
    fail, state_fails, builds, closes = [], False, 0, 0

    def __init__(self, *args):
        type(self).builds += 1
        if type(self).fail:
            error = type(self).fail.pop(0)
            if error is not None:
                raise error
        self._engine = type(self).real(*args)

    def state(self):
        if type(self).state_fails:
            raise shardfeed.Error("state() failed")
        return self._engine.state()

    def close(self):
        type(self).closes += 1
        self._engine.close()

    def __getattr__(self, name):
        return getattr(self._engine, name)


@pytest.fixture
def scripted(monkeypatch):
    class Engine(_Scripted):
        fail, state_fails, builds, closes = [], False, 0, 0
    Engine.real = shardfeed._shardfeed.Loader
    monkeypatch.setattr(shardfeed._shardfeed, "Loader", Engine)
    return Engine


def test_reopen_whose_old_state_cannot_be_read_leaves_the_loader_open(cifar, scripted):
    """Review of defect 2's fix: the engine was dropped before old.state(); if
    that raised, the loader said "closed" and the old engine was never closed."""
    out, _ = cifar
    loader = shardfeed.Loader(out, split="train", batch_size=50, seed=4)
    state = loader.state_dict()
    scripted.state_fails = True
    with pytest.raises(shardfeed.Error, match="state"):
        loader.load_state_dict(state)
    scripted.state_fails = False
    assert scripted.closes == 0 and scripted.builds == 1
    assert len(labels_of(loader)) == len(loader) > 0  # still open, where it stood


def test_reopen_whose_restore_fails_says_so(cifar, scripted):
    """Review of defect 2's fix: when going back to the old position failed
    too, that error was swallowed and the loader claimed close() was called."""
    out, _ = cifar
    loader = shardfeed.Loader(out, split="train", batch_size=50, seed=4)
    state = loader.state_dict()
    scripted.fail = [shardfeed.Error("new engine failed"), shardfeed.Error("restore failed")]
    with pytest.raises(shardfeed.Error, match="new engine failed") as raised:
        loader.load_state_dict(state)
    assert scripted.builds == 3
    if hasattr(raised.value, "add_note"):
        assert "restore failed" in "\n".join(raised.value.__notes__)
    with pytest.raises(shardfeed.Error) as closed:
        next(loader)
    assert "close() was called" not in str(closed.value)
    assert "reopening" in str(closed.value) and "restore failed" in str(closed.value)


def test_interrupted_reopen_does_not_reload_again(cifar, scripted):
    """Review of defect 2's fix: `except BaseException` made a Ctrl-C during the
    new engine's (maybe long) table build start a second full build."""
    out, _ = cifar
    loader = shardfeed.Loader(out, split="train", batch_size=50, seed=4)
    state = loader.state_dict()
    scripted.fail = [KeyboardInterrupt()]
    with pytest.raises(KeyboardInterrupt):
        loader.load_state_dict(state)
    assert scripted.builds == 2  # the interrupted one, no reload after it
    with pytest.raises(shardfeed.Error, match="interrupted"):
        next(loader)


def test_after_close_every_call_says_closed(cifar):
    out, _ = cifar
    loader = shardfeed.Loader(out, split="train", batch_size=64)
    loader.close()
    for call in (lambda: next(loader), lambda: len(loader), lambda: iter(loader),
                 lambda: loader.state_dict(), lambda: loader.device):
        with pytest.raises(shardfeed.Error, match="closed"):
            call()


def test_close_while_another_thread_is_in_next(cifar):
    out, _ = cifar
    for _ in range(20):
        loader = shardfeed.Loader(out, split="train", batch_size=8, epochs=0, decode_threads=1)
        errors = []

        def consume():
            try:
                for _ in loader:
                    pass
            except shardfeed.Error as e:
                errors.append(str(e))

        t = threading.Thread(target=consume)
        t.start()
        loader.close()  # was a use after free of the C++ loader
        t.join(timeout=10)
        assert not t.is_alive()
        assert all("closed" in e for e in errors)


def test_pickling_fails_at_once_with_advice(cifar):
    out, _ = cifar
    loader = shardfeed.Loader(out, split="train", batch_size=64)
    with pytest.raises(TypeError, match="iterate it directly"):
        pickle.dumps(loader)
    batch = next(iter(loader))
    with pytest.raises(TypeError, match="iterate it directly"):
        pickle.dumps(batch["image"])


def test_dataloader_with_workers_fails_instead_of_hanging(cifar, tmp_path):
    pytest.importorskip("torch")
    out, _ = cifar
    script = tmp_path / "dl.py"
    script.write_text(textwrap.dedent(f"""
        import shardfeed, torch
        loader = shardfeed.Loader({str(out)!r}, split="train", batch_size=64)
        dl = torch.utils.data.DataLoader(loader, batch_size=None, num_workers=2)
        try:
            for b in dl:
                pass
        except Exception as e:
            print("refused:", type(e).__name__, e)
    """))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert "refused:" in p.stdout, p.stdout + p.stderr
    assert "iterate it directly" in p.stdout


def test_dataset_notes_are_warnings(cifar):
    out, _ = cifar
    with pytest.warns(UserWarning, match="train"):  # several splits, none given
        shardfeed.Loader(out, batch_size=64).close()


def test_epochs_none_with_an_empty_epoch_names_no_forever(cifar):
    out, _ = cifar
    with shardfeed.Loader(out, split="train", batch_size=64) as loader:
        n = sum(b.size for b in loader)
    with pytest.raises(shardfeed.InvalidArgumentError) as e:
        shardfeed.Loader(out, split="train", batch_size=n + 1, drop_remainder=True)
    assert "yields no batch" in str(e.value)
    assert "forever" not in str(e.value)  # the caller never asked for epochs=0


def test_remote_options_are_checked_and_quasi_follows_extent_bytes(cifar):
    # Remote-read options (cache_dir, cache_limit, extent_bytes) are checked
    # here; on a local dataset extent_bytes is quasi shuffle's block, so two
    # sizes give two orders, and stats() carries the remote counters (0).
    out, _ = cifar
    with pytest.raises(shardfeed.InvalidArgumentError, match="cache_limit"):
        shardfeed.Loader(out, split="train", batch_size=100, epochs=1, cache_limit=-1)
    with pytest.raises(shardfeed.InvalidArgumentError, match="extent_bytes"):
        shardfeed.Loader(out, split="train", batch_size=100, epochs=1, extent_bytes=0)

    def first_labels(extent_bytes):
        loader = shardfeed.Loader(out, split="train", batch_size=100, epochs=1, shuffle="quasi",
                                  seed=2, shuffle_buffer=200, extent_bytes=extent_bytes)
        labels = [np.from_dlpack(b["label"]).tolist() for b in loader]
        stats = loader.stats()
        loader.close()
        return labels, stats

    small, stats = first_labels(64 << 10)
    assert first_labels(64 << 10)[0] == small
    assert first_labels(1 << 20)[0] != small
    for key in ("remote_requests", "remote_bytes", "requests_per_record", "extent_cache_hits"):
        assert stats[key] == 0
