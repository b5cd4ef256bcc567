"""`open --notify` in a real pseudo-terminal: the notification's bytes reach the terminal once.

The dashboard runs on a healthy torchrun log (sample_logs/ranks__torchrun_tee3_crash.log up to its
first traceback, timestamps moved to now); the rest of the log (real tracebacks) is appended while
it runs. With `--notify` (settle 0 s: the test need not wait the default 30 s) the terminal gets
the bell, one OSC 9 and one OSC 777; without it, neither, though the run reads crashed all the same.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from pty_app import quit_and_reap, read_available, read_until, reap, spawn

CRASH_LOG = Path(__file__).resolve().parents[2] / "sample_logs" / "ranks__torchrun_tee3_crash.log"
HEALTHY_LINES = 32
STAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]")
ROWS, COLS = 40, 140
OSC9 = b"\x1b]9;"


def _run(log: Path, notify: bool) -> bytes:
    now = time.strftime("[%Y-%m-%d %H:%M:%S]")
    lines = STAMP.sub(now, CRASH_LOG.read_text()).splitlines(keepends=True)
    log.write_text("".join(lines[:HEALTHY_LINES]))
    args = ["open", *(["--notify", "--notify-settle", "0"] if notify else []), str(log)]
    pid, fd = spawn(args, ROWS, COLS, {"TERM": "xterm-256color"}, drop=("NO_COLOR", "TEXTUAL"))
    out = bytearray()
    try:
        alive = read_until(fd, out, b"RUNNING", 15.0) and read_available(fd, out, 2.0)
        with log.open("a") as f:
            f.write("".join(lines[HEALTHY_LINES:]))
        alive = alive and read_until(fd, out, OSC9 if notify else b"CRASHED", 15.0)
        alive = alive and read_available(fd, out, 3.0)  # later judgements: nothing told again
    except BaseException:
        reap(pid, fd)
        raise
    quit_and_reap(pid, fd, out, alive, 5)
    return bytes(out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, bytes]:
    folder = tmp_path_factory.mktemp("notify")
    return {flag: _run(folder / f"train-{flag}.log", flag) for flag in (True, False)}


def test_with_notify_the_terminal_gets_one_notification(runs: dict[bool, bytes]) -> None:
    out = runs[True]
    assert out.count(OSC9) == 1
    assert out[out.index(OSC9) - 1 : out.index(OSC9)] == b"\x07"  # the bell rang just before
    osc9 = out[out.index(OSC9) :].split(b"\x07", 1)[0]
    assert b"crashed" in osc9 and b"RuntimeError: simulated failure on rank 3" in osc9
    assert out.count(b"\x1b]777;notify;trainwatch: crashed") == 1


def test_without_notify_the_terminal_gets_none(runs: dict[bool, bytes]) -> None:
    out = runs[False]
    assert b"CRASHED" in out  # the run did turn crashed on screen
    assert OSC9 not in out and b"\x1b]777;" not in out
