"""Record files: metrics frameworks write as data, not as printed lines. One module per kind;
`reader_for` says which kind (if any) a path is, `is_record_file` lets the directory walk find them."""

from __future__ import annotations

import os
from collections.abc import Callable

from trainwatch.sources.records.base import Got, RecordReader
from trainwatch.sources.records.csvlog import LightningCsv
from trainwatch.sources.records.jsonl import JsonLines
from trainwatch.sources.records.mlflow import MlflowMetrics
from trainwatch.sources.records.tfevents import EventFile
from trainwatch.sources.records.trainer_state import TrainerState

__all__ = ["Got", "RecordReader", "is_mlflow_metrics", "is_record_file", "reader_for"]

Factory = Callable[[str, str], RecordReader]


def is_mlflow_metrics(path: str) -> bool:
    """`mlruns/<exp>/<run>/metrics`: a `metrics` directory beside the run's `meta.yaml`."""
    return os.path.basename(os.path.normpath(path)) == "metrics" and os.path.isfile(
        os.path.join(os.path.dirname(os.path.normpath(path)), "meta.yaml")
    )


def _file_kind(name: str) -> Factory | None:
    base = os.path.basename(name)
    if base.startswith("events.out.tfevents."):
        return EventFile
    if base == "trainer_state.json":
        return TrainerState
    if base == "metrics.csv":
        return LightningCsv
    if base.endswith(".jsonl") and "metric" in base.lower():
        return JsonLines
    return None


def is_record_file(name: str) -> bool:
    return _file_kind(name) is not None


def reader_for(source: str, path: str) -> RecordReader | None:
    """The reader of this path, or None when it is a text log."""
    if os.path.isdir(path):
        return MlflowMetrics(source, path) if is_mlflow_metrics(path) else None
    kind = _file_kind(path)
    return kind(source, path) if kind is not None else None
