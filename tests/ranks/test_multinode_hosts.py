"""Two nodes in ONE source, each with local ranks 0 and 1: four rank streams, not two.

Samples (REAL launcher output, Slurm 22.05.8 one-node cluster on localhost, torch 2.13 CPU/gloo):
- ranks__srun_l_torchrun_2tasks.log: `srun -l -n 2 torchrun --nnodes 2 --nproc_per_node 2 --tee 3`
  running ddp_toy.py (Megatron-style lines), see sample_logs/generators/make_srun_samples.sh;
- ranks__srun_l_torchrun_2nodes_mmengine_straggler.log: the same launch running a real mmengine
  0.10.7 Runner whose global rank 2 loads data 0.1 s per batch, every rank logging its own
  `data_time`; see sample_logs/generators/make_srun_mmengine_2nodes.sh.
- ranks__deepspeed_pdsh_two_nodes_relaunch.log: stas00/ml-engineering
  training/emulate-multi-node.md, two `deepspeed -H hostfile` runs (pdsh `worker-N: ` labels).
- ranks__mmengine_tee3_straggler.log: torchrun --tee 3, mmengine, rank 2 loads slowly
  (sample_logs/generators/make_mmengine_rank_samples.sh).

Every expected value is read from the raw lines with a regex here, not from trainwatch.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from statistics import median

from click.testing import CliRunner
from conftest import SAMPLES

from trainwatch.cli import main
from trainwatch.diagnosis.ranks import stragglers
from trainwatch.diagnosis.status import run_status
from trainwatch.pipeline import Pipeline
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.header import RunHeader
from trainwatch.ui.widgets.ranks import RanksTable

SRUN_2TASKS = SAMPLES / "ranks__srun_l_torchrun_2tasks.log"
SRUN_MM = SAMPLES / "ranks__srun_l_torchrun_2nodes_mmengine_straggler.log"
PDSH = SAMPLES / "ranks__deepspeed_pdsh_two_nodes_relaunch.log"
TEE_SLOW = SAMPLES / "ranks__mmengine_tee3_straggler.log"

_STREAM = re.compile(r"^ *(\d+): \[default(\d+)\]:")  # srun task label, then torchrun's local rank
_MEGATRON_ITER = re.compile(r"\biteration +(\d+)/")
_MM_ITER = re.compile(r"Iter\(train\) \[ *(\d+)/\d+\].*\bdata_time: ([\d.]+)")


def summary(path: Path) -> dict:
    result = CliRunner().invoke(main, ["summary", "--json", str(path)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def printed_last_steps(path: Path, iteration: re.Pattern[str]) -> dict[tuple[str, int], int]:
    """(host, local rank) -> the last iteration that stream printed."""
    out: dict[tuple[str, int], int] = {}
    for text in path.read_text().splitlines():
        m, it = _STREAM.match(text), iteration.search(text)
        if m and it:
            out[(f"task{m.group(1)}", int(m.group(2)))] = int(it.group(1))
    return out


def printed_counts(path: Path, iteration: re.Pattern[str]) -> dict[tuple[str, int], int]:
    """(host, local rank) -> how many progress lines that stream printed."""
    out: dict[tuple[str, int], int] = defaultdict(int)
    for text in path.read_text().splitlines():
        m = _STREAM.match(text)
        if m and iteration.search(text):
            out[(f"task{m.group(1)}", int(m.group(2)))] += 1
    return dict(out)


def printed_data_times(path: Path) -> dict[tuple[str, int], list[float]]:
    out: dict[tuple[str, int], list[float]] = defaultdict(list)
    for text in path.read_text().splitlines():
        m, it = _STREAM.match(text), _MM_ITER.search(text)
        if m and it:
            out[(f"task{m.group(1)}", int(m.group(2)))].append(float(it.group(2)))
    return out


def test_srun_two_agents_summary_has_four_rank_streams_with_their_hosts() -> None:
    expected = printed_last_steps(SRUN_2TASKS, _MEGATRON_ITER)
    assert len(expected) == 4  # the sample really is 2 nodes x 2 local ranks
    data = summary(SRUN_2TASKS)
    assert data["ranks"] == [0, 1]  # the contract's list of rank numbers
    assert data["hosts"] == {"task0": [0, 1], "task1": [0, 1]}
    got = {(r["host"], r["rank"]): r["last_step"] for r in data["rank_status"]}
    assert got == expected
    # neither node's rank 0 overwrites the other's
    assert data["last_step"] == {f"{h}:{r}": step for (h, r), step in sorted(expected.items())}
    assert set(data["latest"]) == set(data["last_step"])
    # one state per stream, and the run's end (step 12 of 12) is every stream's
    assert len(data["rank_status"]) == 4
    assert {r["state"] for r in data["rank_status"]} == {data["status"]}


def test_data_loading_straggler_is_named_by_node_and_local_rank() -> None:
    times = printed_data_times(SRUN_MM)
    assert len(times) == 4
    slow = max(times, key=lambda k: median(times[k]))
    others = [median(v) for k, v in times.items() if k != slow]
    assert median(times[slow]) > 50 * max(others)  # the sample is a clear straggler
    data = summary(SRUN_MM)
    assert data["stragglers"] == [slow[1]]
    flagged = [(r["host"], r["rank"], r.get("straggler")) for r in data["rank_status"] if r.get("straggler")]
    assert flagged == [(slow[0], slow[1], "data loading")]
    (finding,) = [f for f in data["findings"] if f["kind"] == "straggler"]
    assert finding["message"].startswith(f"rank {slow[1]} on {slow[0]} spends ")
    # the same local rank on the other node is not a straggler
    twin = next(k for k in times if k[1] == slow[1] and k != slow)
    assert not any(r.get("straggler") for r in data["rank_status"] if (r["host"], r["rank"]) == twin)


def test_diagnosis_compares_four_streams_not_two_merged_ones() -> None:
    pipeline = Pipeline([str(SRUN_MM)])
    pipeline.read_to_end()
    store = pipeline.store
    assert sorted((k.host, k.rank) for k in store.latest_step) == [
        ("task0", 0),
        ("task0", 1),
        ("task1", 0),
        ("task1", 1),
    ]
    # every stream keeps all its own steps (merged streams would hold two records per step)
    assert {(k.host, k.rank): n for k, n in store.step_records.items()} == printed_counts(SRUN_MM, _MM_ITER)
    times = printed_data_times(SRUN_MM)
    slow = max(times, key=lambda k: median(times[k]))
    (s,) = stragglers(store)
    assert (s.host, s.rank, s.what) == (slow[0], slow[1], "data loading")
    expected = printed_last_steps(SRUN_MM, _MM_ITER)
    status = run_status(store)
    assert sorted((r.host, r.rank, r.last_step) for r in status.ranks) == sorted(
        (h, r, step) for (h, r), step in expected.items()
    )


def test_pdsh_two_nodes_relaunch_still_right() -> None:
    # No training step in this log: no rank streams and no hosts map, but the relaunch is one
    # restart event from worker-0's second WORLD INFO DICT (line 21).
    lines = PDSH.read_text().splitlines()
    assert lines[20].startswith("worker-0: ")
    data = summary(PDSH)
    assert data["ranks"] == []
    assert data["rank_status"] == []
    assert "hosts" not in data
    # Both launchers then say `Process N exits successfully.`: the run finished (issue 22).
    assert data["events"] == {"finished": 1, "restart": 1}
    assert data["status"] == "finished"
    records: list = []
    Pipeline([str(PDSH)], sink=records.extend).read_to_end()
    (restart,) = [r for r in records if getattr(r, "kind", None) == "restart"]
    assert (restart.line, restart.host) == (21, "worker-0")


def _table(app: TrainwatchApp) -> tuple[list[str], list[list[str]]]:
    table = app.query_one(RanksTable)
    columns = [str(c.key.value) for c in table.ordered_columns]
    return columns, [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def _ranks_tab(path: Path, rows: int) -> tuple[list[str], list[list[str]], str]:
    app = TrainwatchApp([str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        for _ in range(80):
            columns, cells = _table(app)
            if len(cells) == rows and any("straggler" in " ".join(r) for r in cells) == (path != SRUN_2TASKS):
                break
            await pilot.pause(0.1)
        last = getattr(app.query_one(RunHeader), "_last", None)
        return columns, cells, last.plain if last is not None else ""


async def test_ranks_tab_shows_four_rows_for_two_nodes() -> None:
    columns, cells, header = await _ranks_tab(SRUN_2TASKS, 4)
    assert [r[0] for r in cells] == ["task0/rank 0", "task0/rank 1", "task1/rank 0", "task1/rank 1"]
    step = columns.index("step")
    expected = printed_last_steps(SRUN_2TASKS, _MEGATRON_ITER)
    assert [r[step] for r in cells] == [str(expected[k]) for k in sorted(expected)]
    assert "ranks: task0:0,1 task1:0,1" in header
    # Megatron's (min, max) timers belong to no rank: no data/compute column is invented from them
    assert "data" not in columns and "compute" not in columns


async def test_ranks_tab_data_column_shows_why_the_mmengine_rank_straggles() -> None:
    columns, cells, _ = await _ranks_tab(TEE_SLOW, 4)
    assert "data" in columns
    data, status = columns.index("data"), columns.index("status")
    flagged = [r[0] for r in cells if "straggler" in r[status]]
    slowest = max(cells, key=lambda r: _seconds(r[data]))
    assert flagged == [slowest[0]] == ["rank 2"]
    assert _seconds(slowest[data]) > 0.05  # ~0.1 s of data loading per step...
    assert all(_seconds(r[data]) < 0.005 for r in cells if r is not slowest)  # ...the others < 5 ms


def _seconds(cell: str) -> float:
    m = re.fullmatch(r"\s*([\d.]+)\s*(µs|ms|s)\s*", cell)
    assert m is not None, cell
    return float(m.group(1)) * {"µs": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]


async def test_ranks_tab_flags_only_the_slow_node_s_rank() -> None:
    times = printed_data_times(SRUN_MM)
    slow = max(times, key=lambda k: median(times[k]))
    columns, cells, _ = await _ranks_tab(SRUN_MM, 4)
    data, status = columns.index("data"), columns.index("status")
    flagged = [r[0] for r in cells if "straggler" in r[status]]
    assert flagged == [f"{slow[0]}/rank {slow[1]}"]  # not the same local rank on the other node
    by_label = {r[0]: _seconds(r[data]) for r in cells}
    assert max(by_label, key=lambda k: by_label[k]) == flagged[0]


def test_every_rank_naming_finding_names_the_node_too() -> None:
    # Local rank 0 exists on both nodes: "data loading on rank 0" would not say which one.
    out = summary(SRUN_MM)
    by_kind = {f["kind"]: f for f in out["findings"]}
    assert "rank 0 on task1" in by_kind["straggler"]["message"]
    assert "data loading on rank 0 on task1" in by_kind["dataloader_bound"]["message"]
