"""The dashboard itself, measured from outside: idle CPU and append-to-screen latency (prints figures; not a test).

    .venv/bin/python tests/bench/dashboard.py [--seconds 25] [--lines 60] [--size 160x45]

The real `trainwatch` command runs in a pseudo-terminal of the given size, exactly as a user
starts it; a thread drains (and timestamps) everything it draws.

1. idle CPU: the dashboard open on a copy of seed 004 (4600 DeepSpeed + Megatron iterations)
   that nobody writes to. After a warm-up, utime + stime of the process (all its threads:
   UI, pipeline, inotify watcher) are read from /proc/PID/stat over `--seconds`.
2. append-to-screen latency: Megatron iteration lines are appended to a followed file at
   random gaps (50-250 ms, so they do not beat in time with any timer); the time a step
   number first appears on the screen as `step N` (the header's progress line) minus the
   time its line was written is that step's latency (a step overtaken by the next one before a
   redraw counts as shown when a later step is). Both clocks are CLOCK_MONOTONIC.
   Run with inotify and with --poll (default interval).
3. busy CPU: as 1, while a writer appends 1000 Megatron lines/s to the file.
4. many files: the dashboard on a directory of 256 per-rank files: idle CPU, CPU while every
   file grows 4 lines/s, and the append-to-screen latency of those steps.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SEED_004 = ROOT.parent / "shared" / "seeds" / "004_ebeb0ca8d46e579b.txt"
LINE = (
    " iteration %8d/ %8d | elapsed time per iteration (ms): 900.0 | learning rate 1.000E-04 |"
    " lm loss %.6E | loss scale 4096.0 |\n"
)  # Megatron-LM, as in /work/shared/seeds/004
TOTAL = 900_000
# CSI / OSC / other escape sequences Textual writes: removed to search the screen's text.
ESCAPES = re.compile(
    rb"\x1b\[[0-9;?<=>!$ ]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]"
)
CLK_TCK = os.sysconf("SC_CLK_TCK")


def trainwatch_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("trainwatch")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "trainwatch.cli"]


class PtyApp:
    """A command in a pseudo-terminal of cols x rows; everything it writes is read and kept with its time."""

    def __init__(self, argv: list[str], cols: int, rows: int) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)}
        env.pop("NO_COLOR", None)
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True, close_fds=True
        )
        os.close(slave)
        self.master = master
        self.chunks: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 1 << 16)
            except OSError:
                return
            if not data:
                return
            now = time.monotonic()
            with self._lock:
                self.chunks.append((now, data))

    def take(self) -> list[tuple[float, bytes]]:
        with self._lock:
            out, self.chunks = self.chunks, []
        return out

    def cpu_s(self) -> float:
        """utime + stime of the process, every thread included (fields 14 and 15 of /proc/PID/stat)."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def cpu_pct_during(self, action: Callable[[], Any]) -> tuple[float, Any]:
        """% of one core the process took while `action` ran, and what the action returned."""
        c0, t0 = self.cpu_s(), time.monotonic()
        out = action()
        c1, t1 = self.cpu_s(), time.monotonic()
        return 100 * (c1 - c0) / (t1 - t0), out

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.write(self.master, b"q")
                self.proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        try:
            os.close(self.master)
        except OSError:
            pass


def idle_cpu(seconds: float, size: tuple[int, int], warmup: float = 10.0, poll: bool = False) -> dict[str, Any]:
    """% of one core the dashboard takes on a file that does not change."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "nohup.out")
        shutil.copyfile(SEED_004, path)
        app = PtyApp([*trainwatch_cmd(), *(["--poll"] if poll else []), path], *size)
        try:
            time.sleep(warmup)  # catch-up, first renders, charts mounted
            app.take()
            cpu, _ = app.cpu_pct_during(lambda: time.sleep(seconds))
            drawn = sum(len(d) for _t, d in app.take())
            alive = app.proc.poll() is None
        finally:
            app.close()
    return {"cpu_pct": cpu, "bytes_per_s": drawn / seconds, "alive": alive}


RATE_WRITER = """
import os, sys, time
LINE = LINE_REPR
path, seconds, rate, first = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
start = time.monotonic(); i = 0
while time.monotonic() - start < seconds:
    os.write(fd, (LINE % (first + i, TOTAL, 2 + i / 1e6)).encode())
    i += 1
    delay = start + i / rate - time.monotonic()
    if delay > 0: time.sleep(delay)
""".replace("LINE_REPR", repr(LINE)).replace("TOTAL", str(TOTAL))


def busy_cpu(seconds: float, size: tuple[int, int], rate: int = 1000, warmup: float = 10.0) -> dict[str, Any]:
    """% of one core the dashboard takes while its file grows `rate` Megatron lines/s."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "nohup.out")
        shutil.copyfile(SEED_004, path)
        app = PtyApp([*trainwatch_cmd(), path], *size)
        try:
            time.sleep(warmup)
            app.take()
            writer = [sys.executable, "-c", RATE_WRITER, path, str(seconds), str(rate), "5000"]
            cpu, _ = app.cpu_pct_during(lambda: subprocess.run(writer, check=True))
            drawn = sum(len(d) for _t, d in app.take())
            alive = app.proc.poll() is None
        finally:
            app.close()
    return {"cpu_pct": cpu, "bytes_per_s": drawn / seconds, "alive": alive}


def screen_latency(n: int, size: tuple[int, int], poll: bool = False, warmup: float = 6.0) -> dict[str, Any]:
    """Write n step lines to a followed file; per step, ms until `step N` shows on the screen."""
    rng = random.Random(8)
    first = 123_000
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "nohup.out")
        with open(path, "w") as f:  # a short history, so the layout is settled before we measure
            for i in range(first - 50, first):
                f.write(LINE % (i, TOTAL, 2 + i / 1e6))
        app = PtyApp([*trainwatch_cmd(), *(["--poll"] if poll else []), path], *size)
        written: dict[int, float] = {}
        try:
            time.sleep(warmup)
            app.take()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            try:
                for i in range(first, first + n):
                    time.sleep(rng.uniform(0.05, 0.25))
                    os.write(fd, (LINE % (i, TOTAL, 2 + i / 1e6)).encode())
                    written[i] = time.monotonic()
            finally:
                os.close(fd)
            time.sleep(1.5)
            chunks = app.take()
            alive = app.proc.poll() is None
        finally:
            app.close()
    lat = step_latencies(chunks, written)
    return {
        "steps": f"{len(lat)}/{n}",
        "p50_ms": pct(lat, 0.5) if lat else float("nan"),
        "p95_ms": pct(lat, 0.95) if lat else float("nan"),
        "max_ms": max(lat) if lat else float("nan"),
        "alive": alive,
    }


MANY_WRITER = """
import json, os, random, sys, time
LINE = LINE_REPR
paths, first, n = sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(9)
fds = [os.open(p, os.O_WRONLY | os.O_APPEND) for p in paths]
written = {}
for i in range(first, first + n):
    time.sleep(rng.uniform(0.15, 0.35))  # 4 lines/s per file on average, never in step with a timer
    written[i] = time.monotonic()  # when the first rank's line went out
    for r, fd in enumerate(fds):
        os.write(fd, (LINE % (i, TOTAL, 2 + i / 1e6 + r * 1e-4)).encode())
print(json.dumps(written))
""".replace("LINE_REPR", repr(LINE)).replace("TOTAL", str(TOTAL))


def many_files(size: tuple[int, int], files: int = 256, seconds: float = 20.0, warmup: float = 20.0) -> dict[str, Any]:
    """The dashboard on a directory of `files` per-rank logs (500 steps of history each): its CPU
    while none changes, then while every file grows 4 lines/s (1024 lines/s in all), and the
    append-to-screen latency of those steps (`step N` in the header)."""
    first = 501
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f"rank_{r}.log") for r in range(files)]
        for r, path in enumerate(paths):
            with open(path, "w") as f:
                f.writelines(LINE % (i, TOTAL, 2 + i / 1e6 + r * 1e-4) for i in range(1, first))
        app = PtyApp([*trainwatch_cmd(), tmp], *size)
        try:
            time.sleep(warmup)  # catch-up of every file, first charts
            app.take()
            idle, _ = app.cpu_pct_during(lambda: time.sleep(seconds))
            app.take()
            writer = [sys.executable, "-c", MANY_WRITER, ",".join(paths), str(first), str(int(seconds * 4))]
            busy, out = app.cpu_pct_during(
                lambda: subprocess.run(writer, capture_output=True, text=True, check=True).stdout
            )
            time.sleep(2.0)
            chunks = app.take()
            alive = app.proc.poll() is None
        finally:
            app.close()
    written = {int(k): v for k, v in __import__("json").loads(out).items()}
    lat = step_latencies(chunks, written)
    return {
        "idle_pct": idle,
        "busy_pct": busy,
        "steps": f"{len(lat)}/{len(written)}",
        "p95_ms": pct(lat, 0.95) if lat else float("nan"),
        "alive": alive,
    }


def time_to_step(path: str, step: int, size: tuple[int, int], timeout: float = 300.0) -> dict[str, Any]:
    """Seconds from starting the dashboard on `path` until its screen shows `step N` (the
    header's progress line) for the given step, and whether "history N%" was on screen then."""
    needle = f"step {step:,}".encode()
    t0 = time.monotonic()
    app = PtyApp([*trainwatch_cmd(), path], *size)
    chunks: list[tuple[float, bytes]] = []
    shown = float("nan")
    try:
        while time.monotonic() - t0 < timeout and app.proc.poll() is None:
            time.sleep(0.05)
            chunks += app.take()
            hit = first_shown(chunks, [(step, needle)])
            if step in hit:
                shown = hit[step] - t0
                break
        screen = b"".join(ESCAPES.sub(b"", d) for _t, d in chunks)
    finally:
        app.close()
    return {"shown_s": shown, "history_on_screen": b"history " in screen}


def step_latencies(chunks: list[tuple[float, bytes]], written: dict[int, float]) -> list[float]:
    """Per step written (step -> monotonic write time), ms until `step N` was on the screen.

    A step replaced on screen by a later one before a redraw is never drawn itself: it was
    shown (as part of the state) when the first later step was."""
    shown = first_shown(chunks, [(i, f"step {i:,}".encode()) for i in written])
    seen: dict[int, float] = {}
    soonest = float("inf")
    for i in sorted(written, reverse=True):
        soonest = min(soonest, shown.get(i, float("inf")))
        if soonest < float("inf"):
            seen[i] = soonest
    return [1000 * (seen[i] - t) for i, t in written.items() if i in seen]


def first_shown(chunks: list[tuple[float, bytes]], needles: list[tuple[int, bytes]]) -> dict[int, float]:
    """For each needle, the time of the output chunk that completed its first appearance."""
    text = b""
    ends: list[tuple[int, float]] = []  # (end offset in text, time)
    for t, data in chunks:
        text += ESCAPES.sub(b"", data)
        ends.append((len(text), t))
    out: dict[int, float] = {}
    for key, needle in needles:
        at = text.find(needle)
        if at < 0:
            continue
        end = at + len(needle)
        out[key] = next(t for e, t in ends if e >= end)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def parse_size(text: str) -> tuple[int, int]:
    cols, rows = text.lower().split("x")
    return int(cols), int(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=25.0, help="length of the idle CPU measurement")
    parser.add_argument("--lines", type=int, default=60, help="lines appended for the latency run")
    parser.add_argument("--size", default="160x45", help="terminal size, COLSxROWS")
    parser.add_argument("--skip", default="", help="comma-separated: idle, busy, many, latency, poll")
    args = parser.parse_args()
    size = parse_size(args.size)
    skip = set(filter(None, args.skip.split(",")))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, {args.size}")
    if "idle" not in skip:
        r = idle_cpu(args.seconds, size)
        print(
            f"dashboard idle CPU (seed 004 copy, {args.seconds:.0f} s): {r['cpu_pct']:.2f} %"
            f"  drawn {r['bytes_per_s']:.0f} B/s  alive {r['alive']}"
        )
    if "busy" not in skip:
        r = busy_cpu(args.seconds, size)
        print(
            f"dashboard CPU, file growing 1000 lines/s ({args.seconds:.0f} s): {r['cpu_pct']:.2f} %"
            f"  drawn {r['bytes_per_s']:.0f} B/s  alive {r['alive']}"
        )
    if "many" not in skip:
        r = many_files(size)
        print(
            f"256 per-rank files: idle CPU {r['idle_pct']:.2f} %  growing 1024 lines/s {r['busy_pct']:.2f} %"
            f"  append-to-screen p95 {r['p95_ms']:.1f} ms (steps {r['steps']})  alive {r['alive']}"
        )
    if "latency" not in skip:
        for poll in (False, True):
            if poll and "poll" in skip:
                continue
            r = screen_latency(args.lines, size, poll=poll)
            mode = "polling" if poll else "inotify"
            print(
                f"append-to-screen [{mode}] steps {r['steps']}  p50 {r['p50_ms']:.1f} ms  p95 {r['p95_ms']:.1f} ms"
                f"  max {r['max_ms']:.1f} ms  alive {r['alive']}"
            )


if __name__ == "__main__":
    main()
