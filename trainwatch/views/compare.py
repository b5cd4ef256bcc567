"""Several runs side by side: each RUN is its own `Pipeline` and `Store` (a run's ranks never mix
with another run's), named by `--label` or by a short name taken from its path.

`compare --json` prints `{"runs": [{"label": ..., <summary --json of that run>}, ...]}`, so a
script reads each run exactly as `summary --json` of that run alone would show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trainwatch.pipeline import Pipeline
from trainwatch.store.store import Store
from trainwatch.views.summary import summary_json

LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".jsonl")


@dataclass
class Run:
    """One run of a comparison: its name and the pipeline that fills its own store."""

    label: str
    pipeline: Pipeline

    @property
    def store(self) -> Store:
        return self.pipeline.store


def short_name(path: str) -> str:
    """`logs/exp1/out.log` -> `out`, `logs/exp1/` -> `exp1`, `runs/a*/*.log` -> `a*`: the last
    path part that names something (a glob's own file pattern names nothing)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    if not parts:
        return path or "run"
    last = parts[-1]
    if any(c in last for c in "*?[") and len(parts) > 1:
        last = parts[-2]
    for suffix in LOG_SUFFIXES:
        if last.endswith(suffix) and len(last) > len(suffix):
            return last[: -len(suffix)]
    return last


def run_labels(paths: Sequence[str], labels: Sequence[str]) -> list[str]:
    """One label per run: the given ones in order, then short names from the paths; a name
    that repeats gets `#2`, `#3`. More labels than runs is a ValueError."""
    if len(labels) > len(paths):
        raise ValueError(f"{len(labels)} --label for {len(paths)} runs")
    names = [*labels, *(short_name(p) for p in paths[len(labels) :])]
    out: list[str] = []
    for name in names:
        unique, n = name, 1
        while unique in out:
            n += 1
            unique = f"{name}#{n}"
        out.append(unique)
    return out


def open_runs(paths: Sequence[str], labels: Sequence[str], **options: Any) -> list[Run]:
    """A `Run` per PATH (each a file, directory or glob, as for the dashboard)."""
    names = run_labels(paths, labels)
    return [Run(name, Pipeline([path], **options)) for name, path in zip(names, paths, strict=True)]


def compare_json(runs: Sequence[tuple[str, Store]], now: float | None = None) -> dict[str, Any]:
    """`{"runs": [{"label": ..., **summary_json(store)}, ...]}`, in the order given."""
    return {"runs": [{"label": label, **summary_json(store, now)} for label, store in runs]}
