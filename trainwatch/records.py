"""The record contract (README "The record contract", ../shared/spec/records.md) as typed, immutable data.

Parsers emit these; the store, the views and `export` consume them. Nothing else
crosses the parser/store boundary.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["info", "warning", "error"]

EVENT_KINDS = (
    "overflow",
    "nan",
    "oom",
    "nccl_timeout",
    "traceback",
    "signal",
    "crash",
    "checkpoint",
    "restart",
    "finished",
)


@dataclass(frozen=True, slots=True)
class Step:
    """Scalar metrics of one training step (canonical metric names)."""

    source: str
    rank: int | None
    step: int | None
    time: str | None
    line: int
    metrics: Mapping[str, float]
    type: Literal["step"] = field(default="step", init=False)
    # Extensions (README): the node, when the log names it, and the run segment (attempt).
    host: str | None = None
    attempt: int = 0


@dataclass(frozen=True, slots=True)
class Phases:
    """Per-phase wall time of one step, in seconds."""

    source: str
    rank: int | None
    step: int | None
    time: str | None
    line: int
    phases_s: Mapping[str, float]
    type: Literal["phases"] = field(default="phases", init=False)
    # Extensions (README): the node, when the log names it, and the run segment (attempt).
    host: str | None = None
    attempt: int = 0


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened: overflow, crash, signal, checkpoint..."""

    source: str
    rank: int | None
    step: int | None
    time: str | None
    line: int
    kind: str
    severity: Severity
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)
    type: Literal["event"] = field(default="event", init=False)
    # Extensions (README): the node, when the log names it, and the run segment (attempt).
    host: str | None = None
    attempt: int = 0


@dataclass(frozen=True, slots=True)
class Profile:
    """A profiler table printed into the log (Lightning, torch.profiler, flops profiler)."""

    source: str
    rank: int | None
    step: int | None
    time: str | None
    line: int
    title: str
    kind: str
    rows: tuple[Mapping[str, Any], ...]
    type: Literal["profile"] = field(default="profile", init=False)
    # Extensions (README): the node, when the log names it, and the run segment (attempt).
    host: str | None = None
    attempt: int = 0


Record = Step | Phases | Event | Profile


def json_number(value: float) -> float | int | str:
    """NaN/Infinity are not JSON: the contract writes them as strings."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    return value


def _json_value(value: Any) -> Any:
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value


def to_dict(record: Record) -> dict[str, Any]:
    """The JSONL form of a record, key order as in the contract."""
    out: dict[str, Any] = {
        "type": record.type,
        "source": record.source,
        "rank": record.rank,
        "step": record.step,
        "time": record.time,
        "line": record.line,
    }
    # Extensions beyond contract v1, written only when known so v1 records stay as they were.
    if record.host is not None:
        out["host"] = record.host
    if record.attempt:
        out["attempt"] = record.attempt
    if isinstance(record, Step):
        out["metrics"] = _json_value(dict(record.metrics))
    elif isinstance(record, Phases):
        out["phases_s"] = _json_value(dict(record.phases_s))
    elif isinstance(record, Event):
        out["kind"] = record.kind
        out["severity"] = record.severity
        out["message"] = record.message
        out["data"] = _json_value(dict(record.data))
    else:
        out["title"] = record.title
        out["kind"] = record.kind
        out["rows"] = _json_value(list(record.rows))
    return out
