"""shardfeed.convert() takes the CLI's flags: small shards, tasks + merge,
--max-side (the keywords were CLI-only before)."""
import io
import json

import numpy as np
import pytest

import shardfeed
from conftest import ROOT

CIFAR = ROOT / "testdata/cifar10-py"
PHOTOS = ROOT / "testdata/images/hymenoptera"


def test_small_shards_need_allow_small_shards(tmp_path):
    with pytest.raises(ValueError, match="allow_small_shards|allow-small-shards"):
        shardfeed.convert("cifar10", CIFAR, tmp_path / "a", shard_size=50_000)
    report = shardfeed.convert("cifar10", CIFAR, tmp_path / "b", shard_size=50_000,
                               allow_small_shards=True)
    assert report["shards"] > 1
    assert shardfeed.check(tmp_path / "b")["problems"] == []


def test_tasks_then_merge_equal_one_process(tmp_path):
    one = shardfeed.convert("cifar10", CIFAR, tmp_path / "one", num_shards=4)
    for t in range(3):
        shardfeed.convert("cifar10", CIFAR, tmp_path / "tasks", num_shards=4, task_index=t,
                          task_count=3)
    assert not (tmp_path / "tasks" / "manifest.json").exists()
    merged = shardfeed.merge(tmp_path / "tasks")
    assert merged["records"] == one["records"]
    a = json.loads((tmp_path / "one" / "manifest.json").read_text())
    b = json.loads((tmp_path / "tasks" / "manifest.json").read_text())
    # The same shards, byte for byte (their checksums), as the CLI's tasks.
    assert [(s["file"], s["crc32c"]) for s in a["shards"]] == \
        [(s["file"], s["crc32c"]) for s in b["shards"]]


def test_task_from_the_slurm_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "2")
    shardfeed.convert("cifar10", CIFAR, tmp_path, num_shards=2)
    assert (tmp_path / "_parts" / "task-00001-of-00002.json").exists()
    assert not (tmp_path / "_parts" / "task-00000-of-00002.json").exists()


def test_a_bad_task_is_refused(tmp_path):
    with pytest.raises(ValueError, match="task 2 of 2"):
        shardfeed.convert("cifar10", CIFAR, tmp_path, task_index=2, task_count=2)
    assert not (tmp_path / "_parts").exists()


def test_max_side_reencodes_large_images(tmp_path):
    PIL = pytest.importorskip("PIL.Image")
    shardfeed.convert("image-folder", PHOTOS, tmp_path, max_side=64, quality=80)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert (manifest["options"]["max_side"], manifest["options"]["quality"]) == (64, 80)
    loader = shardfeed.Loader(tmp_path, split="train", batch_size=1, shuffle=False,
                              features={"image/encoded": "bytes"})
    sides = [max(PIL.open(io.BytesIO(np.from_dlpack(b["image/encoded"]).tobytes())).size)
             for b in loader]
    assert sides and max(sides) <= 64
    with pytest.raises(ValueError, match="quality"):
        shardfeed.convert("image-folder", PHOTOS, tmp_path / "bad", max_side=64, quality=0)


def test_sizes_and_ranges_as_the_cli(tmp_path):
    report = shardfeed.convert("cifar10", CIFAR, tmp_path / "a", shard_size="50kB",
                               allow_small_shards=True, seed=-1)  # the CLI takes --seed -1 too
    assert report["shards"] > 1
    for kwargs, name in [({"shard_size": -5}, "size"), ({"threads": -3}, "threads"),
                         ({"num_shards": -1}, "num_shards"), ({"compression_level": 10},
                                                              "compression_level")]:
        with pytest.raises(ValueError, match=name):
            shardfeed.convert("cifar10", CIFAR, tmp_path / "bad", **kwargs)
    assert not (tmp_path / "bad").exists()


def test_skipped_files_are_python_warnings(tmp_path):
    src = tmp_path / "in" / "cat"
    src.mkdir(parents=True)
    for p in sorted(PHOTOS.glob("train/ants/*.jpg"))[:2]:
        (src / p.name).write_bytes(p.read_bytes())
    (src / "notes.txt").write_text("not an image")
    with pytest.warns(UserWarning, match="notes.txt"):
        report = shardfeed.convert("image-folder", tmp_path / "in", tmp_path / "out")
    assert report["skipped_inputs"] == 1 and report["records"] == 2


def test_merge_of_a_missing_folder_is_not_found(tmp_path):
    with pytest.raises(shardfeed.NotFoundError, match="no such folder"):
        shardfeed.merge(tmp_path / "nowhere")
    with pytest.raises(shardfeed.NotFoundError, match="no task parts"):
        shardfeed.merge(tmp_path)
