"""Run the parsers over one source's lines and turn what they report into records.

One `SourceParser` per source. It strips launcher rank prefixes, offers each line to the
parsers whose triggers it contains, resolves rank (prefix > text > path > the source's
reporting rank), stamps time, merges the several lines that report one step into one
`Step`, drops identical step lines printed by several unprefixed ranks, and keeps the
counts `summary` reports (formats matched, lines not understood).
"""

from __future__ import annotations

import math
import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trainwatch.lines.assembler import Kind, Line
from trainwatch.parsers.base import Parser
from trainwatch.parsers.rank import path_rank, split_prefix, text_rank
from trainwatch.parsers.timestamps import line_time
from trainwatch.records import Event, Phases, Profile, Record, Severity, Step

Sink = Callable[[Record], None]
# A NaN/inf in these is a `nan` event (other metrics, e.g. a ratio, may legitimately be inf).
NAN_WATCHED = ("loss", "grad_norm", "eval_loss")


@dataclass
class SourceStats:
    lines: int = 0
    frames: int = 0
    understood: int = 0
    records: Counter[str] = field(default_factory=Counter)  # parser name -> records
    duplicate_steps: int = 0
    parser_errors: int = 0
    ranks_seen: set[int] = field(default_factory=set)

    @property
    def formats(self) -> list[str]:
        return [name for name, n in self.records.most_common() if n]

    @property
    def not_understood(self) -> int:
        return self.lines - self.understood


@dataclass
class _PendingStep:
    rank: int | None
    step: int | None
    time: str | None
    line: int
    metrics: dict[str, float]


class SourceParser:
    """Parses one source. Not thread-safe: one reader thread feeds it."""

    def __init__(self, source: str, parsers: Sequence[Parser], sink: Sink, path: str | None = None) -> None:
        self.source = source
        self.parsers = list(parsers)
        self._sink = sink
        self._path_rank = path_rank(path or source) if source != "-" else None
        self._trigger_re = _compile_triggers(self.parsers)
        self._always = [p for p in self.parsers if not p.triggers]
        self.stats = SourceStats()
        self._pending: _PendingStep | None = None
        self._recent_unranked: deque[tuple[int | None, tuple[tuple[str, float], ...]]] = deque(maxlen=16)
        self._last_step: dict[int | None, int] = {}
        self._reporting_ranks: set[int] = set()
        # Per-line state read by the Emitter methods.
        self._line: Line | None = None
        self._text = ""
        self._prefix_rank: int | None = None
        self._text_rank_cache: int | None | bool = False
        self._current_parser = ""

    # ----------------------------------------------------------------- feeding
    def feed_lines(self, lines: Iterable[Line]) -> None:
        for line in lines:
            self.feed_line(line)

    def feed_line(self, line: Line) -> None:
        if line.kind is Kind.FRAME:
            self.stats.frames += 1
        else:
            self.stats.lines += 1
        if line.display_only:
            return
        prefix_rank, text = split_prefix(line.text)
        if prefix_rank is not None:
            self._note_rank(prefix_rank)
        self._line = line
        self._text = text
        self._prefix_rank = prefix_rank
        self._text_rank_cache = False
        understood = False
        if self._trigger_re is not None and self._trigger_re.search(text):
            for parser in self.parsers:
                if parser.triggers and any(t in text for t in parser.triggers):
                    self._current_parser = parser.name
                    if self._safe_feed(parser, text, line):
                        understood = True
                        break
        if not understood:
            for parser in self._always:
                self._current_parser = parser.name
                if self._safe_feed(parser, text, line):
                    understood = True
                    break
        if understood and line.kind is Kind.LINE:
            self.stats.understood += 1

    def _safe_feed(self, parser: Parser, text: str, line: Line) -> bool:
        try:
            return bool(parser.feed(text, line, self))
        except Exception:  # noqa: BLE001 - a parser bug must not stop the tool
            self.stats.parser_errors += 1
            return False

    def at_eof(self) -> None:
        """The reader has consumed everything written so far: release merged steps."""
        self._flush_pending()

    def finish(self) -> None:
        """End of input: parsers release held blocks, then everything is flushed."""
        self._line = None
        for parser in self.parsers:
            self._current_parser = parser.name
            try:
                parser.finish(self)
            except Exception:  # noqa: BLE001
                self.stats.parser_errors += 1
        self._flush_pending()

    # ------------------------------------------------------------ Emitter API
    def step(
        self,
        step: int | None,
        metrics: Mapping[str, float],
        *,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        if not metrics:
            return
        rank = self._rank(rank, is_progress=True)
        time = time if time is not None else self._time()
        line_no = line if line is not None else self._line_no()
        self.stats.records[self._current_parser] += 1
        pending = self._pending
        if pending is not None and pending.rank == rank and pending.step == step:
            for key, value in metrics.items():
                pending.metrics.setdefault(key, value)
            if pending.time is None:
                pending.time = time
            return
        self._flush_pending()
        self._pending = _PendingStep(rank, step, time, line_no, dict(metrics))

    def phases(
        self,
        step: int | None,
        phases_s: Mapping[str, float],
        *,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        if not phases_s:
            return
        self._flush_pending()
        self.stats.records[self._current_parser] += 1
        self._sink(
            Phases(
                self.source,
                self._rank(rank, is_progress=True),
                step,
                time if time is not None else self._time(),
                line if line is not None else self._line_no(),
                dict(phases_s),
            )
        )

    def event(
        self,
        kind: str,
        severity: Severity,
        message: str,
        data: Mapping[str, Any] | None = None,
        *,
        step: int | None = None,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        self._flush_pending()
        self.stats.records[self._current_parser] += 1
        resolved = self._rank(rank, is_progress=False)
        if step is None:
            step = self._last_step.get(resolved, self._last_step.get(None))
        self._sink(
            Event(
                self.source,
                resolved,
                step,
                time if time is not None else self._time(),
                line if line is not None else self._line_no(),
                kind,
                severity,
                message,
                dict(data or {}),
            )
        )

    def profile(
        self,
        title: str,
        kind: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        rank: int | None = None,
        step: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        self._flush_pending()
        self.stats.records[self._current_parser] += 1
        self._sink(
            Profile(
                self.source,
                self._rank(rank, is_progress=False),
                step,
                time,
                line if line is not None else self._line_no(),
                title,
                kind,
                tuple(dict(r) for r in rows),
            )
        )

    def note_rank(self, rank: int) -> None:
        self._note_rank(rank)

    def last_step(self, rank: int | None = None) -> int | None:
        return self._last_step.get(rank)

    # -------------------------------------------------------------- internals
    def _note_rank(self, rank: int) -> None:
        if 0 <= rank < 1_000_000:
            self.stats.ranks_seen.add(rank)

    def _line_no(self) -> int:
        return self._line.no if self._line is not None else 0

    def _time(self) -> str | None:
        return line_time(self._text) if self._line is not None else None

    def _rank(self, explicit: int | None, *, is_progress: bool) -> int | None:
        """prefix > text (parser-given, else generic) > path > the source's reporting rank."""
        if self._prefix_rank is not None:
            return self._prefix_rank
        if explicit is not None and explicit >= 0:
            if is_progress:
                self._reporting_ranks.add(explicit)
            self._note_rank(explicit)
            return explicit
        if self._line is not None:
            if self._text_rank_cache is False:
                self._text_rank_cache = text_rank(self._text)
            found = self._text_rank_cache
            if isinstance(found, int) and not isinstance(found, bool):
                if is_progress:
                    self._reporting_ranks.add(found)
                self._note_rank(found)
                return found
        if self._path_rank is not None:
            return self._path_rank
        # Progress lines without a rank in a log where exactly one rank reports progress
        # (DeepSpeed's `[Rank 0]` log_dist lines): they come from that reporting rank.
        if is_progress and len(self._reporting_ranks) == 1:
            return next(iter(self._reporting_ranks))
        return None

    def _flush_pending(self) -> None:
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        if pending.rank is None:
            key = (pending.step, tuple(sorted(pending.metrics.items())))
            if key in self._recent_unranked:
                self.stats.duplicate_steps += 1
                return
            self._recent_unranked.append(key)
        if pending.step is not None:
            self._last_step[pending.rank] = pending.step
            self._last_step[None] = pending.step
        self._sink(Step(self.source, pending.rank, pending.step, pending.time, pending.line, pending.metrics))
        for name in NAN_WATCHED:
            value = pending.metrics.get(name)
            if value is not None and (math.isnan(value) or math.isinf(value)):
                self._sink(
                    Event(
                        self.source,
                        pending.rank,
                        pending.step,
                        pending.time,
                        pending.line,
                        "nan",
                        "error",
                        f"{name} is {value} at step {pending.step}",
                        {"metric": name},
                    )
                )


def _compile_triggers(parsers: Sequence[Parser]) -> re.Pattern[str] | None:
    triggers = sorted({t for p in parsers for t in p.triggers}, key=len, reverse=True)
    if not triggers:
        return None
    return re.compile("|".join(re.escape(t) for t in triggers))
