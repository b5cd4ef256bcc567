"""What every record-file reader shares: the interface, the file watchers and the key vocabulary.

A record file (TensorBoard events, `metrics.csv`, `trainer_state.json`...) holds metrics already
split into fields, so it skips the line path and its parsers: a reader turns the file's new
content into `Step` records, incrementally, and says whether more is waiting.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from trainwatch.names import CANONICAL, snake
from trainwatch.records import Step


@dataclass(slots=True)
class Got:
    """What one read found."""

    records: list[Step] = field(default_factory=list)
    more: bool = False  # more is waiting right now (the read stopped at its byte budget)
    got_data: bool = False
    note: str | None = None  # the newest thing to say about the file, if any


class RecordReader(Protocol):
    """One record file (or MLflow metrics directory) read as it grows."""

    kind: str  # shown as the source's format

    def read(self, limit: int) -> Got:
        """The records written since the last read (up to about `limit` bytes)."""

    def quiet(self) -> bool:
        """Unchanged since it was read (one stat): a safety poll may skip it."""

    def close(self) -> None: ...


def canonical(key: str) -> str:
    """A field's metric name: the project's canonical names where the meaning is certain, else snake_case."""
    name = snake(key)
    return CANONICAL.get(name, name)


def number(value: object) -> float | None:
    """A metric value: numbers and numeric strings (`"nan"` included); never booleans."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def step_of(value: object) -> int | None:
    got = number(value)
    return int(got) if got is not None and math.isfinite(got) else None


def metrics_of(
    entry: Mapping[str, object], skip: frozenset[str], name: Callable[[str], str] = canonical
) -> dict[str, float]:
    """The numeric fields of one entry under their metric names, `skip`ped keys left out."""
    out: dict[str, float] = {}
    for key, value in entry.items():
        if key in skip:
            continue
        got = number(value)
        if got is not None:
            out[name(key)] = got
    return out


def ident(st: os.stat_result) -> tuple[int, int, int, float]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime)


class Appended:
    """The bytes appended to a file since the last read. A file that shrank or was replaced
    starts again (`restarted`): append-only writers (JSON lines, MLflow) wrote it anew."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self._file: tuple[int, int] | None = None
        self._seen: tuple[int, int, int, float] | None = None

    def read(self, limit: int) -> tuple[bytes, bool, bool]:
        """(new bytes, the file started again, more is waiting)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return b"", False, False
        restarted = False
        if self._file is not None and ((st.st_dev, st.st_ino) != self._file or st.st_size < self.offset):
            self.offset, restarted = 0, True
        self._file = (st.st_dev, st.st_ino)
        if st.st_size == self.offset:
            self._seen = ident(st)
            return b"", restarted, False
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read(limit)
        except OSError:
            return b"", restarted, False
        self.offset += len(data)
        more = self.offset < st.st_size
        self._seen = None if more else ident(st)
        return data, restarted, more

    def quiet(self) -> bool:
        try:
            return self._seen is not None and ident(os.stat(self.path)) == self._seen
        except OSError:
            return False


class Rewritten:
    """A file rewritten whole (`trainer_state.json`, a `metrics.csv` whose header grew): its
    bytes each time it changed (inode, size or mtime), else None."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._seen: tuple[int, int, int, float] | None = None

    def read(self) -> bytes | None:
        try:
            st = os.stat(self.path)
            if ident(st) == self._seen:
                return None
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        self._seen = ident(st)
        return data

    def forget(self) -> None:
        """Read it again next time (what was read was half-written)."""
        self._seen = None

    def quiet(self) -> bool:
        try:
            return self._seen is not None and ident(os.stat(self.path)) == self._seen
        except OSError:
            return False
