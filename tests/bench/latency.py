"""Ingestion latency and CPU while following (prints figures; not a test).

    .venv/bin/python tests/bench/latency.py [--seconds 5]

1. append-to-record latency: a writer process appends Megatron iteration lines, each in two torn
   pieces 5 ms apart (block-buffered stdout), and notes when each line's final piece was written;
   the Pipeline follows the file in a thread and notes when each step record reaches its sink.
   Both clocks are CLOCK_MONOTONIC (system-wide). Target: p95 <= 100 ms.
2. CPU of this process (all threads: pipeline loop, inotify watcher) following an idle file, and a
   file growing 1000 lines/s.
Each is run with inotify and with polling (--poll, default interval).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from trainwatch.pipeline import Pipeline
from trainwatch.records import Record, Step

LINE = (
    " iteration %8d/ %8d | elapsed time per iteration (ms): 900.0 | learning rate 1.000E-04 |"
    " lm loss %.6E | loss scale 4096.0 |\n"
)  # Megatron-LM, as in /work/shared/seeds/004

TORN_WRITER = (
    """
import json, os, sys, time
LINE = LINE_REPR
path, n, gap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
done = {}
for i in range(1, n + 1):
    data = (LINE % (i, 100000, 2 + i / 1e6)).encode()
    cut = data.index(b"lm loss") + 10          # tear inside the number
    os.write(fd, data[:cut]); time.sleep(0.005)
    os.write(fd, data[cut:]); done[i] = time.monotonic()
    time.sleep(gap)
print(json.dumps(done))
"""
).replace("LINE_REPR", repr(LINE))

RATE_WRITER = (
    """
import os, sys, time
LINE = LINE_REPR
path, seconds, rate = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
start = time.monotonic(); i = 0
while time.monotonic() - start < seconds:
    i += 1
    os.write(fd, (LINE % (i, 100000, 2 + i / 1e6)).encode())
    next_at = start + i / rate
    delay = next_at - time.monotonic()
    if delay > 0: time.sleep(delay)
"""
).replace("LINE_REPR", repr(LINE))


def follow(path: str, force_poll: bool) -> tuple[Pipeline, dict[int, float]]:
    arrived: dict[int, float] = {}

    def sink(batch: list[Record]) -> None:
        now = time.monotonic()
        for r in batch:
            if isinstance(r, Step) and r.step is not None:
                arrived.setdefault(r.step, now)

    pipeline = Pipeline([path], sink=sink, force_poll=force_poll)
    pipeline.start()
    return pipeline, arrived


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency(force_poll: bool, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "nohup.out")
        open(path, "wb").close()
        pipeline, arrived = follow(path, force_poll)
        time.sleep(0.3)  # let the watch start
        out = subprocess.run(
            [sys.executable, "-c", TORN_WRITER, path, str(n), "0.02"], capture_output=True, check=True, text=True
        ).stdout
        written = {int(k): v for k, v in json.loads(out).items()}
        deadline = time.monotonic() + 5
        while len(arrived) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        mode = pipeline.store.sources[path].follow_mode
        pipeline.stop()
    lat = [1000 * (arrived[i] - written[i]) for i in written if i in arrived]
    return {
        "mode": mode,
        "steps": f"{len(lat)}/{n}",
        "p50_ms": statistics.median(lat),
        "p95_ms": pct(lat, 0.95),
        "max_ms": max(lat),
    }


def cpu(force_poll: bool, seconds: float, rate: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "nohup.out")
        open(path, "wb").close()
        # As the dashboard runs it: no record sink (a sink, as `follow`'s that times arrivals, keeps
        # every read on the per-line path: `bulk_ok`)
        pipeline = Pipeline([path], force_poll=force_poll)
        pipeline.start()
        time.sleep(0.3)
        writer = None
        if rate:
            writer = subprocess.Popen([sys.executable, "-c", RATE_WRITER, path, str(seconds), str(rate)])
        c0, t0 = time.process_time(), time.monotonic()
        time.sleep(seconds)
        c1, t1 = time.process_time(), time.monotonic()
        if writer is not None:
            writer.wait()
        mode = pipeline.store.sources[path].follow_mode
        steps = sum(pipeline.store.step_records.values())
        pipeline.stop()
    return {"mode": mode, "lines/s": rate, "cpu_pct": 100 * (c1 - c0) / (t1 - t0), "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each CPU measurement")
    parser.add_argument("--lines", type=int, default=200, help="torn lines written for the latency run")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print("\nappend-to-record latency (each line written in two torn pieces 5 ms apart, one line / 25 ms)")
    for poll in (False, True):
        r = latency(poll, args.lines)
        print(
            f"  {r['mode']:<10} steps {r['steps']:>8}  p50 {r['p50_ms']:6.1f} ms  p95 {r['p95_ms']:6.1f} ms"
            f"  max {r['max_ms']:6.1f} ms"
        )
    print(f"\nCPU of the following process over {args.seconds:.0f} s")
    for poll in (False, True):
        for rate in (0, 1000):
            r = cpu(poll, args.seconds, rate)
            what = "idle file" if rate == 0 else f"{rate} lines/s"
            print(f"  {r['mode']:<10} {what:<14} cpu {r['cpu_pct']:5.1f} %   (steps parsed: {r['steps']})")


if __name__ == "__main__":
    main()
