"""The real `trainwatch` in a pseudo-terminal, for tests that check the bytes it sends to it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Iterable, Mapping


def spawn(
    args: list[str],
    rows: int,
    cols: int,
    env: Mapping[str, str],
    drop: Iterable[str] = (),
    stdin: int | None = None,
    ignore_hangup: bool = False,
) -> tuple[int, int]:
    """`python -m trainwatch ARGS` in a ROWSxCOLS pty with `env` on top of ours (less `drop`):
    (pid, the terminal's fd). `stdin`: a descriptor (a pipe's read end) to take the terminal's
    place on fd 0, the terminal staying the controlling one (`tail -F log | trainwatch -`).
    `ignore_hangup`: the command starts with SIGHUP ignored (as under `nohup`, or a `make` that
    did not pass the hangup on)."""
    pid, fd = pty.fork()
    if pid == 0:  # child: size the terminal, then the real command
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        if ignore_hangup:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        if stdin is not None:
            os.dup2(stdin, 0)
        full = {k: v for k, v in os.environ.items() if k not in set(drop)}
        full.update(env, COLUMNS=str(cols), LINES=str(rows))
        os.execve(sys.executable, [sys.executable, "-m", "trainwatch", *args], full)
    return pid, fd


def read_available(fd: int, out: bytearray, seconds: float) -> bool:
    """Collect output for `seconds`; False once the child closed the terminal."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return False
            if not chunk:
                return False
            out += chunk
    return True


def reap(pid: int, fd: int) -> int | None:
    """The child's exit code if it has ended, else None after killing it; closes the terminal."""
    try:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(raw)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return None
    finally:
        os.close(fd)


def quit_and_reap(pid: int, fd: int, out: bytearray, alive: bool, seconds: float) -> int | None:
    """Press `q` (if the dashboard is still up), collect what it writes while it ends, and return
    its exit code (None: still running `seconds` after `q`, then killed); closes the terminal."""
    status: int | None = None
    try:
        if alive:
            os.write(fd, b"q")
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                read_available(fd, out, 0.1)
                done, raw = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = os.waitstatus_to_exitcode(raw)
                    _drain(fd, out, 2.0)
                    break
    finally:
        if status is None:
            status = reap(pid, fd)
        else:
            os.close(fd)
    return status


def _drain(fd: int, out: bytearray, seconds: float) -> None:
    """Collect what an ended child left in the terminal's buffer (its last frame, cut where a
    read happened to stop otherwise), until the terminal reports its end or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and read_available(fd, out, 0.1):
        pass


def read_until(fd: int, out: bytearray, needle: bytes, seconds: float) -> bool:
    """Collect output until `needle` is in it (True), or `seconds` passed or the child closed
    the terminal (False)."""
    deadline = time.monotonic() + seconds
    while needle not in out and time.monotonic() < deadline:
        if not read_available(fd, out, 0.2):
            return needle in out
    return needle in out


def run_to_exit(
    args: list[str], rows: int, cols: int, env: Mapping[str, str], drop: Iterable[str] = (), seconds: float = 60
) -> tuple[bytes, int | None]:
    """A command that ends by itself (summary, check, export) in a pty: all it wrote, and its
    exit code (None: still running after `seconds`, then killed)."""
    pid, fd = spawn(args, rows, cols, env, drop)
    out = bytearray()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and read_available(fd, out, 0.2):
        pass
    while time.monotonic() < deadline:  # the terminal is closed: the child is ending
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            _drain(fd, out, 2.0)
            os.close(fd)
            return bytes(out), os.waitstatus_to_exitcode(raw)
        time.sleep(0.05)
    return bytes(out), reap(pid, fd)
