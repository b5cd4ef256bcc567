"""Tail first, then history: the dashboard's pipeline reads a big file's last megabytes first and
its history behind them; once the history is read the store is exactly a plain read's."""

from __future__ import annotations

import math
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES, seed
from trainwatch.pipeline import Pipeline
from trainwatch.sources.window import window_start
from trainwatch.store.store import Store

WINDOW = 64 * 1024  # small enough to split every log below into a window and its history


def _nan_safe(values: Any) -> list[Any]:
    return ["nan" if isinstance(v, float) and math.isnan(v) else v for v in values]


def snapshot(store: Store) -> dict[str, Any]:
    """What a user sees of a store: every series point in order, events in order, the latest
    values, steps and attempts, the totals, and each source's parse counts."""
    with store.lock:
        return {
            "series": {
                key: (_nan_safe(s.steps), _nan_safe(s.values), _nan_safe(s.times), s.count)
                for key, s in sorted(store.series.items(), key=lambda kv: repr(kv[0]))
            },
            "events": [(e.kind, e.step, e.rank, e.message, e.line, e.attempt) for e in store.events],
            "latest": {k: _nan_safe(sorted(v.items())) for k, v in store.latest.items()},
            "latest_step": dict(store.latest_step),
            "latest_phases": {k: sorted(v.items()) for k, v in store.latest_phases.items()},
            "step_records": dict(store.step_records),
            "total_steps": store.total_steps,
            "current_attempt": store.current_attempt,
            "key_attempt": dict(store.key_attempt),
            "attempt_span": dict(store.attempt_span),
            "ranks": sorted(store.ranks),
            "profiles": len(store.profiles),
            "records": store.records_added,
            "sources": {
                name: (s.formats, s.lines, s.not_understood, s.duplicate_steps, s.ranks_seen, s.history)
                for name, s in store.sources.items()
            },
        }


def follow_until_read(path: Path, window: int, timeout: float = 60.0) -> Pipeline:
    pipeline = Pipeline([str(path)], force_poll=True, poll_interval=0.05, window_bytes=window)
    pipeline.start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = list(pipeline.store.sources.values())
        if not pipeline.backfilling and states and all(s.caught_up_monotonic is not None for s in states):
            break
        time.sleep(0.02)
    pipeline.stop()
    assert not pipeline.backfilling, "the history was not read in time"
    return pipeline


def _logs() -> list[Path]:
    return sorted(p for p in SAMPLES.iterdir() if p.is_file() and p.suffix == ".log")


@pytest.mark.parametrize("name", ["002", "004"])
def test_seed_tail_first_store_equals_plain_read(name: str, tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    shutil.copy(seed(name), log)
    assert window_start(str(log), WINDOW) > 0  # the split happens
    tail_first = follow_until_read(log, WINDOW)
    plain = follow_until_read(log, 0)
    assert snapshot(tail_first.store) == snapshot(plain.store)


@pytest.mark.slow
@pytest.mark.parametrize("log", _logs(), ids=lambda p: p.name)
def test_sample_tail_first_store_equals_plain_read(log: Path, tmp_path: Path) -> None:
    copy = tmp_path / log.name
    shutil.copy(log, copy)
    window = min(WINDOW, max(1, log.stat().st_size // 3))
    tail_first = follow_until_read(copy, window)
    plain = follow_until_read(copy, 0)
    assert snapshot(tail_first.store) == snapshot(plain.store)


def test_window_starts_at_a_line_start(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"".join(b"step %d loss 1.0\n" % i for i in range(1000)))
    start = window_start(str(log), 100)
    data = log.read_bytes()
    assert 0 < start and data[start - 1 : start] == b"\n"
    assert len(data) - start <= 100
    assert window_start(str(log), len(data)) == 0  # no larger than the window: read whole


def test_window_is_shown_first_with_history_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the history is read, the store holds the window: the last step of the file, a
    history share below 100 %, and no step from the file's start; then the whole file."""
    monkeypatch.setattr("trainwatch.pipeline.BACKFILL_BUDGET", 256 * 1024)
    log = tmp_path / "train.log"
    shutil.copy(seed("004"), log)
    pipeline = Pipeline([str(log)], force_poll=True, window_bytes=WINDOW)
    pipeline._begin_tail_first()
    assert pipeline.backfilling
    (feed,) = pipeline.readers.values()
    while feed.pump():
        pass
    state = pipeline.store.sources[feed.state.source]
    assert state.history == 0.0
    # The window's lines count from its start, not the file's: no line index to jump by yet.
    assert state.line_index is None
    assert state.lines_now()[0][1].startswith("── the last ")
    plain = Pipeline([str(log)], window_bytes=0)
    plain.read_to_end()
    window_steps = pipeline.store.latest_step
    assert window_steps and set(window_steps.values()) == set(plain.store.latest_step.values())
    first_plain = min(x for s in plain.store.series.values() for x in s.steps if x == x)
    first_window = min(x for s in pipeline.store.series.values() for x in s.steps if x == x)
    assert first_window > first_plain
    more, _ = pipeline._pump_backfill(time.monotonic())
    assert more and 0.0 < (state.history or 0.0) < 1.0
    while more:
        more, _ = pipeline._pump_backfill(time.monotonic())
    assert not pipeline.backfilling
    adopted = pipeline.store.sources[feed.state.source]
    assert adopted.history is None
    assert adopted.line_index is not None  # built by the history's read, from line 1
    assert adopted.line_index.size == log.stat().st_size
    assert adopted.line_index.lines == log.read_bytes().count(b"\n")
    assert _nan_safe(pipeline.store.latest_step.values()) == _nan_safe(plain.store.latest_step.values())
    assert pipeline.store.records_added == plain.store.records_added
    pipeline.stop()


LINE = (
    " iteration %8d/ 1000000 | elapsed time per iteration (ms): 900.0 | learning rate 1.000E-04 |"
    " lm loss %.6E | loss scale 4096.0 |\n"
)  # Megatron-LM, as in seed 004


def test_appends_while_the_history_is_read_are_kept_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window keeps following the file while the history is read; once adopted, the lines
    appended meanwhile are in the store once, as in a plain read of the grown file."""
    monkeypatch.setattr("trainwatch.pipeline.BACKFILL_BUDGET", 32 * 1024)  # a slow history:
    pump = Pipeline._pump_backfill

    def slow_pump(self: Pipeline, now: float) -> tuple[bool, bool]:
        time.sleep(0.01)  # (10 ms a round of 32 KB: seconds for the 3 MB seed, however fast its read)
        return pump(self, now)

    monkeypatch.setattr(Pipeline, "_pump_backfill", slow_pump)
    log = tmp_path / "train.log"
    shutil.copy(seed("004"), log)
    pipeline = Pipeline([str(log)], force_poll=True, poll_interval=0.02, window_bytes=WINDOW)
    pipeline.start()
    try:
        deadline = time.monotonic() + 30
        while not pipeline.backfilling and time.monotonic() < deadline:
            time.sleep(0.005)
        with log.open("a") as f:
            for i in range(23_005, 23_105, 5):
                f.write(LINE % (i, 2.0 + i / 1e6))
                f.flush()
                time.sleep(0.01)
        seen_while_backfilling = pipeline.backfilling
        while time.monotonic() < deadline:
            with pipeline.store.lock:
                done = not pipeline.backfilling and 23_100 in pipeline.store.latest_step.values()
            if done:
                break
            time.sleep(0.02)
    finally:
        pipeline.stop()
    assert seen_while_backfilling  # the appends arrived while the history was being read
    plain = follow_until_read(log, 0)
    assert snapshot(pipeline.store) == snapshot(plain.store)


def test_a_run_whose_record_file_joins_its_log_is_read_whole_and_once(tmp_path: Path) -> None:
    """A text log bigger than the window with a metric JSON-lines file beside it: the record
    file's steps join the log's (`RunJoin`), so the log is read from its start, never split into a
    window and a history that would bypass the join and show each step twice."""
    run = tmp_path / "run"
    run.mkdir()
    log = run / "train.log"
    log.write_text("".join(f"step {i} loss {2.0 - i / 10000:.4f}\n" for i in range(1, 6001)))
    assert window_start(str(log), WINDOW) > 0
    (run / "metrics.jsonl").write_text(
        "".join(f'{{"step": {i}, "loss": {2.0 - i / 10000:.4f}, "grad_norm": 1.5}}\n' for i in range(1, 6001, 1000))
    )
    tail_first = follow_until_read(run, WINDOW)
    plain = follow_until_read(run, 0)
    assert snapshot(tail_first.store) == snapshot(plain.store)
    with plain.store.lock:
        (key,) = [k for k in plain.store.step_records if k.source.endswith("train.log")]
        assert plain.store.step_records[key] == 6000  # each step once, the record file's joined to it
    grad_norm = plain.store.get_series(key.source, key.rank, "grad_norm")
    assert grad_norm is not None and list(grad_norm.steps) == [1.0, 1001.0, 2001.0, 3001.0, 4001.0, 5001.0]


def test_caught_up_is_told_once_with_the_history_read(tmp_path: Path) -> None:
    """The dashboard settles its heap when everything written so far is in the store
    (`Pipeline.on_caught_up`): not while the history behind a tail window is still being read,
    and once only, however long the file then grows."""
    log = tmp_path / "train.log"
    shutil.copy(seed("004"), log)
    pipeline = Pipeline([str(log)], force_poll=True, poll_interval=0.05, window_bytes=WINDOW)
    told: list[tuple[bool, int]] = []  # (history still waiting, the store's records) when told
    pipeline.on_caught_up = lambda: told.append((pipeline.backfilling, pipeline.store.records_added))
    plain = Pipeline([str(log)], window_bytes=0)
    plain.read_to_end()
    pipeline.start()
    try:
        deadline = time.monotonic() + 60
        while not told and time.monotonic() < deadline:
            time.sleep(0.02)
        with log.open("a") as f:
            for i in range(3):
                f.write(LINE % (23_001 + i, 2.0))
                f.flush()
                time.sleep(0.2)
        time.sleep(0.3)
    finally:
        pipeline.stop()
    assert told == [(False, plain.store.records_added)]


def test_caught_up_is_told_again_once_a_file_that_appeared_is_read(tmp_path: Path) -> None:
    """`trainwatch logs/` started before the job writes its log: the first round finds nothing to
    read; the file that then appears is read, and the dashboard is told again (its heap settled
    with the new source's store in it, not only the empty one)."""
    pipeline = Pipeline([str(tmp_path)], force_poll=True, poll_interval=0.05, window_bytes=WINDOW)
    told: list[int] = []  # the store's records when told
    pipeline.on_caught_up = lambda: told.append(pipeline.store.records_added)
    pipeline.start()
    try:
        deadline = time.monotonic() + 30
        while not told and time.monotonic() < deadline:
            time.sleep(0.02)
        assert told == [0]
        staged = tmp_path.with_name(tmp_path.name + "-staged.log")  # (outside the directory watched)
        shutil.copy(seed("004"), staged)
        os.replace(staged, tmp_path / "train.log")  # (whole at once: a copy still writing is a growing log)
        while len(told) < 2 and time.monotonic() < deadline + 30:
            time.sleep(0.02)
    finally:
        pipeline.stop()
    plain = Pipeline([str(tmp_path / "train.log")], window_bytes=0)
    plain.read_to_end()
    assert told == [0, plain.store.records_added]


def test_caught_up_waits_for_a_named_file_that_does_not_exist_yet(tmp_path: Path) -> None:
    """`trainwatch logs/out.log` before the job creates it: nothing is settled on an empty store."""
    log = tmp_path / "out.log"
    pipeline = Pipeline([str(log)], force_poll=True, poll_interval=0.05, window_bytes=WINDOW)
    told: list[int] = []
    pipeline.on_caught_up = lambda: told.append(pipeline.store.records_added)
    pipeline.start()
    try:
        time.sleep(0.5)
        assert told == []
        shutil.copy(seed("004"), tmp_path / "out.tmp")
        os.replace(tmp_path / "out.tmp", log)  # (whole at once: a copy still writing is a growing log)
        deadline = time.monotonic() + 60
        while not told and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        pipeline.stop()
    plain = Pipeline([str(log)], window_bytes=0)
    plain.read_to_end()
    assert told == [plain.store.records_added]
