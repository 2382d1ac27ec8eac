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
