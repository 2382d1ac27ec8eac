"""shardfeed.check(decode=...): the CLI's --decode / --no-decode from Python
(issue 20: check answers "can I train on this?" from every entry point)."""
import pytest

import shardfeed

from conftest import ROOT


@pytest.fixture(scope="module")
def dataset_with_corrupt_body(tmp_path_factory):
    """An image-folder dataset with one JPEG whose body is cut at half and
    closed with an end-of-image marker: its headers are fine, only a whole
    decode sees the damage."""
    src = tmp_path_factory.mktemp("imgs")
    ants = sorted((ROOT / "testdata/images/hymenoptera/train/ants").glob("*.jpg"))[:3]
    (src / "ants").mkdir()
    for a in ants:
        (src / "ants" / a.name).write_bytes(a.read_bytes())
    body = ants[0].read_bytes()
    (src / "ants" / "corrupt.jpg").write_bytes(body[: len(body) // 2] + b"\xff\xd9")
    out = tmp_path_factory.mktemp("ds")
    shardfeed.convert("image-folder", src, out, overwrite=True)
    return out


def sources(report):
    return sorted(p.get("source", "") for p in report["problems"])


def test_default_decodes_image_folder_datasets_whole(dataset_with_corrupt_body):
    assert sources(shardfeed.check(dataset_with_corrupt_body)) == ["corrupt.jpg"]


def test_decode_true_and_false(dataset_with_corrupt_body):
    assert sources(shardfeed.check(dataset_with_corrupt_body, decode=True)) == ["corrupt.jpg"]
    assert shardfeed.check(dataset_with_corrupt_body, decode=False)["problems"] == []


def test_decode_is_checked_by_name(dataset_with_corrupt_body):
    with pytest.raises(shardfeed.InvalidArgumentError, match="decode='yes' must be True or False"):
        shardfeed.check(dataset_with_corrupt_body, decode="yes")
