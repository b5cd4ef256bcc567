"""The training loss around an evaluation (`overfit._near`): the median of the five finite
points nearest its step, found outward from the step's place in a series in step order, and
the same as ranking every point by distance (then value) for any series, relaunched or not."""

from __future__ import annotations

import math
import random

from trainwatch.diagnosis.overfit import TRAIN_WINDOW, _near
from trainwatch.diagnosis.window import median


def ranked(steps: list[float], values: list[float], at: float) -> float:
    finite = sorted((abs(s - at), v) for s, v in zip(steps, values, strict=True) if math.isfinite(v))
    return median([v for _, v in finite[:TRAIN_WINDOW]]) if finite else math.nan


def test_the_points_nearest_an_evaluation_in_order_or_not() -> None:
    rng = random.Random(3)
    for _ in range(3000):
        n = rng.randint(0, 40)
        steps = sorted(float(rng.randint(0, 30)) if rng.random() < 0.5 else rng.random() * 30 for _ in range(n))
        if rng.random() < 0.2:
            rng.shuffle(steps)  # a relaunch writes lower steps again
        values = [rng.choice([float(rng.randint(0, 5)), math.nan, rng.random(), math.inf]) for _ in range(n)]
        at = float(rng.randint(-3, 33)) if rng.random() < 0.5 else rng.random() * 30
        got, want = _near(steps, values, at), ranked(steps, values, at)
        assert got == want or (math.isnan(got) and math.isnan(want)), (steps, values, at, got, want)


def test_equally_near_points_give_the_lower_values() -> None:
    # steps 8 and 12 are both 2 from 10: with the three at 9, 10, 11 the window is full at the
    # lower of the two ties' values
    steps = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0]
    values = [100.0, 5.0, 1.0, 2.0, 3.0, 4.0, 100.0]
    assert _near(steps, values, 10.0) == median([1.0, 2.0, 3.0, 4.0, 5.0]) == 3.0
    assert math.isnan(_near(steps, [math.nan] * 7, 10.0))  # none finite
