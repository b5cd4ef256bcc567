"""Nested timers are listed under the timer that contains them, never as rival shares."""

from __future__ import annotations

from trainwatch.diagnosis.phases import phase_parent, phase_tree


def test_deepspeed_timers_nest_under_backward_and_step() -> None:
    # Median shares of seed 002 (DeepSpeed ZeRO-1 wall_clock_breakdown, rank 0).
    shares = {
        "backward": 0.570,
        "backward_inner": 0.564,
        "backward_allreduce": 0.005,
        "forward": 0.199,
        "step": 0.082,
        "optimizer_allgather": 0.019,
    }
    tree = phase_tree(shares)
    assert [(n, d) for n, _, d in tree] == [
        ("backward", 0),
        ("backward_inner", 1),
        ("backward_allreduce", 1),
        ("forward", 0),
        ("step", 0),
        ("optimizer_allgather", 1),
    ]
    top = sum(s for _, s, d in tree if d == 0)
    assert top <= 1.0


def test_a_child_without_its_parent_is_top_level() -> None:
    # Megatron-only timers: no DeepSpeed `step`, so optimizer_* belong to Megatron's `optimizer`.
    assert phase_parent("optimizer_step", {"optimizer": 0.09}) == "optimizer"
    assert phase_parent("optimizer_step", {"forward": 0.3}) is None
    assert [n for n, _, d in phase_tree({"optimizer_step": 0.05, "forward": 0.3}) if d == 0] == [
        "forward",
        "optimizer_step",
    ]
