"""Run real log lines through the parser runner (prefix stripping, rank, time, merging included)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Parser
from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import SourceParser
from trainwatch.records import Event, Record, Step


def feed(lines: Iterable[str], parsers: Sequence[Parser] | None = None, source: str = "t.log") -> list[Record]:
    records: list[Record] = []
    runner = SourceParser(source, list(parsers) if parsers is not None else new_parsers(), records.append)
    runner.feed_lines(Line(no, text) for no, text in enumerate(lines, 1))
    runner.finish()
    return records


def steps(records: Iterable[Record]) -> list[Step]:
    return [r for r in records if isinstance(r, Step)]


def events(records: Iterable[Record], kind: str) -> list[Event]:
    return [r for r in records if isinstance(r, Event) and r.kind == kind]
