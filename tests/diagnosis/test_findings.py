"""findings() on stores built from real record values; healthy runs must stay silent."""

from __future__ import annotations

from realdata import SEED002, SEED002_STEPS, epoch, seed002_records, seed004_records, store_of

from trainwatch.diagnosis.findings import findings
from trainwatch.diagnosis.ranks import stragglers
from trainwatch.records import Event, Phases, Step

T004 = epoch("2020-12-12T05:58:34.376") + 10  # looked at while seed 004 was running
T002 = epoch("2024-02-20T10:44:10")


def _kinds(store, now):  # type: ignore[no-untyped-def]
    return [f.kind for f in findings(store, now=now)]


def test_healthy_megatron_run_has_no_findings() -> None:
    store = store_of(seed004_records(), mtime=T004 - 5)
    assert findings(store, now=T004) == []


def test_healthy_open_clip_run_has_no_findings_despite_warmup_step_and_overflows() -> None:
    # seed 002 before the SIGHUP: step 1 takes 38 s (18.97 s of it data loading: warm-up), 4 overflows
    store = store_of(seed002_records(with_tail=False), mtime=T002 - 5)
    assert findings(store, now=T002) == []


def test_seed002_crash_finding_explains_sighup_and_nohup() -> None:
    store = store_of(seed002_records(), mtime=1_760_000_000.0)
    found = findings(store, now=1_760_000_000.0)
    assert found[0].kind == "crash" and found[0].severity == "error"
    assert "after step 1601" in found[0].message
    assert "nohup does not protect it" in found[0].remedy


def test_dataloader_bound_from_the_profiling_tutorial_numbers() -> None:
    # seed 003 (SURF HPML profiling tutorial), Execution Summary: average step 134,511 us, DataLoader 98,504 us
    src = "train.log"
    records = [
        Step(src, None, i, None, i, {"step_time_s": 0.134511, "data_time_s": 0.098504, "loss": 2.3 - i * 0.001})
        for i in range(1, 61)
    ]
    store = store_of(records, mtime=1000.0)
    found = [f for f in findings(store, now=1001.0) if f.kind == "dataloader_bound"]
    assert len(found) == 1
    assert found[0].message.startswith("73% of the step is data loading")
    assert "num_workers" in found[0].remedy


def test_straggler_by_data_time_while_step_times_are_equal() -> None:
    # synchronous DP: every rank prints seed 002's Batch (t); rank 3 additionally waits 0.6 s for data
    # (ranks 0-2 print seed 002's real Data (t) values), so only its data time shows it.
    records = []
    for line, t, step, loss, _gn, _sc, _lr, data, batch, _sps in SEED002_STEPS:
        for r in range(4):
            records.append(
                Step(
                    SEED002,
                    r,
                    step,
                    t,
                    line * 4 + r,
                    {"loss": loss, "step_time_s": batch, "data_time_s": data + (0.6 if r == 3 else 0)},
                )
            )
    store = store_of(records, mtime=T002 - 5)
    assert [s.rank for s in stragglers(store)] == [3]
    found = [f for f in findings(store, now=T002) if f.kind == "straggler"]
    assert found and found[0].ranks == (3,) and "data loading" in found[0].message


def test_comm_bound_from_deepspeed_phases() -> None:
    # DeepSpeed wall_clock_breakdown shape (seed 002) with the all-reduce taking most of the backward
    src = "ds.log"
    records = [
        Phases(src, 0, i, None, i, {"forward": 0.36, "backward": 1.45, "backward_allreduce": 0.9, "step": 0.17})
        for i in range(1, 40)
    ]
    store = store_of(records, mtime=1000.0)
    found = [f for f in findings(store, now=1001.0) if f.kind == "comm_bound"]
    assert len(found) == 1 and found[0].message.startswith("45% of the step is communication")


def test_overflow_storm_but_not_the_initial_loss_scale_search() -> None:
    src = "ds.log"
    # DeepSpeed's start: scale 2^32 halves on each of the first steps (calibration, not a storm)
    records: list = [
        Event(
            src,
            0,
            i,
            None,
            i,
            "overflow",
            "warning",
            "OVERFLOW!",
            {"attempted_scale": 2.0 ** (32 - i), "new_scale": 2.0 ** (31 - i)},
        )
        for i in range(1, 13)
    ]
    records += [Step(src, 0, i, None, 100 + i, {"loss": 9.0, "loss_scale": 2.0**20}) for i in range(13, 60)]
    store = store_of(records, mtime=1000.0)
    assert "overflow_storm" not in _kinds(store, 1001.0)
    # later: every step overflows until the scale reaches 1
    records = [
        Step(src, 0, i, None, i, {"loss": 9.0, "loss_scale": 2.0 ** min(16, max(0, 16 - (i - 200)))})
        for i in range(1, 230)
    ]
    records += [
        Event(
            src,
            0,
            i,
            None,
            1000 + i,
            "overflow",
            "warning",
            "OVERFLOW!",
            {
                "attempted_scale": 2.0 ** min(16, max(0, 16 - (i - 200))),
                "new_scale": 2.0 ** min(15, max(0, 15 - (i - 200))),
            },
        )
        for i in range(200, 230)
    ]
    store = store_of(records, mtime=1000.0)
    storm = [f for f in findings(store, now=1001.0) if f.kind == "overflow_storm"]
    assert storm and "loss scale fell from 65536 to 1" in storm[0].message


def test_loss_spike_is_robust_to_normal_noise() -> None:
    # seed 004's real loss values are noisy (2.09 .. 2.22) but have no spike ...
    base = seed004_records()
    store = store_of(base, mtime=T004 - 5)
    assert "loss_spike" not in _kinds(store, T004)
    # ... a loss of 7.9 in their middle is one
    spiked = [
        Step(r.source, r.rank, r.step, r.time, r.line, {**r.metrics, "loss": 7.9}) if r.step == 22950 else r  # type: ignore[union-attr]
        for r in base
    ]
    store = store_of(spiked, mtime=T004 - 5)
    spikes = [f for f in findings(store, now=T004) if f.kind == "loss_spike"]
    assert spikes and spikes[0].steps == (22950,) and "loss jumped to 7.9 at step 22950" in spikes[0].message


def test_slowdown_trend_but_not_single_slow_steps() -> None:
    src = "train.log"
    # a checkpoint save makes every 50th step 10x slower: not a slowdown
    steady = [Step(src, None, i, None, i, {"step_time_s": 9.0 if i % 50 == 0 else 0.9}) for i in range(1, 301)]
    assert "slowdown" not in _kinds(store_of(steady, mtime=1000.0), 1001.0)
    # step time creeping from 0.9 s to 1.5 s
    creeping = [Step(src, None, i, None, i, {"step_time_s": 0.9 + 0.6 * i / 300}) for i in range(1, 301)]
    found = [f for f in findings(store_of(creeping, mtime=1000.0), now=1001.0) if f.kind == "slowdown"]
    assert found and found[0].message.startswith("step time rose from")


def test_nan_finding_names_first_step_and_metric() -> None:
    src = "train.log"
    records = [
        Step(src, 0, 522, None, 1, {"loss": 3.2}),
        Step(src, 0, 523, None, 2, {"loss": float("nan")}),
        Event(src, 0, 523, None, 2, "nan", "error", "loss is nan at step 523", {"metric": "loss"}),
    ]
    store = store_of(records, mtime=1000.0)
    nan = [f for f in findings(store, now=1001.0) if f.kind == "nan"]
    assert nan and nan[0].steps == (523,) and nan[0].message == "loss first became NaN/inf at step 523 (rank 0)"


def test_memory_pressure_from_mem_pct() -> None:
    src = "titan.log"
    records = [Step(src, 0, i, None, i, {"loss": 3.0, "mem_pct": 96.4}) for i in range(1, 20)]
    found = [f for f in findings(store_of(records, mtime=1000.0), now=1001.0) if f.kind == "memory_pressure"]
    assert found and "96%" in found[0].message
