"""How often the dashboard judges a growing run: by what a judgement cost the last time."""

from __future__ import annotations

import time

from trainwatch.ui.judging import JUDGE_SHARE, Judging
from trainwatch.ui.redraw import PACE_MAX_S


def judged_ago(cost: float, seconds: float) -> Judging:
    judging = Judging()
    judging.costs[True] = cost
    judging.started = time.monotonic() - seconds
    return judging


def test_one_ranks_judgement_comes_with_every_charts_redraw() -> None:
    # a few ms: judged again at the next charts redraw (1 s), the verdict never older than that
    assert judged_ago(0.004, 0.5).due()


def test_a_judgement_of_hundreds_of_ranks_takes_at_most_its_share_of_a_core() -> None:
    cost = 0.047  # 256 ranks
    assert cost / JUDGE_SHARE <= PACE_MAX_S + 0.5
    assert not judged_ago(cost, 2.5).due()  # (at a 2 % share it came every 2.4 s)
    assert judged_ago(cost, min(PACE_MAX_S, cost / JUDGE_SHARE) + 0.05).due()


def test_a_judgement_however_slow_is_never_later_than_the_pace_limit() -> None:
    assert judged_ago(0.5, PACE_MAX_S + 0.05).due()
    assert not judged_ago(0.5, PACE_MAX_S - 0.5).due()
