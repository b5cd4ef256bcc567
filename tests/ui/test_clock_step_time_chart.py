"""A clock printed where a step time would be (`step 4360 | loss 0.195 | 2137.9s`, seconds since the run
began) is charted as the step time it says, its rise per step: not its first prints, which the reader took
for step times until it knew."""

from __future__ import annotations

from pathlib import Path

from trainwatch.pipeline import Pipeline
from trainwatch.ui.data import chart_traces


def _step_time_trace(tmp_path: Path, lines: list[str]) -> list[float]:
    log = tmp_path / "train.log"
    log.write_text("".join(f"{line}\n" for line in lines))
    pipeline = Pipeline([str(log)])
    pipeline.read_to_end()
    (trace,) = chart_traces(pipeline.store, "step_time_s", last_n=None, wall_time=False)[0]
    return list(trace.ys)


def test_the_step_time_chart_of_a_clock_is_its_pace(tmp_path: Path) -> None:
    ys = _step_time_trace(
        tmp_path, [f"step {s:6d} | loss {2 - s / 1e4:.6f} | {0.5 * s + 60:.1f}s" for s in range(10, 2010, 10)]
    )
    assert len(ys) > 100 and all(abs(y - 0.5) < 1e-9 for y in ys)  # (not 65 s, 70 s, ... rising)


def test_a_step_time_is_charted_as_printed(tmp_path: Path) -> None:
    ys = _step_time_trace(
        tmp_path, [f"step {s:6d} | loss {2 - s / 1e4:.6f} | {0.3 + (s % 7) / 100:.2f}s" for s in range(10, 510, 10)]
    )
    assert ys[-3:] == [round(0.3 + (s % 7) / 100, 2) for s in (480, 490, 500)]
