"""End to end on the real seed logs: what `trainwatch export` must say about them.

Counts are taken from the raw files with plain string matching, so the parsers are checked
against the log, not against themselves.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from conftest import SAMPLES, seed

from trainwatch.cli import main as cli
from trainwatch.pipeline import Pipeline
from trainwatch.records import Event, Phases, Record, Step


def _read(prefix: str) -> tuple[list[Record], list[str]]:
    path = seed(prefix)
    records: list[Record] = []
    Pipeline([str(path)], sink=records.extend).read_to_end()
    return records, path.read_text(encoding="utf-8", errors="replace").split("\n")


@pytest.fixture(scope="module")
def seed002() -> tuple[list[Record], list[str]]:
    return _read("002")


@pytest.fixture(scope="module")
def seed004() -> tuple[list[Record], list[str]]:
    return _read("004")


# ------------------------------------------------------------------ seed 002
def test_002_every_global_steps_line_is_a_full_step_record(seed002: tuple[list[Record], list[str]]) -> None:
    records, raw = seed002
    printed = [int(m.group(1)) for t in raw if (m := re.search(r"Global Steps: (\d+) ", t))]
    assert len(printed) == 17
    got = [r for r in records if isinstance(r, Step) and "loss_clip" in r.metrics]
    assert [s.step for s in got] == printed
    for s in got:
        assert s.rank == 0  # the reporting rank: DeepSpeed's `[Rank 0]` lines
        for name in (
            "loss",
            "loss_clip",
            "loss_coca",
            "lr",
            "grad_norm",
            "loss_scale",
            "data_time_s",
            "step_time_s",
            "samples_per_s",
        ):
            assert name in s.metrics, (s.step, name)
    last = got[-1]
    assert (last.step, last.metrics["loss"], last.metrics["lr"]) == (1601, 24.314, 4e-06)
    assert last.time == "2024-02-20T10:44:03"


def test_002_every_breakdown_line_is_a_phases_record(seed002: tuple[list[Record], list[str]]) -> None:
    records, raw = seed002
    lines = [no for no, t in enumerate(raw, 1) if "[Rank 0] rank=0 time (ms) |" in t]
    got = [r for r in records if isinstance(r, Phases)]
    assert [p.line for p in got] == lines
    assert all(p.rank == 0 for p in got)
    forward = [p for p in got if "forward" in p.phases_s]
    # counted from the engine's step=0, never contradicted by step=1000
    assert [p.step for p in forward] == list(range(1, len(forward) + 1))
    step1000 = next(no for no, t in enumerate(raw, 1) if "[Rank 0] step=1000," in t)
    first_after = next(p for p in forward if p.line > step1000)
    assert first_after.step == 1000
    assert [p.line for p in forward].index(first_after.line) == 999  # the 1000th forward line


def test_002_overflows_and_step_1000(seed002: tuple[list[Record], list[str]]) -> None:
    records, raw = seed002
    overflow = [r for r in records if isinstance(r, Event) and r.kind == "overflow"]
    assert len(overflow) == 4 == sum("OVERFLOW!" in t for t in raw)
    assert {e.rank for e in overflow} == {0}
    assert [e.data for e in overflow] == [
        {"attempted_scale": 65536, "new_scale": 65536},
        {"attempted_scale": 65536, "new_scale": 32768},
        {"attempted_scale": 65536, "new_scale": 65536},
        {"attempted_scale": 65536, "new_scale": 32768},
    ]
    (s,) = [r for r in records if isinstance(r, Step) and r.step == 1000]
    assert s.time == "2024-02-20T10:25:57.891"
    assert s.metrics["skipped"] == 2
    assert s.metrics["samples_per_s"] == 1211.289158780771
    assert (s.metrics["mem_gib"], s.metrics["max_mem_gib"]) == (5.29, 28.74)
    total = [r for r in records if isinstance(r, Step) and "total_steps" in r.metrics]
    assert total and {(r.step is not None, r.metrics["total_steps"]) for r in total} == {(True, 1191600)}


# ------------------------------------------------------------------ seed 004
def test_004_all_iterations_with_their_timers(seed004: tuple[list[Record], list[str]]) -> None:
    records, raw = seed004
    printed = [int(m.group(1)) for t in raw if (m := re.match(r" iteration\s+(\d+)/ 1000000 \|", t))]
    assert len(printed) == 4600
    loss = [r for r in records if isinstance(r, Step) and "loss" in r.metrics]
    assert [s.step for s in loss] == printed == list(range(5, 23001, 5))
    for i, r in enumerate(records):
        if isinstance(r, Step) and "loss" in r.metrics:
            nxt = records[i + 1]
            assert isinstance(nxt, Phases) and nxt.step == r.step and "batch_generator" in nxt.phases_s


def test_004_step_100_merges_three_lines(seed004: tuple[list[Record], list[str]]) -> None:
    records, _ = seed004
    (s,) = [r for r in records if isinstance(r, Step) and r.step == 100]
    assert s.rank == 0
    assert s.time == "2020-12-12T00:01:20.672"
    assert {k: s.metrics[k] for k in ("loss", "lr", "step_time_s", "loss_scale")} == {
        "loss": 9.598498,
        "lr": 1.5e-06,
        "step_time_s": 0.9076,
        "loss_scale": 4096.0,
    }


def test_004_deepspeed_optimizer_timers_belong_to_the_five_steps_before_each_iteration(
    seed004: tuple[list[Record], list[str]],
) -> None:
    records, raw = seed004
    opt = [r for r in records if isinstance(r, Phases) and "optimizer_step" in r.phases_s]
    assert len(opt) == sum(t.startswith("rank=0 time (ms) | optimizer_gradients") for t in raw) == 23000
    assert [p.step for p in opt] == list(range(1, 23001))
    evals = [(r.step, r.metrics["eval_loss"]) for r in records if isinstance(r, Step) and "eval_loss" in r.metrics]
    assert evals[0] == (1000, 6.585178)
    assert len(evals) == sum("validation loss at iteration" in t for t in raw)


def test_004_export_cli_jsonl() -> None:
    # The same through the command line, on the trimmed copy of seed 004 (fast).
    result = CliRunner().invoke(cli, ["export", str(SAMPLES / "megatron__gpt2_deepspeed.log")])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    step100 = next(r for r in rows if r["type"] == "step" and r["step"] == 100)
    assert step100["metrics"]["loss"] == 9.598498
    timers = next(r for r in rows if r["type"] == "phases" and r["step"] == 100 and "forward" in r["phases_s"])
    assert timers["phases_s"] == {
        "forward": 0.31849,
        "backward": 0.50188,
        "allreduce": 0.0,
        "optimizer": 0.08703,
        "batch_generator": 0.00132,
        "data_loader": 0.00017,
    }
