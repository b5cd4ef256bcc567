"""The Log tab's merged view: the lines of several files of a run interleaved by the timestamps
they start with (ranks side by side), read lazily through each file's line index.

A window of the merge is a k-way merge (heapq.merge) of per-file iterators that read forward in
chunks of lines, never whole files. A line without a timestamp takes the one of the line before
it in its file, so a traceback stays right after the line that led to it. A window is bounded by
two cursors (per file, the first line number it holds / the first line after it), from which the
windows before and after it are read: the lines just before a cursor are, in each file, within
the `count` lines before it, as long as a file's own timestamps do not go backwards.

A file with no timestamp in its first lines is placed at its modification time. Timestamps are compared without their year (glog and mmengine print none): `MM-DD hh:mm:ss.ffffff`.
"""

from __future__ import annotations

import heapq
import os
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

from trainwatch.sources.line_index import LineIndex
from trainwatch.ui.linereader import read_lines

CHUNK = 500  # lines of one file read at a time by a forward merge
MARGIN = 64  # lines read before a cursor to learn the timestamp a continuation line inherits
PEEK = 200  # lines of a file looked at for a timestamp when the merge opens
MAX_LABEL = 16  # characters of a source's label

# What may come before a line's timestamp: spaces, a launcher's rank prefix (`[rank2]:`, `0: `).
_PREFIX = re.compile(r"^\s*(?:\[(?:rank|default)?\d+\]:\s*|\d{1,5}:\s+)?\s*")
_STAMPS = (
    # 2023-05-01 12:00:01,123  [2023-05-01 12:00:01]  2024-01-01T00:00:00.000Z  2024/06/04 12:08:18
    re.compile(r"\[?\d{4}[-/](\d\d)[-/](\d\d)[ T,](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?"),
    # glog: I0501 12:00:01.123456
    re.compile(r"[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?\b"),
    # mmengine: 11/22 05:36:29 - mmengine - INFO
    re.compile(r"(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?\b"),
)


def line_stamp(text: str) -> str | None:
    """The timestamp a line starts with as a sortable `MM-DD hh:mm:ss.ffffff`, or None."""
    start = _PREFIX.match(text)
    at = start.end() if start else 0
    for pattern in _STAMPS:
        m = pattern.match(text, at)
        if m:
            mo, d, h, mi, s, frac = m.groups()
            return f"{mo}-{d} {h}:{mi}:{s}.{(frac or '')[:6]:0<6}"
    return None


@dataclass(frozen=True)
class File:
    """One file of the merge: its path, line index, lines indexed, and label."""

    path: str
    index: LineIndex | None
    lines: int
    label: str
    before: str = ""  # the stamp of the lines before the file's first timestamp


@dataclass(frozen=True)
class Line:
    stamp: str  # "" before the file's first timestamp
    file: int  # index in the merge's files
    no: int
    text: str


@dataclass
class Window:
    """Lines of the merge, with the cursors before (`start`) and after (`end`) them."""

    lines: list[Line]
    start: list[int]
    end: list[int]

    def cursor_at(self, i: int) -> list[int]:
        """Per file, the first line at or after position `i` of the window (else its end)."""
        cursor = list(self.end)
        for line in reversed(self.lines[max(0, i) :]):
            cursor[line.file] = line.no
        return cursor


def _file_lines(k: int, file: File, first: int, last: int, chunk: int = CHUNK) -> Iterator[Line]:
    """Lines first..last of one file (read from MARGIN lines earlier for the stamp they inherit)."""
    stamp, no = file.before, max(1, first - MARGIN)
    while no <= last:
        batch = read_lines(file.path, file.index, no, min(chunk, last - no + 1))
        if not batch:
            return
        for n, text in batch:
            stamp = line_stamp(text) or stamp
            if n >= first:
                yield Line(stamp, k, n, text)
        no = batch[-1][0] + 1


def open_file(path: str, index: LineIndex | None, label: str) -> File:
    """A file of the merge. One without a timestamp in its first lines (a stderr holding a
    traceback) is placed at its modification time, when it was last written, rather than first."""
    lines = index.lines if index is not None else 0
    head = read_lines(path, index, 1, PEEK)
    if any(line_stamp(text) for _, text in head):
        return File(path, index, lines, label)
    when = time.strftime("%m-%d %H:%M:%S.000000", time.localtime(os.stat(path).st_mtime))
    return File(path, index, lines, label, before=when)


def _key(line: Line) -> tuple[str, int, int]:
    return line.stamp, line.file, line.no


def forward(files: Sequence[File], start: Sequence[int], count: int) -> Window:
    """`count` lines of the merge from the cursor `start` on."""
    its = [_file_lines(k, f, start[k], f.lines) for k, f in enumerate(files)]
    lines = list(islice(heapq.merge(*its, key=_key), count))
    end = list(start)
    for line in lines:
        end[line.file] = line.no + 1
    return Window(lines, list(start), end)


def backward(files: Sequence[File], end: Sequence[int], count: int) -> Window:
    """The `count` lines of the merge just before the cursor `end`."""
    its = [_file_lines(k, f, max(1, end[k] - count), end[k] - 1, chunk=count) for k, f in enumerate(files)]
    lines = list(heapq.merge(*its, key=_key))[-count:]
    start = list(end)
    for line in reversed(lines):
        start[line.file] = line.no
    return Window(lines, start, list(end))


def home(files: Sequence[File], count: int) -> Window:
    return forward(files, [1] * len(files), count)


def tail(files: Sequence[File], count: int) -> Window:
    return backward(files, [f.lines + 1 for f in files], count)


def short_labels(names: Sequence[str]) -> list[str]:
    """A short label per source path: the parts that tell them apart (`a0/3/out`, `launcher`)."""
    parts = [os.path.normpath(n).split(os.sep) for n in names]
    common = os.path.commonpath(names).split(os.sep) if len(names) > 1 and all(names) else []
    rel = [p[len(common) :] if len(common) < len(p) else p[-1:] for p in parts]
    nested = [p for p in rel if len(p) > 1]
    shared = set.intersection(*(set(p[:-1]) for p in nested)) if len(nested) > 1 else set()
    out = []
    for p in rel:
        kept = [x for x in p[:-1] if x not in shared] + [os.path.splitext(p[-1])[0] if len(p[-1]) > 4 else p[-1]]
        label = "/".join(_abbrev(x) for x in kept)
        out.append(label if len(label) <= MAX_LABEL else "…" + label[-(MAX_LABEL - 1) :])
    return out


def _abbrev(part: str) -> str:
    m = re.fullmatch(r"attempt_(\d+)", part)
    if m:
        return f"a{m.group(1)}"
    return {"stdout": "out", "stderr": "err"}.get(part, part)
