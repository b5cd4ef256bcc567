"""Where a big file's tail window starts: the present of a long log is in its last megabytes.

The dashboard reads this window first (the header shows the current status, step and ETA at
once) and the history from byte 0 behind it (`feeds.Backfill`); `check` decides from the
window alone when its end says enough (`views/check_tail.py`). The window starts at a line
start, so no line is read torn.
"""

from __future__ import annotations

import os

WINDOW_BYTES = 4 * 1024 * 1024  # the tail window: thousands of steps of any common log
_SCAN = 64 * 1024  # bytes read at a time looking for the window's first line start


def window_start(path: str, window: int = WINDOW_BYTES) -> int:
    """The byte the last `window` bytes of `path` begin at, moved forward to a line start
    (0: the file is no larger than the window, or cannot be read, or has no line break there)."""
    try:
        size = os.stat(path).st_size
        if size <= window:
            return 0
        with open(path, "rb") as f:
            at = size - window
            while at < size:
                f.seek(at)
                chunk = f.read(_SCAN)
                if not chunk:
                    return 0
                cut = chunk.find(b"\n")
                if cut >= 0:
                    start = at + cut + 1
                    return start if start < size else 0
                at += len(chunk)
    except OSError:
        return 0
    return 0
