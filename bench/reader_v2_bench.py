"""Reader v2 benchmark driver (bench/reader_v2_bench.sh prepares the data and
calls it): `shardfeed bench` against `dd bs=4M` of the same shard files,
every process timed from outside (wall from fork to reap, user + system
CPU, peak RSS: bench/process_timing.py), beside the loader's own clock
(`seconds` in `bench --json`: its creation to the last batch).

Same bytes on both sides: the CIFAR-10 rows read the train split
(`--split train`) and dd reads the train shards only; N epochs against N dd
passes. Runs alternate between the contenders (a load swing then hits all
of them); each row keeps its fastest run and says the median beside it,
with the 1-minute load average of every run.

Sections: cifar (3 epochs and the first epoch alone, global shuffle with 2
and 1 threads, pread, quasi, in order, streaming), rows (100-byte records),
memory (peak RSS at 1x and 10x the data). --baseline BIN runs every
shardfeed row with a second binary too, alternating (A/B in one run).
--callgrind counts instructions per record (valgrind; independent of the
machine's load) for the headline configuration.

Usage: reader_v2_bench.py --shardfeed BIN --work DIR [--repeats 5]
       [--sections cifar,rows,memory] [--baseline BIN] [--callgrind]
       [--only WORDS] [--markdown FILE]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import process_timing  # noqa: E402

CIFAR_SPEC = "image:uint8[3,32,32],label:int64"
ROWS_SPEC = "tokens:uint8[64],label:int64"


def dd_cmd(files, passes):
    """One process tree: `passes` dd bs=4M passes over `files`."""
    script = ('p=$1; shift; for _ in $(seq "$p"); do for f in "$@"; do '
              'dd if="$f" of=/dev/null bs=4M 2>/dev/null || exit 1; done; done')
    return ["sh", "-c", script, "dd", str(passes)] + files


class Row:
    """One contender: a command, its runs, and how to read them."""

    def __init__(self, label, cmd, records, passes, is_dd=False, group=""):
        self.label, self.cmd, self.records, self.passes = label, cmd, records, passes
        self.is_dd, self.group = is_dd, group
        self.runs = []  # (Timed, json or None)

    def run(self):
        t = process_timing.run_timed(self.cmd)
        doc = None
        if not self.is_dd:
            doc = json.loads(t.stdout.strip().splitlines()[-1])
            if self.records is not None and doc["records"] != self.records * self.passes:
                raise SystemExit(f"{self.label}: {doc['records']} records, expected "
                                 f"{self.records * self.passes}: not the same data as dd")
        self.runs.append((t, doc))

    def best(self):
        return min(self.runs, key=lambda r: r[0].wall)

    def median_wall(self):
        return statistics.median(t.wall for t, _ in self.runs)

    def loads(self):
        ls = [t.load1 for t, _ in self.runs]
        return f"{min(ls):.1f}-{max(ls):.1f}" if len(ls) > 1 else f"{ls[0]:.1f}"


def bench_cmd(binary, ds, epochs, flags):
    return [binary, "bench", ds, "--epochs", str(epochs), "--batch-size", "256", "--json"] + flags


def cifar_rows(a, binaries):
    ds = os.path.join(a.work, "ds")
    files = sorted(glob.glob(os.path.join(ds, "train-*.tfrecord")))
    manifest = json.load(open(os.path.join(ds, "manifest.json")))
    records = sum(int(s.get("records", 0)) for s in manifest["shards"] if s["split"] == "train")
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    title = (f"CIFAR-10 train split: {len(files)} shards, {records:,} records of 3 KB, {mb:.0f} MB "
             f"(`--split train`; dd reads the same {len(files)} files)")
    rows = [Row("`dd bs=4M`, 3 passes (baseline)", dd_cmd(files, 3), records, 3, True, "3"),
            Row("`dd bs=4M`, 1 pass (baseline)", dd_cmd(files, 1), records, 1, True, "1")]
    configs = [
        ("planned, global shuffle, 2 threads (mapped, default), 3 epochs", 3, []),
        ("planned, global shuffle, 2 threads, **first epoch alone** (cold mapping)", 1, []),
        ("planned, global shuffle, 1 thread, 3 epochs", 3, ["--io-threads", "1",
                                                           "--decode-threads", "1"]),
        ("planned, global shuffle, 2 threads, `--no-mmap` (pread), 3 epochs", 3, ["--no-mmap"]),
        ("planned, quasi shuffle, 2 threads, 3 epochs", 3, ["--quasi-shuffle"]),
        ("planned, in order, 2 threads, 3 epochs", 3, ["--no-shuffle"]),
        ("streaming (v1 design, shuffle buffer 10,000), 3 epochs", 3, ["--streaming"]),
    ]
    for label, epochs, flags in configs:
        if a.only and not any(k in label for k in a.only.split("|")):
            continue
        for tag, binary in binaries:
            rows.append(Row(label + tag, bench_cmd(binary, ds, epochs,
                                                   ["--split", "train", "--spec", CIFAR_SPEC] + flags),
                            records, epochs, group=str(epochs)))
    return title, rows


def rows_rows(a, binaries):
    ds = os.path.join(a.work, "small")
    files = sorted(glob.glob(os.path.join(ds, "*.tfrecord")))
    if not files:
        return None, []
    records = 1_000_000
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    title = f"100-byte rows: {len(files)} shards, {records:,} records, {mb:.0f} MB"
    rows = [Row("`dd bs=4M`, 3 passes (baseline)", dd_cmd(files, 3), records, 3, True, "3")]
    configs = [("planned, global shuffle, 2 threads (mapped)", []),
               ("planned, global shuffle, 2 threads, `--no-mmap`", ["--no-mmap"]),
               ("planned, in order, 2 threads", ["--no-shuffle"]),
               ("streaming (v1 design)", ["--streaming"])]
    for label, flags in configs:
        if a.only and not any(k in label for k in a.only.split("|")):
            continue
        for tag, binary in binaries:
            rows.append(Row(label + tag, bench_cmd(binary, ds, 3, ["--spec", ROWS_SPEC] + flags),
                            records, 3, group="3"))
    return title, rows


def measure(rows, repeats):
    for k in range(repeats):
        for r in rows:
            r.run()
        print(f"  round {k + 1}/{repeats} done (load {process_timing.load_average()[0]:.2f})",
              file=sys.stderr, flush=True)


def table(title, rows):
    """Markdown: each row's fastest run; ratios against the dd row of the
    same pass count, from the same run."""
    dd = {r.group: r for r in rows if r.is_dd}
    out = [f"**{title}**", "",
           "| what | records/s (whole process) | vs dd, whole process (median) | "
           "vs dd, loader's clock | CPU us/record (whole process) | first batch | teardown | "
           "max RSS | shards mapped as 2 MiB pages | load (1 min) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        t, doc = r.best()
        n = r.records * r.passes
        base = dd[r.group]
        bt = base.best()[0]
        if r.is_dd:
            out.append(f"| {r.label} | {n / t.wall:,.0f} | 1.00x ({t.wall:.3f} s; median "
                       f"{r.median_wall():.3f} s) | | {t.cpu * 1e6 / n:.2f} | | | "
                       f"{t.max_rss_mb:.0f} MB | | {r.loads()} |")
            continue
        out.append(
            f"| {r.label} | {n / t.wall:,.0f} | **{bt.wall / t.wall:.2f}x** "
            f"({base.median_wall() / r.median_wall():.2f}x) | {bt.wall / doc['seconds']:.2f}x | "
            f"{t.cpu * 1e6 / n:.2f} | {doc['first_batch_s'] * 1e3:.1f} ms | "
            f"{doc.get('teardown_s', float('nan')) * 1e3:.1f} ms | {t.max_rss_mb:.0f} MB | "
            f"{doc.get('file_huge_mapped_mb', float('nan')):.0f} MB | {r.loads()} |")
    return "\n".join(out)


def ab_summary(rows):
    """For --baseline: after/before per configuration, medians."""
    out = []
    by_label = {r.label: r for r in rows}
    for r in rows:
        if r.label.endswith(" [baseline]") or r.is_dd:
            continue
        b = by_label.get(r.label + " [baseline]")
        if b is None:
            continue
        cpu = statistics.median(t.cpu for t, _ in r.runs)
        cpu_b = statistics.median(t.cpu for t, _ in b.runs)
        out.append(f"- {r.label}: wall {b.median_wall() / r.median_wall():.3f}x faster, "
                   f"CPU {cpu_b / cpu:.3f}x less (medians: {b.median_wall():.3f} -> "
                   f"{r.median_wall():.3f} s, {cpu_b:.3f} -> {cpu:.3f} CPU-s)")
    return "\n".join(out)


def memory(a, binary):
    out = ["**Peak RSS, 1x vs 10x the data** (one epoch, global shuffle; max RSS from outside, "
           "anonymous RSS from `bench --json`)", "",
           "| path | records 1x | max RSS 1x | anonymous 1x | records 10x | max RSS 10x | "
           "anonymous 10x |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, flags in (("mapped (default)", []), ("`--no-mmap`", ["--no-mmap"]),
                         ("streaming", ["--streaming"])):
        cells = []
        for ds, split in ((os.path.join(a.work, "ds"), ["--split", "train"]),
                          (os.path.join(a.work, "x10"), [])):
            t = process_timing.run_timed(bench_cmd(binary, ds, 1, ["--spec", CIFAR_SPEC] + split
                                                   + flags))
            d = json.loads(t.stdout.strip().splitlines()[-1])
            cells += [f"{d['records']:,}", f"{t.max_rss_mb:.1f} MB", f"{d['rss_anon_mb']:.1f} MB"]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def callgrind(a, binaries):
    """Instructions per record under callgrind (1 epoch, global shuffle, 2
    threads), and the top functions. Valgrind emulates no AVX-512: the CRC
    code it runs may differ from the native one."""
    ds = os.path.join(a.work, "ds")
    out = ["**Instructions per record** (`valgrind --tool=callgrind`, 1 epoch of the train split, "
           "global shuffle, 2 threads; valgrind runs the AVX2 code paths, not AVX-512)", ""]
    for tag, binary in binaries:
        f = os.path.join(a.work, f"callgrind{tag.strip().replace(' ', '_') or '_new'}.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={f}"] + bench_cmd(
            binary, ds, 1, ["--split", "train", "--spec", CIFAR_SPEC])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            out.append(f"- {binary}: callgrind failed: {r.stderr.strip()[-300:]}")
            continue
        doc = json.loads(r.stdout.strip().splitlines()[-1])
        total = 0
        for line in open(f):
            if line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split()[1])
        out.append(f"- {binary}{tag}: {total:,} instructions, {doc['records']:,} records: "
                   f"**{total / doc['records']:,.0f} per record** (whole process)")
        ann = subprocess.run(["callgrind_annotate", "--inclusive=no", f], capture_output=True,
                             text=True).stdout.splitlines()
        top = [l for l in ann if l.strip() and l.strip()[0].isdigit()][:12]
        out += ["", "```"] + top + ["```", ""]
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shardfeed", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--sections", default="cifar,rows,memory")
    p.add_argument("--baseline", default="", help="a second shardfeed binary (A/B in one run)")
    p.add_argument("--callgrind", action="store_true")
    p.add_argument("--only", default="", help="rows whose label holds one of these words "
                   "(separated by |, e.g. 'global shuffle|in order')")
    p.add_argument("--markdown", default="", help="also write the tables to this file")
    a = p.parse_args()
    binaries = [("", os.path.abspath(a.shardfeed))]
    if a.baseline:
        binaries.append((" [baseline]", os.path.abspath(a.baseline)))
    sections = a.sections.split(",")
    head = process_timing.machine_line()
    print(head, flush=True)
    out = [f"Machine: {head}", "",
           f"Command: `bench/reader_v2_bench.sh {a.shardfeed} {a.work} {a.repeats}"
           + (f" --baseline {a.baseline}" if a.baseline else "") + "`; fastest of "
           f"{a.repeats} alternating runs per row (median in brackets), whole processes timed "
           "from outside.", ""]
    for name, make in (("cifar", cifar_rows), ("rows", rows_rows)):
        if name not in sections:
            continue
        title, rows = make(a, binaries)
        if not rows:
            print(f"{name}: no data, skipped", file=sys.stderr)
            continue
        for f in {f for r in rows if r.is_dd for f in r.cmd[5:]}:  # warm the page cache
            subprocess.run(["cat", f], stdout=subprocess.DEVNULL, check=True)
        print(f"{title}: {len(rows)} rows x {a.repeats} runs", file=sys.stderr, flush=True)
        measure(rows, a.repeats)
        out += [table(title, rows), ""]
        if a.baseline:
            out += ["A/B (this build vs --baseline, same run):", ab_summary(rows), ""]
        print(out[-2] if not a.baseline else "\n".join(out[-5:]), flush=True)
    if "memory" in sections and os.path.isdir(os.path.join(a.work, "x10")):
        out += [memory(a, binaries[0][1]), ""]
        print(out[-2], flush=True)
    if a.callgrind:
        out += [callgrind(a, binaries), ""]
        print(out[-2], flush=True)
    out.append(f"Load average at the end: {' '.join(f'{x:.2f}' for x in process_timing.load_average())}")
    text = "\n".join(out)
    print("\n===== markdown =====\n" + text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
