"""The catch-up references, measured in the same run as trainwatch: lnav and toolong on the same file.

lnav: `lnav -n` (headless) asked for the file's line count through its SQL table
`lnav_file`, which it can only answer once it has indexed every line; installed with
`apt-get install -y lnav` when missing and running as root, else skipped with a message.

toolong has no headless mode. What its viewer does before the line count is final is the
line-break scan of `toolong.log_file.LogFile.scan_line_breaks` (mmap + `rfind` from the end),
with the breaks collected as its `NewBreaks` handler does; that scan is timed through its
Python API in a child process of a venv under BENCH_DIR (`pip install toolong`), so the
figure is the index build alone, without the Textual UI drawing anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

TOOLONG_SCAN = """
import sys, threading
from toolong.log_file import LogFile
log = LogFile(sys.argv[1])
log.open(threading.Event())
breaks = []
for _position, batch in log.scan_line_breaks():
    breaks.extend(batch)
log.close()
print(len(breaks))
"""


def timed(cmd: list[str], timeout: float = 900) -> tuple[float, float, int, bytes, float]:
    """Wall seconds, peak RSS (MB), exit code, stdout, and CPU seconds (user + system: on a shared
    machine steadier than the wall time) of the child and its own children (`trainwatch summary`
    builds its store in a second process for a big file). The peak RSS is the sum of each
    process's own peak (VmHWM, sampled every 20 ms; wait4's for a child with no children): never
    less than the peak of the sum, the pages they share counted in each."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    done = threading.Event()
    peaks: dict[int, int] = {}  # the child's and each descendant's peak RSS (kB), by pid
    sampler = threading.Thread(target=_sample_descendants, args=(proc.pid, peaks, done), daemon=True)
    sampler.start()
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    try:
        _pid, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
        done.set()
    wall = time.monotonic() - t0
    reader.join()
    sampler.join()
    cpu = usage.ru_utime + usage.ru_stime  # (the children it waited for included)
    own = peaks.pop(proc.pid, 0)
    # (wait4's peak is the larger of the child's and its descendants': only alone is it the child's)
    rss_kb = max(usage.ru_maxrss, own + sum(peaks.values())) if peaks else usage.ru_maxrss
    return wall, rss_kb / 1024.0, os.waitstatus_to_exitcode(status), b"".join(chunks), cpu


def _sample_descendants(pid: int, peaks: dict[int, int], done: threading.Event) -> None:
    while not done.wait(0.02):
        for child in (pid, *_descendants(pid)):
            hwm = _vm_hwm_kb(child)
            if hwm > peaks.get(child, 0):
                peaks[child] = hwm


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (each thread's `children`: a fork from any of them)."""
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{p}/task/{task}/children") as f:
                    found = [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                continue
            out += found
            todo += found
    return out


def _vm_hwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def lnav_binary() -> str | None:
    """lnav, installed with apt-get when missing and running as root."""
    found = shutil.which("lnav")
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "install", "-y", "-q", "lnav"], env=env, capture_output=True, check=False)
    return shutil.which("lnav")


def lnav(path: Path) -> tuple[float, float, int] | str:
    """(wall s, peak RSS MB, lines indexed), or why not measured."""
    binary = lnav_binary()
    if binary is None:
        return "lnav: not installed"
    query = ";SELECT lines FROM lnav_file"
    wall, rss, code, out, _cpu = timed([binary, "-n", "-c", query, "-c", ":write-csv-to -", str(path)])
    lines = out.split()[-1:] if code == 0 else []
    if not lines or not lines[0].isdigit():
        return f"lnav: exited {code} without a line count"
    return wall, rss, int(lines[0])


def toolong_python(base: Path) -> Path | str:
    """A venv under BENCH_DIR with toolong (built once), or why not."""
    venv = base / "toolong-venv"
    python = venv / "bin" / "python"
    if python.exists() and subprocess.run([python, "-c", "import toolong"], capture_output=True).returncode == 0:
        return python
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True)
    if made.returncode != 0:
        return "toolong: no venv could be made"
    pip = subprocess.run([python, "-m", "pip", "install", "-q", "toolong"], capture_output=True, text=True)
    if pip.returncode != 0:
        return f"toolong: pip install failed ({pip.stderr.strip().splitlines()[-1:]})"
    return python


def toolong(path: Path, base: Path) -> tuple[float, float, int] | str:
    """(wall s, peak RSS MB, lines found) of toolong's line-break scan, or why not measured."""
    python = toolong_python(base)
    if isinstance(python, str):
        return python
    wall, rss, code, out, _cpu = timed([str(python), "-c", TOOLONG_SCAN, str(path)])
    if code != 0 or not out.strip().isdigit():
        return f"toolong: the scan exited {code}"
    return wall, rss, int(out)
