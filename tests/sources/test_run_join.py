"""Which text log a record file belongs to (`discover.run_log`), the join's rule per step and metric
(`sources/records/join.py`), the store taking a step's later part, and the writers' CI guard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from real_writers import need

from trainwatch.records import Step
from trainwatch.sources.discover import run_log
from trainwatch.sources.records.join import RunJoin
from trainwatch.store.store import RankKey, Store


def test_run_log_is_the_nearest_directorys_one_text_log(tmp_path: Path) -> None:
    root = str(tmp_path)
    log = os.path.join(root, "nohup.out")
    events = os.path.join(root, "runs", "Nov24_node1", "events.out.tfevents.1.node1")
    state = os.path.join(root, "checkpoint-500", "trainer_state.json")
    assert run_log(events, [log], root) == log
    assert run_log(state, [log, os.path.join(root, "train.err")], root) == log  # stderr files are not the log
    assert run_log(state, [log, os.path.join(root, "rank1.log")], root) is None  # two logs: not guessed
    nearer = os.path.join(root, "checkpoint-500", "train.log")
    assert run_log(state, [log, nearer], root) == nearer
    # not above the directory PATH it was found under
    assert run_log(events, [log], os.path.join(root, "runs")) is None
    assert run_log(events, [], root) is None


def step(source: str, step_no: int | None, rank: int | None = None, **metrics: float) -> Step:
    return Step(source, rank, step_no, None, 1, metrics)


def test_join_first_value_kept_new_names_join_the_step() -> None:
    join = RunJoin("nohup.out")
    got = join.from_log([step("nohup.out", 10, loss=2.5, lr=1e-4)])
    assert got == [(step("nohup.out", 10, loss=2.5, lr=1e-4), False)]
    got = join.from_file([step("events", 10, loss=2.4999, grad_norm=1.5), step("events", 20, loss=2.25)])
    assert [(r.source, r.step, dict(r.metrics), part) for r, part in got] == [  # type: ignore[union-attr]
        ("nohup.out", 10, {"grad_norm": 1.5}, True),  # the log's loss kept; grad_norm joins step 10
        ("nohup.out", 20, {"loss": 2.25}, False),  # a step the log has not shown yet
    ]
    got = join.from_log([step("nohup.out", 20, loss=2.25, lr=9e-5)])
    assert [(r.step, dict(r.metrics), part) for r, part in got] == [(20, {"lr": 9e-5}, True)]  # type: ignore[union-attr]


def test_join_a_step_less_dict_takes_the_record_files_step_by_its_values() -> None:
    join = RunJoin("nohup.out")
    join.from_file([step("trainer_state.json", 10, loss=2.4817, lr=5e-05, epoch=0.25)])
    got = join.from_log([step("nohup.out", None, loss=2.482, lr=5e-05, epoch=0.25)])
    assert got == []  # all it printed was given at step 10
    other = step("nohup.out", None, loss=1.0, epoch=0.5)
    assert join.from_log([other]) == [(other, False)]  # no record-file step holds these values


def test_join_keeps_other_ranks_apart() -> None:
    join = RunJoin("out.log")
    join.from_log([step("out.log", 10, rank=0, loss=2.5)])
    got = join.from_file([step("metrics.jsonl", 10, rank=1, loss=2.75)])
    assert [(r.source, r.rank, dict(r.metrics), part) for r, part in got] == [  # type: ignore[union-attr]
        ("out.log", 1, {"loss": 2.75}, False)
    ]
    got = join.from_file([step("metrics.jsonl", 10, loss=2.5, mem_gib=3.0)])  # no rank: the log's (0)
    assert [(r.rank, dict(r.metrics), part) for r, part in got] == [(0, {"mem_gib": 3.0}, True)]  # type: ignore[union-attr]


def test_store_joins_a_part_to_the_stored_step() -> None:
    store = Store()
    store.add_many([step("nohup.out", 10, loss=2.5), step("nohup.out", 20, loss=2.25)])
    store.add_parts([step("nohup.out", 10, grad_norm=1.5)])
    key = RankKey("nohup.out", None)
    assert store.step_records[key] == 2
    assert [o.step for o in store.observations[key]] == [10, 20]
    assert store.latest_step[key] == 20  # a part of an older step is not a relaunch
    grad_norm = store.get_series("nohup.out", None, "grad_norm")
    assert grad_norm is not None and list(grad_norm.steps) == [10.0] and list(grad_norm.values) == [1.5]
    assert store.latest[key] == {"loss": 2.25, "grad_norm": 1.5}


def test_a_missing_writer_fails_under_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRAINWATCH_NEED_WRITERS", raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="writers"):
        need("trainwatch_no_such_writer")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        need("trainwatch_no_such_writer")
