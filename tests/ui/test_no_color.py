"""NO_COLOR (https://no-color.org): the real dashboard and `summary` in a pseudo-terminal.

Textual honours NO_COLOR with a line filter (textual/app.py: `Monochrome`, or `NoColor` under an ANSI
theme) applied to everything drawn, ours included: every colour becomes a grey. So the check is on
the bytes that reach the terminal: with NO_COLOR=1 no SGR sequence selects a hue (no 16/256-colour
index, every 24-bit colour has r == g == b); without it, the same screens do use hues, so the check
can fail. Log: sample_logs/megatron__gpt2_deepspeed.log (trimmed seed 004).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from pty_app import read_available, reap, spawn

pytestmark = pytest.mark.slow  # the real dashboard and summary in a pty

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "megatron__gpt2_deepspeed.log"
ROWS, COLS = 40, 120
_SGR = re.compile(rb"\x1b\[([0-9;:]*)m")


def hues(out: bytes) -> list[str]:
    """The colour selections in SGR sequences that are not greys."""
    found: list[str] = []
    for m in _SGR.finditer(out):
        params = [int(p) if p.isdigit() else 0 for p in re.split(rb"[;:]", m.group(1))] if m.group(1) else [0]
        i = 0
        while i < len(params):
            p = params[i]
            if p in (38, 48) and i + 1 < len(params) and params[i + 1] == 5:
                found.append(f"{p};5;{params[i + 2] if i + 2 < len(params) else '?'}")
                i += 3
            elif p in (38, 48) and i + 1 < len(params) and params[i + 1] == 2:
                r, g, b = [*params[i + 2 : i + 5], 0, 0, 0][:3]
                if not r == g == b:
                    found.append(f"{p};2;{r};{g};{b}")
                i += 5
            else:
                if 30 <= p <= 37 or 40 <= p <= 47 or 90 <= p <= 97 or 100 <= p <= 107:
                    found.append(str(p))
                i += 1
    return found


def _run(args: list[str], no_color: bool, keys: tuple[tuple[float, bytes], ...]) -> bytes:
    """Run `python -m trainwatch ARGS` in a 120x40 xterm-256color pty; send each key after its wait."""
    env = {"TERM": "xterm-256color", "COLORTERM": "truecolor", **({"NO_COLOR": "1"} if no_color else {})}
    pid, fd = spawn(args, ROWS, COLS, env, drop=("NO_COLOR", "TEXTUAL", "FORCE_COLOR"))
    out = bytearray()
    try:
        for wait, key in keys:
            if not read_available(fd, out, wait):
                break
            os.write(fd, key)
        read_available(fd, out, 2.0)
    finally:
        reap(pid, fd)
    return bytes(out)


DASHBOARD_KEYS = ((3.0, b"6"), (1.0, b"1"), (0.8, b"q"))


@pytest.fixture(scope="module")
def dashboards() -> dict[bool, bytes]:
    return {flag: _run([str(SAMPLE)], flag, DASHBOARD_KEYS) for flag in (False, True)}


def test_dashboard_without_no_color_uses_hues(dashboards: dict[bool, bytes]) -> None:
    assert len(dashboards[False]) > 2000
    assert hues(dashboards[False])  # the check below is not vacuous


def test_dashboard_with_no_color_draws_in_greys_only(dashboards: dict[bool, bytes]) -> None:
    out = dashboards[True]
    assert len(out) > 2000 and b"phase split over the run" in out  # it drew, the phases tab too
    assert b"Traceback" not in out
    assert hues(out) == []


def test_summary_with_no_color_in_a_terminal_has_no_colour() -> None:
    out = _run(["summary", str(SAMPLE)], True, ())
    assert b"megatron" in out and b"Traceback" not in out
    assert hues(out) == []
