"""One chart trace per run: a run's ranks grouped as their mean, x as step, wall time since the
run's own start, or tokens/samples seen. Real logs: a 4-rank mmengine run
(ranks__mmengine_tee3_control.log), a single-process one, Megatron logs with timestamps and a
sample count."""

from __future__ import annotations

import math
from pathlib import Path

from trainwatch.pipeline import Pipeline
from trainwatch.store.store import Store
from trainwatch.ui.data.runs import SEEN, STEP, WALL, run_row, run_traces

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _store(name: str) -> Store:
    pipeline = Pipeline([str(SAMPLES / name)])
    pipeline.read_to_end()
    return pipeline.store


def test_a_runs_ranks_are_one_trace_their_mean_per_step() -> None:
    ranks = _store("ranks__mmengine_tee3_control.log")
    single = _store("mmengine__runner_cpu_healthy.log")
    traces, used = run_traces([("four", ranks), ("one", single)], "loss", last_n=None, x_axis=STEP)
    assert used == STEP
    assert [t.label for t in traces] == ["four", "one"]
    per_rank = ranks.series_for("loss")
    assert len(per_rank) == 4
    step = traces[0].xs[-1]
    at_step = [s.values[list(s.steps).index(step)] for s in per_rank.values() if step in s.steps]
    assert math.isclose(traces[0].ys[-1], sum(at_step) / len(at_step))
    assert list(traces[1].ys) == list(single.series_for("loss").popitem()[1].values)


def test_wall_time_counts_from_each_runs_own_start_or_falls_back_to_steps() -> None:
    storm = _store("megatron__llm_action_llama_fp16_overflow_storm.log")
    gpt2 = _store("megatron__gpt2_deepspeed.log")
    traces, used = run_traces([("storm", storm), ("gpt2", gpt2)], "loss", last_n=None, x_axis=WALL)
    assert used == WALL
    assert [t.xs[0] for t in traces] == [0.0, 0.0]  # runs on different days, both from their own start
    stamped = [t for t in next(iter(storm.series_for("loss").values())).times if not math.isnan(t)]
    assert math.isclose(traces[0].xs[-1], stamped[-1] - stamped[0])  # seconds since the run's first stamp
    plain = _store("mmengine__runner_cpu_healthy.log")  # no timestamps read: the steps, said as such
    _traces, fallback = run_traces([("storm", storm), ("p", plain)], "loss", last_n=None, x_axis=WALL)
    assert fallback == STEP


def test_samples_seen_where_the_log_counts_them_else_steps() -> None:
    megatron = _store("megatron__llm_action_llama_fp16_overflow_storm.log")
    traces, used = run_traces([("m", megatron)], "loss", last_n=None, x_axis=SEEN)
    assert used == SEEN
    steps, _ = run_traces([("m", megatron)], "loss", last_n=None, x_axis=STEP)
    assert max(traces[0].xs) > max(steps[0].xs)  # samples, not steps
    assert list(traces[0].xs) == sorted(traces[0].xs)
    plain = _store("mmengine__runner_cpu_healthy.log")
    _traces, fallback = run_traces([("m", megatron), ("p", plain)], "loss", last_n=None, x_axis=SEEN)
    assert fallback == STEP  # one run does not count them: no mixed axis


def test_run_row_has_the_runs_own_status_step_and_losses() -> None:
    row = run_row("div", _store("mmengine__runner_cpu_diverging_lr.log"))
    assert (row.label, row.state, row.last_step, row.total_steps) == ("div", "finished", 80, 80)
    assert math.isnan(row.latest_loss) and row.best_loss > 0
    assert math.isnan(row.eta_s)  # finished: no time left
