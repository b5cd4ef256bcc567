"""A live byte stream as a source: stdin, a FIFO or `/dev/fd/N` (process substitution).

A thread moves bytes into a buffer the reader drains, so the follow loop never blocks on a
pipe. A named stream is opened in that thread: opening a FIFO for reading blocks until a
writer opens it, and a non-blocking open would read end-of-file before any writer came.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import BinaryIO

MAX_BUFFER = 64 * 1024 * 1024  # back-pressure: the pump waits when the parser lags this much
PIECE = 1 << 16


class StreamSource:
    """Bytes of one stream as they arrive: from an open binary `stream` (stdin) or a `path` opened here."""

    def __init__(
        self, stream: BinaryIO | None = None, path: str | None = None, wake: Callable[[], None] | None = None
    ) -> None:
        if (stream is None) == (path is None):
            raise ValueError("a stream source reads either an open stream or a path")
        self._stream = stream
        self._path = path
        self._wake = wake or (lambda: None)
        self._buf = bytearray()
        self._cond = threading.Condition()
        self._eof = False
        self.error = ""  # why the stream could not be read (said once it has ended)
        self._thread = threading.Thread(target=self._pump, name="trainwatch-stream", daemon=True)
        self._thread.start()

    def _fd(self) -> int | None:
        """The descriptor to read: the path opened (blocks until a FIFO has a writer), or the stream's own."""
        if self._path is not None:
            return os.open(self._path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        assert self._stream is not None
        try:
            return self._stream.fileno()
        except (AttributeError, OSError, ValueError):
            return None

    def _pump(self) -> None:
        fd: int | None = None
        try:
            fd = self._fd()
            while True:
                piece = os.read(fd, PIECE) if fd is not None else self._read_stream()
                if not piece:
                    break
                with self._cond:
                    while len(self._buf) > MAX_BUFFER:
                        self._cond.wait(0.5)
                    self._buf += piece
                self._wake()
        except (OSError, ValueError) as exc:
            self.error = f"cannot read: {exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        finally:
            if fd is not None and self._path is not None:
                os.close(fd)
        with self._cond:
            self._eof = True
        self._wake()

    def _read_stream(self) -> bytes:
        assert self._stream is not None
        return self._stream.read(PIECE)

    def read(self, limit: int) -> tuple[bytes, bool]:
        """Bytes available now (at most `limit`), and True once the stream has ended and been drained."""
        with self._cond:
            data = bytes(self._buf[:limit])
            del self._buf[:limit]
            ended = self._eof and not self._buf
            self._cond.notify_all()
        return data, ended
