"""shardfeed.Writer and merge(upload_to=...) into a bucket: SeaweedFS on
loopback (SHARDFEED_WEED, from tools/setup.sh; skipped without it, failed
under CI). Each case runs in a fresh interpreter with the server's endpoint
and keys in its environment; objects are fetched with curl's own SigV4
signer (an independent client) and compared with the same Writer's output
on disk."""
import hashlib
import os
import socket
import subprocess
import time

import pytest

from conftest import run_script

KEY, SECRET = "AKIDPYWRITER", "py/s3cr3t+writer"
EMPTY_SHA = hashlib.sha256(b"").hexdigest()


def _free_port():
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port + 10000 < 65536:  # weed mini also takes port + 10000 (gRPC)
            return port


@pytest.fixture(scope="module")
def seaweed(tmp_path_factory):
    weed = os.environ.get("SHARDFEED_WEED", "")
    if not os.access(weed, os.X_OK):
        if os.environ.get("SHARDFEED_REQUIRE_TF") == "1" or os.environ.get("CI") == "true":
            pytest.fail("SeaweedFS (SHARDFEED_WEED) is required in CI")
        pytest.skip("no weed binary (SHARDFEED_WEED; tools/setup.sh installs it)")
    d = tmp_path_factory.mktemp("weed")
    (d / "s3.json").write_text(
        '{"identities":[{"name":"t","credentials":[{"accessKey":"%s","secretKey":"%s"}],'
        '"actions":["Admin","Read","Write","List"]}]}' % (KEY, SECRET))
    s3 = _free_port()
    ports = {k: _free_port() for k in ("master", "volume", "filer", "admin")}
    log = open(d / "weed.log", "w")
    proc = subprocess.Popen(
        [weed, "mini", f"-dir={d}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-s3.port={s3}",
         f"-s3.config={d / 's3.json'}", "-bucket=data", f"-master.port={ports['master']}",
         f"-volume.port={ports['volume']}", f"-filer.port={ports['filer']}",
         f"-admin.port={ports['admin']}", "-admin.ui=false", "-webdav=false",
         "-s3.port.iceberg=0", "-s3.port.lance=0"], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(300):  # 60 s
            try:
                socket.create_connection(("127.0.0.1", s3), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("SeaweedFS did not start: " + (d / "weed.log").read_text()[-2000:])
        yield f"http://127.0.0.1:{s3}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _get(endpoint, key):
    """The object's bytes, or None when absent (curl --aws-sigv4)."""
    p = subprocess.run(
        ["curl", "-s", "--max-time", "60", "--aws-sigv4", "aws:amz:us-east-1:s3",
         "--user", f"{KEY}:{SECRET}", "-H", f"x-amz-content-sha256: {EMPTY_SHA}",
         "-w", "\n%{http_code}", f"{endpoint}/data/{key}"], capture_output=True, timeout=90)
    body, _, code = p.stdout.rpartition(b"\n")
    if code == b"404":
        return None
    assert code == b"200", (key, code, body[:300])
    return body


def _keys(endpoint, prefix):
    xml = _get(endpoint, f"?list-type=2&prefix={prefix.rstrip('/')}%2F").decode()
    return sorted(k.split("</Key>")[0] for k in xml.split("<Key>")[1:])


def _script(endpoint, staging, body):
    return (f"import os\n"
            f"os.environ.update(AWS_ENDPOINT_URL={endpoint!r}, AWS_ACCESS_KEY_ID={KEY!r},\n"
            f"  AWS_SECRET_ACCESS_KEY={SECRET!r}, AWS_REGION='us-east-1',\n"
            f"  AWS_EC2_METADATA_DISABLED='true', TMPDIR={str(staging)!r},\n"
            f"  SHARDFEED_CACHE_DIR={str(staging.parent / 'extents')!r})\n"
            f"import numpy as np, shardfeed\n"
            f"def records(n):\n"
            f"    rng = np.random.default_rng(5)\n"
            f"    for i in range(n):\n"
            f"        yield {{'image': rng.integers(0, 256, (3, 8, 8), dtype=np.uint8),\n"
            f"               'label': i, 'name': f'item-{{i}}'}}\n" + body)


def test_writer_to_s3_equals_local_and_reads_back(seaweed, tmp_path):
    staging = tmp_path / "staging"
    staging.mkdir()
    local = tmp_path / "local"
    out = run_script(tmp_path, _script(seaweed, staging, f"""
for out in ({str(local)!r}, "s3://data/py/"):
    with shardfeed.Writer(out, shard_size="20kB", shuffle_window=64, seed=3) as w:
        w.write_many(records(300))
    print(w.summary["shards"])
a = [np.from_dlpack(b["label"]).tolist() for b in shardfeed.Loader({str(local)!r}, batch_size=32, seed=1, epochs=1)]
b = [np.from_dlpack(b["label"]).tolist() for b in shardfeed.Loader("s3://data/py/", batch_size=32, seed=1, epochs=1)]
assert a == b and sum(len(x) for x in a) == 300, (a, b)
print("same batches")
"""))
    assert "same batches" in out
    files = sorted(os.listdir(local))
    assert len(files) > 5 and "manifest.json" in files
    assert _keys(seaweed, "py") == [f"py/{f}" for f in files]
    for f in files:
        assert _get(seaweed, f"py/{f}") == (local / f).read_bytes(), f
    assert os.listdir(staging) == []


def test_writer_refuses_an_existing_dataset_and_leaves_nothing_on_error(seaweed, tmp_path):
    staging = tmp_path / "staging"
    staging.mkdir()
    out = run_script(tmp_path, _script(seaweed, staging, """
with shardfeed.Writer("s3://data/again/", shard_size="20kB") as w:
    w.write_many(records(50))
try:
    shardfeed.Writer("s3://data/again/")
    print("not refused")
except shardfeed.Error as e:
    print("refused:", e)
try:
    with shardfeed.Writer("s3://data/broken/", shard_size="20kB") as w:
        w.write_many(records(200))
        raise RuntimeError("the caller fails")
except RuntimeError:
    print("raised")
"""))
    assert "refused:" in out and "already holds a dataset" in out and "--overwrite" in out, out
    assert "raised" in out
    assert _get(seaweed, "again/manifest.json") is not None
    assert _keys(seaweed, "broken") == []
    assert os.listdir(staging) == []


def test_ctrl_c_during_the_upload_leaves_nothing(seaweed, tmp_path):
    """KeyboardInterrupt (here from SIGALRM) while close() uploads through a
    proxy that delays every request by 400 ms: raised within about one
    part's time, the multipart upload aborted, no object, no staging."""
    staging = tmp_path / "staging"
    staging.mkdir()
    root = os.environ.get("SHARDFEED_ROOT", os.path.join(os.path.dirname(__file__), "../.."))
    stats, port_file = tmp_path / "stats.json", tmp_path / "port"
    proxy = subprocess.Popen(
        ["python3", os.path.join(root, "tests/fault_proxy.py"), "--upstream",
         seaweed.split("//")[1], "--port-file", str(port_file), "--stats", str(stats),
         "--latency-ms", "400"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port_file.read_text()}"
        out = run_script(tmp_path, _script(endpoint, staging, """
import signal, time
os.environ.update(SHARDFEED_UPLOAD_THRESHOLD="1MiB", SHARDFEED_UPLOAD_PART_SIZE="5MiB")
def alarm(*_):
    raise KeyboardInterrupt
signal.signal(signal.SIGALRM, alarm)
w = shardfeed.Writer("s3://data/int/", shard_size="1GB")
for i in range(12):
    w.write({"blob": os.urandom(1_000_000)})
start = time.monotonic()
signal.setitimer(signal.ITIMER_REAL, 1.5)  # CreateMultipartUpload and a part are under way
try:
    w.close()
    print("not interrupted")
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - start:.1f} s")
"""))
    finally:
        proxy.terminate()
        proxy.wait(10)
    assert "interrupted after" in out, out
    assert float(out.split("interrupted after ")[1].split()[0]) < 10, out
    assert _keys(seaweed, "int") == []
    assert b"<UploadId>" not in _get(seaweed, "?uploads=")
    assert os.listdir(staging) == []


def test_merge_uploads_the_tasks_dataset(seaweed, tmp_path):
    staging = tmp_path / "staging"
    staging.mkdir()
    parts = tmp_path / "parts"
    out = run_script(tmp_path, _script(seaweed, staging, f"""
rs = list(records(120))
for t in range(3):
    with shardfeed.Writer({str(parts)!r}, shard_size="20kB", task_index=t, task_count=3) as w:
        w.write_many(rs[t::3])
s = shardfeed.merge({str(parts)!r}, upload_to="s3://data/merged/")
print("records", s["records"])
n = sum(len(np.from_dlpack(b["label"])) for b in shardfeed.Loader("s3://data/merged/", batch_size=16, epochs=1))
print("read", n)
"""))
    assert "records 120" in out and "read 120" in out, out
    keys = _keys(seaweed, "merged")
    assert "merged/manifest.json" in keys and len(keys) > 3
    assert (parts / "_parts").is_dir()  # the parts stay where they are
