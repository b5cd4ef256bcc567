"""Phase shares over the run on logs whose phase lines do not say their step; `other`, the printed step
time the phases leave unexplained."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwatch.diagnosis.shares import other_seconds, phase_keys, phase_trend
from trainwatch.pipeline import Pipeline

# Megatron's timers block printed before any `iteration` line: phases with no step to put them at.
STEPLESS = (
    "time (ms) | forward-compute: 310.12 | backward-compute: 620.50 | optimizer: 15.20\n"
    "time (ms) | forward-compute: 312.40 | backward-compute: 618.90 | optimizer: 15.10\n"
)


def test_phases_without_a_step_give_no_trend_and_no_crash(tmp_path: Path) -> None:
    log = tmp_path / "rank1.log"
    log.write_text(STEPLESS, encoding="utf-8")
    pipeline = Pipeline([str(log)])
    pipeline.read_to_end()
    keys = phase_keys(pipeline.store)
    assert keys, "the phases are recorded"
    for key in keys:
        assert phase_trend(pipeline.store, key, 24) == ([], [])


def test_other_is_the_printed_step_minus_the_phases() -> None:
    assert other_seconds(1.80, 1.57) == pytest.approx(0.23)
    assert other_seconds(1.0, 0.99) == 0.0  # under 2%: timer noise
    assert other_seconds(None, 1.0) == 0.0
