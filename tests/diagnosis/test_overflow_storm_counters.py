"""overflow_storm from DeepSpeed's cumulative `skipped=` counter and from overflows at the minimum scale.

Values: deepspeedai/DeepSpeed issue #931 (a healthy fp16 run: `step=10, skipped=6` after the initial
scale search, `step=510, skipped=8` after two more overflows); liguodongiot/llm-action
train/megatron-deepspeed/microsoft/llama-note.md (`step=2499, skipped=1585`, `step=2500, skipped=1586`);
huggingface/transformers issue #14531 (`Attempted loss scale: 1, reducing to 1` on every step)."""

from __future__ import annotations

from realdata import store_of

from trainwatch.diagnosis.findings import findings
from trainwatch.records import Event, Step


def _kinds(records: list) -> list[str]:  # type: ignore[type-arg]
    return [f.kind for f in findings(store_of(records, mtime=1000.0), now=1001.0)]


def test_skips_of_the_initial_scale_search_and_rare_later_ones_are_no_storm() -> None:
    records = [
        Step("ds.log", 0, 10, None, 1, {"skipped": 6.0, "loss": 9.1}),
        Step("ds.log", 0, 500, None, 2, {"skipped": 6.0, "loss": 7.2}),
        Step("ds.log", 0, 510, None, 3, {"skipped": 8.0, "loss": 7.1}),
    ]
    assert "overflow_storm" not in _kinds(records)


def test_most_steps_skipped_is_a_storm() -> None:
    records = [
        Step("ds.log", 0, 2499, None, 1, {"skipped": 1585.0, "loss": 13.4013}),
        Step("ds.log", 0, 2500, None, 2, {"skipped": 1586.0, "loss": 12.5495}),
    ]
    (storm,) = [f for f in findings(store_of(records, mtime=1000.0), now=1001.0) if f.kind == "overflow_storm"]
    assert storm.message == "DeepSpeed skipped 1586 of 2500 steps for overflows"


def _at_floor(n: int) -> list[Event]:
    msg = "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1"
    data = {"attempted_scale": 1, "new_scale": 1}
    return [Event("t5.log", 0, None, None, i, "overflow", "warning", msg, data) for i in range(1, n + 1)]


def test_overflows_at_the_minimum_scale_are_a_storm_from_the_third() -> None:
    assert "overflow_storm" not in _kinds(_at_floor(2))
    assert "overflow_storm" in _kinds(_at_floor(3))
