"""`tail -F out.log | trainwatch -`: the data comes on stdin, the keys from the terminal.

Textual reads keys from fd 0; with a pipe there the dashboard used to draw and then ignore every
key (only Ctrl+C ended it). These run the real command with a pipe on stdin, in a pty that stays
the controlling terminal (as a shell pipeline does), and with no terminal at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pty_app import quit_and_reap, read_until, reap, spawn

pytestmark = pytest.mark.slow  # the real command in a pty and on a pipe

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_logs" / "megatron__gpt2_deepspeed.log"
ENV = {"TERM": "xterm-256color"}
DROP = ("NO_COLOR", "TEXTUAL")


def test_keys_work_when_the_log_comes_on_a_pipe() -> None:
    read_end, write_end = os.pipe()
    pid, fd = spawn(["-"], 40, 140, ENV, drop=DROP, stdin=read_end)
    os.close(read_end)
    out = bytearray()
    try:
        os.write(write_end, SAMPLE.read_bytes()[:200_000])  # the pipe stays open: a live stream
        assert read_until(fd, out, b"deepspeed, megatron", 30), bytes(out[-600:])
        os.write(fd, b"?")  # the help screen: a key was read
        assert read_until(fd, out, b"trainwatch keys", 15), bytes(out[-600:])
        os.write(fd, b"\x1b")  # closed again
        read_until(fd, out, b"\x00never", 1.0)
        mark = len(out)
        os.write(fd, b"2")  # the Ranks tab
        assert read_until(fd, out, b"straggler", 10) or b"rank" in out[mark:], bytes(out[-600:])
    except BaseException:
        os.close(write_end)
        reap(pid, fd)
        raise
    status = quit_and_reap(pid, fd, out, True, 10)  # `q`, with stdin still open
    os.close(write_end)
    assert status == 0, bytes(out[-800:])


def test_no_terminal_at_all_falls_back_to_the_summary_and_says_so() -> None:
    """No controlling terminal (a new session) and stdout a terminal: no keys can be read, so the
    dashboard is not drawn; the summary is printed once the input ends, and stderr says why."""
    main, tty = os.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "trainwatch", "-"],
            input=SAMPLE.read_bytes()[:200_000],
            stdout=tty,
            stderr=subprocess.PIPE,
            start_new_session=True,  # no controlling terminal: /dev/tty cannot be opened
            timeout=120,
            env={k: v for k, v in os.environ.items() if k not in DROP} | ENV,
        )
        os.close(tty)
        tty = -1
        screen = bytearray()
        read_until(main, screen, b"\x00never", 2)
    finally:
        if tty >= 0:
            os.close(tty)
        os.close(main)
    assert proc.returncode == 0, proc.stderr
    assert b"no terminal to read keys from" in proc.stderr
    assert b"step 23000 of 1000000" in screen  # the summary, on the terminal
