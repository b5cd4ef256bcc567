"""Pipeline in-process: catch-up progress, fairness between sources, follow modes, late directories."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from follow_helpers import megatron_line

from trainwatch.pipeline import Pipeline
from trainwatch.records import Step
from trainwatch.sources.schedule import ROUND_BUDGET


def steps_of(pipeline: Pipeline, source: str) -> list[int]:
    return [r.step for r in pipeline._test_records if isinstance(r, Step) and r.source == source]  # type: ignore[attr-defined]


def one_round(pipeline: Pipeline) -> bool:
    """What one round of the follow loop reads: every source, at most a round's budget each.
    True if one has more waiting."""
    return any([feed.pump(ROUND_BUDGET) for feed in pipeline.readers.values()])


def make(paths: list[str], **kw: object) -> Pipeline:
    records: list = []
    pipeline = Pipeline(paths, sink=records.extend, **kw)  # type: ignore[arg-type]
    pipeline._test_records = records  # type: ignore[attr-defined]
    return pipeline


def test_backlog_does_not_starve_a_live_source_and_reports_progress(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with open(big, "wb") as f:
        for i in range(1, 15_001):  # ~2 MB of history: more than a round's budget
            f.write(megatron_line(i))
    live = tmp_path / "live.log"
    live.write_bytes(megatron_line(1) + megatron_line(2))
    pipeline = make([str(big), str(live)])
    assert one_round(pipeline) is True
    state = pipeline.store.sources[str(big)]
    assert state.catching_up and 0 < state.offset <= ROUND_BUDGET < state.size
    assert steps_of(pipeline, str(live)) == [1, 2]  # served in the first round
    with open(live, "ab") as f:
        f.write(megatron_line(3))
    one_round(pipeline)
    assert steps_of(pipeline, str(live)) == [1, 2, 3]
    assert pipeline.store.sources[str(big)].catching_up
    while one_round(pipeline):
        pass
    assert not state.catching_up and state.offset == state.size
    assert steps_of(pipeline, str(big)) == list(range(1, 15_001))


def test_follow_modes_and_a_directory_that_appears_later(tmp_path: Path) -> None:
    later = tmp_path / "logs"
    pipeline = make([str(tmp_path / "a.log"), f"{later}/"], force_poll=False)
    stop = threading.Event()
    thread = threading.Thread(target=pipeline.follow, args=(stop,), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while pipeline.store.sources[str(tmp_path / "a.log")].follow_mode == "" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pipeline.store.sources[str(tmp_path / "a.log")].follow_mode == "inotify"
        (later / "3").mkdir(parents=True)
        (later / "3" / "stdout.log").write_bytes(megatron_line(7))
        source = str(later / "3" / "stdout.log")
        while source not in pipeline.readers and time.monotonic() < deadline:
            time.sleep(0.02)
        while not steps_of(pipeline, source) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert steps_of(pipeline, source) == [7]
        assert pipeline.store.sources[source].follow_mode == "inotify"
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()


def test_force_poll_is_recorded_per_source(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(megatron_line(1))
    pipeline = make([str(log)], force_poll=True, poll_interval=0.05)
    pipeline.start()
    try:
        deadline = time.monotonic() + 10
        while not steps_of(pipeline, str(log)) and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(log, "ab") as f:
            f.write(megatron_line(2))
        while len(steps_of(pipeline, str(log))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert steps_of(pipeline, str(log)) == [1, 2]
        assert pipeline.store.sources[str(log)].follow_mode == "polling"
    finally:
        pipeline.stop()
