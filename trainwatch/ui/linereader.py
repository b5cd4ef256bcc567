"""Read lines of a log file by number, or scan the whole file for a pattern — in a worker
thread, never on the UI thread. Lines are numbered as the pipeline numbers them (1-based, split
on \\n) and made inert with the same sanitizer as ingest. With the source's sparse line index a
read seeks to the nearest indexed line and reads forward: never from line 1."""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

from trainwatch.lines.sanitize import sanitize
from trainwatch.sources.line_index import LineIndex

MAX_SHOWN = 4096  # characters of one line shown
SCAN_CHUNK = 8 * 1024 * 1024  # bytes read at a time by a whole-file scan
MAX_HITS = 1_000_000  # line numbers a search keeps (8 MB); beyond, it only counts
MAX_KEPT = 10_000  # lines a filter keeps to show; beyond, it only counts


def clean(raw: bytes) -> str:
    text = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", errors="replace")
    if "\r" in text:
        text = text.rsplit("\r", 1)[-1]
    return sanitize(text[:MAX_SHOWN])


def read_lines(path: str, index: LineIndex | None, first: int, count: int) -> list[tuple[int, str]]:
    """Lines first..first+count-1 of the file (fewer at its end), from the nearest indexed offset."""
    first = max(1, first)
    no, offset = index.locate(first) if index is not None else (1, 0)
    out: list[tuple[int, str]] = []
    with open(path, "rb") as f:
        f.seek(offset)
        for raw in f:
            if no >= first:
                if not raw.endswith(b"\n") and index is not None and no > index.lines:
                    break  # a line still being written: not shown until whole, as the pipeline does
                out.append((no, clean(raw)))
                if len(out) >= count:
                    break
            no += 1
    return out


@dataclass(frozen=True)
class Needle:
    """What a search looks for: plain text (case-insensitive unless `case`) or a regex."""

    text: str
    regex: bool = False
    case: bool = False

    @property
    def folds(self) -> bool:
        """Plain and case-insensitive: matched on the lowered bytes (bytes.lower keeps every
        offset and is far faster than an IGNORECASE regex)."""
        return not self.regex and not self.case

    def text_pattern(self) -> re.Pattern[str]:
        """The same match over decoded lines (the lines a view holds). Raises re.error."""
        return re.compile(self.text if self.regex else re.escape(self.text), 0 if self.case else re.IGNORECASE)

    def pattern(self) -> re.Pattern[bytes]:
        if self.folds:
            return re.compile(re.escape(self.text.lower().encode()))
        source = self.text.encode() if self.regex else re.escape(self.text.encode())
        return re.compile(source, 0 if self.case else re.IGNORECASE)


@dataclass
class Scan:
    """What a whole-file scan found: every matching line counted, their numbers (up to
    MAX_HITS) and, for a filter, the first MAX_KEPT lines themselves."""

    count: int = 0
    hits: array[int] = field(default_factory=lambda: array("q"))
    kept: list[tuple[int, str]] = field(default_factory=list)
    done: bool = False  # False: cancelled before the end


def scan(
    path: str,
    needle: Needle,
    keep: bool = False,
    progress: Callable[[float], None] = lambda _: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> Scan:
    """Every line of the file matching `pattern`: the regex runs over big chunks (C speed);
    only the matching lines are numbered (by counting newlines between hits)."""
    out = Scan()
    pattern, folds = needle.pattern(), needle.folds
    with open(path, "rb") as f:
        size = max(1, f.seek(0, 2))
        f.seek(0)
        no = 1  # number of the line starting at `base` in the file
        carry = b""
        while True:
            if cancelled():
                return out
            piece = f.read(SCAN_CHUNK)
            chunk = carry + piece
            if not piece:
                end = len(chunk)
            else:
                end = chunk.rfind(b"\n") + 1
                if not end:
                    carry = chunk
                    continue
            counted, pos = 0, 0  # newlines of chunk[:counted] are in `no`
            haystack = chunk.lower() if folds else chunk
            while pos < end:
                m = pattern.search(haystack, pos, end)
                if m is None:
                    break
                start = chunk.rfind(b"\n", 0, m.start()) + 1
                stop = chunk.find(b"\n", m.start(), end)
                stop = end if stop < 0 else stop
                no += chunk.count(b"\n", counted, start)
                counted = start
                out.count += 1
                if len(out.hits) < MAX_HITS:
                    out.hits.append(no)
                if keep and len(out.kept) < MAX_KEPT:
                    out.kept.append((no, clean(chunk[start:stop])))
                pos = stop + 1
            no += chunk.count(b"\n", counted, end)
            carry = chunk[end:]
            progress(min(1.0, f.tell() / size))
            if not piece:
                break
    out.done = True
    return out
