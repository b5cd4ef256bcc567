"""The field reader on the labels and line forms particular frameworks print (each case names its source)."""

from __future__ import annotations

import pytest
from _feed import feed, steps


def _steps(lines: list[str]) -> list[tuple[int | None, dict[str, float]]]:
    return [(s.step, dict(s.metrics)) for s in steps(feed(lines))]


def test_mingpt_iter_dt_is_the_step_time() -> None:
    # karpathy/minGPT projects/chargpt: print(f"iter_dt {trainer.iter_dt * 1000:.2f}ms; iter {trainer.iter_num}: ...")
    got = _steps(["iter_dt 7797.46ms; iter 2: train loss 2.60938", "iter_dt 5743.34ms; iter 4: train loss 2.49033"])
    assert got == [
        (2, {"step_time_s": pytest.approx(7.79746), "loss": 2.60938}),
        (4, {"step_time_s": pytest.approx(5.74334), "loss": 2.49033}),
    ]
