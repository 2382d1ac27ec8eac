"""shardfeed beside TensorFlow and PyTorch in one process, imported in any
order. The extension carries abseil, protobuf, zlib and libjpeg-turbo
privately (linked statically, symbols hidden): TensorFlow's own protobuf
runtime, loaded first, used to take over shardfeed's and crash it in
DescriptorPool::FindFileByName while a manifest was read. Each case runs in
its own interpreter (a crash there is a failed test, not a dead session)."""
import re
import shutil
import subprocess
import textwrap

import pytest

import shardfeed
from conftest import ROOT, run_script

EXTENSION = shardfeed._shardfeed.__file__


def _run(tmp_path, body, imports=("tensorflow", "shardfeed")):
    """Runs `body` in a fresh interpreter after `import X` for each of imports, in order."""
    lines = [f"import {m}" for m in imports] + [textwrap.dedent(body)]
    return run_script(tmp_path, "\n".join(lines))


def _have(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True


needs_tf = pytest.mark.skipif(not _have("tensorflow"), reason="tensorflow is not installed")
needs_torch = pytest.mark.skipif(not _have("torch"), reason="torch is not installed")


@needs_tf
def test_check_after_tensorflow(cifar, tmp_path):
    out, _ = cifar
    stdout = _run(tmp_path, f"""
        report = shardfeed.check({str(out)!r})
        assert report["problems"] == [], report["problems"]
        print("records", report["records"])
    """)
    assert "records 600" in stdout


@needs_tf
def test_loader_on_a_converted_dataset_after_tensorflow(cifar, tmp_path):
    out, _ = cifar
    stdout = _run(tmp_path, f"""
        import numpy as np
        rows = 0
        for batch in shardfeed.Loader({str(out)!r}, split="train", batch_size=64, seed=1):
            rows += np.from_dlpack(batch["image"]).shape[0]
        print("rows", rows)
    """)
    assert "rows 500" in stdout


@needs_tf
def test_convert_after_tensorflow(tmp_path):
    out = tmp_path / "c10"
    stdout = _run(tmp_path, f"""
        report = shardfeed.convert("cifar10", {str(ROOT / "testdata/cifar10-py")!r}, {str(out)!r},
                                   shard_size=400_000)
        print("records", report["records"])
    """)
    assert "records 600" in stdout
    assert (out / "manifest.json").exists()


@needs_tf
def test_writer_after_tensorflow_leaves_no_partial_files(tmp_path):
    out = tmp_path / "w"
    stdout = _run(tmp_path, f"""
        import numpy as np
        with shardfeed.Writer({str(out)!r}, prefix="train") as w:
            for i in range(20):
                w.write({{"x": np.arange(4, dtype=np.int64) + i, "label": i}})
        print("written")
    """)
    assert "written" in stdout
    names = sorted(p.name for p in out.iterdir())
    assert "manifest.json" in names
    assert not [n for n in names if ".partial" in n], names


@needs_tf
@needs_torch
@pytest.mark.parametrize("order", [
    ("torch", "tensorflow", "shardfeed"),
    ("tensorflow", "torch", "shardfeed"),
    ("shardfeed", "tensorflow", "torch"),
    ("torch", "shardfeed", "tensorflow"),
])
def test_torch_tensorflow_and_shardfeed_in_any_order(cifar, tmp_path, order):
    out, _ = cifar
    stdout = _run(tmp_path, f"""
        assert shardfeed.check({str(out)!r})["problems"] == []
        x = None
        for batch in shardfeed.Loader({str(out)!r}, split="test", batch_size=50, shuffle=False):
            x = torch.from_dlpack(batch["image"]).float().mean()
            y = tensorflow.reduce_sum(tensorflow.constant([1.0, 2.0]))
        print("ok", float(x), float(y))
    """, imports=order)
    assert stdout.startswith("ok ")


def _dynamic_symbols(path):
    """(name, binding) of every defined symbol in the dynamic symbol table."""
    p = subprocess.run(["readelf", "--dyn-syms", "--wide", path], capture_output=True, text=True,
                       check=True)
    out = []
    for line in p.stdout.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) >= 8 and f[0].endswith(":") and f[6] != "UND":
            out.append((f[7].split("@")[0], f[4]))
    return out


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) is not installed")
def test_the_extension_exports_only_its_init_function():
    exported = sorted({name for name, bind in _dynamic_symbols(EXTENSION)
                       if bind in ("GLOBAL", "WEAK", "UNIQUE") and name})
    assert exported == ["PyInit__shardfeed"], exported[:40]


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) is not installed")
def test_the_extension_needs_no_shared_abseil_protobuf_zlib_or_jpeg():
    p = subprocess.run(["readelf", "--dynamic", "--wide", EXTENSION], capture_output=True,
                       text=True, check=True)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", p.stdout)
    private = [n for n in needed
               if re.match(r"lib(absl|protobuf|z\.|jpeg|turbojpeg|cudart|stdc\+\+|gcc_s)", n)]
    assert private == [], needed
