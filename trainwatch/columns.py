"""Column blocks: runs of `Phases`/`Step` records of hot lines, as columns (a kernel type).

The parsers' catch-up path (`parsers/bulk.py`, `parsers/runner/catchup.py`) fills them and the
store appends them in one call per series; like `records.py`, this module imports neither side.
A block's rows keep line order per (rank, shape); the shapes are the parsers' line templates,
seen here only through `RowShape`. A `Step` record the per-line path emits while a block is open
(DeepSpeed's timestamped `step=N` line, merged with its timer and iteration lines) may join the
block as a row of its own (`ColumnBlock.take_step`) instead of closing it.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Protocol


class StepRecord(Protocol):
    """What a block needs of a `records.Step` (a sibling module: not imported)."""

    @property
    def source(self) -> str: ...
    @property
    def rank(self) -> int | None: ...
    @property
    def step(self) -> int | None: ...
    @property
    def time(self) -> str | None: ...
    @property
    def metrics(self) -> Mapping[str, float]: ...
    @property
    def host(self) -> str | None: ...
    @property
    def attempt(self) -> int: ...


class RowShape(Protocol):
    """What a block needs of a line shape (`parsers.bulk.BulkTemplate` is one)."""

    @property
    def kind(self) -> str:
        """ "phases" (rows are `Phases`) or "step" (rows are `Step`)."""

    @property
    def names(self) -> tuple[str, ...]:
        """The series a row feeds, in column order."""

    @property
    def needed(self) -> tuple[int, ...]:
        """The row groups whose texts become the columns."""

    def columns(self, raw: Mapping[int, Sequence[str]]) -> list[list[float]]:
        """Per name, the floats of the texts of the needed groups."""

    def portable(self) -> RowShape:
        """The same columns, as another process can read them (no parser in it: the store's
        process, `store/worker.py`)."""


@dataclass(frozen=True)
class PackedTexts:
    """The texts of runs of rows, one string per needed group (a column block's texts bound for
    the store's process, `store/worker.py`): joined while the slice's strings are in the CPU's
    cache, and a few strings cross to the other process, not a million. A number's text holds
    no newline."""

    count: int
    joined: Mapping[int, str]

    @classmethod
    def of(cls, texts: Sequence[Mapping[int, Sequence[str]]], needed: tuple[int, ...]) -> PackedTexts:
        count = sum(len(t[needed[0]]) for t in texts) if needed else 0
        return cls(count, {g: "\n".join(chain.from_iterable(t[g] for t in texts)) for g in needed})

    def unpack(self) -> dict[int, list[str]]:
        texts = {g: text.split("\n") if self.count else [] for g, text in self.joined.items()}
        if any(len(t) != self.count for t in texts.values()):
            raise ValueError("a column's texts held a newline: they cannot be packed")
        return texts


@dataclass(eq=False)
class ColumnGroup:
    """The rows of one (rank, shape) in a block, as floats per name (values, then extras).
    Rank None: a log where no rank reports progress."""

    rank: int | None
    template: RowShape
    first: int  # row order in the block
    last: int = 0
    steps: list[int | None] = field(default_factory=list)
    rows: list[tuple[str, ...]] = field(default_factory=list)  # rows added one by one, not yet converted
    rows_at: list[int] = field(default_factory=list)  # block row numbers (step rows only)
    times: list[str | None] | None = None  # log times of record rows (`RecordShape`); template rows have none
    _texts: list[Mapping[int, Sequence[str]] | PackedTexts] = field(default_factory=list)  # runs not yet converted
    _values: list[MutableSequence[float]] = field(default_factory=list)

    def add_texts(self, raw: Mapping[int, Sequence[str]]) -> None:
        """Rows given as the texts of each needed group: kept until `convert` (the catch-up
        converts after each slice it scans: one call per column for all the runs of the slice,
        while those strings are still fresh in the CPU cache, and then frees them)."""
        if self.rows:
            self._rows_to_texts()
        self._texts.append(raw)

    def pack(self) -> None:
        """The texts kept since the last `pack` become one `PackedTexts` (converted later, by the
        store's process: `convert` unpacks them)."""
        if self.rows:
            self._rows_to_texts()
        k = len(self._texts)
        while k and not isinstance(self._texts[k - 1], PackedTexts):
            k -= 1
        loose = self._texts[k:]
        if loose:
            self._texts[k:] = [PackedTexts.of(loose, self.template.needed)]  # type: ignore[arg-type]

    def convert(self) -> None:
        """The texts kept so far become floats, in row order."""
        if self.rows:
            self._rows_to_texts()
        kept = self._texts
        if not kept:
            return
        self._texts = []
        texts = [t.unpack() if isinstance(t, PackedTexts) else t for t in kept]
        if len(texts) > 1:
            texts = [{g: list(chain.from_iterable(t[g] for t in texts)) for g in self.template.needed}]
        self._extend(self.template.columns(texts[0]))

    def columns(self) -> list[MutableSequence[float]]:
        """Per name, the floats of every row in order (rows added one by one included)."""
        self.convert()
        if not self._values:
            self._values = [[] for _ in self.template.names]
        return self._values

    def _rows_to_texts(self) -> None:
        cols = list(zip(*self.rows, strict=True))
        self.rows = []
        self._texts.append({g: cols[g] for g in self.template.needed})

    def _extend(self, columns: list[list[float]]) -> None:
        if not self._values:
            self._values = [*columns]
            return
        for mine, more in zip(self._values, columns, strict=True):
            mine.extend(more)

    def __len__(self) -> int:
        return len(self.steps)

    # A group crosses to the store's process (`store/worker.py`) as what the store reads of it:
    # its shape portable, converted columns as arrays of doubles (bytes, not one float at a time),
    # texts not yet converted packed. The copy is for the store only: no row can be added to it.
    def __getstate__(self) -> dict[str, object]:
        self.pack()
        state = dict(vars(self))
        state["template"] = self.template.portable()
        if not isinstance(self.template, RecordShape):  # (a record's values stay as given: an int an int)
            state["_values"] = [array("d", col) for col in self._values]
        return state


@dataclass(frozen=True, eq=False)
class RecordShape:
    """The shape of one `Step` record taken into a block: its metric names, values given."""

    names: tuple[str, ...]
    kind: str = "step"
    needed: tuple[int, ...] = ()

    def columns(self, raw: Mapping[int, Sequence[str]]) -> list[list[float]]:
        raise TypeError("a record row has its values already")

    def portable(self) -> RecordShape:
        return self


class ColumnBlock:
    """Records of hot lines in columns, in line order per (rank, template): what a run of
    `Phases`/`Step` records would add to the store, added in one call per series.

    Only the store understands it: a pipeline with other sinks (export) stays per line."""

    __slots__ = ("_records", "_series_of", "attempt", "groups", "rows", "source", "step_order")

    def __init__(self, source: str, attempt: int) -> None:
        self.source = source
        self.attempt = attempt
        self.groups: dict[tuple[int | None, RowShape], ColumnGroup] = {}
        self.rows = 0
        self.step_order: dict[int | None, list[int]] = {}  # rank -> steps of step rows, in line order
        self._series_of: dict[tuple[int | None, str, str], RowShape] = {}
        self._records: dict[tuple[int | None, tuple[str, ...]], ColumnGroup] = {}  # (rank, names) -> record rows

    def __len__(self) -> int:
        return self.rows

    def group(self, rank: int | None, template: RowShape) -> ColumnGroup | None:
        """The group rows of (rank, template) go to; None if another template of this block
        feeds one of its series (its rows would interleave: the block must be closed first)."""
        kind = "phase" if template.kind == "phases" else "metric"
        for name in template.names:
            other = self._series_of.get((rank, kind, name))
            if other is not None and other is not template:
                return None
        for name in template.names:
            self._series_of[(rank, kind, name)] = template
        g = self.groups[(rank, template)] = ColumnGroup(rank, template, self.rows)
        return g

    def take_step(self, record: StepRecord) -> bool:
        """Add `record` as a row at this point of the block, if the store can take it in columns:
        a step of a known rank of this source and attempt, no host. False
        (nothing done) otherwise: the block must be closed before it."""
        rank, step, metrics = record.rank, record.step, record.metrics
        if (
            rank is None
            or step is None
            or record.host is not None
            or record.source != self.source
            or record.attempt != self.attempt
        ):
            return False
        self.add_record(rank, step, record.time, metrics, self.rows)
        self.step_order.setdefault(rank, []).append(step)
        self.rows += 1
        return True

    def add_record(self, rank: int | None, step: int, time: str | None, metrics: Mapping[str, float], row: int) -> None:
        """A step record's values as a row at block row `row` (the caller keeps `rows` and
        `step_order`): records of the same names share a group, one per (rank, names)."""
        names = tuple(metrics)
        group = self._records.get((rank, names))
        if group is None:
            shape = RecordShape(names)
            group = ColumnGroup(rank, shape, row, row, [step], rows_at=[row], times=[time])
            group._values = [[v] for v in metrics.values()]  # (as given: the latest values keep their type)
            self.groups[(rank, shape)] = group
            self._records[(rank, names)] = group
        else:
            group.steps.append(step)
            group.rows_at.append(row)
            group.times.append(time)  # type: ignore[union-attr]
            group.last = row
            for col, value in zip(group._values, metrics.values(), strict=True):
                col.append(value)

    def convert(self) -> None:
        """Every group's kept texts become floats (see `ColumnGroup.add_texts`)."""
        for g in self.groups.values():
            g.convert()

    def pack(self) -> None:
        """Every group's kept texts packed (`ColumnGroup.pack`)."""
        for g in self.groups.values():
            g.pack()

    def owner_of(self, rank: int | None, kind: str, name: str) -> RowShape | None:
        """The template feeding that series in this block, if any."""
        return self._series_of.get((rank, kind, name))

    def ordered(self) -> list[ColumnGroup]:
        return sorted(self.groups.values(), key=lambda g: g.first)

    # A block crosses to the store's process (`store/worker.py`) as what the store reads of it
    # (`ColumnGroup.__getstate__`): no row can be added to the copy.
    def __getstate__(self) -> tuple[object, ...]:
        return (self.source, self.attempt, self.rows, self.step_order, list(self.groups.values()))

    def __setstate__(self, state: tuple[object, ...]) -> None:
        self.source, self.attempt, self.rows, self.step_order, groups = state  # type: ignore[assignment]
        self.groups = {(g.rank, g.template): g for g in groups}  # type: ignore[attr-defined]
        self._series_of = {}
        self._records = {}


def merged_latest(
    groups: Sequence[ColumnGroup], columns: dict[int, list[MutableSequence[float]]]
) -> list[tuple[str, float]]:
    """(name, value) updates in the order and with the last values sequential updates give."""
    out: dict[str, tuple[int, float]] = {}
    for g in groups:  # by first row: new keys appear in that order
        cols = columns[id(g)]
        for name, col in zip(g.template.names, cols, strict=True):
            prev = out.get(name)
            if prev is None or g.last > prev[0]:
                out[name] = (g.last, col[-1])
    return [(name, value) for name, (_row, value) in out.items()]
