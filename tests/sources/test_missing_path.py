"""A PATH that does not exist at start: still waited for (as `tail -F` does), but stderr and the
dashboard's header say plainly that it does not exist, the absolute path looked for, and the
existing names nearest to what was typed (or the nearest existing parent directory).

Log: sample_logs/megatron__gpt2_deepspeed.log.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pty_app import quit_and_reap, read_available, spawn
from trainwatch.pipeline import Pipeline
from trainwatch.sources.schedule import ROUND_BUDGET
from trainwatch.ui.widgets.header import source_line

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "megatron__gpt2_deepspeed.log"
STYLING = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\]22;[a-z-]*\x07")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copyfile(SAMPLE, logs / "train.log")
    (logs / "train.log.1").write_text("old\n")
    (logs / "eval.log").write_text("")
    return tmp_path


def _summary(path: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainwatch", "summary", path], capture_output=True, text=True, timeout=60, cwd=cwd
    )


def test_a_mistyped_file_names_where_it_looked_and_the_nearest(run_dir: Path) -> None:
    done = _summary("logs/trian.log", run_dir)
    assert done.returncode == 2
    assert done.stderr == (
        f"trainwatch: logs/trian.log: no such file (looked for {run_dir}/logs/trian.log);"
        f" nearest in {run_dir}/logs: train.log, train.log.1\n"
    )


def test_a_mistyped_directory_names_the_nearest_existing_parent(run_dir: Path) -> None:
    done = _summary("lgos/train.log", run_dir)
    assert done.returncode == 2
    assert done.stderr == (
        f"trainwatch: lgos/train.log: no such file (looked for {run_dir}/lgos/train.log);"
        f" {run_dir} has no lgos/; nearest in {run_dir}: logs\n"
    )


def test_nothing_near_is_said_too(run_dir: Path) -> None:
    done = _summary("logs/zzz", run_dir)
    assert done.stderr == (
        f"trainwatch: logs/zzz: no such file (looked for {run_dir}/logs/zzz); nothing named like it in {run_dir}/logs\n"
    )


def test_a_near_name_is_shown_inert(run_dir: Path) -> None:
    (run_dir / "logs" / "train\x1b]0;T\x07.log").write_text("")
    done = _summary("logs/train_.log", run_dir)
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "train␛]0;T␇.log" in done.stderr


def test_the_header_says_it_until_the_file_appears(run_dir: Path) -> None:
    path = run_dir / "logs" / "trian.log"
    pipeline = Pipeline([str(path)])
    feed = pipeline.readers[str(path)]
    feed.pump(ROUND_BUDGET)
    said = f"waiting for the file to appear: no such file (looked for {path}); nearest in {path.parent}: train.log"
    assert feed.state.note.startswith(said)
    header = source_line([feed.state], time.time(), []).plain
    assert header.splitlines()[1] == "⚠ " + feed.state.note  # its own line: nothing else is known yet
    shutil.copyfile(SAMPLE, path)  # it appears (the job started): read, and the note is gone
    while feed.pump(ROUND_BUDGET):
        pass
    assert feed.state.note == "" and feed.state.lines > 0
    assert "⚠" not in source_line([feed.state], time.time(), []).plain
    pipeline.stop()


def test_the_dashboard_shows_it(run_dir: Path) -> None:
    pid, fd = spawn([str(run_dir / "logs" / "trian.log")], 30, 300, {"TERM": "xterm-256color"}, drop=("NO_COLOR",))
    out = bytearray()
    wanted = f"(looked for {run_dir}/logs/trian.log); nearest in {run_dir}/logs: train.log, train.log.1"
    alive, deadline = True, time.monotonic() + 30
    try:
        while alive and wanted not in STYLING.sub("", out.decode("utf-8", "replace")) and time.monotonic() < deadline:
            alive = read_available(fd, out, 0.2)
    finally:
        quit_and_reap(pid, fd, out, alive, 10)
    assert wanted in STYLING.sub("", out.decode("utf-8", "replace"))
