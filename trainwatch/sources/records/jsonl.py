"""JSON-lines metric files (`metrics.jsonl`): one object per line, appended as the run goes."""

from __future__ import annotations

import json

from trainwatch.records import Step
from trainwatch.sources.records.base import Appended, Got, metrics_of, step_of

STEP_KEYS = ("step", "global_step", "iteration", "iter", "train/global_step")
NOT_METRICS = frozenset({*STEP_KEYS, "time", "timestamp", "_timestamp", "_runtime", "_step", "rank"})


class JsonLines:
    """Complete lines only: a last line without its newline waits for the rest."""

    kind = "jsonl"

    def __init__(self, source: str, path: str) -> None:
        self.source = source
        self._file = Appended(path)
        self._partial = b""
        self._line = 0

    def read(self, limit: int) -> Got:
        data, restarted, more = self._file.read(limit)
        got = Got(more=more, got_data=bool(data))
        if restarted:
            self._partial, self._line = b"", 0
            got.note = "file started again"
        *whole, self._partial = (self._partial + data).split(b"\n")
        for raw in whole:
            self._line += 1
            step = self._parse(raw)
            if step is not None:
                got.records.append(step)
        return got

    def _parse(self, raw: bytes) -> Step | None:
        try:
            entry = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(entry, dict):
            return None
        step = next((step_of(entry[key]) for key in STEP_KEYS if key in entry), None)
        metrics = metrics_of(entry, NOT_METRICS)
        if not metrics:
            return None
        time = entry.get("time") if isinstance(entry.get("time"), str) else None
        return Step(self.source, None, step, time, self._line, metrics)

    def quiet(self) -> bool:
        return self._file.quiet()

    def close(self) -> None:
        pass
