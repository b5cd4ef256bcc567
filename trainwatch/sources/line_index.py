"""A sparse line-offset index of one file: the byte offset of every `step`th line, built from
the bytes the reader already reads, so the Log tab can open any line of a big file by seeking
to the nearest indexed line and reading forward at most `step` lines — never from line 1.

Memory is bounded by `max_entries`, not by the file: when the index fills, every other entry is
dropped and the step doubles. The reader thread feeds it; the UI reads it from other threads,
so every access holds its lock.
"""

from __future__ import annotations

import threading
from array import array

STEP = 1000  # lines between indexed offsets, to start with
MAX_ENTRIES = 1 << 16  # at most this many offsets (512 KiB): then the step doubles
_SCAN = 64 * 1024  # bytes counted at a time when looking for an indexed line's start


class LineIndex:
    """Offsets of lines 1, 1 + step, 1 + 2*step ... of the bytes fed since the last reset."""

    def __init__(self, step: int = STEP, max_entries: int = MAX_ENTRIES) -> None:
        self._lock = threading.Lock()
        self._first_step = step
        self._max = max(2, max_entries)
        self.epoch = 0  # bumped by every reset: a reader's cached lines are stale when it moved
        self._reset()

    def _reset(self) -> None:
        self._step = self._first_step
        self._offsets = array("q", [0])  # _offsets[i]: byte offset of line i * step + 1
        self._newlines = 0  # complete lines seen
        self._size = 0  # bytes fed

    def reset(self) -> None:
        """The file's content starts again (truncated, rewritten, another file at the path)."""
        with self._lock:
            self._reset()
            self.epoch += 1

    def feed(self, data: bytes) -> None:
        """The next bytes of the file, in order."""
        with self._lock:
            step, pos, end = self._step, 0, len(data)
            while pos < end:
                # The next indexed line starts after newline number `want` (counted from the file start).
                want = len(self._offsets) * step
                need = want - self._newlines
                stop = min(end, pos + _SCAN)
                here = data.count(b"\n", pos, stop)
                if here < need:
                    self._newlines += here
                    pos = stop
                    continue
                cut = _nth_newline(data, pos, stop, need)  # index of that newline
                self._newlines += need
                self._add(self._size + cut + 1)
                step = self._step
                pos = cut + 1
            self._size += end

    def _add(self, offset: int) -> None:
        self._offsets.append(offset)
        if len(self._offsets) > self._max:  # thin out: keep lines 1, 1 + 2*step, ...
            self._offsets = self._offsets[::2]
            self._step *= 2

    def locate(self, line_no: int) -> tuple[int, int]:
        """(number, byte offset) of the indexed line nearest at or before `line_no` (1-based)."""
        with self._lock:
            i = min(max(0, (line_no - 1) // self._step), len(self._offsets) - 1)
            return i * self._step + 1, self._offsets[i]

    @property
    def lines(self) -> int:
        """Complete lines (ended by a newline) indexed so far."""
        with self._lock:
            return self._newlines

    @property
    def size(self) -> int:
        """Bytes indexed so far."""
        with self._lock:
            return self._size

    @property
    def step(self) -> int:
        with self._lock:
            return self._step

    @property
    def entries(self) -> int:
        with self._lock:
            return len(self._offsets)


def _nth_newline(data: bytes, start: int, stop: int, n: int) -> int:
    """Index of the `n`th (1-based) newline of data[start:stop], which holds at least n:
    halve the range by counting (C speed) rather than finding newlines one by one."""
    lo, hi = start, stop
    while hi - lo > 256:
        mid = (lo + hi) // 2
        c = data.count(b"\n", lo, mid)
        if c >= n:
            hi = mid
        else:
            n -= c
            lo = mid
    at = lo - 1
    for _ in range(n):
        at = data.index(b"\n", at + 1, hi)
    return at
