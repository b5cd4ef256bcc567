"""Standard input as a source: a thread moves bytes into a buffer the reader drains."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import BinaryIO

MAX_BUFFER = 64 * 1024 * 1024  # back-pressure: the pump waits when the parser lags this much


class StdinSource:
    def __init__(self, stream: BinaryIO | None = None, wake: Callable[[], None] | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdin.buffer
        self._wake = wake or (lambda: None)
        self._buf = bytearray()
        self._cond = threading.Condition()
        self._eof = False
        self._thread = threading.Thread(target=self._pump, name="trainwatch-stdin", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            fd: int | None = self._stream.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        try:
            while True:
                piece = os.read(fd, 1 << 16) if fd is not None else self._stream.read(1 << 16)
                if not piece:
                    break
                with self._cond:
                    while len(self._buf) > MAX_BUFFER:
                        self._cond.wait(0.5)
                    self._buf += piece
                self._wake()
        except (OSError, ValueError):
            pass
        with self._cond:
            self._eof = True
        self._wake()

    def read(self, limit: int) -> tuple[bytes, bool]:
        """Bytes available now (at most `limit`), and True once the stream has ended and been drained."""
        with self._cond:
            data = bytes(self._buf[:limit])
            del self._buf[:limit]
            ended = self._eof and not self._buf
            self._cond.notify_all()
        return data, ended


def keys_from_terminal() -> bool:
    """Free fd 0 for the keyboard when the data comes on it (`tail -F out.log | trainwatch -`).

    Textual reads keys from fd 0; a pipe there leaves the dashboard deaf. The pipe moves to a new
    descriptor behind `sys.stdin` (which `StdinSource` reads) and fd 0 becomes the controlling
    terminal. False when there is none (cron, `ssh host cmd` without -t): the caller runs headless.
    """
    try:
        if os.isatty(0):
            return True
    except OSError:
        return False
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False
    data = os.dup(0)
    os.dup2(tty, 0)
    os.close(tty)
    sys.stdin = open(data, encoding="utf-8", errors="surrogateescape", closefd=True)  # lives as stdin
    return True
