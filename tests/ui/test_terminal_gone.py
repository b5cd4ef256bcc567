"""The terminal goes away under the dashboard (or `compare`) (an SSH session drops, its tmux is killed) and no
SIGHUP ends it: the dashboard exits within seconds instead of spinning on the dead terminal
(Textual's input thread took a whole core of the node, forever). Log: sample_logs' trimmed seed 004."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from pty_app import read_available, reap, spawn

pytestmark = pytest.mark.slow  # the real dashboard in a pty

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "megatron__gpt2_deepspeed.log"


HEALTHY = SAMPLE.parent / "mmengine__runner_cpu_healthy.log"


@pytest.mark.parametrize(
    ("args", "drawn"),
    [
        ([str(SAMPLE)], b"step"),
        (["compare", str(SAMPLE), str(HEALTHY), "--label", "a", "--label", "hot-lr"], b"hot-lr"),
    ],
    ids=["dashboard", "compare"],
)
def test_the_dashboard_exits_when_its_terminal_hangs_up(args: list[str], drawn: bytes) -> None:
    pid, fd = spawn(args, 40, 120, {"TERM": "xterm-256color"}, ignore_hangup=True)
    out = bytearray()
    deadline = time.monotonic() + 30
    while drawn not in out and time.monotonic() < deadline and read_available(fd, out, 0.2):
        pass
    assert drawn in out, "the screen did not start"
    os.close(fd)  # the terminal hangs up; the SIGHUP it sends is ignored
    deadline = time.monotonic() + 10
    status = None
    while time.monotonic() < deadline:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(raw)
            break
        time.sleep(0.1)
    if status is None:
        reap(pid, os.open(os.devnull, os.O_RDONLY))  # (kills it)
    assert status is not None, "still running 10 s after its terminal hung up"
