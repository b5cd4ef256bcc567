"""The real dashboard in a real pseudo-terminal: nothing from a hostile log reaches the terminal.

`trainwatch LOG` runs in a pty (TERM=xterm-256color, 120x40) on
sample_logs/hostile__megatron_osc52_title_markup.log (real Megatron/DeepSpeed lines from seed
004 with OSC 52 clipboard writes, title changes, 8-bit CSI/OSC, DCS, cursor/screen sequences,
Rich markup, NUL, invalid UTF-8 and a bidi override mixed in); more hostile lines are appended
while it runs. Every byte the app writes is collected until `q` ends it.

Textual emits escape sequences of its own (cursor, SGR, mouse modes, maybe a title), so the
assertions are about what came from the log: its payloads (`aGVsbG8=`, `pwned`, the DCS
request) must appear in no escape sequence, and no clipboard write or 8-bit control is emitted.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from pty_app import quit_and_reap, read_available, reap, spawn

pytestmark = pytest.mark.slow  # the real dashboard in a pty

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "hostile__megatron_osc52_title_markup.log"
ROWS, COLS = 40, 120

# More real lines (seed 004's iteration 20 and its timers) carrying payloads, written while it runs.
LIVE = (
    b"\x1b]0;pwned\x07 iteration       20/ 1000000 | elapsed time per iteration (ms): 914.4 |"
    b" learning rate 3.000E-07 | lm loss 1.097034E+01 | loss scale 4096.0 |\x1b]52;c;aGVsbG8=\x07\n"
    b"time (ms) | forward: 305.92 | backward: 519.07 | allreduce: 0.00 | optimizer: 83.02 |"
    b" batch generator: 1.55 | data loader: 0.20\xc2\x9d52;c;aGVsbG8=\xc2\x9c\n"
    b"[/][@click=app.quit][/] \x1b]2;pwned\x1b\\\xc2\x90+q544e\xc2\x9c\n"
)

# Escape sequences in the output: OSC / DCS / SOS / PM / APC strings (7-bit), CSI, others.
_STRING_SEQ = re.compile(rb"\x1b[\]PX^_].*?(?:\x07|\x1b\\|(?=\x1b)|$)", re.S)
_CSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]")
PAYLOADS = (b"aGVsbG8=", b"pwned", b"+q544e", b"544e")


def _run_dashboard(log: Path) -> tuple[bytes, int | None]:
    """Run `trainwatch LOG` in a pty; returns everything it wrote and its exit status after `q`
    (None: still running 5 s after `q`, then killed)."""
    pid, fd = spawn([str(log)], ROWS, COLS, {"TERM": "xterm-256color"}, drop=("NO_COLOR", "TEXTUAL"))
    out = bytearray()
    alive = False
    try:
        alive = read_available(fd, out, 4.0)
        os.write(fd, b"4")  # the raw log tab: every hostile line rendered as text
        alive = alive and read_available(fd, out, 1.5)
        with log.open("ab") as f:
            f.write(LIVE)
        alive = alive and read_available(fd, out, 2.5)
    except BaseException:
        reap(pid, fd)
        raise
    status = quit_and_reap(pid, fd, out, alive, 5)  # first: it collects the last frames into `out`
    return bytes(out), status


@pytest.fixture(scope="module")
def dashboard_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, int | None]:
    log = tmp_path_factory.mktemp("pty") / "hostile.log"
    log.write_bytes(SAMPLE.read_bytes())
    return _run_dashboard(log)


def test_dashboard_writes_nothing_from_the_log_to_the_terminal(dashboard_run: tuple[bytes, int | None]) -> None:
    out, _status = dashboard_run
    assert len(out) > 2000  # it did draw a dashboard
    assert b"Traceback" not in out and b"MarkupError" not in out
    # no clipboard write and no 8-bit controls (as UTF-8 or as raw bytes) at all
    assert b"\x1b]52" not in out
    for c1 in (b"\xc2\x9b", b"\xc2\x9d", b"\xc2\x90", b"\xc2\x9c"):
        assert c1 not in out
    # none of the log's payloads inside any escape sequence the app wrote
    for seq in _STRING_SEQ.findall(out) + _CSI.findall(out):
        for payload in PAYLOADS:
            assert payload not in seq, seq
    # the payloads were removed with their sequences, so they are not even visible text
    assert b"aGVsbG8=" not in out
    assert b"pwned" not in out
    # and the log's markup is shown as the literal text it is (not styled, not an action)
    visible = _CSI.sub(b"", out).decode("utf-8", "replace")
    assert "[/][@click=app.quit][/] " in visible  # the live line, on the raw log tab


def test_q_quits_the_dashboard_cleanly(dashboard_run: tuple[bytes, int | None]) -> None:
    out, status = dashboard_run
    assert status == 0, f"exit status {status} (None: still running 5 s after q); output tail: {out[-800:]!r}"
