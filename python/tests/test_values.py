"""No silent wrong values, no silent omissions, and messages that name the
argument: float64 round trips exactly, variable-length features are
delivered (ragged, or padded when asked), a misspelled feature is refused at
construction naming the closest name, an epoch that skips every record is an
error, device=N without a GPU warns once, the defaults are the CLI's, and bad
arguments say which argument and what range."""
import inspect
import os
import re
import subprocess
import warnings

import numpy as np
import pytest

import shardfeed

CLI = os.environ.get("SHARDFEED_CLI", "shardfeed")

def _score(i):
    """Doubles float32 would change: a tiny normal, a subnormal, 0.1, huge, -max."""
    return np.array([1e-300 * (i + 1), 5e-324 * (i + 1), 0.1 + i, 1e300 / (i + 1),
                     -np.finfo(np.float64).max], np.float64)


def _records(n):
    for i in range(n):
        yield {"id": i, "tokens": np.arange(i % 7), "name": f"item-{i}",
               "score": _score(i), "mean": np.float64(1e-300 * (i + 1))}


def _all_rows(loader):
    rows = {}
    for batch in loader:
        ids = np.from_dlpack(batch["id"]).tolist()
        tokens = batch.ragged("tokens")
        names = batch.strings("name")
        scores = np.from_dlpack(batch["score"])
        means = np.from_dlpack(batch["mean"])
        for r, i in enumerate(ids):
            rows[i] = (tokens[r].tolist(), names[r], scores[r].copy(), float(means[r]))
    return rows


def test_float64_round_trips_exactly(tmp_path):
    # Was: the manifest said float64, the Loader delivered float32 (1e-300 -> 0.0).
    shardfeed.write_shards(_records(30), tmp_path)
    seen = []
    with shardfeed.Loader(tmp_path, batch_size=8, shuffle=False) as loader:
        for batch in loader:
            scores, means = np.from_dlpack(batch["score"]), np.from_dlpack(batch["mean"])
            assert scores.dtype == means.dtype == np.float64
            for r, i in enumerate(np.from_dlpack(batch["id"]).tolist()):
                assert scores[r].tobytes() == _score(i).tobytes()  # bit for bit
                assert means[r] == 1e-300 * (i + 1)
                seen.append(i)
    assert sorted(seen) == list(range(30))
    assert shardfeed.check(tmp_path)["problems"] == []  # a float64 tensor's size is checked


def test_float64_is_what_tensorflow_reads_with_decode_raw(tmp_path):
    tf = pytest.importorskip("tensorflow")
    shardfeed.write_shards(_records(3), tmp_path)
    files = sorted(str(p) for p in tmp_path.glob("*.tfrecord"))
    spec = {"id": tf.io.FixedLenFeature([], tf.int64),
            "score": tf.io.FixedLenFeature([], tf.string)}
    for raw in tf.data.TFRecordDataset(files):
        ex = tf.io.parse_single_example(raw, spec)
        score = tf.io.decode_raw(ex["score"], tf.float64).numpy()
        assert score.tobytes() == _score(int(ex["id"])).tobytes()


def test_float64_then_other_bytes_is_a_conflict_not_a_reinterpretation(tmp_path):
    with pytest.raises(shardfeed.InvalidArgumentError,
                       match="record 1: feature 'v' is bytes here but float64 before"):
        with shardfeed.Writer(tmp_path) as w:
            w.write({"v": np.zeros(2)})
            w.write({"v": b"12345678"})
    with shardfeed.Writer(tmp_path / "ok") as w:  # later plain floats join a float64 feature
        w.write({"v": np.float64(0.25)})
        w.write({"v": 1e-300})
    with shardfeed.Loader(tmp_path / "ok", batch_size=2, shuffle=False) as loader:
        assert np.from_dlpack(next(iter(loader))["v"]).tolist() == [0.25, 1e-300]


def test_a_python_float_float32_cannot_hold_is_refused(tmp_path):
    # Was: stored as float32 without a word (1e-300 -> 0.0, 1e300 -> inf).
    for value in (1e-300, 1e300, [0.5, 1e-300]):
        with pytest.raises(shardfeed.InvalidArgumentError,
                           match="feature 'v'.*outside float32's range.*numpy float64"):
            with shardfeed.Writer(tmp_path / "x") as w:
                w.write({"v": value})
    with shardfeed.Writer(tmp_path / "ok") as w:  # in range: float32, as FloatList stores it
        w.write({"v": 0.5, "inf": float("inf"), "zero": 0.0})


@pytest.mark.parametrize("path", ["planned", "streaming", "resident"])
def test_variable_length_features_are_in_the_default_features(tmp_path, path):
    # Was: "tokens" silently missing from the default features.
    shardfeed.write_shards(_records(30), tmp_path,
                           compression="gzip" if path == "streaming" else "none")
    with shardfeed.Loader(tmp_path, batch_size=8, shuffle=False,
                          cache=path == "resident") as loader:
        assert loader.path_note.startswith(path)
        assert "tokens:int64[]" in loader.spec
        rows = _all_rows(loader)
    for i, (tokens, name, _, _) in rows.items():
        assert tokens == list(range(i % 7)) and name == f"item-{i}"


def test_the_writers_own_syntax_is_a_ragged_feature_or_padded_when_asked(tmp_path):
    # Was: features={"tokens": "int64[]"} accepted, then an error at the first batch.
    shardfeed.write_shards(_records(30), tmp_path)
    with shardfeed.Loader(tmp_path, features={"id": "int64", "tokens": "int64[]"},
                          batch_size=30, shuffle=False) as loader:
        batch = next(iter(loader))
        offsets = np.from_dlpack(batch["tokens/offsets"])
        assert offsets.tolist()[:5] == [0, 0, 1, 3, 6]
        assert np.from_dlpack(batch["tokens"]).dtype == np.int64
    with shardfeed.Loader(tmp_path, decode={"tokens": "int64,length=4,pad=-1"},
                          batch_size=30, shuffle=False) as loader:
        batch = next(iter(loader))
        assert np.from_dlpack(batch["tokens"])[3].tolist() == [0, 1, 2, -1]
        assert np.from_dlpack(batch["tokens/length"])[3] == 3


def test_an_optional_feature_is_delivered_with_a_warning(tmp_path):
    shardfeed.write_shards([{"id": 0, "w": 1.5}, {"id": 1}], tmp_path)
    with pytest.warns(UserWarning, match="feature 'w' is missing from some records"):
        loader = shardfeed.Loader(tmp_path, batch_size=2, shuffle=False)
    batch = next(iter(loader))
    assert [r.tolist() for r in batch.ragged("w")] == [[1.5], []]
    loader.close()


@pytest.mark.parametrize("skip", [False, True])
def test_a_misspelled_feature_is_refused_at_construction(tmp_path, skip):
    # Was: DATA_LOSS at the first batch ("missing from the record"), and with
    # skip_corrupt=True an epoch of 0 rows and no error.
    shardfeed.write_shards(_records(10), tmp_path)
    with pytest.raises(shardfeed.InvalidArgumentError,
                       match=r"feature 'nmae' is not in the dataset \(the manifest has 'id', "
                             r"'mean', 'name', 'score', 'tokens'\): did you mean 'name'\?"):
        shardfeed.Loader(tmp_path, features={"nmae": "bytes"}, skip_corrupt=skip)


def _corrupt_every_record(folder):
    for shard in folder.glob("*.tfrecord"):
        data = bytearray(shard.read_bytes())
        for line in open(str(shard) + ".index"):
            offset = int(line.split()[0])
            data[offset + 12] ^= 0xFF  # the first data byte: a CRC mismatch
        shard.write_bytes(bytes(data))


def test_an_epoch_that_skips_every_record_is_an_error(tmp_path):
    # Was: with skip_corrupt=True, an epoch of empty batches and no error.
    shardfeed.write_shards(({"id": i} for i in range(20)), tmp_path)
    _corrupt_every_record(tmp_path)
    loader = shardfeed.Loader(tmp_path, batch_size=8, skip_corrupt=True)
    rows = 0
    with pytest.raises(shardfeed.DataLossError, match="epoch 0: every record was skipped"):
        for batch in loader:
            rows += batch.size
    assert rows == 0
    loader.close()


def test_device_without_a_gpu_warns_once(tmp_path):
    # Was: device=0 fell back to host memory without a word.
    shardfeed.write_shards(({"id": i} for i in range(4)), tmp_path)
    probe = shardfeed.Loader(tmp_path, batch_size=2)
    probe.close()
    shardfeed._host_fallback_warned = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = shardfeed.Loader(tmp_path, batch_size=2, device=0)
        if first.device >= 0:
            first.close()
            pytest.skip("a GPU is present: nothing falls back")
        second = shardfeed.Loader(tmp_path, batch_size=2, device=0)
        first.close()
        second.close()
    host = [w for w in caught if "batches are in host memory" in str(w.message)]
    assert len(host) == 1 and host[0].category is RuntimeWarning, [str(w.message) for w in caught]
    assert "device=0" in str(host[0].message)


def test_bad_arguments_name_the_argument_and_its_range(tmp_path):
    # Was: pybind11's raw signature dump ("arg0 ... arg20", "Unable to cast").
    shardfeed.write_shards(({"id": i} for i in range(4)), tmp_path)
    cases = [({"batch_size": 0}, r"batch_size=0 must be an integer in \[1, 1048576\]"),
             ({"prefetch": 1}, r"prefetch=1 must be an integer in \[2, 64\]"),
             ({"seed": 1.5}, r"seed=1.5 must be any integer"),
             ({"device": -2}, r"device=-2 must be an integer in \[-1, 1023\]"),
             ({"rank": 3, "world_size": 2}, r"rank=3 must be an integer in \[0, 1\]"),
             ({"io_threads": "2"}, r"io_threads='2' must be an integer"),
             ({"epochs": -1}, r"epochs=-1 must be an integer in \[0, "),
             ({"skip_corrupt": "yes"}, r"skip_corrupt='yes' must be True or False"),
             ({"decode": ["x"]}, r"decode must be a dict")]
    for kwargs, message in cases:
        with pytest.raises(shardfeed.InvalidArgumentError, match="shardfeed.Loader: " + message):
            shardfeed.Loader(tmp_path, **kwargs)
    # seed: any integer, modulo 2**64 (as the CLI's --seed -1)
    a = shardfeed.Loader(tmp_path, batch_size=1, seed=-1)
    b = shardfeed.Loader(tmp_path, batch_size=1, seed=2**64 - 1)
    assert [int(np.from_dlpack(x["id"])[0]) for x in a] == \
        [int(np.from_dlpack(x["id"])[0]) for x in b]
    with pytest.raises(shardfeed.InvalidArgumentError,
                       match=r"feature 'v': the integer 9223372036854775808 is outside int64's "
                             r"range"):
        with shardfeed.Writer(tmp_path / "w") as w:
            w.write({"v": 2**63})
    with pytest.raises(shardfeed.InvalidArgumentError, match="uint64 value 18446744073709551615"):
        with shardfeed.Writer(tmp_path / "w2") as w:
            w.write({"v": np.array([1, 2**64 - 1], np.uint64)})
    with pytest.raises(shardfeed.InvalidArgumentError,
                       match=r"shardfeed.Writer: shuffle_window=-1 must be an integer in"):
        shardfeed.Writer(tmp_path / "w3", shuffle_window=-1)
    with pytest.raises(shardfeed.InvalidArgumentError, match="a record is a dict"):
        with shardfeed.Writer(tmp_path / "w4") as w:
            w.write([1, 2])
    with pytest.raises(shardfeed.InvalidArgumentError, match=r"check: threads=-1 must be"):
        shardfeed.check(tmp_path, threads=-1)


def _cli_default(command, flag):
    help_text = subprocess.run([CLI, command, "--help"], capture_output=True, text=True).stdout
    m = re.search(r"--" + flag + r"\b[^\n]*\(default: ([^)]*)\)", help_text)
    assert m, help_text
    return m.group(1)


def test_one_default_each_between_the_cli_and_python():
    # Was: prefetch 2 (CLI) vs 3 (Python); seed 42 in convert, 0 elsewhere.
    loader = inspect.signature(shardfeed.Loader).parameters
    assert str(loader["prefetch"].default) == _cli_default("bench", "prefetch") == "3"
    seeds = {str(loader["seed"].default), _cli_default("bench", "seed"),
             _cli_default("convert", "seed"),
             str(inspect.signature(shardfeed.convert).parameters["seed"].default),
             str(inspect.signature(shardfeed.Writer).parameters["seed"].default)}
    assert seeds == {"0"}
