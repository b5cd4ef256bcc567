"""A directory walk that meets its depth or count bound says so, once, instead of leaving the
deeper or further files out in silence: on stderr for summary/export/check, as a source note
in the dashboard's header.

Log: sample_logs/megatron__gpt2_deepspeed.log (DeepSpeed + Megatron GPT-2, seed 004 trimmed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from trainwatch.pipeline import Pipeline
from trainwatch.sources.discover import MAX_DEPTH, expand, walk_logs
from trainwatch.sources.problems import Problem, ProblemKind

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "megatron__gpt2_deepspeed.log"


def _nest(root: Path, depth: int) -> Path:
    """root/d1/.../d<depth>, made."""
    deep = root.joinpath(*(f"d{i}" for i in range(1, depth + 1)))
    deep.mkdir(parents=True)
    return deep


def test_a_walk_as_deep_as_its_bound_says_nothing(tmp_path: Path) -> None:
    shutil.copyfile(SAMPLE, _nest(tmp_path, MAX_DEPTH) / "out.log")
    stopped: list[Problem] = []
    assert len(walk_logs(str(tmp_path), stopped=stopped)) == 1
    assert stopped == []


def test_a_deeper_tree_is_said_once(tmp_path: Path) -> None:
    shutil.copyfile(SAMPLE, tmp_path / "top.log")
    shutil.copyfile(SAMPLE, _nest(tmp_path / "a", MAX_DEPTH - 1) / "last.log")  # depth 12: read
    deep = _nest(tmp_path / "b", MAX_DEPTH + 3)
    shutil.copyfile(SAMPLE, deep / "lost.log")
    shutil.copyfile(SAMPLE, deep.parent / "lost_too.log")
    specs, problems = expand([str(tmp_path)])
    assert sorted(Path(s.name).name for s in specs) == ["last.log", "top.log"]
    assert [p.message for p in problems] == [
        f"stopped at depth {MAX_DEPTH} under {tmp_path}: deeper files are not followed"
    ]
    assert [(p.kind, p.path) for p in problems] == [(ProblemKind.WALK_STOPPED, str(tmp_path))]


def test_a_walk_that_reaches_its_count_says_so_only_when_more_are_left(tmp_path: Path) -> None:
    for i in range(5):
        shutil.copyfile(SAMPLE, tmp_path / f"rank{i}.log")
    stopped: list[Problem] = []
    assert len(walk_logs(str(tmp_path), limit=5, stopped=stopped)) == 5
    assert stopped == []
    assert len(walk_logs(str(tmp_path), limit=3, stopped=stopped)) == 3
    assert [p.message for p in stopped] == [f"stopped after 3 files under {tmp_path}: more files are not read"]


def test_summary_says_it_on_stderr_and_the_dashboard_in_a_source_note(tmp_path: Path) -> None:
    shutil.copyfile(SAMPLE, tmp_path / "out.log")
    shutil.copyfile(SAMPLE, _nest(tmp_path, MAX_DEPTH + 1) / "lost.log")
    said = f"stopped at depth {MAX_DEPTH} under {tmp_path}: deeper files are not followed"
    done = subprocess.run(
        [sys.executable, "-m", "trainwatch", "summary", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert done.stderr.splitlines() == [f"trainwatch: {said}"]
    pipeline = Pipeline([str(tmp_path)])
    assert pipeline.store.sources[str(tmp_path / "out.log")].note == said
