"""`trainwatch compare A B` in a real pseudo-terminal: both runs' labels on one screen, and `q`
ends it with exit code 0. Logs: two real mmengine runs of the same model (healthy, diverging lr)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pty_app import quit_and_reap, read_available, read_until, reap, spawn

pytestmark = pytest.mark.slow  # the real app in a pty

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
HEALTHY = SAMPLES / "mmengine__runner_cpu_healthy.log"
DIVERGING = SAMPLES / "mmengine__runner_cpu_diverging_lr.log"
ROWS, COLS = 40, 140


def test_compare_draws_both_runs_on_one_screen_and_quits_with_q() -> None:
    args = ["compare", str(HEALTHY), str(DIVERGING), "--label", "baseline", "--label", "hot-lr"]
    pid, fd = spawn(args, ROWS, COLS, {"TERM": "xterm-256color"}, drop=("NO_COLOR", "TEXTUAL"))
    out = bytearray()
    try:
        alive = read_until(fd, out, b"hot-lr", 20.0) and read_available(fd, out, 2.0)
    except BaseException:
        reap(pid, fd)
        raise
    code = quit_and_reap(pid, fd, out, alive, 10.0)
    assert b"baseline" in out and b"hot-lr" in out
    assert b"Runs" in out and b"Traceback" not in out
    assert code == 0
