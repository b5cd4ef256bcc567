"""A pipeline over record files and text logs, driven round by round as the follow loop does."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trainwatch.pipeline import Pipeline
from trainwatch.records import Step
from trainwatch.sources.schedule import ROUND_BUDGET


class Run:
    """A pipeline over PATHs, and the steps its sinks got, per file name."""

    def __init__(self, *paths: Path) -> None:
        self.records: list[Any] = []
        self.pipeline = Pipeline([str(p) for p in paths], sink=self.records.extend)

    def round(self) -> None:
        """One round of the follow loop, new files picked up as the loop does."""
        self.pipeline._rediscover()
        while any([feed.pump(ROUND_BUDGET) for feed in self.pipeline.readers.values()]):
            pass

    def steps(self, name: str | None = None) -> list[tuple[int | None, dict[str, float]]]:
        """(step, metrics) of every Step, of the source whose file is `name` (None: all)."""
        return [
            (r.step, dict(r.metrics))
            for r in self.records
            if isinstance(r, Step) and (name is None or os.path.basename(r.source) == name)
        ]
