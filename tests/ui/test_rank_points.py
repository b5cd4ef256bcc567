"""A chart of 256 per-rank files folds its ranks per point once and keeps that between redraws
(`RankPoints`): the band it draws is the one computed from every rank's points each time."""

from __future__ import annotations

import math
import random
from array import array

from trainwatch.ui.data import Band, Trace, rank_band
from trainwatch.ui.data.rank_points import RankPoints


def ranks(n_ranks: int, n: int, rng: random.Random) -> list[Trace]:
    steps = array("d", range(1, n + 1))
    return [
        Trace(f"rank {r}", array("d", steps), array("d", (rng.uniform(1, 3) for _ in range(n)))) for r in range(n_ranks)
    ]


def assert_same_band(folded: Band, plain: Band) -> None:
    assert (folded.xs, folded.low, folded.high, folded.counts) == (plain.xs, plain.low, plain.high, plain.counts)
    assert all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(folded.mean, plain.mean, strict=True))


def test_folded_band_equals_the_band_of_every_rank_as_the_ranks_grow() -> None:
    rng = random.Random(5)
    traces = ranks(40, 300, rng)
    points = RankPoints()
    for columns in (30, 7, 120):
        assert_same_band(rank_band(traces, columns, points=points), rank_band(traces, columns))
    assert points.folds == 300  # a new width: nothing folded again
    for step in range(301, 311):  # every rank logs ten more steps, some ranks a step ahead of the others
        for r, t in enumerate(traces):
            for ahead in (step, step + 1) if step == 310 or r % 3 else (step,):
                if ahead > t.xs[-1]:
                    t.xs.append(ahead)
                    t.ys.append(rng.uniform(1, 3))
        assert_same_band(rank_band(traces, 30, points=points), rank_band(traces, 30))
    assert points.folds == 311  # only the new points were folded


def test_a_changed_point_or_a_rank_off_the_shared_steps_is_reduced_as_it_is_now() -> None:
    rng = random.Random(6)
    traces = ranks(12, 100, rng)
    points = RankPoints()
    rank_band(traces, 20, points=points)
    traces[3].ys[10] = 50.0  # a series rewritten (compacted, another attempt): fold again
    band = rank_band(traces, 20, points=points)
    assert_same_band(band, rank_band(traces, 20))
    assert max(band.high) == 50.0
    late = Trace("rank 12", array("d", range(50, 100)), array("d", [0.5] * 50))  # joined at step 50
    traces.append(late)
    band = rank_band(traces, 20, points=points)
    assert_same_band(band, rank_band(traces, 20))
    assert min(band.low) == 0.5
    traces[0].ys[99] = math.nan  # a NaN: every rank reduced on its own, the NaN left out
    assert_same_band(rank_band(traces, 20, points=points), rank_band(traces, 20))
