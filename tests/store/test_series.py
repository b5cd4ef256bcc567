"""Series stay bounded and keep what a chart must show; the store indexes records by rank."""

from __future__ import annotations

import math

from trainwatch.records import Event, Phases, Step
from trainwatch.store import Store
from trainwatch.store.series import Series
from trainwatch.store.store import RankKey


def test_series_is_bounded_and_keeps_spikes() -> None:
    s = Series(capacity=1000)
    for i in range(100_000):
        s.append(float(i), 1.0 if i != 12_345 else 99.0)
    assert len(s) <= 1000
    assert 99.0 in s.values  # a spike survives compaction
    assert s.count == 100_000
    # the newest points are exact
    assert list(s.steps[-10:]) == [float(i) for i in range(99_990, 100_000)]
    # steps stay in order
    assert all(a <= b for a, b in zip(s.steps, s.steps[1:], strict=False))


def test_series_keeps_nan_points() -> None:
    s = Series(capacity=64)
    for i in range(500):
        s.append(float(i), math.nan if i % 7 == 0 else float(i))
    assert len(s) <= 64
    assert any(math.isnan(v) for v in s.values[-40:])


def test_store_indexes_by_source_and_rank() -> None:
    store = Store()
    store.add_many(
        [
            # seed 004, iteration 100 (merged with DeepSpeed step=100)
            Step(
                "out.log",
                0,
                100,
                "2020-12-12T00:01:20.672",
                479,
                {"loss": 9.598498, "lr": 1.5e-06, "total_steps": 1000000.0},
            ),
            Phases("out.log", 0, 100, None, 482, {"forward": 0.31849, "backward": 0.50188}),
            Event("out.log", 0, 523, None, 3553, "overflow", "warning", "OVERFLOW!", {"attempted_scale": 65536}),
        ]
    )
    assert store.total_steps == 1_000_000
    assert store.latest[RankKey("out.log", 0)]["loss"] == 9.598498
    assert store.latest_step[RankKey("out.log", 0)] == 100
    loss = store.get_series("out.log", 0, "loss")
    assert loss is not None and list(loss.values) == [9.598498]
    assert store.get_series("out.log", 0, "forward", kind="phase") is not None
    assert store.event_counts["overflow"] == 1
    assert store.ranks == {0}
    v = store.version
    store.touch()
    assert store.version == v + 1
