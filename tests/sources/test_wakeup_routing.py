"""A wake-up from the directory watcher reads the files it reported, not every file followed
(256 per-rank files: a read attempt of each at every wake-up was most of the follow loop's
work), and a round before the next safety poll that nothing woke does nothing."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from trainwatch.pipeline import Pipeline
from trainwatch.sources.schedule import Schedule


class _Source:
    def __init__(self, read: bool = True) -> None:
        self.read = read  # read to its end: a stat says it is unchanged
        self.pumps = 0
        self.stats = 0
        self.finished = False
        self.last_data: float | None = None

    def quiet(self) -> bool:
        self.stats += 1
        return self.read

    def pump(self, limit: int) -> bool:
        self.pumps += 1
        self.read = True
        return False


def test_a_wake_up_reads_only_the_sources_it_is_for() -> None:
    schedule = Schedule(0.25)
    sources = {name: _Source() for name in ("a", "b", "c")}
    schedule.round(sources, 0.0, woken=True)  # the first round reads every source
    assert [s.pumps for s in sources.values()] == [1, 1, 1]
    schedule.round(sources, 0.1, woken=True, only={"b"})
    assert [s.pumps for s in sources.values()] == [1, 2, 1]
    schedule.round(sources, 0.2, woken=True, only=None)  # a wake-up for everything (a stream, stop)
    assert [s.pumps for s in sources.values()] == [2, 3, 2]


class _Counted(dict):  # type: ignore[type-arg]
    """The sources, counting the passes over them all."""

    passes = 0

    def items(self):  # type: ignore[no-untyped-def,override]
        self.passes += 1
        return super().items()


class _Ordered(_Source):
    def __init__(self, name: str, log: list[str]) -> None:
        super().__init__()
        self.name, self.log = name, log

    def pump(self, limit: int) -> bool:
        self.log.append(self.name)
        return super().pump(limit)


def test_a_wake_up_between_safety_polls_looks_at_its_sources_only_in_their_order() -> None:
    """256 files growing 4 lines/s wake the loop 40 times a second, each time for a few of
    them: no pass over all 256 then, yet each safety poll still comes when due."""
    schedule = Schedule(0.25)
    log: list[str] = []
    sources = _Counted({name: _Ordered(name, log) for name in ("a", "b", "c", "d")})
    schedule.round(sources, 0.0, woken=True)
    passes = sources.passes
    log.clear()
    schedule.round(sources, 0.1, woken=True, only={"d", "b", "gone"})  # (a path of no source: skipped)
    assert log == ["b", "d"] and sources.passes == passes  # in the sources' order, no pass over all
    due = schedule.wait_s(sources, 0.2)
    schedule.round(sources, 0.2 + due, woken=True, only={"c"})  # a and c are due: a full round
    assert sources.passes == passes + 1 and log == ["b", "d", "a", "c"]


def test_rounds_nothing_woke_wait_for_the_safety_poll_then_stat_each_file() -> None:
    schedule = Schedule(0.25)
    sources = {name: _Source() for name in ("a", "b")}
    schedule.round(sources, 0.0, woken=True)
    due = schedule.wait_s(sources, 0.0)
    assert due > 0.5  # the safety poll: a second or more away
    for k in range(1, 10):
        schedule.round(sources, due * k / 10, woken=False)
    assert [(s.pumps, s.stats) for s in sources.values()] == [(1, 0), (1, 0)]
    schedule.round(sources, due, woken=False)  # due: one stat each, no read (unchanged)
    assert [(s.pumps, s.stats) for s in sources.values()] == [(1, 1), (1, 1)]
    schedule.forget("b")  # a source going away (or coming) is seen at once
    sources.pop("b")
    sources["d"] = _Source(read=False)  # a file found since: not read yet
    schedule.round(sources, due + 0.01, woken=False)
    assert sources["d"].pumps == 1


def test_the_pipeline_maps_the_watchers_paths_to_its_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    os.mkdir("logs")
    for r in range(3):
        Path(f"logs/rank_{r}.log").write_text(f"step {r} loss 1.0\n")
    pipeline = Pipeline(["logs"])  # a relative directory: the watcher reports absolute paths
    assert pipeline._woken_sources() is None  # the first wake-up reads everything
    pipeline._on_change({str(tmp_path / "logs" / "rank_1.log")})
    names = pipeline._woken_sources()
    assert names is not None and {pipeline.readers[n].spec.path for n in names} == {os.path.join("logs", "rank_1.log")}
    assert not pipeline._rediscover_now  # a file we follow: nothing new to look for
    pipeline._on_change({str(tmp_path / "logs" / "rank_9.log")})  # not one of ours: read all, look again
    assert pipeline._woken_sources() is None and pipeline._rediscover_now
    pipeline._poke()  # woken by a stream's reader thread
    assert pipeline._woken_sources() is None
    assert pipeline._woken_sources() == set()  # (nothing reported since)


def test_a_path_event_makes_that_sources_tail_ask_its_path_again(tmp_path: Path) -> None:
    """Under inotify a growing file does not stat its path at every append; the watcher's path
    event (a file created, moved or deleted there) reaches that source's tail before its read."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for r in range(2):
        (logs / f"rank_{r}.log").write_text(f"step {r} loss 1.0\n")
    pipeline = Pipeline([str(logs)])
    tails = {os.path.basename(f.spec.path or ""): f.tail for f in pipeline.readers.values()}
    for feed in pipeline.readers.values():
        pipeline._set_mode(feed)
        while feed.pump():
            pass
    assert all(t is not None and t.current is not None for t in tails.values())
    before = {name: t.current.path_checked for name, t in tails.items()}  # type: ignore[union-attr]
    pipeline._on_path_event({str(logs / "rank_1.log"), str(logs / "elsewhere.log")})
    pipeline._on_change({str(logs / "rank_1.log")})
    pipeline._woken_sources()
    assert tails["rank_1.log"].current.path_checked == -math.inf  # type: ignore[union-attr]
    assert tails["rank_0.log"].current.path_checked == before["rank_0.log"]  # type: ignore[union-attr]
