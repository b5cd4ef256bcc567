"""The follow path's cost of one followed file's one-line append: read, parse, store.

The dashboard on 256 per-rank files growing 4 lines/s each (`make bench`, "many files") spends
most of its follow thread on 1,024 such reads a second. This measures that work alone, with no
watcher, UI or judging: files of Megatron iteration lines, one line appended to each, then each
file's feed pumped once (as a wake-up's round does), over many rounds.

    python tests/bench/append_cost.py                # CPU per read (this thread's time; the machine's speed moves it)
    python tests/bench/append_cost.py --instructions # per read by valgrind's instruction count (deterministic, ~20 s)

The instruction count runs this script twice under valgrind (no rounds, then N rounds) and
divides the difference: what changes between two commits shows there, whatever the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dashboard import LINE, TOTAL  # (the bench's Megatron line)

from trainwatch.pipeline import Pipeline
from trainwatch.sources.schedule import ROUND_BUDGET


def rounds_cost(files: int, history: int, rounds: int) -> list[float]:
    """Seconds of this thread's CPU per round of `files` one-line reads, sorted."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f"rank_{r}.log") for r in range(files)]
        for r, path in enumerate(paths):
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(LINE % (i, TOTAL, 2 + i / 1e6 + r * 1e-4) for i in range(1, history + 1))
        pipeline = Pipeline([tmp])
        feeds = list(pipeline.readers.values())
        for feed in feeds:
            while feed.pump():
                pass
            if feed.tail is not None:
                feed.tail.path_events = True  # as under the directory watcher
        fds = [os.open(p, os.O_WRONLY | os.O_APPEND) for p in paths]

        def one(i: int) -> float:
            for r, fd in enumerate(fds):
                os.write(fd, (LINE % (i, TOTAL, 2 + i / 1e6 + r * 1e-4)).encode())
            start = time.thread_time()
            for feed in feeds:
                feed.pump(ROUND_BUDGET)
            return time.thread_time() - start

        first = history + 1
        for i in range(first, first + 10):  # the shapes learned, the caches warm
            one(i)
        costs = sorted(one(i) for i in range(first + 10, first + 10 + rounds))
        for fd in fds:
            os.close(fd)
        pipeline.stop()
    return costs


def instructions(files: int, history: int, rounds: int) -> float:
    def run(n: int) -> int:
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
        cmd += [sys.executable, __file__, "--files", str(files), "--history", str(history), "--rounds", str(n)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
        m = re.search(r"I\s+refs:\s+([\d,]+)", out)
        assert m is not None, out[-500:]
        return int(m.group(1).replace(",", ""))

    return (run(rounds) - run(0)) / (rounds * files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=256)
    parser.add_argument("--history", type=int, default=500, help="lines each file holds before the rounds")
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--instructions", action="store_true", help="valgrind's instruction count per read")
    args = parser.parse_args()
    if args.instructions:
        files, history, rounds = min(args.files, 64), min(args.history, 50), min(args.rounds, 40)
        per = instructions(files, history, rounds)
        print(f"one-line read, parse and store: {per:,.0f} instructions ({files} files, {rounds} rounds)")
        return
    costs = rounds_cost(args.files, args.history, args.rounds)
    if not costs:
        return
    p25 = costs[len(costs) // 4]
    print(
        f"one-line read, parse and store: {p25 / args.files * 1e6:.1f} us (p25 of {args.rounds} rounds"
        f" of {args.files} files; fastest {costs[0] / args.files * 1e6:.1f} us)"
    )


if __name__ == "__main__":
    main()
