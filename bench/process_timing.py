"""Whole processes timed from outside, and the machine line every benchmark
prints beside its figures.

run_timed(cmd) starts `cmd`, waits for it with wait4() and returns what
/usr/bin/time would print: wall seconds (from before the fork to after the
reap: start-up, mapping, teardown and exit included), user and system CPU
seconds of the process and every child it reaped, and its peak RSS; plus the
1-minute load average when it started. machine() gives the CPU model, the
flags that change which code runs (AVX2, AVX-512, VPCLMULQDQ, SHA, BMI2),
the core count and the load average. Standard library only: the harnesses
run under any python3.
"""
import os
import platform
import subprocess
import tempfile
import time

# /proc/cpuinfo names of the flags that decide which CRC32C, JPEG and resize
# code runs (sha_ni is the SHA extensions' name there).
FLAGS = ("sse4_2", "pclmulqdq", "avx2", "bmi2", "avx512f", "vpclmulqdq", "sha_ni")


class Timed:
    """One finished process: wall, user, sys (s), max_rss_mb, rc, stdout,
    stderr, load1 (the 1-minute load average when it started)."""

    def __init__(self, wall, user, sys_, max_rss_mb, rc, stdout, stderr, load1):
        self.wall, self.user, self.sys = wall, user, sys_
        self.max_rss_mb, self.rc = max_rss_mb, rc
        self.stdout, self.stderr, self.load1 = stdout, stderr, load1

    @property
    def cpu(self):
        return self.user + self.sys


def load_average():
    """The 1-, 5- and 15-minute load averages."""
    with open("/proc/loadavg") as f:
        return tuple(float(x) for x in f.read().split()[:3])


def run_timed(cmd, env=None, check=True):
    """Runs cmd (a list) to its end; a Timed. Output goes through temporary
    files (no pipe a full buffer could stall). check: raise on a non-zero
    exit, with the tail of its stderr."""
    load1 = load_average()[0]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    t = Timed(wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss / 1024.0, p.returncode, stdout, stderr,
              load1)
    if check and t.rc != 0:
        raise RuntimeError(f"{os.path.basename(str(cmd[0]))} exited with {t.rc}: "
                           f"{stderr.strip()[-2000:]}")
    return t


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "?"


def cpu_flags():
    """{flag: present} for FLAGS."""
    have = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                have = set(line.split(":", 1)[1].split())
                break
    return {name: name in have for name in FLAGS}


def machine():
    flags = cpu_flags()
    return {"cpu": cpu_model(), "cores": os.cpu_count(),
            "flags": " ".join(f if on else f"no-{f}" for f, on in flags.items()),
            "load": load_average(), "kernel": platform.release()}


def machine_line():
    m = machine()
    return (f"CPU: {m['cpu']}, {m['cores']} cores; flags: {m['flags']}; "
            f"load average {m['load'][0]:.2f} {m['load'][1]:.2f} {m['load'][2]:.2f}; "
            f"kernel {m['kernel']}; {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
