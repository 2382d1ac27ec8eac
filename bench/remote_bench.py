#!/usr/bin/env python3
"""Remote reading benchmark (issue 23), one run, one machine: the same
CIFAR-10 train records read from the same SeaweedFS bucket on loopback,
through tests/fault_proxy.py (first-byte latency 30 +- 10 ms, a bandwidth cap
per connection and in total), by whole processes timed from outside:

  - shardfeed bench s3://... (global shuffle; quasi shuffle), cold and warm
    local cache when the binary has --cache-dir; --baseline BIN runs an
    older build the same way in the same run (before/after);
  - MosaicML Streaming: StreamingDataset over MDS shards of the same records
    (written by its MDSWriter, uploaded to the same bucket), its own local
    cache: cold (empty) and warm (the second pass over the same folder);
  - NVIDIA DALI's TFRecord reader with s3:// paths (CPU pipeline);
  - shardfeed bench of the same shards on local disk (page cache warm): the
    baseline of the "cap above local speed" case, read through a proxy with
    latency only.

Reported per run: wall seconds (fork to reap), MB/s of record bytes (the
train split's serialized Examples, the same bytes for every reader),
fraction of the cap, ratio to local disk, requests per MB of records (the
proxy counts them), bytes on the wire per byte of records. The CPU model,
its flags and the load average are printed first and stored with the JSON.

Servers bind 127.0.0.1 and are stopped at the end (also on errors); every
wait is bounded. Usage: see bench/remote_bench.sh.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from process_timing import Timed, load_average, machine, machine_line  # noqa: E402

KEY, SECRET, BUCKET = "AKIDSHARDFEEDBENCH", "bench/secret+key", "bench"
PROXY = os.path.join(HERE, "..", "tests", "fault_proxy.py")
PEERS = os.path.join(HERE, "remote_peers.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Servers:
    """SeaweedFS and the proxies, stopped (SIGTERM, then SIGKILL) on exit."""

    def __init__(self, work):
        self.work, self.procs = work, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def start(self, cmd, log, port=None, port_file=None, seconds=60):
        p = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        self.procs.append(p)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if p.poll() is not None:
                raise RuntimeError(f"{cmd[0]} exited: {open(log).read()[-2000:]}")
            if port_file and os.path.exists(port_file):
                port = int(open(port_file).read())
            if port and port_open(port):
                return port
            time.sleep(0.1)
        raise RuntimeError(f"{cmd[0]} did not open its port in {seconds} s")

    def weed(self, weed):
        d = os.path.join(self.work, "weed")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        config = os.path.join(d, "s3.json")
        with open(config, "w") as f:
            json.dump({"identities": [{"name": "bench", "credentials": [
                {"accessKey": KEY, "secretKey": SECRET}],
                "actions": ["Admin", "Read", "Write", "List"]}]}, f)

        def port():  # weed mini also opens PORT + 10000 (gRPC)
            while True:
                p = free_port()
                if p + 10000 < 65536 and not port_open(p + 10000):
                    return p
        s3, master, volume, filer, admin = (port() for _ in range(5))
        return self.start([weed, "mini", f"-dir={d}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                           f"-s3.port={s3}", f"-s3.config={config}", f"-bucket={BUCKET}",
                           f"-master.port={master}", f"-volume.port={volume}",
                           f"-filer.port={filer}", f"-admin.port={admin}", "-admin.ui=false",
                           "-webdav=false", "-s3.port.iceberg=0", "-s3.port.lance=0"],
                          os.path.join(d, "weed.log"), port=s3)

    def proxy(self, name, upstream, latency_ms, jitter_ms, per_conn, total):
        port_file = os.path.join(self.work, f"{name}.port")
        stats = os.path.join(self.work, f"{name}.stats.json")
        for f in (port_file, stats):
            if os.path.exists(f):
                os.remove(f)
        cmd = [sys.executable, PROXY, "--upstream", f"127.0.0.1:{upstream}", "--port-file",
               port_file, "--stats", stats, "--latency-ms", str(latency_ms), "--jitter-ms",
               str(jitter_ms), "--bandwidth", str(per_conn), "--total-bandwidth", str(total)]
        port = self.start(cmd, os.path.join(self.work, f"{name}.log"), port_file=port_file,
                          seconds=15)
        return port, stats


def run_bounded(cmd, env, limit_s):
    """run_timed (bench/process_timing.py) with a time limit: a process still
    running after limit_s is killed and reported (rc None) with its wall so
    far. Output goes through files (no pipe to fill)."""
    load1 = load_average()[0]
    out_path, err_path = f"/tmp/remote-bench-{os.getpid()}.out", f"/tmp/remote-bench-{os.getpid()}.err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, stdin=subprocess.DEVNULL)
        rc, ru = None, None
        while time.perf_counter() - t0 < limit_s:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                rc = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        if rc is None:
            p.kill()
            _, _, ru = os.wait4(p.pid, 0)
        p.returncode = rc if rc is not None else -9
    with open(out_path) as f:
        stdout = f.read()
    with open(err_path) as f:
        stderr = f.read()
    for path in (out_path, err_path):
        os.remove(path)
    return Timed(wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss / 1024.0, rc, stdout, stderr, load1)


def proxy_counts(stats):
    with open(stats) as f:
        s = json.load(f)
    return s["requests"], s["bytes_out"]


def s3_env(endpoint):
    env = dict(os.environ)
    env.update({"AWS_ENDPOINT_URL": endpoint, "S3_ENDPOINT_URL": endpoint,
                "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET,
                "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_EC2_METADATA_DISABLED": "true", "S3_USE_VIRTUAL_ADDRESSING": "0",
                "AWS_S3_ADDRESSING_STYLE": "path"})
    env.pop("AWS_PROFILE", None)
    return env


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"no JSON in: {text[-1000:]}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shardfeed", required=True)
    p.add_argument("--baseline", help="an older shardfeed binary, run the same way (before/after)")
    p.add_argument("--dataset", required=True, help="a converted folder (manifest.json, train-*)")
    p.add_argument("--work", required=True)
    p.add_argument("--venv-python", required=True)
    p.add_argument("--weed", required=True)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--latency-ms", type=float, default=30)
    p.add_argument("--jitter-ms", type=float, default=10)
    p.add_argument("--per-connection-mb", type=float, default=8)
    p.add_argument("--total-mb", type=float, default=40)
    p.add_argument("--sf-flags", default="",
                   help="extra flags for the shardfeed s3:// runs, e.g. '--extent-bytes 4194304'")
    p.add_argument("--only", default="", help="comma-separated contenders to run: local, "
                   "shardfeed, quasi, cache, streaming, dali")
    p.add_argument("--limit-s", type=float, default=120, help="a run still going is killed")
    p.add_argument("--baseline-limit-s", type=float, default=60,
                   help="the same for the --baseline binary's runs")
    p.add_argument("--peer-limit-s", type=float, default=120,
                   help="the same for Streaming's and DALI's runs")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    # SIGTERM (timeout, Ctrl-C's cousin) unwinds, so the servers are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    only = set(filter(None, a.only.split(",")))
    want = lambda name: not only or name in only  # noqa: E731

    print(machine_line(), flush=True)
    ds = os.path.abspath(a.dataset)
    train = sorted(f for f in os.listdir(ds) if f.startswith("train-") and f.endswith(".tfrecord"))
    mds_dir = os.path.join(a.work, "mds")
    if not os.path.exists(os.path.join(mds_dir, "index.json")):
        shutil.rmtree(mds_dir, ignore_errors=True)
        subprocess.run([a.venv_python, PEERS, "mds", *[os.path.join(ds, f) for f in train],
                        "--out", mds_dir], check=True, stdout=subprocess.DEVNULL)
    records = record_bytes = 0  # the serialized Examples: what every reader reads
    for f in train:
        with open(os.path.join(ds, f), "rb") as shard:
            data = shard.read()
        at = 0
        while at < len(data):
            length = int.from_bytes(data[at:at + 8], "little")
            records, record_bytes, at = records + 1, record_bytes + length, at + 16 + length
    mb = record_bytes / 1e6
    print(f"dataset: {records} train records, {mb:.1f} MB of records in {len(train)} shards "
          f"({ds}); MDS: {len(os.listdir(mds_dir)) - 1} shards", flush=True)

    results = []
    per_conn, total = int(a.per_connection_mb * 1e6), int(a.total_mb * 1e6)
    with Servers(a.work) as servers:
        s3_port = servers.weed(a.weed)
        direct = f"http://127.0.0.1:{s3_port}"
        for folder, prefix in ((ds, "cifar/"), (mds_dir, "mds/")):
            subprocess.run([a.venv_python, PEERS, "upload", folder, f"s3://{BUCKET}/{prefix}"],
                           env=s3_env(direct), check=True, stdout=subprocess.DEVNULL)
        capped_port, capped_stats = servers.proxy("capped", s3_port, a.latency_ms, a.jitter_ms,
                                                  per_conn, total)
        open_port, open_stats = servers.proxy("latency", s3_port, a.latency_ms, a.jitter_ms, 0, 0)
        print(f"SeaweedFS {direct}; proxy A: {a.latency_ms:g} +- {a.jitter_ms:g} ms first byte, "
              f"{a.per_connection_mb:g} MB/s per connection, {a.total_mb:g} MB/s in total; "
              f"proxy B: the same latency, no cap; direct: SeaweedFS without a proxy", flush=True)

        def ceiling(port, streams=8):
            """MB/s that `streams` parallel curl range GETs of 8 MB get through a
            proxy: what it can deliver on this machine now (a Python proxy under
            load may not reach its configured cap)."""
            shard = os.path.join(ds, train[0])
            size = os.path.getsize(shard)
            n = min(streams, max(1, size // 8000000))
            t0 = time.perf_counter()
            procs = [subprocess.Popen(
                ["curl", "-sf", "-o", "/dev/null", "-r", f"{i * 8000000}-{i * 8000000 + 7999999}",
                 "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{KEY}:{SECRET}",
                 f"http://127.0.0.1:{port}/{BUCKET}/cifar/{train[0]}"]) for i in range(n)]
            for q in procs:
                q.wait(timeout=300)
            return n * 8.0 / (time.perf_counter() - t0)

        def run(name, case, cmd, endpoint_stats, env, cap, setup=None, limit_s=None):
            limit_s = limit_s or a.limit_s
            walls, docs, reqs, wire = [], [], [], []
            for _ in range(a.repeats):
                if setup:
                    setup()
                r0, b0 = proxy_counts(endpoint_stats) if endpoint_stats else (0, 0)
                t = run_bounded(cmd, env, limit_s)
                if t.rc is None:
                    if not endpoint_stats:
                        print(f"  {name}: did not finish in {limit_s:g} s; killed", flush=True)
                        results.append({"name": name, "case": case, "unfinished_s": limit_s,
                                        "load1": t.load1})
                        return None
                    r1, b1 = proxy_counts(endpoint_stats)
                    print(f"  {name}: did not finish in {limit_s:g} s ({r1 - r0} requests, "
                          f"{(b1 - b0) / 1e6:.1f} MB on the wire so far); killed", flush=True)
                    results.append({"name": name, "case": case, "unfinished_s": limit_s,
                                    "requests": r1 - r0, "wire_bytes": b1 - b0,
                                    "load1": t.load1})
                    return None
                if t.rc != 0:
                    print(f"  {name}: FAILED (exit {t.rc}): {t.stderr.strip()[-600:]}", flush=True)
                    results.append({"name": name, "case": case, "error": t.stderr.strip()[-600:]})
                    return None
                doc = last_json(t.stdout)
                if endpoint_stats:
                    r1, b1 = proxy_counts(endpoint_stats)
                else:  # no proxy: the reader's own count, where it keeps one
                    r1, b1 = doc.get("remote_requests", 0), doc.get("remote_bytes", 0)
                walls.append(t.wall)
                docs.append(doc)
                reqs.append(r1 - r0)
                wire.append(b1 - b0)
            k = sorted(range(len(walls)), key=lambda i: walls[i])[len(walls) // 2]  # median
            res = {"name": name, "case": case, "wall_s": walls[k], "walls": walls,
                   "mb_per_s": mb / walls[k], "requests_per_mb": reqs[k] / mb,
                   "wire_per_record_byte": wire[k] / record_bytes, "requests": reqs[k],
                   "doc": docs[k], "load1": t.load1}
            if cap:
                res["fraction_of_cap"] = res["mb_per_s"] / (cap / 1e6)
                res["fraction_of_curl"] = res["mb_per_s"] / measured
            results.append(res)
            print(f"  {name}: {walls[k]:.2f} s (runs {', '.join(f'{w:.2f}' for w in walls)}), "
                  f"{res['mb_per_s']:.1f} MB/s of records"
                  + (f", {res['fraction_of_cap']:.2f}x the cap, {res['fraction_of_curl']:.2f}x "
                     "curl's" if cap else "")
                  + f", {res['requests_per_mb']:.2f} requests/MB", flush=True)
            return res

        def sf_bench(binary, dataset, extra=()):
            remote = a.sf_flags.split() if dataset.startswith("s3://") else []
            return [binary, "bench", dataset, "--split", "train", "--epochs", "1", "--seed", "1",
                    "--json", *remote, *extra]

        def cache_flags(binary, d):
            """--cache-dir D (and a limit holding the dataset: global shuffle needs
            it whole) when the binary has an extent cache, else None."""
            help_text = subprocess.run([binary, "bench", "--help"], capture_output=True,
                                       text=True).stdout
            if "--cache-dir" not in help_text:
                return None
            return ["--cache-dir", d, "--cache-limit", str(4 * record_bytes + (1 << 30))]

        measured = ceiling(capped_port)
        print(f"proxy A delivers {measured:.1f} MB/s to 8 parallel curl range GETs of 8 MB "
              f"({measured / (total / 1e6):.2f}x its cap) under load {load_average()[0]:.1f}",
              flush=True)
        local = None
        if want("local"):
            local = run("shardfeed bench, local disk", "local", sf_bench(a.shardfeed, ds), None,
                        None, 0)
        url = f"s3://{BUCKET}/cifar/"
        cache_dir = os.path.join(a.work, "sf-cache")
        cold = lambda: shutil.rmtree(cache_dir, ignore_errors=True)  # noqa: E731
        for tag, binary in (("", a.shardfeed), (" (baseline build)", a.baseline)):
            if not binary:
                continue
            limit = a.baseline_limit_s if tag else a.limit_s
            flags = cache_flags(binary, cache_dir)
            for case, port, stats, cap in (("capped", capped_port, capped_stats, total),
                                           ("latency only", open_port, open_stats, 0),
                                           ("direct", s3_port, None, 0)):
                env = s3_env(f"http://127.0.0.1:{port}")
                # A binary with an extent cache: every run names its folder
                # (emptied before each cold run), never the default one.
                for mode, extra in (("global shuffle", []), ("quasi shuffle", ["--quasi-shuffle"])):
                    if not want("quasi" if extra else "shardfeed"):
                        continue
                    if extra and case != "capped":
                        continue
                    if flags is None:
                        run(f"shardfeed bench s3://, {mode}{tag}", case,
                            sf_bench(binary, url, extra), stats, env, cap, limit_s=limit)
                        continue
                    run(f"shardfeed bench s3://, {mode}, cold cache{tag}", case,
                        sf_bench(binary, url, extra + flags), stats, env, cap, setup=cold,
                        limit_s=limit)
                    if case == "capped" and not extra:
                        run(f"shardfeed bench s3://, {mode}, warm cache{tag}", case,
                            sf_bench(binary, url, extra + flags), stats, env, cap, limit_s=limit)
        env = s3_env(f"http://127.0.0.1:{capped_port}")
        if want("streaming"):
            cache = os.path.join(a.work, "streaming-cache")
            run("MosaicML Streaming, cold cache", "capped",
                [a.venv_python, PEERS, "streaming", f"s3://{BUCKET}/mds/", cache], capped_stats,
                env, total, setup=lambda: shutil.rmtree(cache, ignore_errors=True),
                limit_s=a.peer_limit_s)
            run("MosaicML Streaming, warm cache", "capped",
                [a.venv_python, PEERS, "streaming", f"s3://{BUCKET}/mds/", cache], capped_stats,
                env, total, limit_s=a.peer_limit_s)
        if want("dali"):
            run("NVIDIA DALI TFRecord reader, s3:// paths (CPU)", "capped",
                [a.venv_python, PEERS, "dali", *[f"s3://{BUCKET}/cifar/{f}" for f in train],
                 "--index", *[os.path.join(ds, f + ".index") for f in train]],
                capped_stats, env, total, limit_s=a.peer_limit_s)

    if local:
        for r in results:
            if "wall_s" in r and r is not local:
                r["ratio_to_local"] = local["wall_s"] / r["wall_s"]
    print("\n| reader | proxy | wall s (median of %d) | MB/s of records | x cap (x curl's) "
          "| x local disk | requests per MB | wire bytes per record byte |" % a.repeats)
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['name']} | {r['case']} | failed: {r['error'][-200:]} | | | | | |")
            continue
        if "unfinished_s" in r:
            so_far = (f"{r['requests'] / max(r['wire_bytes'] / 1e6, 1e-9):.0f} per MB on the "
                      f"wire ({r['requests']} requests by then)" if r.get("wire_bytes") else "")
            print(f"| {r['name']} | {r['case']} | > {r['unfinished_s']:g} (killed) | "
                  f"< {mb / r['unfinished_s']:.1f} | | | {so_far} | |")
            continue
        print(f"| {r['name']} | {r['case']} | {r['wall_s']:.2f} | {r['mb_per_s']:.1f} | "
              + (f"{r['fraction_of_cap']:.2f} ({r['fraction_of_curl']:.2f})"
                 if "fraction_of_cap" in r else "-") + " | "
              + (f"{r['ratio_to_local']:.2f}" if "ratio_to_local" in r else "-") + " | "
              + f"{r['requests_per_mb']:.2f} | {r['wire_per_record_byte']:.2f} |")
    out = os.path.join(a.work, "remote_bench.json")
    with open(out, "w") as f:
        json.dump({"machine": machine(), "records": records, "record_bytes": record_bytes,
                   "latency_ms": a.latency_ms, "jitter_ms": a.jitter_ms,
                   "per_connection_mb": a.per_connection_mb, "total_mb": a.total_mb,
                   "curl_mb_per_s": measured,
                   "results": results}, f, indent=1)
    print(f"\n{machine_line()}\nJSON: {out}")


if __name__ == "__main__":
    main()
