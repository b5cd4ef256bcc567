"""Every command as a user runs it: the real `trainwatch` executable in a subprocess.

Exit codes are the README's: 0 ok, 1 `check` found a problem, 2 usage errors, 3 `check` recognised nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import SAMPLES

from trainwatch import __version__
from trainwatch.demo import bundled_log, bursts

EXE = [sys.executable, "-m", "trainwatch"]
MEGATRON = SAMPLES / "megatron__gpt2_deepspeed.log"  # trimmed seed 004
COCA = SAMPLES / "deepspeed__coca_4rank_zero1_sighup.log"  # trimmed seed 002


def tw(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXE, *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=timeout,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "120"},
    )


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr


def test_version_and_help() -> None:
    v = tw("--version")
    assert v.returncode == 0 and __version__ in v.stdout
    h = tw("--help")
    assert h.returncode == 0
    for command in ("open", "summary", "export", "check", "watch", "demo", "formats", "serve"):
        assert command in h.stdout


def test_formats_lists_the_parsers() -> None:
    proc = tw("formats")
    assert proc.returncode == 0
    for name in ("deepspeed", "megatron", "hf_trainer", "lightning", "torchtitan", "generic"):
        assert name in proc.stdout


def test_path_without_a_terminal_prints_the_summary_instead_of_the_dashboard(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    shutil.copy(MEGATRON, log)
    proc = tw(str(log))  # stdout is a pipe here
    assert proc.returncode == 0
    assert "not a terminal" in proc.stderr
    assert "STALLED" in proc.stdout and "megatron" in proc.stdout
    no_traceback(proc)


def test_export_jsonl_and_csv(tmp_path: Path) -> None:
    jsonl = tw("export", str(MEGATRON))
    assert jsonl.returncode == 0
    records = [json.loads(line) for line in jsonl.stdout.splitlines()]
    steps = [r for r in records if r["type"] == "step" and "loss" in r["metrics"]]
    assert steps[0]["step"] == 5 and steps[0]["metrics"]["loss"] == 10.9899
    out = tmp_path / "steps.csv"
    csv = tw("export", str(MEGATRON), "--format", "csv", "-o", str(out))
    assert csv.returncode == 0
    header = out.read_text().splitlines()[0].split(",")
    assert header[:5] == ["source", "rank", "step", "time", "line"] and "loss" in header


def test_usage_errors_exit_2_without_traceback(tmp_path: Path) -> None:
    missing = tw("summary", str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    no_traceback(missing)
    bad_format = tw("export", str(MEGATRON), "--format", "xml")
    assert bad_format.returncode == 2
    no_traceback(bad_format)
    assert tw("export", str(tmp_path / "nope.log")).returncode == 2
    assert tw("check", str(tmp_path / "nope.log")).returncode == 2


def test_check_exit_codes(tmp_path: Path) -> None:
    crashed = tw("check", str(COCA))
    assert crashed.returncode == 1 and crashed.stdout.startswith("crashed:")
    stalled = tmp_path / "old.log"
    shutil.copy(MEGATRON, stalled)  # fresh mtime, but its lines say 2020: stalled
    proc = tw("check", str(stalled))
    assert proc.returncode == 1 and proc.stdout.startswith("stalled:")
    nothing = tmp_path / "notes.log"
    nothing.write_text("hello\nnothing to see here\n")
    unknown = tw("check", str(nothing))
    assert unknown.returncode == 3 and unknown.stdout.startswith("unknown: no training step recognised")


def test_check_running_on_a_log_being_written(tmp_path: Path) -> None:
    # Real modded-nanogpt step lines (shared/real_logs), written now as a live run would.
    lines = (SAMPLES / "moddednanogpt__gpt-lab-diffusion_val_checkpoint.log").read_text().splitlines()
    steps = [line for line in lines if line.startswith("step:") and "train_loss" in line][:6]
    log = tmp_path / "train.log"
    log.write_text("\n".join(steps) + "\n")
    time.sleep(0.1)
    proc = tw("check", str(log))
    assert proc.returncode == 0 and proc.stdout.startswith("running"), proc.stdout


def test_stdin_export_follow_ends_with_its_input() -> None:
    text = MEGATRON.read_text()
    proc = tw("export", "--follow", "-", stdin=text)
    assert proc.returncode == 0
    assert sum(1 for line in proc.stdout.splitlines() if '"loss"' in line) > 10


def test_demo_replays_the_whole_bundled_log_in_step_bursts() -> None:
    data = bundled_log().decode()
    chunks = list(bursts(data))
    assert "".join(text for _, text in chunks) == data  # nothing lost or invented
    assert len(chunks) > 100  # written a step at a time, not at once
    assert all(0 <= gap <= 1.0 for gap, _ in chunks)
