"""The store's records built in a second process (`trainwatch/store/worker.py`): the same store as
one process builds, for every real log, in bulk and line by line; its failures said, never a hang
or a process left behind."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "perf"))
from _perf_corpus import real_logs
from conftest import seed
from test_bulk_catchup import CORPUS_LOGS, _run

from trainwatch import pipeline as pipeline_module
from trainwatch.columns import ColumnGroup, PackedTexts, RecordShape
from trainwatch.parsers.runner import catchup
from trainwatch.pipeline import Pipeline
from trainwatch.records import Step
from trainwatch.sources import reader as reader_module
from trainwatch.store import worker as worker_module
from trainwatch.store.store import Store
from trainwatch.store.worker import StoreWorker, StoreWorkerError

LOGS = real_logs("*.log") + CORPUS_LOGS


@pytest.fixture
def workers_started(monkeypatch: pytest.MonkeyPatch) -> list[StoreWorker]:
    """Every `StoreWorker` started from now on. (Other tests may leave idle threads in this
    process, which would keep the store in process: the worker's child touches none of theirs.)"""
    monkeypatch.setattr(worker_module.threading, "active_count", lambda: 1)
    started: list[StoreWorker] = []
    original = StoreWorker.__init__

    def spy(self: StoreWorker, capacity: int) -> None:
        original(self, capacity)
        started.append(self)

    monkeypatch.setattr(StoreWorker, "__init__", spy)
    return started


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, started: list[StoreWorker]) -> tuple[Any, Any]:
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 1 << 60)
    alone = _run([str(path)], True, monkeypatch)
    assert not started
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)
    with_worker = _run([str(path)], True, monkeypatch)
    assert len(started) == 1, "the store's process was not used"
    return alone, with_worker


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:60])
def test_the_store_a_worker_builds_is_the_one_a_single_process_builds(
    path: Path, monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    alone, with_worker = _both(path, monkeypatch, workers_started)
    assert with_worker[0] == alone[0], "summary --json differs"
    assert with_worker[1] == alone[1], "store contents differ"
    assert with_worker[2] == alone[2], "source state / raw-log ring differs"


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:60])
def test_the_same_with_every_read_in_bulk_and_small_slices(
    path: Path, monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    """Column blocks of many packed slices each (`ColumnGroup.pack`), converted in the worker."""
    monkeypatch.setattr(reader_module, "BULK_MIN_BYTES", 1)
    monkeypatch.setattr(reader_module, "CATCHUP_BYTES", 1)
    monkeypatch.setattr(catchup, "BULK_SLICE", 2048)
    alone, with_worker = _both(path, monkeypatch, workers_started)
    assert with_worker == alone


def test_steps_read_before_the_end_are_not_taken_for_steps_that_arrived_live(
    monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    """Each batch carries when the reader delivered it: the worker stores it later, yet no step
    looks as if it came after the reader reached the end (the verdict says "log ends at", not
    "no step for")."""
    path = seed("004")
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)
    pipeline = Pipeline([str(path)])
    pipeline.read_to_end()
    assert workers_started
    store = pipeline.store
    (state,) = store.sources.values()
    assert state.caught_up_monotonic is not None
    seen = [o.seen for obs in store.observations.values() for o in obs]
    assert seen and max(seen) <= state.caught_up_monotonic


def test_a_failure_in_the_workers_store_is_raised_with_its_traceback() -> None:
    worker = StoreWorker(64)
    worker.add_many([object()])  # type: ignore[list-item]  # (not a record: the store fails on it)
    worker.add_many([])  # (the worker still reads what comes after the failure: no blocked writer)
    with pytest.raises(StoreWorkerError) as failed:
        worker.finish()
    assert str(failed.value).startswith("the store's process failed:\nTraceback")
    assert "AttributeError" in str(failed.value)
    assert not multiprocessing.active_children()


def test_a_record_batch_reaches_the_store_in_order() -> None:
    worker = StoreWorker(64)
    worker.add_many([Step("a", 0, 1, None, 1, {"loss": 2.0})])
    worker.add_many([Step("a", 0, 2, None, 2, {"loss": 1.5})])
    store = Store(64)
    store.take_records(worker.finish())
    (series,) = store.series.values()
    assert (list(series.steps), list(series.values)) == ([1.0, 2.0], [2.0, 1.5])
    assert store.latest_step and not store.sources  # (the source states are the reader's own)


def test_an_interrupted_read_leaves_no_process_behind(
    monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)
    pipeline = Pipeline([str(seed("004"))])
    (feed,) = pipeline.readers.values()

    def interrupted(*_args: Any, **_kwargs: Any) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(feed, "pump", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pipeline.read_to_end()
    assert workers_started
    assert not multiprocessing.active_children()


def test_the_worker_ends_when_the_reading_process_dies(tmp_path: Path) -> None:
    """Killed without a word (SIGKILL, OOM): the worker sees the end of its input and exits."""
    script = textwrap.dedent(
        """
        import os, sys
        from trainwatch.store.worker import StoreWorker
        worker = StoreWorker(64)
        print(worker._process.pid, flush=True)
        os._exit(0)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_small_reads_streams_other_sinks_and_threads_keep_the_store_in_process(
    monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    path = str(seed("004"))
    Pipeline([path]).read_to_end()  # (well under WORKER_MIN_BYTES)
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)
    Pipeline([path], sink=lambda batch: None).read_to_end()  # (export: every record to its sink too)
    monkeypatch.setattr(worker_module.threading, "active_count", lambda: 2)
    Pipeline([path]).read_to_end()  # (the dashboard's follow thread: no fork beside a thread)
    assert not workers_started


def test_packed_texts_unpack_to_the_same_texts_and_refuse_a_newline() -> None:
    texts = [{0: ["1.5", "2"], 2: ["3", "4"]}, {0: ["5"], 2: ["6"]}]
    packed = PackedTexts.of(texts, (0, 2))
    assert packed.count == 3 and packed.unpack() == {0: ["1.5", "2", "5"], 2: ["3", "4", "6"]}
    assert PackedTexts.of([{0: []}], (0,)).unpack() == {0: []}
    with pytest.raises(ValueError, match="newline"):
        PackedTexts.of([{0: ["1\n2"]}], (0,)).unpack()


def test_a_group_packed_between_runs_converts_to_the_floats_it_would_have_had() -> None:
    class Shape(RecordShape):
        def columns(self, raw: Any) -> list[list[float]]:
            return [list(map(float, raw[0]))]

    group = ColumnGroup(0, Shape(("loss",), "step", (0,)), 0)
    group.add_texts({0: ["1.0", "2.0"]})
    group.pack()
    group.rows.append(("3.0",))
    group.add_texts({0: ["4.0"]})
    assert [list(c) for c in group.columns()] == [[1.0, 2.0, 3.0, 4.0]]
