"""`srun -l` on REAL Slurm output: every record's rank is the `N: ` label on its own line.

Samples: sample_logs/ranks__srun_l_*.log, captured from a one-node Slurm 22.05.8 cluster on
localhost (Debian bookworm slurm-wlm, munge) running sample_logs/generators/ddp_toy.py (torch
2.13 CPU, gloo); the cluster's config is sample_logs/generators/slurm_local.conf and the
exact srun commands are in sample_logs/generators/make_srun_samples.sh.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from click.testing import CliRunner
from conftest import SAMPLES

from trainwatch.cli import main
from trainwatch.pipeline import Pipeline
from trainwatch.records import Event, Phases, Record, Step

_LABEL = re.compile(r"^ *(\d+): ")  # what srun -l writes before every line of task N
_TEE = re.compile(r"^ *\d+: \[default(\d+)\]:")
_ITER = re.compile(r"\biteration +(\d+)/")


def read(path: Path) -> list[Record]:
    records: list[Record] = []
    Pipeline([str(path)], sink=records.extend).read_to_end()
    return records


def summary(path: Path) -> dict:
    result = CliRunner().invoke(main, ["summary", "--json", str(path)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def printed_iterations(lines: list[str], key: re.Pattern[str]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = defaultdict(list)
    for text in lines:
        it = _ITER.search(text)
        if it:
            m = key.match(text)
            assert m is not None, text
            out[int(m.group(1))].append(int(it.group(1)))
    return out


def test_srun_l_four_tasks_every_step_carries_its_label() -> None:
    # `srun -l -n 4 -O python ddp_toy.py`: task id = SLURM_PROCID = global rank. Every task
    # prints the same iteration line, so only the label tells them apart.
    path = SAMPLES / "ranks__srun_l_4tasks_straggler.log"
    lines = path.read_text().splitlines()
    assert all(_LABEL.match(t) for t in lines if t.strip())  # really labelled, every line
    records = read(path)
    steps = [r for r in records if isinstance(r, Step)]
    assert len(steps) == sum(1 for t in lines if _ITER.search(t))  # one record per task's line
    for s in steps:
        assert s.rank == int(_LABEL.match(lines[s.line - 1]).group(1)), lines[s.line - 1]
        assert s.host is None  # a task id, not a node
    by_rank: dict[int, list[int]] = defaultdict(list)
    for s in steps:
        assert s.rank is not None and s.step is not None
        by_rank[s.rank].append(s.step)
    assert by_rank == printed_iterations(lines, _LABEL)
    # the Megatron timer block printed by the last task belongs to it
    phases = [r for r in records if isinstance(r, Phases)]
    assert phases
    for p in phases:
        assert p.rank == int(_LABEL.match(lines[p.line - 1]).group(1))
    assert not [r for r in records if isinstance(r, Event) and r.kind == "restart"]


def test_srun_l_four_tasks_summary_lists_the_ranks() -> None:
    path = SAMPLES / "ranks__srun_l_4tasks_straggler.log"
    data = summary(path)
    labels = sorted({int(m.group(1)) for t in path.read_text().splitlines() if (m := _LABEL.match(t))})
    assert data["ranks"] == labels == [0, 1, 2, 3]
    last = {str(r): max(v) for r, v in printed_iterations(path.read_text().splitlines(), _LABEL).items()}
    assert data["last_step"] == last
    # Megatron's max-reduced timers: the log does not say which rank is slow
    assert data["stragglers"] == []
    assert any("the log does not say which rank" in f["message"] for f in data["findings"])


def test_srun_l_wrapping_torchrun_tee_uses_the_tee_rank() -> None:
    # `srun -l -n 1 torchrun --nproc_per_node 4 --tee 3`: every line is `0: [default<r>]:`;
    # the label is the (single) task, the rank is torchrun's.
    path = SAMPLES / "ranks__srun_l_torchrun_tee3.log"
    lines = path.read_text().splitlines()
    steps = [r for r in read(path) if isinstance(r, Step)]
    assert len(steps) == sum(1 for t in lines if _ITER.search(t))
    for s in steps:
        text = lines[s.line - 1]
        assert s.rank == int(_TEE.match(text).group(1)), text
        assert s.host == f"task{_LABEL.match(text).group(1)}"
    assert summary(path)["ranks"] == [0, 1, 2, 3]


def test_srun_l_two_torchrun_agents_keep_task_and_local_rank_apart() -> None:
    # `srun -l -n 2 torchrun --nnodes 2 --nproc_per_node 2 --rdzv-backend c10d --tee 3`: two
    # agents ("nodes"), each printing torchrun's banner once and `[default0]`/`[default1]`.
    path = SAMPLES / "ranks__srun_l_torchrun_2tasks.log"
    lines = path.read_text().splitlines()
    records = read(path)
    steps = [r for r in records if isinstance(r, Step)]
    assert len(steps) == sum(1 for t in lines if _ITER.search(t))
    seen = set()
    for s in steps:
        text = lines[s.line - 1]
        assert (s.host, s.rank) == (f"task{_LABEL.match(text).group(1)}", int(_TEE.match(text).group(1))), text
        seen.add((s.host, s.rank))
    assert seen == {("task0", 0), ("task0", 1), ("task1", 0), ("task1", 1)}
    banners = [t for t in lines if "Setting OMP_NUM_THREADS" in t]
    assert len({_LABEL.match(t).group(1) for t in banners}) == len(banners) == 2  # one per agent
    # two agents starting at once is one launch, not a restart
    assert not [r for r in records if isinstance(r, Event) and r.kind == "restart"]
