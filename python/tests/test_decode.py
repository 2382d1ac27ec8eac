"""The decode stage from Python: Loader(decode={...}) over converted photos."""
import io

import numpy as np
import pytest

import shardfeed
from conftest import ROOT

PIL = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    out = tmp_path_factory.mktemp("photos")
    shardfeed.convert("image-folder", ROOT / "testdata/images/hymenoptera", out, overwrite=True)
    return out


def test_random_resized_crop_batches(photos):
    loader = shardfeed.Loader(photos, split="train", batch_size=4, shuffle=False,
                              decode={"image/encoded": "image,random_resized_crop=224,flip"})
    shapes = [np.from_dlpack(b["image/encoded"]).shape for b in loader]
    assert shapes == [(4, 224, 224, 3), (4, 224, 224, 3)]


def test_evaluation_path_matches_pil(photos):
    """Resize(256) + CenterCrop(224) as torchvision does on PIL images."""
    loader = shardfeed.Loader(photos, split="val", batch_size=8, shuffle=False,
                              features={"image/encoded": "bytes"})
    raw = next(iter(loader))
    values, offsets = np.from_dlpack(raw["image/encoded"]), np.from_dlpack(raw["image/encoded/offsets"])
    decoded = shardfeed.Loader(photos, split="val", batch_size=8, shuffle=False,
                               features={"image/encoded": "bytes"},
                               decode={"image/encoded": "image,resize=256,center_crop=224"})
    got = np.from_dlpack(next(iter(decoded))["image/encoded"])
    for i in range(8):
        img = PIL.open(io.BytesIO(values[offsets[i]:offsets[i + 1]].tobytes())).convert("RGB")
        w, h = img.size
        size = (int(256 * w / h), 256) if w >= h else (256, int(256 * h / w))
        img = img.resize(size, PIL.BILINEAR)
        left, top = int(round((size[0] - 224) / 2.0)), int(round((size[1] - 224) / 2.0))
        want = np.asarray(img.crop((left, top, left + 224, top + 224)), np.float64)
        mse = np.mean((got[i].astype(np.float64) - want) ** 2)
        assert 10 * np.log10(255 ** 2 / max(mse, 1e-9)) > 30  # DCT-domain scaling at 1/2


def test_bad_decode_spec_is_an_error(photos):
    with pytest.raises(shardfeed.InvalidArgumentError, match="decode spec"):
        shardfeed.Loader(photos, split="val", batch_size=4,
                         decode={"image/encoded": "image,resize=256"})
