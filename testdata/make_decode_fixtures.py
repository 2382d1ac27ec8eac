"""Makes the image fixtures of reader/decode's tests (testdata/decode/).

Sources: cut from the real photos in testdata/images/hymenoptera. References
are computed independently of shardfeed: JPEG pixels by Pillow (libjpeg-turbo
with its default JDCT_ISLOW and fancy upsampling), PNG pixels by numpy from
the arrays written, crops and resizes by Pillow's resize(BILINEAR), which is
what torchvision's RandomResizedCrop / Resize(antialias=True) call on PIL
images. References are binary PPM (P6) files.

    ~/.cache/shardfeed/venv/bin/python testdata/make_decode_fixtures.py
"""
import os
import struct
import zlib

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "decode")
PHOTO = os.path.join(HERE, "images/hymenoptera/train/ants/0013035.jpg")
BIG = os.path.join(HERE, "images/hymenoptera/val/ants/10308379_1b6c72e180.jpg")  # 500x375


def ppm(path, arr):
    arr = np.asarray(arr, dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (arr.shape[1], arr.shape[0]))
        f.write(arr.tobytes())


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def write_png16(path, arr, color_type):
    """16-bit PNG (Pillow cannot write 16-bit RGB)."""
    h, w = arr.shape[:2]
    raw = b"".join(b"\x00" + arr[y].astype(">u2").tobytes() for y in range(h))
    ihdr = struct.pack(">IIBBBBB", w, h, 16, color_type, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) +
                png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))


def main():
    os.makedirs(OUT, exist_ok=True)
    photo = Image.open(PHOTO).convert("RGB")
    small = photo.resize((67, 45), Image.BILINEAR)  # odd sizes: partial MCUs
    jpegs = {
        "rgb420.jpg": dict(img=small, quality=90, subsampling=2),
        "rgb422.jpg": dict(img=small, quality=90, subsampling=1),
        "rgb444.jpg": dict(img=small, quality=90, subsampling=0),
        "progressive.jpg": dict(img=small, quality=85, subsampling=2, progressive=True),
        "gray.jpg": dict(img=small.convert("L"), quality=90),
        "cmyk.jpg": dict(img=small.convert("CMYK"), quality=90),
    }
    for name, kw in jpegs.items():
        img = kw.pop("img")
        path = os.path.join(OUT, name)
        img.save(path, "JPEG", **kw)
        ppm(path + ".ppm", Image.open(path).convert("RGB"))

    base = np.asarray(small)
    alpha = (np.arange(67)[None, :] * 3 + np.arange(45)[:, None]).astype(np.uint8)
    Image.fromarray(np.dstack([base, alpha]), "RGBA").save(os.path.join(OUT, "rgba.png"))
    ppm(os.path.join(OUT, "rgba.png.ppm"), base)
    pal = small.quantize(colors=32)
    pal.info["transparency"] = 0
    pal.save(os.path.join(OUT, "palette.png"), transparency=0)
    lut = np.array(pal.getpalette()[:768], dtype=np.uint8).reshape(-1, 3)
    ppm(os.path.join(OUT, "palette.png.ppm"), lut[np.asarray(pal)])
    gray = np.asarray(small.convert("L"))
    Image.fromarray(gray, "L").save(os.path.join(OUT, "gray.png"))
    ppm(os.path.join(OUT, "gray.png.ppm"), np.dstack([gray] * 3))
    Image.fromarray(np.dstack([gray, alpha]), "LA").save(os.path.join(OUT, "graya.png"))
    ppm(os.path.join(OUT, "graya.png.ppm"), np.dstack([gray] * 3))
    rgb16 = base.astype(np.uint16) * 257 + (np.arange(67)[None, :, None] % 200)
    write_png16(os.path.join(OUT, "rgb16.png"), rgb16, 2)
    ppm(os.path.join(OUT, "rgb16.png.ppm"), (rgb16 >> 8).astype(np.uint8))
    gray16 = gray.astype(np.uint16) * 256 + 255
    write_png16(os.path.join(OUT, "gray16.png"), gray16, 0)
    ppm(os.path.join(OUT, "gray16.png.ppm"), np.dstack([gray16 >> 8] * 3))

    # Crops and resizes of a real 500x375 photo (testdata/images), by Pillow.
    big = Image.open(BIG).convert("RGB")
    box = (37, 50, 337, 310)  # a RandomResizedCrop box: crop, then resize
    ppm(os.path.join(OUT, "crop_37_50_300x260_to_32.ppm"), big.crop(box).resize((32, 32), Image.BILINEAR))
    ppm(os.path.join(OUT, "crop_37_50_300x260_to_96x80.ppm"), big.crop(box).resize((96, 80), Image.BILINEAR))
    # Evaluation: Resize(40) (shorter side) then CenterCrop(32), torchvision's way.
    w, h = big.size
    rw, rh = (int(40 * w / h), 40) if w >= h else (40, int(40 * h / w))
    resized = big.resize((rw, rh), Image.BILINEAR)
    top, left = int(round((rh - 32) / 2.0)), int(round((rw - 32) / 2.0))
    ppm(os.path.join(OUT, "resize40_center32.ppm"), resized.crop((left, top, left + 32, top + 32)))


if __name__ == "__main__":
    main()
