"""The store: every record the parsers produced, organised for the views.

Written by one ingest thread: records through `add_many`, each source's state through the methods
of its `SourceState`; both hold `lock`. Read by the UI on timers and by `summary`: readers hold
`lock` while they copy what they need. `version` grows with every batch of records and every source
added or dropped, so a view can skip work when nothing changed.
"""

from __future__ import annotations

import math
import re
import threading
import time as _time
from array import array
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from trainwatch.columns import ColumnBlock, ColumnGroup, merged_latest
from trainwatch.records import Event, Phases, Profile, Record, Step
from trainwatch.store.series import DEFAULT_CAPACITY, Series

if TYPE_CHECKING:
    from trainwatch.sources.line_index import LineIndex

T = TypeVar("T")
MAX_EVENTS = 20_000
MAX_PROFILES = 200
CADENCE_WINDOW = 256
RECENT_LINES = 5_000  # raw lines kept per source for the dashboard's log pane
_NAN = array("d", [math.nan])  # times of template rows: no log time


class SeriesKey(NamedTuple):
    source: str
    rank: int | None
    kind: str  # "metric" | "phase"
    name: str
    # The node, when the log names it (pdsh `worker-1: `, srun task `task1`, `node1_rank7.out`):
    # local rank 0 of two nodes in one file is two streams, not one.
    host: str | None = None

    @property
    def owner(self) -> RankKey:
        return RankKey(self.source, self.rank, self.host)


class RankKey(NamedTuple):
    source: str
    rank: int | None
    host: str | None = None

    def series_key(self, kind: str, name: str) -> SeriesKey:
        return SeriesKey(self.source, self.rank, kind, name, self.host)


def key_order(key: RankKey | SeriesKey) -> tuple[tuple[str | int, ...], tuple[str | int, ...], int]:
    """Sources, then nodes, then ranks: `task0` ranks 0, 1 before `task1` ranks 0, 1; numbers in
    names in numeric order (`rank_2.log` before `rank_10.log`)."""
    return (natural(key.source), natural(key.host or ""), -1 if key.rank is None else key.rank)


@lru_cache(maxsize=4096)
def natural(name: str) -> tuple[str | int, ...]:
    """A sort key that orders the digit runs of a name by their value."""
    return tuple(int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(name)))  # odd: digit runs


_DIGITS = re.compile(r"(\d+)")


@dataclass
class SourceState:
    """What the views show about one source besides its records.

    The ingest thread changes it only through the methods below, which hold `lock` (the store's):
    the dashboard copies the raw-line ring under the same lock, never while it changes."""

    source: str
    path: str | None = None
    follow_mode: str = ""  # "inotify", "polling (nfs)", "stdin", "" (read once)
    size: int = 0
    offset: int = 0
    catching_up: bool = False
    # When the reader first reached the end of what was already written (monotonic clock).
    # Steps stored after it were seen arriving live, whatever the log's own clock says.
    caught_up_monotonic: float | None = None
    mtime: float | None = None
    last_data_monotonic: float | None = None  # when bytes last arrived (live follow)
    last_data_wall: float | None = None
    formats: list[str] = field(default_factory=list)
    lines: int = 0
    not_understood: int = 0
    duplicate_steps: int = 0
    parser_errors: int = 0
    ranks_seen: set[int] = field(default_factory=set)  # ranks the text mentions (barriers, prefixes)
    note: str = ""  # a problem to show: unreadable, truncated, rotated...
    ended: bool = False  # stdin closed / file read to the end without follow
    # While the dashboard shows a big file's tail window first: the share of the history before
    # it read so far (0..1); None once the store holds the whole file (or no window was used).
    history: float | None = None
    # Last sanitized lines as (line_no, text), appended by the reader thread; the UI copies
    # it (`lines()`) instead of reading the file again.
    recent: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=RECENT_LINES))
    # The file's sparse line-offset index, fed by the reader thread (thread-safe; None for a
    # stream, which has no file to read again: the ring is all the Log tab has).
    line_index: LineIndex | None = field(default=None, repr=False, compare=False)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    # ------------------------------------------------------------------ write
    def add_lines(self, lines: Iterable[tuple[int, str]]) -> None:
        """Complete lines (or a marker, numbered 0) for the raw-log ring."""
        with self.lock:
            self.recent.extend(lines)

    def read_progress(
        self, *, size: int, offset: int, mtime: float | None, catching_up: bool, got_data: bool, note: str | None
    ) -> None:
        """What a read found. A note replaces the last one; data ends a "waiting for the file" note."""
        with self.lock:
            if got_data:
                self.last_data_wall = _time.time()
                self.last_data_monotonic = _time.monotonic()
            if note is not None:
                self.note = note
            elif got_data and self.note.startswith("waiting"):
                self.note = ""
            self.size, self.offset, self.mtime, self.catching_up = size, offset, mtime, catching_up

    def caught_up(self) -> None:
        """The reader reached the end of what was written: steps stored after this arrived live."""
        if self.caught_up_monotonic is not None:
            return  # (set once, never unset: no lock taken after every read of a followed file)
        with self.lock:
            if self.caught_up_monotonic is None:
                self.caught_up_monotonic = _time.monotonic()

    def parse_counts(
        self,
        *,
        formats: list[str],
        lines: int,
        not_understood: int,
        duplicate_steps: int,
        parser_errors: int,
        ranks_seen: Iterable[int],
    ) -> None:
        """The parser's counts, copied after a read that parsed something."""
        with self.lock:
            self.formats, self.lines, self.not_understood = formats, lines, not_understood
            self.duplicate_steps, self.parser_errors, self.ranks_seen = duplicate_steps, parser_errors, set(ranks_seen)

    def set_path(self, path: str | None) -> None:
        with self.lock:
            self.path = path

    def set_follow_mode(self, mode: str) -> None:
        """How the source is followed: "inotify", "polling (nfs)", "stdin" ("" when read once)."""
        with self.lock:
            self.follow_mode = mode

    def note_if_none(self, note: str) -> bool:
        """Say `note` unless something is said already; True if it was."""
        with self.lock:
            if self.note:
                return False
            self.note = note
            return True

    def history_read(self, fraction: float | None) -> None:
        """How much of the history behind the tail window is read (None: all of it is in the store)."""
        with self.lock:
            self.history = fraction

    def end(self) -> None:
        """Nothing more will be read."""
        with self.lock:
            self.ended, self.catching_up = True, False

    # ------------------------------------------------------------------- read
    def lines_now(self) -> list[tuple[int, str]]:
        """A copy of the raw-log ring."""
        with self.lock:
            return list(self.recent)

    def last_line_no(self) -> int | None:
        with self.lock:
            return self.recent[-1][0] if self.recent else None


def history_pending(sources: Iterable[SourceState]) -> float | None:
    """The share of the history read while the store holds big files' tail windows (the
    dashboard shows the present first); None: the store holds every line read."""
    shares = [s.history for s in sources if s.history is not None]
    return min(shares) if shares else None


@dataclass
class StepObservation:
    step: int | None
    log_time: float  # epoch seconds from the log line, nan if none
    seen: float  # time.monotonic() when ingested


def iso_to_epoch(iso: str | None) -> float:
    if not iso:
        return math.nan
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return math.nan


@lru_cache(maxsize=256)
def _epoch(iso: str) -> float:
    """Records of one line share its timestamp: parse it once."""
    return iso_to_epoch(iso)


_NOT_RECORDS = frozenset({"lock", "version", "sources", "_derived", "_seen"})


class Store:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.lock = threading.RLock()
        self.version = 0
        self.capacity = capacity
        self.series: dict[SeriesKey, Series] = {}
        self.latest: dict[RankKey, dict[str, float]] = {}
        self.latest_step: dict[RankKey, int] = {}
        self.latest_phases: dict[RankKey, dict[str, float]] = {}
        self.step_records: Counter[RankKey] = Counter()
        self.observations: dict[RankKey, deque[StepObservation]] = {}
        self.last_log_time: dict[RankKey, float] = {}
        self.first_log_time: float = math.nan
        self.events: deque[Event] = deque(maxlen=MAX_EVENTS)
        self.event_counts: Counter[str] = Counter()
        self.profiles: deque[Profile] = deque(maxlen=MAX_PROFILES)
        self.sources: dict[str, SourceState] = {}
        self.ranks: set[int] = set()
        self.total_steps: int | None = None
        # Run segments (README "attempt"): the newest attempt any record belongs to, the attempt
        # of each rank stream's newest step, and each stream's first/last step per attempt.
        self.current_attempt = 0
        self.key_attempt: dict[RankKey, int] = {}
        self.attempt_span: dict[tuple[int, RankKey], tuple[int, int]] = {}
        self.records_added = 0
        self._by_owner: dict[tuple[str, int | None, str, str | None], dict[str, Series]] = {}
        # (kind, name) -> every rank's series of it, in the order they appeared: a chart asks
        # for one metric of 256 ranks several times a second, not for a scan of every series.
        self._by_name: dict[tuple[str, str], dict[SeriesKey, Series]] = {}
        self._derived: dict[str, tuple[int, object]] = {}
        self._seen: float | None = None  # (`add_many`)

    # ------------------------------------------------------------------ write
    def source(self, name: str) -> SourceState:
        """The state of source `name`, made when it is new."""
        with self.lock:
            state = self.sources.get(name)
            if state is None:
                state = self.sources[name] = SourceState(name, lock=self.lock)
                self.version += 1
            return state

    def drop_source(self, name: str) -> None:
        """Source `name` is no longer read (a PATH that turned out to be a directory)."""
        with self.lock:
            self.sources.pop(name, None)
            self.version += 1

    def add_many(self, records: Iterable[Record | ColumnBlock], seen: float | None = None) -> None:
        """Records, and the column blocks of the catch-up path (the same records, in columns).
        seen: when the reader delivered them (monotonic clock), if not now (`store/worker.py`)."""
        with self.lock:
            self._seen = seen
            try:
                for record in records:
                    if type(record) is ColumnBlock:
                        self.extend(record)
                    else:
                        self._add(record)  # type: ignore[arg-type]
            finally:
                self._seen = None
            self.version += 1

    def add_parts(self, parts: Iterable[Step]) -> None:
        """Metrics of steps already stored, arrived later from another file of the same run
        (`sources/records/join.py`): their points and latest values, not another step (no
        step count, no cadence observation: the step did not happen twice)."""
        with self.lock:
            for part in parts:
                key = RankKey(part.source, part.rank, part.host)
                t = _epoch(part.time) if part.time is not None else math.nan
                self.records_added += 1
                self._add_step(part, key, t, part_of_stored=True)
            self.version += 1

    def add(self, record: Record) -> None:
        with self.lock:
            self._add(record)
            self.version += 1

    def touch(self) -> None:
        with self.lock:
            self.version += 1

    def _series(self, key: SeriesKey) -> Series:
        s = self.series.get(key)
        if s is None:
            s = self.series[key] = Series(self.capacity)
            self._by_name.setdefault((key.kind, key.name), {})[key] = s
        return s

    def _named(self, source: str, rank: int | None, kind: str, host: str | None = None) -> dict[str, Series]:
        """name -> Series of one (source, rank, kind, host): one dict lookup per value, no key tuple."""
        named = self._by_owner.get((source, rank, kind, host))
        if named is None:
            named = self._by_owner[(source, rank, kind, host)] = {}
        return named

    def _append(
        self, named: dict[str, Series], source: str, rank: int | None, kind: str, name: str, host: str | None = None
    ) -> Series:
        s = named.get(name)
        if s is None:
            s = named[name] = self._series(SeriesKey(source, rank, kind, name, host))
        return s

    def _add(self, record: Record) -> None:
        self.records_added += 1
        source, rank, host = record.source, record.rank, record.host
        key = RankKey(source, rank, host)
        if rank is not None:
            self.ranks.add(rank)
        if source not in self.sources:
            self.sources[source] = SourceState(source, lock=self.lock)
        if record.attempt > self.current_attempt:
            self.current_attempt = record.attempt
        t = _epoch(record.time) if record.time is not None else math.nan
        if t == t:
            prev = self.last_log_time.get(key)
            if prev is None or t > prev:
                self.last_log_time[key] = t
            if math.isnan(self.first_log_time) or t < self.first_log_time:
                self.first_log_time = t
        kind = type(record)
        if kind is Step:
            self._add_step(record, key, t)  # type: ignore[arg-type]
        elif kind is Phases:
            phases_s = record.phases_s  # type: ignore[union-attr]
            x = float(record.step) if record.step is not None else math.nan
            named = self._named(source, rank, "phase", host)
            for name, value in phases_s.items():
                s = named.get(name)
                if s is None:  # (not `or`: an empty Series is falsy)
                    s = self._append(named, source, rank, "phase", name, host)
                s.append(x, value, t)
            merged = self.latest_phases.get(key)
            if merged is None:
                merged = self.latest_phases[key] = {}
            merged.update(phases_s)
        elif isinstance(record, Event):
            self.events.append(record)
            self.event_counts[record.kind] += 1
        elif isinstance(record, Profile):
            self.profiles.append(record)

    def _add_step(self, record: Step, key: RankKey, t: float, part_of_stored: bool = False) -> None:
        if not part_of_stored:
            self.step_records[key] += 1
        x = float(record.step) if record.step is not None else float(self.step_records[key])
        latest = self.latest.get(key)
        if latest is None:
            latest = self.latest[key] = {}
        named = self._named(record.source, record.rank, "metric", record.host)
        for name, value in record.metrics.items():
            if name == "total_steps":
                if not math.isnan(value) and value > 0:
                    self.total_steps = int(value)
                latest[name] = value
                continue
            s = named.get(name)
            if s is None:
                s = self._append(named, record.source, record.rank, "metric", name, record.host)
            s.append(x, value, t)
            latest[name] = value
        if record.step is not None:
            prev = self.latest_step.get(key)
            # (an older step is a relaunch's; a part of an older step is not)
            if prev is None or record.step >= prev or (record.step < prev - 1 and not part_of_stored):
                self.latest_step[key] = record.step
            self._note_attempt(key, record.attempt, record.step, record.step)
        if part_of_stored:
            return
        obs = self.observations.get(key)
        if obs is None:
            obs = self.observations[key] = deque(maxlen=CADENCE_WINDOW)
        obs.append(StepObservation(record.step, t, _time.monotonic() if self._seen is None else self._seen))

    def _note_attempt(self, key: RankKey, attempt: int, first: int, last: int) -> None:
        self.key_attempt[key] = attempt
        if attempt > self.current_attempt:
            self.current_attempt = attempt
        span = self.attempt_span.get((attempt, key))
        if span is not None:
            first, last = min(first, span[0]), max(last, span[1])
        self.attempt_span[(attempt, key)] = (first, last)

    def extend(self, block: ColumnBlock) -> None:
        """What `_add` of each row's `Phases`/`Step` record would do, per series in one call.
        Rows of one (rank, series) are in line order; the block's rows come after every record
        the pipeline delivered before it. Template rows have no log time; a record row
        (`ColumnBlock.take_step`) has its own, and its points go between the template rows
        of the series it shares with them, by row number."""
        source = block.source
        if source not in self.sources:
            self.sources[source] = SourceState(source, lock=self.lock)
        groups = block.ordered()
        columns = {id(g): g.columns() for g in groups}  # (converted in the parser's thread)
        by_key: dict[tuple[int | None, str], list] = {}
        feeds: dict[int, list[tuple[ColumnGroup, array[float], Sequence[float], array[float]]]] = {}
        series_of: dict[int, Series] = {}
        timed: dict[int | None, dict[int, float]] = {}  # rank -> {row: log time} of record rows
        last_total: tuple[int, float] | None = None
        for g in groups:
            n = len(g.steps)
            self.records_added += n
            if g.rank is not None:
                self.ranks.add(g.rank)
            kind = "phase" if g.template.kind == "phases" else "metric"
            if kind == "phase" and None in g.steps:
                xs = array("d", [math.nan if s is None else float(s) for s in g.steps])
            else:
                xs = array("d", map(float, g.steps))  # type: ignore[arg-type]
            if g.times is None:
                times = _NAN * n
            else:  # record rows, each with its log time
                ts = [math.nan if x is None else _epoch(x) for x in g.times]
                times = array("d", ts)
                key = RankKey(source, g.rank)
                for row, t in zip(g.rows_at, ts, strict=True):
                    if t == t:
                        self._log_time(key, t)
                        timed.setdefault(g.rank, {})[row] = t
            named = self._named(source, g.rank, kind)
            for name, col in zip(g.template.names, columns[id(g)], strict=True):
                if kind == "metric" and name == "total_steps":
                    for i in range(n - 1, -1, -1):
                        if col[i] > 0:  # (False for NaN, as in `_add_step`)
                            if last_total is None or g.rows_at[i] > last_total[0]:
                                last_total = (g.rows_at[i], col[i])
                            break
                    continue
                s = named.get(name)
                if s is None:
                    s = self._append(named, source, g.rank, kind, name)
                fed = feeds.get(id(s))
                if fed is None:
                    fed = feeds[id(s)] = []
                    series_of[id(s)] = s
                fed.append((g, xs, col, times))
            by_key.setdefault((g.rank, kind), []).append(g)
        for sid, fed in feeds.items():
            if len(fed) == 1:
                _g, xs, values, times = fed[0]
                series_of[sid].extend(xs, array("d", values), times)
            else:  # (metric series only: a record row is a step)
                series_of[sid].extend(*_by_row(fed))
        if last_total is not None:
            self.total_steps = int(last_total[1])
        for (rank, kind), gs in by_key.items():
            key = RankKey(source, rank)
            updates = merged_latest(gs, columns)
            if kind == "phase":
                merged = self.latest_phases.get(key)
                if merged is None:
                    merged = self.latest_phases[key] = {}
                merged.update(updates)
                continue
            latest = self.latest.get(key)
            if latest is None:
                latest = self.latest[key] = {}
            latest.update(updates)
            steps = block.step_order[rank]
            self.step_records[key] += len(steps)
            prev = self.latest_step.get(key)
            for step in steps:
                if prev is None or step >= prev or step < prev - 1:
                    prev = step
            if prev is not None:
                self.latest_step[key] = prev
            if steps:
                self._note_attempt(key, block.attempt, min(steps), max(steps))
            obs = self.observations.get(key)
            if obs is None:
                obs = self.observations[key] = deque(maxlen=CADENCE_WINDOW)
            seen = _time.monotonic() if self._seen is None else self._seen
            at = timed.get(rank)
            if at is None:
                obs.extend(StepObservation(step, math.nan, seen) for step in steps[-CADENCE_WINDOW:])
            else:
                rows = sorted(r for g in gs for r in g.rows_at)  # the step rows, in step_order's order
                obs.extend(
                    StepObservation(step, at.get(row, math.nan), seen)
                    for step, row in zip(steps[-CADENCE_WINDOW:], rows[-CADENCE_WINDOW:], strict=True)
                )

    def _log_time(self, key: RankKey, t: float) -> None:
        """A record's log time: the newest of its stream, the first of all (as `_add` keeps them)."""
        if t == t:
            prev = self.last_log_time.get(key)
            if prev is None or t > prev:
                self.last_log_time[key] = t
            if math.isnan(self.first_log_time) or t < self.first_log_time:
                self.first_log_time = t

    def adopt(self, staging: Store) -> None:
        """Take every record and source state of `staging` in place of this store's own (the
        history read from byte 0 replaces the tail window shown meanwhile): readers keep this
        object and its lock, and see the whole change at once. `staging` must not be used after."""
        with self.lock, staging.lock:
            keep = {"lock", "version", "_derived"}
            for name, value in vars(staging).items():
                if name not in keep:
                    setattr(self, name, value)
            for state in self.sources.values():
                state.lock = self.lock
            self._derived = {}
            self.version = max(self.version, staging.version) + 1

    def records(self) -> dict[str, object]:
        """What the records made of this store (not its lock, version, source states or caches):
        for `take_records` of a store in another process (`store/worker.py`)."""
        with self.lock:
            return {name: value for name, value in vars(self).items() if name not in _NOT_RECORDS}

    def take_records(self, records: dict[str, object]) -> None:
        """Every record of another store (its `records`) in place of this store's own, the
        source states kept: the records were built elsewhere while this store's pipeline read."""
        with self.lock:
            for name, value in records.items():
                setattr(self, name, value)
            self._derived = {}
            self.version += 1

    # ------------------------------------------------------------------- read
    def derived(self, name: str, compute: Callable[[], T]) -> T:
        """A value computed from the records alone, kept until the store changes: the dashboard
        judges a run every few seconds, and with 256 ranks the per-rank cadences cost more than
        everything else an idle look does. `name` says what it is; callers must not mutate it."""
        with self.lock:
            hit = self._derived.get(name)
            if hit is not None and hit[0] == self.version:
                return hit[1]  # type: ignore[return-value]
            value = compute()
            self._derived[name] = (self.version, value)
            return value

    def metric_names(self, kind: str = "metric") -> list[str]:
        with self.lock:
            return sorted(name for k, name in self._by_name if k == kind)

    def get_series(
        self, source: str, rank: int | None, name: str, kind: str = "metric", host: str | None = None
    ) -> Series | None:
        return self.series.get(SeriesKey(source, rank, kind, name, host))

    def series_names(self, owner: RankKey, kind: str = "metric") -> list[str]:
        """The names of one rank's series of a kind, in the order they appeared (no scan of
        every series: 256 ranks x their phases)."""
        with self.lock:
            return list(self._by_owner.get((owner.source, owner.rank, kind, owner.host), ()))

    def owners(self, kind: str | None = None) -> set[RankKey]:
        """Every (source, rank, host) with a series (of `kind`), from the per-owner index."""
        with self.lock:
            return {
                RankKey(src, rank, host)
                for (src, rank, k, host), named in self._by_owner.items()
                if named and (kind is None or k == kind)  # (a step of `total_steps` alone makes no series)
            }

    def series_for(self, name: str, kind: str = "metric") -> dict[RankKey, Series]:
        with self.lock:
            return {k.owner: s for k, s in self._by_name.get((kind, name), {}).items()}

    def series_named(self, name: str, kind: str = "metric") -> list[tuple[SeriesKey, Series]]:
        """Every rank's series of one metric (or phase), in the order they appeared: what a
        diagnosis looks at, without a scan of every series (256 ranks x their phases)."""
        with self.lock:
            return list(self._by_name.get((kind, name), {}).items())


def _by_row(
    fed: list[tuple[ColumnGroup, array[float], Sequence[float], array[float]]],
) -> tuple[array[float], array[float], array[float]]:
    """The points of step groups feeding one series, in the order of their block rows (each
    group's rows are in order: a sort of a few sorted runs, then one C-level pick per column)."""
    rows: list[int] = []
    xs, values, times = array("d"), array("d"), array("d")
    for g, g_xs, col, g_times in fed:
        rows += g.rows_at
        xs += g_xs
        values.extend(col)
        times += g_times
    pick = itemgetter(*sorted(range(len(rows)), key=rows.__getitem__))  # (2+ rows: a tuple)
    return array("d", pick(xs)), array("d", pick(values)), array("d", pick(times))
