"""Timestamps at the start of log lines -> ISO-8601 local time (no zone: logs rarely say)."""

from __future__ import annotations

import re

_PATTERNS = (
    # [2024-02-20 09:49:52,918]  2024-02-20 09:49:52.918  2024/06/04 12:08:18  2024-02-20T09:49:52
    re.compile(r"^\[?(\d{4})[-/](\d{2})[-/](\d{2})[ T,](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,6}))?"),
    # 2024-02-20,09:55:01 | INFO   (open_clip / EVA)
    re.compile(r"^(\d{4})-(\d{2})-(\d{2}),(\d{2}):(\d{2}):(\d{2})()"),
)


def line_time(text: str) -> str | None:
    """The timestamp a line starts with, or None. Only the line start is examined."""
    if not text or not (text[0].isdigit() or text[0] == "["):
        return None
    for pattern in _PATTERNS:
        m = pattern.match(text)
        if m:
            y, mo, d, h, mi, s, frac = m.groups()
            iso = f"{y}-{mo}-{d}T{h}:{mi}:{s}"
            if frac:
                iso += "." + frac
            return iso
    return None
