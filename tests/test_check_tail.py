"""`check` on a big log answers from its tail window when the end decides (a crash or a finish
at the end, a fresh step); otherwise it reads the whole file. Either way the answer is the one a
whole read gives."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES, seed
from trainwatch.cli import main
from trainwatch.diagnosis.check import check_line
from trainwatch.pipeline import Pipeline
from trainwatch.views.check_tail import answer_from_window

WINDOW = 64 * 1024


def _copy(src: Path, tmp_path: Path) -> Path:
    log = tmp_path / src.name
    shutil.copy(src, log)
    return log


def _whole(log: Path) -> tuple[int, str]:
    pipeline = Pipeline([str(log)], window_bytes=0)
    pipeline.read_to_end()
    return check_line(pipeline.store)


def _window(log: Path, window: int) -> tuple[int, str] | None:
    pipeline = Pipeline([str(log)], window_bytes=window)
    assert pipeline.read_windows()  # the file is larger than the window: only its end was read
    whole = Pipeline([str(log)], window_bytes=0)
    whole.read_to_end()
    lines = [s.lines for s in pipeline.store.sources.values()]
    assert 0 < sum(lines) < sum(s.lines for s in whole.store.sources.values())
    return answer_from_window(pipeline.store)


def _cli(log: Path, window: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setattr("trainwatch.pipeline.WINDOW_BYTES", window)
    result = CliRunner().invoke(main, ["check", str(log)])
    return result.exit_code, result.output.strip()


def test_a_crash_at_the_end_is_answered_from_the_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _copy(seed("002"), tmp_path)  # 1 MB, ends with the launcher's SIGHUP traceback
    code, line = _whole(log)
    assert code == 1 and line.startswith("crashed: ") and "SIGHUP" in line
    assert _window(log, WINDOW) == (code, line)
    assert _cli(log, WINDOW, monkeypatch) == (code, line)


def test_a_total_printed_only_at_the_start_needs_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mmengine prints `max_iters` once, in the config: the window sees steps written just now
    but not that the last one was the total, so it does not answer "running"."""
    log = _copy(SAMPLES / "mmengine__runner_cpu_healthy.log", tmp_path)
    window = log.stat().st_size // 3
    code, line = _whole(log)
    assert code == 0 and line.startswith("finished: reached step 80 of 80"), line
    assert _window(log, window) is None
    assert _cli(log, window, monkeypatch) == (code, line)


def test_a_stall_towards_a_total_in_view_is_answered_from_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 004 prints `iteration N/ 1000000` on every step: the window sees the total is far, so a
    quiet file is a stall, not a finish, with the whole read's words."""
    log = _copy(seed("004"), tmp_path)  # Megatron, last step long ago, no end marker
    old = log.stat().st_mtime - 3600
    os.utime(log, (old, old))
    code, line = _whole(log)
    assert code == 1 and line.startswith("stalled: log ends at step 23000"), line
    assert _window(log, WINDOW) == (code, line)
    assert _cli(log, WINDOW, monkeypatch) == (code, line)


def test_a_stall_without_the_total_in_view_reads_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loop that printed its length once, at the start: a quiet file may have reached it."""
    log = tmp_path / "train.log"
    lines = ["max_iters = 12000\n"] + [f"step {i} loss {2.0 - i / 100000:.5f} lr 0.0001\n" for i in range(1, 12001)]
    log.write_text("".join(lines))
    old = log.stat().st_mtime - 3 * 3600
    os.utime(log, (old, old))
    code, line = _whole(log)
    assert _window(log, WINDOW) is None
    assert _cli(log, WINDOW, monkeypatch) == (code, line)


def test_a_small_file_has_no_window(tmp_path: Path) -> None:
    log = _copy(SAMPLES / "mmengine__runner_cpu_healthy.log", tmp_path)
    assert not Pipeline([str(log)], window_bytes=log.stat().st_size).read_windows()


def test_full_reads_the_history_a_nan_only_it_holds_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A NaN loss early in a run that then recovered and is still writing steps: the window
    answers "running" (the present), `--full` reads every line and reports the NaN (exit 1)."""
    log = tmp_path / "train.log"
    lines = [f"step {i}/20000 loss {2.0 - i / 100000:.5f} lr 0.0001\n" for i in range(1, 12001)]
    lines[50] = "step 51/20000 loss nan lr 0.0001\n"
    log.write_text("".join(lines))
    code, line = _whole(log)
    assert code == 1 and line.startswith("nan: "), line
    monkeypatch.setattr("trainwatch.pipeline.WINDOW_BYTES", WINDOW)
    quick = CliRunner().invoke(main, ["check", str(log)])
    assert quick.exit_code == 0 and quick.output.startswith("running: ")
    full = CliRunner().invoke(main, ["check", "--full", str(log)])
    assert (full.exit_code, full.output.strip()) == (code, line)
