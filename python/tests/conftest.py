"""Fixtures: the bundled CIFAR-10 sample converted once per session."""
import os
import pathlib

import pytest

import shardfeed

ROOT = pathlib.Path(os.environ.get("SHARDFEED_ROOT", pathlib.Path(__file__).parents[2]))


@pytest.fixture(scope="session")
def cifar(tmp_path_factory):
    out = tmp_path_factory.mktemp("cifar10")
    report = shardfeed.convert("cifar10", ROOT / "testdata/cifar10-py", out, shard_size=400_000,
                               overwrite=True)
    return out, report


def run_script(tmp_path, source, timeout=300):
    """Runs `source` in a fresh interpreter (a crash or abort there is a failed
    test, not a dead session); returns its stdout, asserting exit status 0."""
    import subprocess
    import sys
    script = tmp_path / "case.py"
    script.write_text(source)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=timeout, cwd=tmp_path)
    assert p.returncode == 0, (f"exit {p.returncode} (a negative number is the signal)\n"
                               f"stdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-4000:]}")
    return p.stdout
