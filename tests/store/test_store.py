"""The store as its writers and readers use it: one ingest thread writes records and each source's
state under the store's lock, views copy under the same lock and skip work while `version` stands
still. Series stay bounded however long the run; a relaunch into the same file is a new attempt.

Records are shaped like seed 004 (DeepSpeed + Megatron GPT-2: `iteration 100/...`, `lm loss`,
`time (ms)` phases every 5 iterations).
"""

from __future__ import annotations

import threading
import time

from trainwatch.records import Event, Phases, Step
from trainwatch.store import SourceState, Store
from trainwatch.store.store import CADENCE_WINDOW, MAX_EVENTS, RECENT_LINES, RankKey, key_order

LOG = "out.log"


def step(n: int | None, loss: float = 9.5, *, rank: int | None = 0, attempt: int = 0, **kw: object) -> Step:
    return Step(LOG, rank, n, None, n or 0, {"loss": loss}, attempt=attempt, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ SourceState
def test_raw_line_ring_keeps_the_newest_lines_and_is_copied_out() -> None:
    state = Store().source(LOG)
    assert state.last_line_no() is None and state.lines_now() == []
    state.add_lines((i, f"line {i}") for i in range(1, RECENT_LINES + 101))
    lines = state.lines_now()
    assert len(lines) == RECENT_LINES
    assert lines[0] == (101, "line 101") and lines[-1] == (RECENT_LINES + 100, f"line {RECENT_LINES + 100}")
    assert state.last_line_no() == RECENT_LINES + 100
    lines.clear()  # a copy: the view may keep or change it
    assert len(state.lines_now()) == RECENT_LINES


def test_a_reader_holding_the_store_lock_holds_off_the_writer() -> None:
    store = Store()
    state = store.source(LOG)
    assert state.lock is store.lock
    done = threading.Event()

    def write() -> None:
        state.add_lines([(1, "iteration 1")])
        done.set()

    with store.lock:  # the dashboard copying the ring
        writer = threading.Thread(target=write)
        writer.start()
        assert not done.wait(0.2)
        assert len(state.recent) == 0  # nothing written while the reader holds the lock
    writer.join(5)
    assert done.is_set() and state.lines_now() == [(1, "iteration 1")]


def test_read_progress_records_what_the_read_found() -> None:
    state = SourceState(LOG)
    state.read_progress(size=2821, offset=1400, mtime=1_607_752_714.0, catching_up=True, got_data=True, note=None)
    assert (state.size, state.offset, state.mtime, state.catching_up) == (2821, 1400, 1_607_752_714.0, True)
    assert state.last_data_wall is not None and abs(state.last_data_wall - time.time()) < 60
    assert state.last_data_monotonic is not None and state.last_data_monotonic <= time.monotonic()
    arrived = state.last_data_monotonic
    state.read_progress(size=2821, offset=2821, mtime=1_607_752_714.0, catching_up=False, got_data=False, note=None)
    assert state.last_data_monotonic == arrived  # no bytes: the arrival time stands
    assert (state.offset, state.catching_up) == (2821, False)


def test_data_ends_a_waiting_note_but_not_a_problem() -> None:
    state = SourceState(LOG)
    state.read_progress(size=0, offset=0, mtime=None, catching_up=False, got_data=False, note="waiting for the file")
    assert state.note == "waiting for the file"
    state.read_progress(size=10, offset=10, mtime=None, catching_up=False, got_data=False, note=None)
    assert state.note == "waiting for the file"  # no data yet: still waiting
    state.read_progress(size=20, offset=20, mtime=None, catching_up=False, got_data=True, note=None)
    assert state.note == ""
    state.read_progress(size=5, offset=5, mtime=None, catching_up=False, got_data=False, note="file truncated")
    state.read_progress(size=30, offset=30, mtime=None, catching_up=False, got_data=True, note=None)
    assert state.note == "file truncated"  # data does not clear a problem
    state.read_progress(size=30, offset=30, mtime=None, catching_up=False, got_data=True, note="rotated")
    assert state.note == "rotated"  # a new note replaces the last one


def test_note_if_none_keeps_the_first_note() -> None:
    state = SourceState(LOG)
    assert state.note_if_none("unreadable: permission denied")
    assert not state.note_if_none("is a directory")
    assert state.note == "unreadable: permission denied"


def test_caught_up_is_the_first_time_the_reader_reached_the_end() -> None:
    state = SourceState(LOG)
    assert state.caught_up_monotonic is None
    state.caught_up()
    first = state.caught_up_monotonic
    assert first is not None
    time.sleep(0.01)
    state.caught_up()
    assert state.caught_up_monotonic == first


def test_parse_counts_are_copied_and_ranks_made_a_set() -> None:
    state = SourceState(LOG)
    state.parse_counts(
        formats=["megatron", "deepspeed"],
        lines=7046,
        not_understood=12,
        duplicate_steps=1,
        parser_errors=0,
        ranks_seen=(r for r in (0, 1, 1, 3)),
    )
    assert state.formats == ["megatron", "deepspeed"]
    assert (state.lines, state.not_understood, state.duplicate_steps, state.parser_errors) == (7046, 12, 1, 0)
    assert state.ranks_seen == {0, 1, 3}


def test_end_stops_catching_up() -> None:
    state = SourceState(LOG)
    state.read_progress(size=10, offset=5, mtime=None, catching_up=True, got_data=True, note=None)
    state.end()
    assert state.ended and not state.catching_up


def test_path_and_follow_mode() -> None:
    state = SourceState(LOG)
    state.set_path("/runs/out.log")
    state.set_follow_mode("polling (nfs)")
    assert (state.path, state.follow_mode) == ("/runs/out.log", "polling (nfs)")


# ------------------------------------------------------------------ sources and version
def test_source_is_made_once_and_counts_as_a_change() -> None:
    store = Store()
    v = store.version
    state = store.source(LOG)
    assert store.version == v + 1 and store.sources == {LOG: state}
    assert store.source(LOG) is state
    assert store.version == v + 1  # an existing source is no change


def test_drop_source_forgets_it_and_counts_as_a_change() -> None:
    store = Store()
    store.source("runs/")
    store.source(LOG)
    v = store.version
    store.drop_source("runs/")
    assert list(store.sources) == [LOG] and store.version == v + 1
    store.drop_source("never-seen")
    assert list(store.sources) == [LOG]


def test_records_of_a_new_source_give_it_a_state() -> None:
    store = Store()
    store.add_many([step(100)])
    assert isinstance(store.sources[LOG], SourceState) and store.sources[LOG].lock is store.lock


def test_version_grows_once_per_batch() -> None:
    store = Store()
    v = store.version
    store.add_many([step(i) for i in range(5, 55, 5)])
    assert store.version == v + 1 and store.records_added == 10
    store.add(step(60))
    assert store.version == v + 2
    store.add_many([])
    assert store.version == v + 3  # a read that parsed nothing still redraws its progress
    store.touch()
    assert store.version == v + 4


def test_derived_is_computed_again_only_after_a_change() -> None:
    store = Store()
    store.add_many([step(5)])
    calls: list[int] = []

    def steps_seen() -> int:
        calls.append(1)
        return len(store.series_for("loss")[RankKey(LOG, 0)])

    assert store.derived("points", steps_seen) == 1
    assert store.derived("points", steps_seen) == 1
    assert len(calls) == 1
    assert store.derived("other", lambda: "x") == "x"  # a name of its own
    store.add_many([step(10)])
    assert store.derived("points", steps_seen) == 2 and len(calls) == 2


# ------------------------------------------------------------------ records
def test_steps_fill_series_latest_values_and_total_steps() -> None:
    store = Store()
    key = RankKey(LOG, 0)
    store.add_many(
        [
            Step(LOG, 0, 100, "2020-12-12T00:01:20.672", 479, {"loss": 9.598, "lr": 1.5e-06, "total_steps": 1e6}),
            Step(LOG, 0, 105, "2020-12-12T00:01:23.000", 490, {"loss": 9.512}),
        ]
    )
    assert store.total_steps == 1_000_000
    assert store.get_series(LOG, 0, "total_steps") is None  # a bound, not a curve
    loss = store.get_series(LOG, 0, "loss")
    assert loss is not None and list(loss.steps) == [100.0, 105.0] and list(loss.values) == [9.598, 9.512]
    assert store.latest[key] == {"loss": 9.512, "lr": 1.5e-06, "total_steps": 1e6}
    assert store.latest_step[key] == 105
    assert store.series_names(key) == ["loss", "lr"]
    assert store.metric_names() == ["loss", "lr"]
    assert abs(store.last_log_time[key] - store.first_log_time - 2.328) < 1e-6  # newest minus first log time


def test_steps_without_a_number_are_counted_along() -> None:
    store = Store()
    store.add_many([step(None, loss) for loss in (3.0, 2.5, 2.0)])
    loss = store.get_series(LOG, 0, "loss")
    assert loss is not None and list(loss.steps) == [1.0, 2.0, 3.0]
    assert RankKey(LOG, 0) not in store.latest_step


def test_phases_events_and_ranks() -> None:
    store = Store()
    store.add_many(
        [
            Phases(LOG, 1, 100, None, 482, {"forward": 0.318, "backward": 0.502}),
            Phases(LOG, 1, 105, None, 492, {"forward": 0.320}),
            Event(LOG, 3, 523, None, 3553, "overflow", "warning", "OVERFLOW!", {"attempted_scale": 65536}),
            Event(LOG, 3, 524, None, 3560, "overflow", "warning", "OVERFLOW!", {"attempted_scale": 32768}),
        ]
    )
    assert store.ranks == {1, 3}
    assert store.latest_phases[RankKey(LOG, 1)] == {"forward": 0.320, "backward": 0.502}
    forward = store.get_series(LOG, 1, "forward", kind="phase")
    assert forward is not None and list(forward.values) == [0.318, 0.320]
    assert store.metric_names("phase") == ["backward", "forward"] and store.metric_names() == []
    assert store.event_counts["overflow"] == 2 and len(store.events) == 2


def test_the_same_rank_on_two_nodes_is_two_streams() -> None:
    store = Store()
    store.add_many([step(5, 9.0, host="worker-0"), step(5, 8.0, host="worker-1")])
    by_owner = store.series_for("loss")
    assert set(by_owner) == {RankKey(LOG, 0, "worker-0"), RankKey(LOG, 0, "worker-1")}
    assert store.get_series(LOG, 0, "loss", host="worker-1").values[0] == 8.0  # type: ignore[union-attr]
    assert store.ranks == {0}


def test_sources_then_nodes_then_ranks_in_numeric_order() -> None:
    keys = [RankKey("rank_10.log", 0), RankKey("rank_2.log", 1), RankKey("rank_2.log", 0), RankKey("a", None)]
    assert sorted(keys, key=key_order) == [
        RankKey("a", None),
        RankKey("rank_2.log", 0),
        RankKey("rank_2.log", 1),
        RankKey("rank_10.log", 0),
    ]


def test_latest_step_follows_a_restart_but_not_a_step_back_by_one() -> None:
    store = Store()
    key = RankKey(LOG, 0)
    store.add_many([step(10), step(9)])  # a late line of the step before
    assert store.latest_step[key] == 10
    store.add_many([step(1)])  # the counter starting over
    assert store.latest_step[key] == 1


# ------------------------------------------------------------------ attempts
def test_a_relaunch_is_an_attempt_with_its_own_span() -> None:
    store = Store()
    key = RankKey(LOG, 0)
    store.add_many([step(n) for n in range(5, 201, 5)])
    store.add_many([step(n, attempt=1) for n in range(5, 151, 5)])
    assert store.current_attempt == 1 and store.key_attempt[key] == 1
    assert store.attempt_span[(0, key)] == (5, 200)
    assert store.attempt_span[(1, key)] == (5, 150)
    assert store.latest_step[key] == 150


def test_an_event_of_a_newer_attempt_moves_the_current_attempt_only() -> None:
    store = Store()
    key = RankKey(LOG, 0)
    store.add_many([step(5), Event(LOG, None, None, None, 40, "launch", "info", "relaunched", attempt=2)])
    assert store.current_attempt == 2
    assert store.key_attempt[key] == 0 and (2, key) not in store.attempt_span


# ------------------------------------------------------------------ bounded memory
def test_a_long_run_stays_bounded() -> None:
    store = Store(capacity=64)
    key = RankKey(LOG, 0)
    store.add_many([step(n, loss=1.0 if n != 1234 else 50.0) for n in range(1, 20_001)])
    loss = store.get_series(LOG, 0, "loss")
    assert loss is not None and len(loss) <= 64 and loss.count == 20_000
    assert 50.0 in loss.values  # the spike survives
    assert loss.last_step == 20_000.0 and store.latest[key]["loss"] == 1.0
    assert len(store.observations[key]) == CADENCE_WINDOW
    assert store.observations[key][-1].step == 20_000


def test_events_are_bounded_but_counted() -> None:
    store = Store()
    n = MAX_EVENTS + 100
    store.add_many(Event(LOG, 0, i, None, i, "overflow", "warning", "OVERFLOW!") for i in range(n))
    assert len(store.events) == MAX_EVENTS and store.events[0].step == 100
    assert store.event_counts["overflow"] == n


# ------------------------------------------------------------------ per-name index
def test_the_per_name_index_finds_what_a_scan_of_every_series_finds() -> None:
    """Charts and findings ask for one metric (or phase) of every rank several times a second:
    the store answers from an index kept as series appear, the same series, in the same order,
    as a scan of all of them (seeds 002 and 004: metrics and phases)."""
    from conftest import seed

    from trainwatch.pipeline import Pipeline

    for name in ("002", "004"):
        pipeline = Pipeline([str(seed(name))])
        pipeline.read_to_end()
        store = pipeline.store
        kinds = {k.kind for k in store.series}
        assert "metric" in kinds and (name != "004" or "phase" in kinds)
        for kind in kinds:
            names = sorted({k.name for k in store.series if k.kind == kind})
            assert store.metric_names(kind) == names
            assert store.owners(kind) == {k.owner for k in store.series if k.kind == kind}
            for metric in names:
                scan = [(k, s) for k, s in store.series.items() if k.kind == kind and k.name == metric]
                assert [(k, id(s)) for k, s in store.series_named(metric, kind)] == [(k, id(s)) for k, s in scan]
                assert store.series_for(metric, kind) == {k.owner: s for k, s in scan}
        assert store.owners() == {k.owner for k in store.series}
        assert store.series_for("loss")


def test_an_owner_without_a_series_is_not_one_of_the_owners() -> None:
    """A step record holding only `total_steps` (kept as the run's total, not as a series) makes
    no series: its rank is not listed among the owners of series."""
    store = Store()
    store.add(Step(LOG, 3, 1, None, 1, {"total_steps": 100.0}))
    store.add(step(1, rank=0))
    assert store.owners() == {RankKey(LOG, 0)} == {k.owner for k in store.series}
    assert store.total_steps == 100
