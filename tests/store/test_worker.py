"""The store's records built in a second process (`trainwatch/store/worker.py`): the same store as
one process builds, for every real log, in bulk and line by line; its failures said, never a hang
or a process left behind."""

from __future__ import annotations

import multiprocessing
import random
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
from test_bulk_catchup import (
    CORPUS_LOGS,
    DS_LINE,
    ITER_LINE,
    STEP_LINE,
    THROUGHPUT_LINE,
    TIMERS_LINE,
    _big_log,
    _blocks_of,
    _run,
    mutated_hot_lines,
)

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

    def spy(self: StoreWorker, store: Store) -> None:
        original(self, store)
        started.append(self)

    monkeypatch.setattr(StoreWorker, "__init__", spy)
    return started


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, started: list[StoreWorker]) -> tuple[Any, Any]:
    """The pipeline's read alone, then with a worker from its first column block on."""
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 1 << 60)
    blocks = _blocks_of(monkeypatch)
    alone = _run([str(path)], True, monkeypatch)
    assert not started
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)
    with_worker = _run([str(path)], True, monkeypatch)
    # A worker starts at the first column block: a log read line by line keeps its store.
    assert len(started) == (1 if blocks else 0), "the store's process was not used as it should"
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


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:60])
def test_the_same_with_the_worker_from_the_first_batch_of_records(
    path: Path, monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    """Every kind of record crosses (steps, phases, events, profiles, record rows), not only blocks."""
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 1 << 60)
    alone = _run([str(path)], True, monkeypatch)
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline_module, "_worth_a_worker", bool)
    assert _run([str(path)], True, monkeypatch) == alone
    assert len(workers_started) == (1 if alone[1]["records_added"] else 0)  # (a log with no record: no batch)


@pytest.mark.slow  # a big generated log
def test_the_same_on_a_big_log_with_a_restart_nan_and_a_second_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    """Many blocks of many packed slices, and the unusual lines between them read line by line."""
    path = _big_log(
        tmp_path,
        [
            (0.2, ITER_LINE.replace("1.098990E+01", "1E+999")),
            (0.3, ITER_LINE.replace(" 5/", " 7/")),
            (0.4, DS_LINE.replace("rank=0", "rank=1")),
            (0.6, " iteration        5/ 1000000 | lm loss nan |"),
            (0.7, 'Traceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: boom'),
        ],
    )
    monkeypatch.setattr(catchup, "BULK_SLICE", 16 * 1024)
    alone, with_worker = _both(path, monkeypatch, workers_started)
    assert with_worker == alone


@pytest.mark.parametrize("trial", range(12))
def test_the_same_on_mutated_hot_lines(
    trial: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    """Shuffled, repeated and mutated real lines: rows taken in bulk, packed in small slices, and
    lines read one by one between them, converted in the worker in the order they came."""
    monkeypatch.setattr(reader_module, "BULK_MIN_BYTES", 1)
    monkeypatch.setattr(reader_module, "CATCHUP_BYTES", 1)
    monkeypatch.setattr(catchup, "BULK_SLICE", 512)
    rng = random.Random(trial)
    texts = mutated_hot_lines(rng, [DS_LINE] * 5 + [ITER_LINE, TIMERS_LINE, STEP_LINE, THROUGHPUT_LINE])
    path = tmp_path / "out.log"
    path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
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
    # (the worker started at the first column block: the observations since are its)
    seen = [o.seen for obs in store.observations.values() for o in obs]
    assert seen and max(seen) <= state.caught_up_monotonic


def test_a_failure_in_the_workers_store_is_raised_with_its_traceback() -> None:
    worker = StoreWorker(Store(64))
    worker.add_many([object()])  # type: ignore[list-item]  # (not a record: the store fails on it)
    with pytest.raises(StoreWorkerError) as failed:
        worker.finish()
    assert str(failed.value).startswith("the store's process failed: AttributeError")
    assert failed.value.details.startswith("Traceback") and "AttributeError" in failed.value.details
    assert not multiprocessing.active_children()


def test_the_reader_stops_at_its_next_batch_after_the_worker_failed() -> None:
    """Not after reading the rest of a big file: the error is said as soon as it happened."""
    worker = StoreWorker(Store(64))
    worker.add_many([object()])  # type: ignore[list-item]
    deadline = time.monotonic() + 10
    with pytest.raises(StoreWorkerError, match="AttributeError"):
        while time.monotonic() < deadline:
            worker.add_many([])
            time.sleep(0.01)
    worker.close()
    assert not multiprocessing.active_children()


def test_a_record_batch_reaches_the_store_in_order_after_what_it_held() -> None:
    store = Store(64)
    store.add_many([Step("a", 0, 1, None, 1, {"loss": 2.0})])  # (before the fork: the child has it)
    worker = StoreWorker(store)
    worker.add_many([Step("a", 0, 2, None, 2, {"loss": 1.5})])
    worker.add_many([Step("a", 0, 3, None, 3, {"loss": 1.25})])
    assert store.records_added == 1  # (this process's store does not see them)
    store.take_records(worker.finish())
    (series,) = store.series.values()
    assert (list(series.steps), list(series.values)) == ([1.0, 2.0, 3.0], [2.0, 1.5, 1.25])
    assert store.records_added == 3 and store.latest_step


def test_a_refused_fork_keeps_the_store_in_process(
    monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    path = seed("004")
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 1 << 60)
    alone = _run([str(path)], True, monkeypatch)
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)

    def refused(self: StoreWorker, store: Store) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(pipeline_module.StoreWorker, "__init__", refused)
    assert _run([str(path)], True, monkeypatch) == alone


def test_an_interrupted_read_leaves_no_process_behind(
    monkeypatch: pytest.MonkeyPatch, workers_started: list[StoreWorker]
) -> None:
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)
    pipeline = Pipeline([str(seed("004"))])
    (feed,) = pipeline.readers.values()
    pump = feed.pump

    def interrupted(*args: Any, **kwargs: Any) -> bool:
        more = pump(*args, **kwargs)
        if workers_started:  # (Ctrl-C once the worker runs)
            raise KeyboardInterrupt
        return more

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
        from trainwatch.store.store import Store
        worker = StoreWorker(Store(64))
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
