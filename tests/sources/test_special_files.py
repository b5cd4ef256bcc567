"""FIFOs (and other non-regular files) under a directory or glob PATH: never read, never
opened, and said so — one stderr line each for summary/export/check, a source note for the
dashboard header — as when such a file is given by name.

Log: sample_logs/megatron__gpt2_deepspeed.log (DeepSpeed + Megatron GPT-2, seed 004 trimmed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trainwatch.pipeline import Pipeline
from trainwatch.sources.discover import expand
from trainwatch.sources.problems import ProblemKind
from trainwatch.sources.schedule import ROUND_BUDGET

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "megatron__gpt2_deepspeed.log"
NOT_READ = "not a regular file (FIFOs and devices are not read)"


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    shutil.copyfile(SAMPLE, d / "out.log")
    os.mkfifo(d / "pipe")  # `mkfifo logs/pipe`: no log suffix, still worth saying
    os.mkfifo(d / "rank1.log")
    return d


@pytest.mark.parametrize(
    "args",
    [["summary"], ["summary", "--json"], ["export", "--format", "csv"], ["check"]],
    ids=["summary", "summary-json", "export", "check"],
)
def test_each_skipped_entry_is_one_stderr_line(logs: Path, args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trainwatch", *args, f"{logs}/"],
        capture_output=True,
        text=True,
        timeout=60,  # a FIFO opened for reading without a writer would block here forever
    )
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr.splitlines() == [
        f"trainwatch: {logs}/pipe: {NOT_READ}",
        f"trainwatch: {logs}/rank1.log: {NOT_READ}",
    ]


def test_a_glob_reports_the_fifo_it_matches(logs: Path) -> None:
    specs, problems = expand([f"{logs}/*.log"])
    assert [s.name for s in specs] == [f"{logs}/out.log"]
    assert [(p.kind, p.path, p.message) for p in problems] == [
        (ProblemKind.NOT_REGULAR, f"{logs}/rank1.log", f"{logs}/rank1.log: {NOT_READ}")
    ]


def test_the_dashboard_header_notes_name_them(logs: Path) -> None:
    pipeline = Pipeline([str(logs)])
    while any([feed.pump(ROUND_BUDGET) for feed in pipeline.readers.values()]):
        pass
    state = pipeline.store.sources[str(logs / "out.log")]
    assert state.note == f"not read: {logs}/pipe, {logs}/rank1.log (FIFOs and devices are not read)"
    assert set(pipeline.store.sources) == {str(logs / "out.log")}  # the FIFOs are not sources
