"""The dashboard's history read with its staging store in a spawned process (`Pipeline._backfill_sink`,
`store/worker.py`): once the history is read, the store is exactly a plain read's, and the files
followed on after it are read as before."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import seed
from tests.sources.test_tail_first import WINDOW, follow_until_read, snapshot
from trainwatch import pipeline as pipeline_module
from trainwatch.parsers.runner import catchup
from trainwatch.pipeline import Pipeline
from trainwatch.sources import reader as reader_module
from trainwatch.store.store import Store
from trainwatch.store.worker import StoreWorker


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each `StoreWorker` started from now on (True: forked), with any history big enough."""
    started: list[bool] = []
    original = StoreWorker.__init__

    def spy(self: StoreWorker, store: Any, fork: bool = True) -> None:
        original(self, store, fork)
        started.append(fork)

    monkeypatch.setattr(StoreWorker, "__init__", spy)
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)
    return started


@pytest.fixture
def read_again(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each time the history is read again in process after its worker failed."""
    again: list[int] = []
    original = Pipeline._history_again

    def spy(self: Pipeline, failed: Any) -> Any:
        again.append(1)
        return original(self, failed)

    monkeypatch.setattr(Pipeline, "_history_again", spy)
    return again


def test_a_history_read_with_a_spawned_worker_equals_a_plain_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[bool], read_again: list[int]
) -> None:
    monkeypatch.setattr(reader_module, "BULK_MIN_BYTES", 1)  # (in bulk: column blocks start it)
    monkeypatch.setattr(reader_module, "CATCHUP_BYTES", 1)
    monkeypatch.setattr(catchup, "BULK_SLICE", 4096)
    log = tmp_path / "train.log"
    shutil.copy(seed("004"), log)  # (DeepSpeed + Megatron: its history in column blocks)
    tail_first = follow_until_read(log, WINDOW)
    assert spawned == [False], "the history's staging store was not in a spawned process"
    assert not read_again, "the worker failed: the history was read again in process"
    plain = follow_until_read(log, 0)
    assert snapshot(tail_first.store) == snapshot(plain.store)


def test_lines_appended_after_the_history_are_read_in_process_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[bool], read_again: list[int]
) -> None:
    """The history's feeds follow on once it is adopted: their blocks reach the store converted
    (texts packed for a worker are for a worker)."""
    monkeypatch.setattr(reader_module, "BULK_MIN_BYTES", 1)
    monkeypatch.setattr(reader_module, "CATCHUP_BYTES", 1)
    packed: list[bool] = []  # per block the store is given: whether it came with texts to convert
    extend = Store.extend

    def spy(self: Store, block: Any) -> None:
        packed.append(any(g._texts for g in block.groups.values()))
        extend(self, block)

    monkeypatch.setattr(Store, "extend", spy)
    lines = seed("004").read_text(encoding="utf-8").splitlines(keepends=True)
    half = len(lines) // 2
    log = tmp_path / "train.log"
    log.write_text("".join(lines[:half]), encoding="utf-8")
    pipeline = Pipeline([str(log)], force_poll=True, poll_interval=0.05, window_bytes=WINDOW)
    pipeline.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            states = list(pipeline.store.sources.values())
            if not pipeline.backfilling and states and all(s.caught_up_monotonic is not None for s in states):
                break
            time.sleep(0.02)
        assert not pipeline.backfilling and spawned == [False] and not read_again
        packed.clear()
        with log.open("a", encoding="utf-8") as f:
            f.write("".join(lines[half:]))
        want = len(lines)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            states = list(pipeline.store.sources.values())
            if states and states[0].lines >= want:
                break
            time.sleep(0.05)
        assert states[0].lines >= want, "the appended lines were not read in time"
        time.sleep(0.3)  # (the last read's records into the store)
    finally:
        pipeline.stop()
    assert packed and not any(packed), "blocks after the history came with texts packed for a worker"
    plain = follow_until_read(log, 0)
    assert snapshot(pipeline.store) == snapshot(plain.store)


def test_a_worker_that_cannot_start_leaves_the_history_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(self: StoreWorker, store: Any, fork: bool = True) -> None:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(StoreWorker, "__init__", refused)
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 0)
    monkeypatch.setattr(reader_module, "BULK_MIN_BYTES", 1)
    monkeypatch.setattr(reader_module, "CATCHUP_BYTES", 1)
    log = tmp_path / "train.log"
    shutil.copy(seed("004"), log)
    assert snapshot(follow_until_read(log, WINDOW).store) == snapshot(follow_until_read(log, 0).store)


def test_a_small_history_is_read_in_process(
    tmp_path: Path, spawned: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline_module, "WORKER_MIN_BYTES", 16 * 1024 * 1024)
    log = tmp_path / "train.log"
    shutil.copy(seed("004"), log)
    follow_until_read(log, WINDOW)
    assert spawned == []


def test_a_worker_killed_during_the_history_is_replaced_by_a_read_again_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[bool]
) -> None:
    """The history it held is lost with it: read again from byte 0, the store in the end exactly
    a plain read's."""
    monkeypatch.setattr(reader_module, "BULK_MIN_BYTES", 1)
    monkeypatch.setattr(reader_module, "CATCHUP_BYTES", 1)
    monkeypatch.setattr(catchup, "BULK_SLICE", 4096)
    monkeypatch.setattr(pipeline_module, "BACKFILL_BUDGET", 64 * 1024)  # (many rounds of history)
    sent = StoreWorker.add_many

    def killed_after_one_batch(self: StoreWorker, records: Any) -> None:
        sent(self, records)
        assert self._popen is not None
        self._popen.kill()
        self._popen.wait()

    monkeypatch.setattr(StoreWorker, "add_many", killed_after_one_batch)
    log = tmp_path / "train.log"
    shutil.copy(seed("004"), log)
    tail_first = follow_until_read(log, WINDOW)
    assert spawned == [False]
    assert snapshot(tail_first.store) == snapshot(follow_until_read(log, 0).store)
