"""A straggler the log can name: REAL mmengine per-rank `time` / `data_time` under torchrun.

Samples (real torchrun 2.13 --nproc_per_node 4, gloo, CPU, a real mmengine 0.10.7 Runner;
generator sample_logs/generators/mmengine_toy.py, exact commands in
sample_logs/generators/make_mmengine_rank_samples.sh; one run gives both the `--tee 3`
console and the `--log-dir` tree):
- ranks__mmengine_tee3_straggler.log, ranks_mmengine_logdir_straggler/,
  ranks_mmengine_workdir_straggler/ (mmengine's own `..._rank<N>.log` files):
  one rank sleeps 0.1 s per batch in its collate function;
- ranks__mmengine_tee3_control.log, ranks_mmengine_logdir_control/: the same, unslowed;
- ranks__mmengine_tee3_pause.log: one rank sleeps 20 s once, in iteration 22's data loading.
Which rank is slow is read from the log's own numbers, never typed into the test.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from statistics import median

from click.testing import CliRunner
from conftest import SAMPLES

from trainwatch.cli import main
from trainwatch.diagnosis.ranks import stopped_ranks, stragglers
from trainwatch.pipeline import Pipeline
from trainwatch.records import Record, Step
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.ranks import RanksTable

_TEE = re.compile(r"^\[default(\d+)\]:")
_TRAIN = re.compile(
    r"^(?:\[default\d+\]:)?(?P<when>\d\d/\d\d \d\d:\d\d:\d\d) - mmengine - INFO - Iter\(train\) \[\s*(?P<it>\d+)/"
    r".*\btime: (?P<time>[\d.]+)\s+data_time: (?P<data>[\d.]+)"
)
TEE_SLOW = SAMPLES / "ranks__mmengine_tee3_straggler.log"
TEE_CONTROL = SAMPLES / "ranks__mmengine_tee3_control.log"
TEE_PAUSE = SAMPLES / "ranks__mmengine_tee3_pause.log"


def read(*paths: Path) -> tuple[list[Record], Pipeline]:
    records: list[Record] = []
    pipeline = Pipeline([str(p) for p in paths], sink=records.extend)
    pipeline.read_to_end()
    return records, pipeline


def summary(path: Path) -> dict:
    result = CliRunner().invoke(main, ["summary", "--json", str(path)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def printed(lines: list[str]) -> dict[int, list[tuple[int, float, float]]]:
    """rank -> [(iteration, time, data_time)] as the `[default<r>]:` lines print them."""
    out: dict[int, list[tuple[int, float, float]]] = defaultdict(list)
    for text in lines:
        m = _TRAIN.match(text)
        if m:
            rank = int(_TEE.match(text).group(1))
            out[rank].append((int(m.group("it")), float(m.group("time")), float(m.group("data"))))
    return out


def slowest_loader(lines: list[str]) -> tuple[int, float]:
    """The rank whose printed data_time is largest, and how many times the others' median."""
    data = {r: median(d for _, _, d in v) for r, v in printed(lines).items()}
    rank = max(data, key=lambda r: data[r])
    return rank, data[rank] / median(v for r, v in data.items() if r != rank)


def test_the_sample_is_a_synchronous_straggler() -> None:
    # The premise, from the log alone: equal step times, one rank's data time far larger.
    rows = printed(TEE_SLOW.read_text().splitlines())
    assert sorted(rows) == [0, 1, 2, 3]
    times = [median(t for _, t, _ in v) for v in rows.values()]
    assert max(times) / min(times) < 1.05
    _, ratio = slowest_loader(TEE_SLOW.read_text().splitlines())
    assert ratio > 20


def test_tee3_every_step_has_its_lines_rank_and_data_time() -> None:
    lines = TEE_SLOW.read_text().splitlines()
    records, _ = read(TEE_SLOW)
    steps = [r for r in records if isinstance(r, Step)]
    assert len(steps) == sum(len(v) for v in printed(lines).values())
    for s in steps:
        text = lines[s.line - 1]
        m = _TRAIN.match(text)
        assert m is not None and s.rank == int(_TEE.match(text).group(1)), text
        assert s.step == int(m.group("it"))
        assert s.metrics["data_time_s"] == float(m.group("data"))
        assert s.metrics["step_time_s"] == float(m.group("time"))


def test_tee3_summary_names_the_straggler_and_how_much_slower() -> None:
    lines = TEE_SLOW.read_text().splitlines()
    slow, ratio = slowest_loader(lines)
    data = summary(TEE_SLOW)
    assert data["ranks"] == [0, 1, 2, 3]
    assert data["stragglers"] == [slow]
    found = [f for f in data["findings"] if f["kind"] == "straggler"]
    assert len(found) == 1 and found[0]["ranks"] == [slow]
    message = found[0]["message"]
    assert f"rank {slow} spends {ratio:.0f}x as long in data loading as the median rank" in message
    # and why the step times did not show it
    assert "every rank steps in about" in message and "wait for it" in message


def test_logdir_tree_and_mmengine_rank_files_name_the_same_straggler() -> None:
    slow, _ = slowest_loader(TEE_SLOW.read_text().splitlines())
    logdir = SAMPLES / "ranks_mmengine_logdir_straggler"
    files = sorted(logdir.glob("*/attempt_0/*/stdout.log"))
    assert len(files) == 4
    records, _ = read(logdir)
    for f in files:
        mine = [r for r in records if isinstance(r, Step) and r.source == str(f)]
        assert mine and {s.rank for s in mine} == {int(f.parent.name)}
    # this run's own slow rank, from its own files (the tee3 console is the same run)
    per_file = {int(f.parent.name): f.read_text().splitlines() for f in files}
    own = {r: median(float(m.group("data")) for t in v if (m := _TRAIN.match(t))) for r, v in per_file.items()}
    assert max(own, key=lambda r: own[r]) == slow
    assert summary(logdir)["stragglers"] == [slow]
    # mmengine's own per-rank files: `<ts>_<user@host>_device<d>_rank<N>.log`
    workdir = SAMPLES / "ranks_mmengine_workdir_straggler"
    assert len(list(workdir.glob("*_rank*.log"))) == 4
    data = summary(workdir)
    assert data["ranks"] == [0, 1, 2, 3] and data["stragglers"] == [slow]


def test_control_runs_have_no_straggler() -> None:
    for path in (TEE_CONTROL, SAMPLES / "ranks_mmengine_logdir_control"):
        data = summary(path)
        assert data["ranks"] == [0, 1, 2, 3]
        assert data["stragglers"] == []
        assert not [f for f in data["findings"] if f["kind"] == "straggler"], path


def test_straggler_named_from_the_first_three_log_lines_of_each_rank(tmp_path: Path) -> None:
    # Live, early in a run: mmengine logs every `interval` iterations (5 here, 50 by
    # default), so each rank has only a few records. Warm-up records must not hide a gap
    # that is there from the first line on.
    lines = TEE_SLOW.read_text().splitlines(keepends=True)
    seen: dict[int, int] = defaultdict(int)
    end = 0
    for i, text in enumerate(lines):
        if _TRAIN.match(text):
            seen[int(_TEE.match(text).group(1))] += 1
            if len(seen) == 4 and min(seen.values()) == 3:
                end = i + 1
                break
    assert end
    head = tmp_path / "out.log"
    head.write_text("".join(lines[:end]))
    slow, _ = slowest_loader(lines)
    _, pipeline = read(head)
    assert [s.rank for s in stragglers(pipeline.store)] == [slow]


def test_pause_the_log_cannot_name_the_rank_until_it_resumes(tmp_path: Path) -> None:
    # One rank sleeps 20 s in iteration 22's data loading. In synchronous training the other
    # ranks block in that iteration's allreduce, so during the pause NO rank logs: every
    # rank's last line is the same iteration, nothing says which rank is stuck.
    lines = TEE_PAUSE.read_text().splitlines(keepends=True)
    train = [(i, _TRAIN.match(t)) for i, t in enumerate(lines) if _TRAIN.match(t)]
    when = [datetime.strptime(m.group("when"), "%m/%d %H:%M:%S") for _, m in train]
    gap = next(k for k in range(1, len(train)) if (when[k] - when[k - 1]).total_seconds() >= 10)
    before = lines[: train[gap][0]]
    head = tmp_path / "out.log"
    head.write_text("".join(before))
    last = {r: v[-1][0] for r, v in printed(before).items()}
    assert sorted(last) == [0, 1, 2, 3] and len(set(last.values())) == 1  # all at one iteration
    _, pipeline = read(head)
    assert stopped_ranks(pipeline.store) == []
    assert stragglers(pipeline.store) == []
    # Once it resumes, the stuck rank's windowed data_time shows the pause (mmengine averages
    # the last 10 iterations), while every rank's `time` shows the wait.
    stuck = max(printed(lines).items(), key=lambda kv: max(d for _, _, d in kv[1]))[0]
    data = summary(TEE_PAUSE)
    assert data["stragglers"] == [stuck]
    (found,) = [f for f in data["findings"] if f["kind"] == "straggler"]
    assert found["message"].startswith(f"rank {stuck} stalls now and then in data loading: its p95 is")


def _status_cells(app: TrainwatchApp) -> dict[str, str]:
    table = app.query_one(RanksTable)
    status = [str(c.key.value) for c in table.ordered_columns].index("status")
    out = {}
    for i in range(table.row_count):
        row = table.get_row_at(i)
        out[str(row[0])] = str(row[status])
    return out


async def test_dashboard_ranks_tab_highlights_the_straggler() -> None:
    slow, _ = slowest_loader(TEE_SLOW.read_text().splitlines())
    app = TrainwatchApp([str(TEE_SLOW)])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        for _ in range(80):
            cells = _status_cells(app)
            if len(cells) == 4 and any("straggler" in c for c in cells.values()):
                break
            await pilot.pause(0.1)
        flagged = [label for label, status in cells.items() if "straggler" in status]
        assert flagged == [f"rank {slow}"], cells
