"""One step/pace/ETA line and a verdict with its parts as fields (README "One pace"): `check`,
`summary`, a running run's reason and the dashboard's header print the same step, pace and ETA,
and the header shows the verdict's `cause` as diagnosis returns it (no sentence cut apart).
Records: seed 004 (DeepSpeed + Megatron GPT-2, steps 5..23000 of 1,000,000), realdata.py."""

from __future__ import annotations

import math

from realdata import epoch, seed004_records, store_of

from trainwatch.diagnosis.check import check_line
from trainwatch.diagnosis.judge import Judgement
from trainwatch.diagnosis.progress import Progress, progress, progress_parts, progress_text
from trainwatch.diagnosis.status import run_status
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.diagnosis.window import pace_s
from trainwatch.store.store import RankKey
from trainwatch.ui.widgets.header import progress_line

LAST_004 = epoch("2020-12-12T05:58:34.376")  # seed 004's last timestamp (step 23000)


def test_the_pace_is_the_median_printed_step_time_and_the_eta_is_the_steps_left_at_it() -> None:
    store = store_of(seed004_records(), mtime=LAST_004)
    p = progress(store)
    (key,) = {k for k in store.latest_step}
    printed = pace_s(store.series[key.series_key("metric", "step_time_s")])
    assert (p.step, p.total) == (23000, 1_000_000)
    assert p.pace_s == printed and 0.85 < printed < 0.95  # seed 004 prints ~0.91 s per iteration
    assert p.eta_s == (1_000_000 - 23000) * printed


def test_check_summary_reason_and_header_print_one_line() -> None:
    store = store_of(seed004_records(), mtime=LAST_004)
    now = LAST_004 + 20  # 20 s after the last line: running
    status = run_status(store, now=now)
    assert status.state == "running"
    line = progress_text(status.progress_parts())
    eta = fmt_duration(status.eta_s)
    assert eta == "10d"  # 977,000 steps at ~0.91 s
    assert line == f"step 23000 of 1000000, 0.91s/step, ETA {eta}"
    assert check_line(store, now=now) == (0, f"running: {line}")
    assert status.reason.startswith("step 23000 of 1000000, 0.91s/step, last write ")
    header = progress_line(Judgement(status, (), now), progress(store), now).plain
    assert "step 23,000 of 1,000,000" in header and "0.91s/step" in header
    assert f"ETA {eta}" in header
    assert header.count("step 23") == 1  # the cause of a running run without news is empty
    assert status.cause == ""


def test_a_stall_has_its_cause_without_the_step_or_the_age() -> None:
    store = store_of(seed004_records(), mtime=LAST_004)
    now = LAST_004 + 5 * 3600
    status = run_status(store, now=now)
    assert status.reason == "no step for 5.0h after step 23000 (usual 0.91s/step) and no end marker"
    assert status.cause == "no new step (usual 0.91s/step) and no end marker"
    assert math.isnan(status.eta_s)  # a stalled run has no time left to count
    header = progress_line(Judgement(status, (), now), progress(store), now).plain
    assert "— no new step (usual 0.91s/step) and no end marker" in header
    assert "ETA" not in header and header.count("step 23") == 1 and "last write 5.0h ago" in header


def test_the_header_names_the_profiler_tab_the_diagnosis_only_counts_reports() -> None:
    from conftest import seed

    from trainwatch.pipeline import Pipeline

    pipeline = Pipeline([str(seed("000"))])  # a Lightning SimpleProfiler report and no training step
    pipeline.read_to_end()
    status = run_status(pipeline.store, now=0.0)
    header = progress_line(Judgement(status), progress(pipeline.store)).plain
    assert "UNKNOWN" in header and "no steps yet" in header
    assert "1 profiler report (Profiler tab, key 5))" in header


def test_a_budget_is_no_step_total() -> None:
    p = Progress(1, None, 2.0, budget=300_000_000)
    assert progress_text(progress_parts(p, eta=True)) == (
        "step 1 of a 300,000,000 token/sample budget (not a step count), 2s/step"
    )  # no total in steps: no ETA
    assert math.isnan(p.eta_s) and p.fraction is None


def test_the_newest_rank_gives_the_step_and_its_pace() -> None:
    from trainwatch.records import Step
    from trainwatch.store.store import Store

    store = Store()
    for step in range(1, 11):
        store.add(Step("a.log", 0, step, None, step, {"step_time_s": 1.0}))
        store.add(Step("a.log", 1, step + 5, None, step, {"step_time_s": 2.0}))
    p = progress(store)
    assert p.step == 15 and p.pace_s == 2.0  # rank 1 is ahead: its step, its pace
    assert RankKey("a.log", 1) in store.latest_step
