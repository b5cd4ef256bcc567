"""Every format's own samples (`Parser.samples`), read through the whole pipeline.

A sample proves three things a user relies on: the format is the one that understands its lines
(no other format shadows it), each expected step comes out with the metrics a person reads off the
line, and the events it should raise are raised (and the phase timings and profiler rows it
should give are given)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from trainwatch.parsers.base import Parser, Sample
from trainwatch.parsers.registry import parser_classes
from trainwatch.pipeline import Pipeline
from trainwatch.records import Event, Phases, Profile, Record, Step

CASES = [
    pytest.param(cls, i, sample, id=f"{cls.name}-{i}")
    for cls in parser_classes()
    for i, sample in enumerate(cls.samples)
]


def _read(tmp_path: Path, text: str) -> tuple[list[Record], list[str]]:
    path = tmp_path / "sample.log"
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    records: list[Record] = []
    pipeline = Pipeline([str(path)], sink=records.extend)
    pipeline.read_to_end()
    formats = [f for reader in pipeline.readers.values() for f in reader.parser.stats.formats]
    return records, formats


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)


def _carries(got: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    """Every wanted value is in `got`: numbers within rounding, text as printed."""
    for key, value in want.items():
        if key not in got:
            return False
        have = got[key]
        if isinstance(value, str) or isinstance(have, str):
            if have != value:
                return False
        elif not _close(float(have), float(value)):
            return False
    return True


@pytest.mark.parametrize(("cls", "index", "sample"), CASES)
def test_format_sample(tmp_path: Path, cls: type[Parser], index: int, sample: Sample) -> None:
    records, formats = _read(tmp_path, sample.text)
    assert cls.name in formats, f"{cls.name} sample {index} was read by {formats}"
    steps = [r for r in records if isinstance(r, Step)]
    for step, want in sample.steps:
        got = [s for s in steps if s.step == step]
        assert got, f"no step {step} in {[(s.step, s.metrics) for s in steps]}"
        ok = [s for s in got if all(k in s.metrics and _close(s.metrics[k], v) for k, v in want.items())]
        assert ok, f"step {step}: want {dict(want)}, got {[s.metrics for s in got]}"
    if sample.ranks:
        assert [s.rank for s in steps] == list(sample.ranks)
    kinds = {r.kind for r in records if isinstance(r, Event)}
    assert set(sample.events) <= kinds, f"events {sorted(kinds)}"
    timed = [r for r in records if isinstance(r, Phases)]
    for step, want in sample.phases:
        got_phases = [p.phases_s for p in timed if p.step == step]
        assert any(_carries(p, want) for p in got_phases), f"phases of {step}: want {dict(want)}, got {got_phases}"
    rows = [row for r in records if isinstance(r, Profile) for row in r.rows]
    for name, want in sample.profiles:
        named = [row for row in rows if row.get("name") == name]
        assert any(_carries(row, want) for row in named), f"profile row {name!r}: want {dict(want)}, got {named}"


def test_every_format_has_samples() -> None:
    """Every format carries samples but the ones listed below, and that list is exact."""
    without = {cls.name for cls in parser_classes() if not cls.samples}
    assert without <= WITHOUT_SAMPLES, f"new formats need samples: {sorted(without - WITHOUT_SAMPLES)}"
    assert WITHOUT_SAMPLES <= without, f"formats with samples now: {sorted(WITHOUT_SAMPLES - without)}"


# Formats without samples: only user_patterns, which cannot have any.
WITHOUT_SAMPLES = {
    # Its lines are whatever the user's trainwatch.toml patterns say: with no file it reads nothing, and a
    # built-in sample would only test a pattern written for it (tests/parsers/test_user_patterns.py covers it).
    "user_patterns",
}
