"""What a new user does with the installed package, as one JSON summary on
stdout: convert the bundled CIFAR-10 sample and an image folder (JPEG and
PNG), check them, read every batch (digests of the values), decode the
images (libjpeg-turbo, libspng) and write shards with the Writer.

wheel_install_test.sh runs it twice, with the wheel installed in a minimal
Debian chroot and with the extension built from source on the host, and
requires both summaries to be equal. Only the standard library is used (the
clean-room venv has nothing but the wheel): tensors are read through their
DLPack capsule with ctypes.

Usage: wheel_smoke.py DATA_DIR WORK_DIR   (DATA_DIR: cifar10-py/, images/)
"""
import ctypes
import hashlib
import json
import os
import sys

import shardfeed

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def tensor_bytes(tensor):
    """The tensor's bytes (host memory): DLTensor.data is the first field."""
    capsule = tensor.__dlpack__()
    managed = _get_pointer(capsule, b"dltensor")
    data = ctypes.c_void_p.from_address(managed).value
    return ctypes.string_at(data, tensor.nbytes) if tensor.nbytes else b""


def read_all(path, **options):
    """(rows, sha256 of every tensor's name, dtype, shape and bytes, in order)."""
    digest = hashlib.sha256()
    rows = 0
    for batch in shardfeed.Loader(path, batch_size=16, shuffle=False, epochs=1, **options):
        rows += batch.size
        for name in sorted(batch):
            t = batch[name]
            digest.update(f"{name} {t.dtype} {tuple(t.shape)}".encode())
            digest.update(tensor_bytes(t))
    return rows, digest.hexdigest()


def files_digest(folder):
    digest = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()


def main():
    data, work = sys.argv[1], os.path.abspath(sys.argv[2])
    os.chdir(data)  # inputs by relative name: manifests record the input as given
    out = {}
    c10 = os.path.join(work, "c10")
    report = shardfeed.convert("cifar10", "cifar10-py", c10, shard_size=400_000)
    out["cifar_convert"] = [report["records"], report["shards"]]
    out["cifar_files"] = files_digest(c10)
    check = shardfeed.check(c10)
    out["cifar_check"] = [check["records"], check["problems"]]
    out["cifar_train"] = read_all(c10, split="train")
    out["cifar_test_transformed"] = read_all(c10, split="test",
                                             transforms={"image": "chw,float32,cifar10"})

    images = os.path.join(work, "images")
    report = shardfeed.convert("image-folder", "images", images)
    out["images_convert"] = [report["records"], len(report.get("warnings", []))]
    out["images_check"] = shardfeed.check(images)["problems"]
    out["images_decoded"] = read_all(images, features={"image/encoded": "bytes",
                                                       "image/class/label": "int64"},
                                     decode={"image/encoded": "image,resize=40x30"})

    written = os.path.join(work, "written")
    with shardfeed.Writer(written, prefix="train") as w:
        for i in range(100):
            w.write({"id": i, "name": f"item-{i}", "v": [i * 0.5, -i * 0.5]})
    out["writer_files"] = files_digest(written)
    out["writer_read"] = read_all(written, features={"id": "int64", "v": "float32[2]"})
    print(json.dumps(out, sort_keys=True, indent=1))


if __name__ == "__main__":
    main()
