"""Profiler tables -> the step breakdown they imply (trainwatch.diagnosis.profile_phases).

Tables: seed 000 (Lightning SimpleProfiler `FIT Profiler Report`), seed 001 (torch.profiler
key_averages of a DeepSpeed MoE step), both read through the real Pipeline; the DeepSpeed flops
profiler numbers are the BERT-Large example of microsoft/DeepSpeed docs/_tutorials/flops-profiler.md.
"""

from __future__ import annotations

import pytest
from conftest import seed

from trainwatch.diagnosis.findings import findings
from trainwatch.diagnosis.profile_phases import profile_breakdown, profile_data_share, profile_top, row_phase
from trainwatch.pipeline import Pipeline
from trainwatch.records import Profile
from trainwatch.store.store import Store


def _store(prefix: str) -> Store:
    pipeline = Pipeline([str(seed(prefix))])
    pipeline.read_to_end()
    return pipeline.store


def _profile(prefix: str) -> Profile:
    (profile,) = _store(prefix).profiles
    return profile


def test_lightning_simple_profiler_seed_000() -> None:
    b = profile_breakdown(_profile("000"))
    assert b is not None
    assert b.basis == "of the profiled time" and b.total_s == pytest.approx(1774.1)  # the `Total` row
    shares = {p.name: p.share for p in b.phases}
    assert list(shares) == ["data", "forward", "backward", "optimizer", "other"]
    data, forward, backward = b.phase("data"), b.phase("forward"), b.phase("backward")
    assert data is not None and data.rows == ("get_train_batch",)  # holds fetch_next_train_batch
    assert data.seconds == pytest.approx(57.932)
    assert forward is not None and forward.rows == ("model_forward",)  # holds training_step
    assert forward.seconds == pytest.approx(892.33)
    assert backward is not None and backward.seconds == pytest.approx(675.55)
    # optimizer_step_with_closure_0 (254.52 s, 1000 calls) runs the closure of 1000 of the 8000
    # forward+backward calls: 254.52 - (892.33 + 675.55) / 8, plus zero_grad 1.3591 s.
    optimizer = b.phase("optimizer")
    assert optimizer is not None
    assert optimizer.seconds == pytest.approx(254.52 - (892.33 + 675.55) / 8 + 1.3591)
    assert sum(p.share for p in b.phases) == pytest.approx(1.0)
    assert shares["other"] == pytest.approx(0.05, abs=0.01)  # hooks, validation, setup
    assert b.comm is None


def test_torch_profiler_seed_001_step_and_collectives() -> None:
    b = profile_breakdown(_profile("001"))
    assert b is not None
    assert b.basis == "of the profiled step (train_step-0)" and b.total_s == pytest.approx(3.916)
    forward = b.phase("forward")
    assert forward is not None and forward.seconds == pytest.approx(3.796)
    assert b.phase("backward") is not None and b.phase("backward").seconds == pytest.approx(0.081523)  # type: ignore[union-attr]
    assert b.phase("data") is None  # this table has no DataLoader row
    optimizer = b.phase("optimizer")
    assert optimizer is not None
    # `optimizer` (1.599 ms) holds Optimizer.step#Adam.step (1.308 ms); zero_grad and clip-grads are apart
    assert optimizer.seconds == pytest.approx(0.001599 + 0.000082 + 0.003135)
    # the collectives sit inside forward/backward: reported apart, not stacked
    assert b.comm is not None and "nccl:_all_gather_base" in b.comm.rows
    assert b.comm.share == pytest.approx(0.96, abs=0.01)
    assert sum(p.share for p in b.phases) == pytest.approx(1.0)


def test_deepspeed_flops_profiler_latencies() -> None:
    row = {"name": "summary", "fwd_latency_s": 0.07667, "bwd_latency_s": 0.10802, "step_latency_s": 3.409e-05}
    row["iter_latency_s"] = 0.18473
    profile = Profile("out.log", None, 10, None, 2, "DeepSpeed Flops Profiler", "deepspeed_flops", (row,))
    b = profile_breakdown(profile)
    assert b is not None and b.basis == "of the iteration latency"
    assert [p.name for p in b.phases] == ["forward", "backward", "optimizer"]
    assert b.phase("backward").share == pytest.approx(0.10802 / 0.18473)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "phase"),
    [
        ("get_train_batch", ("data", "fetch")),  # seed 000
        ("model_forward", ("forward", "forward")),
        ("training_step", ("forward", "forward")),
        ("training_step_and_backward", None),  # holds forward and backward
        ("on_before_zero_grad", None),  # a hook, not the zero_grad itself
        ("on_before_optimizer_step", None),
        ("run_training_batch", None),
        ("Optimizer.zero_grad#Adam.zero_grad", ("optimizer", "zero_grad")),  # seed 001
        ("nccl:_all_gather_base", ("comm", "all_gather")),
        ("_AllToAllBackward", ("comm", "all_to_all")),
        ("NllLossBackward", None),
        # jeremyjordan/midi-lm PR 7 (Lightning PyTorchProfiler table)
        ("[pl][profile]run_training_batch", None),
        ("Optimizer.step#AdamW.step", ("optimizer", "step")),
    ],
)
def test_row_names(name: str, phase: tuple[str, str] | None) -> None:
    assert row_phase(name) == phase


def test_one_mapping_for_the_dataloader_finding() -> None:
    store = _store("000")
    found = profile_data_share(list(store.profiles))
    assert found is not None
    breakdown, data = found
    assert breakdown.profile.title == "FIT Profiler Report"
    assert data.rows == ("get_train_batch",) and data.share == pytest.approx(57.932 / 1774.1)
    # 3% data loading is not worth a finding
    assert not [f for f in findings(store) if f.kind == "dataloader_bound"]


def test_profile_top_without_a_100_percent_has_no_shares() -> None:
    rows = ({"name": "forward", "total_time_s": 2.0}, {"name": "backward", "total_time_s": 3.0}, {"name": "x"})
    top = profile_top(Profile("t.log", None, None, None, 1, "report", "lightning_simple", rows), n=1)
    assert top is not None and top.total_s is None
    assert [(r.name, r.seconds, r.share) for r in top.rows] == [("backward", 3.0, None)]


def test_profile_top_seed_000_leaves_out_the_total_row() -> None:
    top = profile_top(_profile("000"))
    assert top is not None and top.total_s == pytest.approx(1774.1)
    assert [r.name for r in top.rows][:2] == ["run_training_epoch", "run_training_batch"]
    assert top.rows[0].share == pytest.approx(0.98676, abs=1e-4)
