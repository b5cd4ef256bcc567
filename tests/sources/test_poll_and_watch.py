"""Adaptive polling (a polled file that grows is looked at every 50 ms, a quiet one at the
configured interval, stretched to at most 1 s while it stays quiet) and the directory watcher's bookkeeping (recursive roots, directories that
appear later, dropped directories)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from trainwatch.sources.poll import ACTIVE_S, FAST_S, QUIET_MAX_S, PollClock
from trainwatch.sources.watch import DirWatcher


def test_a_quiet_file_is_read_once_per_interval() -> None:
    clock = PollClock(0.25)
    assert clock.after_read(100.0, grew=True) == pytest.approx(100.25)  # the history: not a live writer
    assert clock.after_read(100.25, grew=False) == pytest.approx(100.5)
    assert not clock.stat_is_enough(100.5)  # the full read is due: a cached size is not trusted


def test_a_growing_file_is_stat_checked_often_until_it_goes_quiet() -> None:
    clock = PollClock(0.25)
    clock.after_read(0.0, grew=False)
    assert clock.after_read(0.25, grew=True) == pytest.approx(0.25 + FAST_S)
    assert clock.stat_is_enough(0.30)  # between full reads, one stat stands in for a read
    assert clock.next_look(0.30) == pytest.approx(0.30 + FAST_S)
    assert clock.next_look(0.48) == pytest.approx(0.50)  # never later than the full read
    # quiet for ACTIVE_S since its last growth: no more stat checks, full reads QUIET_MAX_S apart
    assert clock.after_read(0.25 + ACTIVE_S + 0.1, grew=False) == pytest.approx(0.25 + ACTIVE_S + 0.1 + QUIET_MAX_S)


def test_a_file_that_stays_quiet_is_read_less_often_and_quickly_again_once_it_grows() -> None:
    clock = PollClock(0.25)
    now = clock.after_read(0.0, grew=True)  # the history
    gaps = []
    while now < 30.0:
        nxt = clock.after_read(now, grew=False)
        gaps.append((now, nxt - now))
        now = nxt
    assert all(gap == pytest.approx(0.25) for at, gap in gaps if at < ACTIVE_S)  # a pause between steps
    assert all(gap == pytest.approx(QUIET_MAX_S) for at, gap in gaps if at >= ACTIVE_S)  # as tail -F
    # it grows: stat-checked every FAST_S again, full reads back at the configured interval
    assert clock.after_read(now, grew=True) == pytest.approx(now + FAST_S)
    assert clock.read_due == pytest.approx(now + 0.25)


def test_a_configured_interval_longer_than_the_quiet_cap_is_kept() -> None:
    clock = PollClock(2.0)
    clock.after_read(0.0, grew=False)
    assert clock.after_read(100.0, grew=False) == pytest.approx(102.0)


def test_an_interval_shorter_than_the_fast_cadence_keeps_its_meaning() -> None:
    clock = PollClock(0.02)
    clock.after_read(0.0, grew=False)
    assert clock.after_read(1.0, grew=True) == pytest.approx(1.02)


class Seen:
    """Collects what a DirWatcher reports, from its thread."""

    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, paths: set[str]) -> None:
        with self.lock:
            self.paths |= paths

    def wait_for(self, path: Path, seconds: float = 5.0) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                if str(path) in self.paths:
                    return True
            time.sleep(0.01)
        return False


def started(watcher: DirWatcher) -> DirWatcher:
    watcher.start()
    deadline = time.monotonic() + 5
    while not watcher.active and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # the watch itself is set up by watchfiles' thread
    return watcher


def test_watcher_reports_files_in_a_directory_created_under_a_recursive_root(tmp_path: Path) -> None:
    seen = Seen()
    watcher = DirWatcher(seen)
    watcher.set_dirs([], [str(tmp_path)])
    started(watcher)
    try:
        (tmp_path / "node3").mkdir()
        time.sleep(0.2)  # a new rank's directory, then its file
        (tmp_path / "node3" / "rank_24.log").write_bytes(b"x\n")
        assert seen.wait_for(tmp_path / "node3" / "rank_24.log")
    finally:
        watcher.stop()


def test_watcher_drops_directories_no_longer_wanted(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    seen = Seen()
    watcher = DirWatcher(seen)
    assert watcher.set_dirs([str(a), str(b)])
    started(watcher)
    try:
        assert watcher.set_dirs([str(b)])
        assert not watcher.set_dirs([str(b)])  # unchanged: no restart
        time.sleep(0.3)
        (a / "out.log").write_bytes(b"x\n")
        (b / "out.log").write_bytes(b"x\n")
        assert seen.wait_for(b / "out.log")
        time.sleep(0.2)
        assert str(a / "out.log") not in seen.paths
    finally:
        watcher.stop()


def test_safety_polls_of_many_files_are_spread_out_and_fall_on_a_grid(tmp_path: Path) -> None:
    # 256 per-rank files watched by inotify: their safety stats come due together once a second,
    # at most ~50 a second in all (each file every 5 s: inotify reports the changes, the stat is a
    # safety net), not one wake-up (and a pass over 256 readers) each
    from trainwatch.pipeline import Pipeline
    from trainwatch.sources.schedule import SAFETY_POLL_S, SAFETY_TICK_S, safety_due, safety_poll_s

    for r in range(256):
        (tmp_path / f"rank_{r}.log").write_text("")
    pipeline = Pipeline([str(tmp_path)])
    assert len(pipeline.readers) == 256
    assert safety_poll_s(len(pipeline.readers)) == pytest.approx(5.12)
    for now in (10.0, 10.01, 10.13, 10.249, 10.99):
        due = safety_due(now, len(pipeline.readers))
        assert due >= now + 5.12
        assert (due / SAFETY_TICK_S) == pytest.approx(round(due / SAFETY_TICK_S))
    one = Pipeline([str(tmp_path / "rank_0.log")])
    assert safety_poll_s(len(one.readers)) == SAFETY_POLL_S


def test_a_log_directory_deleted_and_made_again_is_watched_again(tmp_path: Path) -> None:
    # a relaunch that wipes its log dir: same path (often the same inode number), but the old
    # inotify watch is dead; the watcher reports the directory gone and restarts on the next set_dirs
    import shutil

    logs = tmp_path / "logs"
    logs.mkdir()
    seen = Seen()
    watcher = DirWatcher(seen)
    try:
        assert watcher.set_dirs([str(logs)])
        watcher.start()
        assert not watcher.set_dirs([str(logs)])  # nothing changed: the watch keeps running
        time.sleep(0.3)  # the watch is up
        shutil.rmtree(logs)
        logs.mkdir()
        assert seen.wait_for(logs)  # told: the directory itself went
        assert watcher.set_dirs([str(logs)])  # the new directory gets a new watch
        time.sleep(0.3)
        (logs / "rank_0.log").write_text("step 1\n")
        assert seen.wait_for(logs / "rank_0.log")  # and its files are seen again
    finally:
        watcher.stop()
