"""A recording Emitter for parser unit tests: every call as the parser made it (no runner merging)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainwatch.lines.assembler import Line, LineAssembler
from trainwatch.parsers.base import Parser


@dataclass
class Call:
    kind: str  # "step" | "event" | "phases" | "profile"
    step: int | None
    line: int | None
    data: dict[str, Any] = field(default_factory=dict)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.lines: dict[int, int] = {}

    def step(
        self,
        step: int | None,
        metrics: Mapping[str, float],
        *,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        self.calls.append(Call("step", step, line, {"metrics": dict(metrics), "time": time}))

    def phases(
        self,
        step: int | None,
        phases_s: Mapping[str, float],
        *,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        self.calls.append(Call("phases", step, line, {"phases_s": dict(phases_s)}))

    def event(
        self,
        kind: str,
        severity: str,
        message: str,
        data: Mapping[str, Any] | None = None,
        *,
        step: int | None = None,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        self.calls.append(
            Call(
                "event", step, line, {"kind": kind, "severity": severity, "message": message, "data": dict(data or {})}
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
        self.calls.append(Call("profile", step, line, {"title": title}))

    def note_rank(self, rank: int) -> None:
        pass

    def last_step(self, rank: int | None = None) -> int | None:
        steps = [c.step for c in self.calls if c.kind == "step" and c.step is not None]
        return steps[-1] if steps else None

    def lines_read(self) -> int:
        return len({c.line for c in self.calls})

    @property
    def steps(self) -> list[Call]:
        return [c for c in self.calls if c.kind == "step"]

    @property
    def events(self) -> list[Call]:
        return [c for c in self.calls if c.kind == "event"]


def run(parser: Parser, data: bytes | str, *, only_triggered: bool = True) -> tuple[Recorder, list[bool]]:
    """Feed raw log bytes through the line assembler into one parser, like the runner does
    (lines without one of the parser's triggers are not offered). Returns the recorder and, per
    offered LINE (not frame), whether the parser understood it."""
    if isinstance(data, str):
        data = data.encode()
    asm = LineAssembler()
    lines: list[Line] = asm.feed(data) + asm.finish()
    rec = Recorder()
    understood: list[bool] = []
    for line in lines:
        if line.display_only:
            continue
        if only_triggered and parser.triggers and not any(t in line.text for t in parser.triggers):
            continue
        ok = parser.feed(line.text, line, rec)
        if line.kind.value == "line":
            understood.append(ok)
    parser.finish(rec)
    return rec, understood


def run_file(parser: Parser, path: Path) -> tuple[Recorder, list[bool]]:
    return run(parser, path.read_bytes())
