"""MaxText golden lines. Sources: AI-Hypercomputer/maxtext PR #4847 (absl-prefixed, lm_loss/perplexity),
issue #8 (older `TFLOP/s` form), PR #2232 (docs example with total_weights)."""

from __future__ import annotations

import pytest
from _feed import feed, steps
from _pipeline import read_steps
from conftest import SAMPLES

from trainwatch.parsers.formats.maxtext import MaxTextParser


def test_current_line() -> None:
    # AI-Hypercomputer/maxtext PR #2232
    line = "completed step: 9, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: 8672.758, total_weights: 196608, loss: 10.374"
    (s,) = steps(feed([line], [MaxTextParser()]))
    assert s.step == 9
    assert s.metrics == {
        "step_time_s": 5.667,
        "tflops": 134.924,
        "tokens_per_s_per_gpu": 8672.758,
        "total_weights": 196608,
        "loss": 10.374,
    }


def test_old_line() -> None:
    # AI-Hypercomputer/maxtext#8
    (s,) = steps(feed(["completed step: 15107, seconds: 2.167, TFLOP/s: 36.722, loss: 2.191"], [MaxTextParser()]))
    assert (s.step, s.metrics) == (15107, {"step_time_s": 2.167, "tflops": 36.722, "loss": 2.191})


def test_sample_absl_prefix() -> None:
    got = read_steps(SAMPLES / "maxtext__pr4847_gemma.log")
    assert [s.step for s in got] == [1, 2, 3]
    assert got[1].metrics["lm_loss"] == pytest.approx(12.98)
    assert got[1].metrics["perplexity"] == pytest.approx(433463.719)
