"""The wheel's `shardfeed` console script (shardfeed._cli:main) runs the
command inside the extension: same output and exit statuses as the binary."""
import json
import os
import subprocess
import sys

CLI = os.environ.get("SHARDFEED_CLI", "shardfeed")


def _script(*args, **kw):
    return subprocess.run([sys.executable, "-m", "shardfeed._cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120, **kw)


def test_version_and_usage_match_the_binary():
    got = _script("--version")
    want = subprocess.run([CLI, "--version"], capture_output=True, text=True)
    assert got.returncode == 0 and got.stdout == want.stdout and got.stdout.startswith("shardfeed ")
    usage = _script()
    assert usage.returncode == 2 and "Usage: shardfeed COMMAND" in usage.stderr
    unknown = _script("frobnicate")
    assert unknown.returncode == 2 and "unknown command 'frobnicate'" in unknown.stderr


def test_check_reports_and_exit_statuses_match_the_binary(cifar, tmp_path):
    out, _ = cifar
    got = _script("check", "--json", out)
    want = subprocess.run([CLI, "check", "--json", str(out)], capture_output=True, text=True)
    assert got.returncode == want.returncode == 0
    timing = ("seconds", "mb_per_s")  # of each run
    assert ({k: v for k, v in json.loads(got.stdout).items() if k not in timing} ==
            {k: v for k, v in json.loads(want.stdout).items() if k not in timing})
    shard = sorted(out.glob("train-*.tfrecord"))[0]
    data = bytearray(shard.read_bytes())
    data[200] ^= 0x10
    bad = tmp_path / shard.name
    bad.write_bytes(bytes(data))
    damaged = _script("check", bad)
    assert damaged.returncode == 1, damaged.stderr
    assert f"{bad.name}:" in damaged.stdout + damaged.stderr


def test_convert_through_the_script_is_byte_identical_to_the_binary(tmp_path):
    src = os.path.join(os.environ.get("SHARDFEED_ROOT", "."), "testdata", "cifar10-py")
    a, b = tmp_path / "a", tmp_path / "b"
    r = _script("convert", "cifar10", "--input", src, "--output", a, "--shard-size", "400000",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    subprocess.run([CLI, "convert", "cifar10", "--input", src, "--output", str(b),
                    "--shard-size", "400000"], check=True, capture_output=True, cwd=tmp_path)
    names = sorted(os.listdir(a))
    assert names == sorted(os.listdir(b)) and "manifest.json" in names
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n
