"""shardfeed.Writer / write_shards / merge: records from Python into shards."""
import json
import os

import numpy as np
import pytest

import shardfeed


def _records(n, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(n):
        yield {
            "image": rng.integers(0, 256, (3, 4, 4), dtype=np.uint8),
            "label": i,
            "name": f"item-{i}",
            "blob": bytes(rng.integers(0, 256, int(rng.integers(1, 300)), dtype=np.uint8)),
            "tokens": np.arange(i % 7, dtype=np.int64),
            "xy": np.array([i / 2, -i], np.float32),
            "weight": 0.5 * i if i % 3 else None,  # optional: absent from every third record
        }


def _parse_all(folder):
    """Every record of the dataset through TensorFlow's own parser, in shard order."""
    tf = pytest.importorskip("tensorflow")
    manifest = json.load(open(os.path.join(folder, "manifest.json")))
    files = [os.path.join(folder, s["file"]) for s in manifest["shards"]]
    out = []
    for raw in tf.data.TFRecordDataset(files, compression_type=""):
        ex = tf.train.Example.FromString(raw.numpy())
        out.append(ex.features.feature)
    return manifest, out


def test_round_trip_through_tensorflow_with_inferred_schema(tmp_path):
    written = list(_records(50))
    summary = shardfeed.write_shards(iter(written), tmp_path, prefix="train", shard_size="4kB")
    assert summary["records"] == 50 and summary["shards"] > 3
    manifest, parsed = _parse_all(tmp_path)
    assert len(parsed) == 50
    for want, got in zip(written, parsed):
        assert got["image"].bytes_list.value[0] == want["image"].tobytes()
        assert got["label"].int64_list.value == [want["label"]]
        assert got["name"].bytes_list.value == [want["name"].encode()]
        assert got["blob"].bytes_list.value == [want["blob"]]
        assert list(got["tokens"].int64_list.value) == list(want["tokens"])
        assert np.allclose(got["xy"].float_list.value, want["xy"])
        assert ("weight" in got) == (want["weight"] is not None)
    schema = {f["name"]: f for f in manifest["features"]}
    assert schema["image"]["kind"] == "bytes" and schema["image"]["dtype"] == "uint8"
    assert [int(d) for d in schema["image"]["shape"]] == [3, 4, 4]
    assert schema["label"]["kind"] == "int64" and int(schema["label"]["length"]) == 1
    assert int(schema["tokens"]["length"]) == 0  # varies: variable-length
    assert schema["xy"]["kind"] == "float" and int(schema["xy"]["length"]) == 2
    assert schema["xy"]["dtype"] == "float32"
    # (check treats every manifest feature as required: the optional
    # 'weight' would be reported; see the tasks test for a clean check.)


def test_shards_are_size_bounded_named_and_indexed(tmp_path):
    summary = shardfeed.write_shards(_records(200), tmp_path, prefix="p", shard_size=3000)
    n = summary["shards"]
    names = sorted(f for f in os.listdir(tmp_path) if f.endswith(".tfrecord"))
    assert names == [f"p-{k:05d}-of-{n:05d}.tfrecord" for k in range(n)]
    for name in names:
        lines = open(tmp_path / (name + ".index")).read().split("\n")[:-1]
        size = os.path.getsize(tmp_path / name)
        last = int(lines[-1].split()[1])
        assert size - last < 3000  # over the target only by its last record
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]


def test_loader_reads_what_the_writer_wrote(tmp_path):
    written = list(_records(40))
    shardfeed.write_shards(written, tmp_path, schema=None)
    loader = shardfeed.Loader(tmp_path, split="train", features={"image": "uint8[3,4,4]",
                                                                  "label": "int64"},
                              batch_size=40, shuffle=False)
    batch = next(iter(loader))
    images = np.from_dlpack(batch["image"])
    labels = np.from_dlpack(batch["label"])
    order = np.argsort(labels)
    assert list(labels[order]) == list(range(40))
    for i in range(40):
        assert (images[order][i] == written[i]["image"]).all()


def test_an_exception_leaves_nothing_that_looks_complete(tmp_path):
    with pytest.raises(RuntimeError):
        with shardfeed.Writer(tmp_path, shard_size=2000) as w:
            for r in _records(100):
                w.write(r)
            raise RuntimeError("the user's loop failed")
    assert os.listdir(tmp_path) == []


def test_declared_schema_is_checked(tmp_path):
    schema = {"image": "uint8[3,4,4]", "label": "int64", "name": "bytes", "blob": "bytes",
              "tokens": "int64[]", "xy": "float32[2]", "weight": "float"}
    shardfeed.write_shards(_records(20), tmp_path / "ok", schema=schema)
    manifest = json.load(open(tmp_path / "ok" / "manifest.json"))
    assert [f["name"] for f in manifest["features"]] == list(schema)
    with pytest.raises(ValueError, match="'label'.*int64"):
        with shardfeed.Writer(tmp_path / "bad", schema={"label": "int64"}) as w:
            w.write({"label": 1})
            w.write({"label": "one"})
    with pytest.raises(ValueError, match="'image'.*48 bytes.*has 12"):
        with shardfeed.Writer(tmp_path / "bad2", schema={"image": "uint8[3,2,2]"}) as w:
            w.write({"image": np.zeros((3, 4, 4), np.uint8)})
    with pytest.raises(ValueError, match="'extra': is not in the declared schema"):
        with shardfeed.Writer(tmp_path / "bad3", schema={"label": "int64"}) as w:
            w.write({"label": 1, "extra": 2})
    assert not os.path.exists(tmp_path / "bad" / "manifest.json")


def test_inferred_kind_conflict_names_the_record(tmp_path):
    with pytest.raises(ValueError, match="record 1: feature 'x' is bytes here but int64 before"):
        with shardfeed.Writer(tmp_path) as w:
            w.write({"x": 1})
            w.write({"x": b"1"})
    with pytest.raises(ValueError, match="'x'.*type object"):
        with shardfeed.Writer(tmp_path / "o") as w:
            w.write({"x": object()})


def test_shuffle_window_is_a_seeded_permutation(tmp_path):
    def labels(folder, **kw):
        shardfeed.write_shards(({"label": i} for i in range(300)), folder, **kw)
        _, parsed = _parse_all(folder)
        return [p["label"].int64_list.value[0] for p in parsed]

    in_order = labels(tmp_path / "a")
    assert in_order == list(range(300))
    a = labels(tmp_path / "b", shuffle_window=64, seed=1)
    b = labels(tmp_path / "c", shuffle_window=64, seed=1)
    c = labels(tmp_path / "d", shuffle_window=64, seed=2)
    assert sorted(a) == list(range(300)) and a != in_order
    assert a == b and a != c
    # A window of 64 moves no record earlier than 63 places before its turn.
    assert all(pos >= label - 63 for pos, label in enumerate(a))


def test_tasks_then_merge_make_one_dataset(tmp_path):
    parts = [list(range(0, 30)), list(range(30, 35)), list(range(35, 80))]
    for t, labels in enumerate(parts):
        with shardfeed.Writer(tmp_path, shard_size=500, task_index=t, task_count=3) as w:
            for i in labels:
                w.write({"label": i, "data": bytes(40)})
    assert not os.path.exists(tmp_path / "manifest.json")
    summary = shardfeed.merge(tmp_path)
    assert summary["records"] == 80
    manifest, parsed = _parse_all(tmp_path)
    assert [p["label"].int64_list.value[0] for p in parsed] == list(range(80))
    n = len(manifest["shards"])
    assert [s["file"] for s in manifest["shards"]] == [f"train-{k:05d}-of-{n:05d}.tfrecord"
                                                       for k in range(n)]
    assert int(manifest["splits"][0]["records"]) == 80
    assert not os.path.exists(tmp_path / "_parts")
    assert shardfeed.check(tmp_path)["problems"] == []


def test_merge_names_a_missing_task_and_changes_nothing(tmp_path):
    for t in (0, 2):
        shardfeed.write_shards(({"label": i} for i in range(10)), tmp_path, task_index=t,
                               task_count=3)
    before = sorted(os.walk(tmp_path))
    with pytest.raises(shardfeed.DataLossError, match="task 1 of 3: missing"):
        shardfeed.merge(tmp_path)
    assert sorted(os.walk(tmp_path)) == before
    # The task runs (again): merge succeeds.
    shardfeed.write_shards(({"label": i} for i in range(10)), tmp_path, task_index=1, task_count=3)
    assert shardfeed.merge(tmp_path)["records"] == 30


def test_merge_folds_the_schemas_of_the_parts(tmp_path):
    shardfeed.write_shards([{"v": np.zeros(3, np.float32)}], tmp_path, task_index=0, task_count=2)
    shardfeed.write_shards([{"v": np.zeros(5, np.float32), "w": 1}], tmp_path, task_index=1,
                           task_count=2)
    shardfeed.merge(tmp_path)
    features = {f["name"]: f for f in json.load(open(tmp_path / "manifest.json"))["features"]}
    assert int(features["v"]["length"]) == 0 and features["w"]["kind"] == "int64"


def test_a_feature_some_records_lack_is_optional_and_checks_clean(tmp_path):
    # Was: inferred as required, so `shardfeed check` flagged the records without it.
    shardfeed.write_shards([{"label": 0, "w": 1.5}, {"label": 1}, {"label": 2, "w": None},
                            {"label": 3, "extra": b"x"}], tmp_path)
    features = {f["name"]: f for f in json.load(open(tmp_path / "manifest.json"))["features"]}
    assert features["w"].get("optional") and features["extra"].get("optional")
    assert not features["label"].get("optional")
    assert shardfeed.check(tmp_path)["problems"] == []


def test_merge_marks_a_feature_one_part_lacks_optional(tmp_path):
    shardfeed.write_shards([{"label": 0}], tmp_path, task_index=0, task_count=3)
    shardfeed.write_shards([], tmp_path, task_index=1, task_count=3)  # no record: lacks nothing
    shardfeed.write_shards([{"label": 1, "w": 2}], tmp_path, task_index=2, task_count=3)
    shardfeed.merge(tmp_path)
    features = {f["name"]: f for f in json.load(open(tmp_path / "manifest.json"))["features"]}
    assert features["w"].get("optional") and not features["label"].get("optional")
    assert shardfeed.check(tmp_path)["problems"] == []


def test_existing_dataset_needs_overwrite(tmp_path):
    shardfeed.write_shards([{"a": 1}], tmp_path)
    with pytest.raises(shardfeed.Error, match="overwrite"):
        shardfeed.write_shards([{"a": 2}], tmp_path)
    shardfeed.write_shards([{"a": 2}, {"a": 3}], tmp_path, overwrite=True)
    assert json.load(open(tmp_path / "manifest.json"))["total_records"] in (2, "2")


def test_sizes_parse():
    assert shardfeed.writer.parse_size("100MB") == 100_000_000
    assert shardfeed.writer.parse_size("64KiB") == 65536
    for bad in ("nan", "-1", "1XB", "inf"):
        with pytest.raises(ValueError):
            shardfeed.writer.parse_size(bad)
