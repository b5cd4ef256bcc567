"""Read a sample file through the whole pipeline (discovery, tail, assembler, runner)."""

from __future__ import annotations

from pathlib import Path

from trainwatch.pipeline import Pipeline
from trainwatch.records import Record, Step


def read(path: Path) -> tuple[list[Record], Pipeline]:
    records: list[Record] = []
    pipeline = Pipeline([str(path)], sink=records.extend)
    pipeline.read_to_end()
    return records, pipeline


def read_steps(path: Path) -> list[Step]:
    return [r for r in read(path)[0] if isinstance(r, Step)]
