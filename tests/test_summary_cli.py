"""End to end: `trainwatch summary --json` / `summary` / `check` on the seed logs and a healthy real log.

Written against the contract's facts (shared/spec/records.md and the seed descriptions): seed 002 is
a 4-rank torchrun + DeepSpeed run killed by SIGHUP after step 1601; seed 004 is a DeepSpeed +
Megatron GPT-2 log from 2020 that just stops at iteration 23000.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from conftest import REAL_LOGS, seed

from trainwatch.cli import main
from trainwatch.diagnosis.findings import findings
from trainwatch.pipeline import Pipeline
from trainwatch.views.summary import print_summary, summary_json


def _summary(path: Path) -> dict:
    result = CliRunner().invoke(main, ["summary", "--json", str(path)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_seed002_summary_json_contract_facts() -> None:
    data = _summary(seed("002"))
    assert data["status"] == "crashed"
    assert data["ranks"] == [0, 1, 2, 3]
    assert data["last_step"] == {"0": 1601}
    assert data["total_steps"] == 1191600
    assert data["events"]["overflow"] == 4
    assert data["events"]["signal"] == 5
    assert data["latest"]["0"]["loss"] == 24.314
    assert data["findings"][0]["kind"] == "crash"
    assert "SIGHUP" in data["findings"][0]["message"]
    for key in ("sources", "formats", "root_cause", "stragglers"):
        assert key in data


def test_seed002_check_exits_1_crashed() -> None:
    result = CliRunner().invoke(main, ["check", str(seed("002"))])
    assert result.exit_code == 1
    assert result.output.startswith("crashed: ")
    assert "after step 1601" in result.output


def test_seed004_copied_to_a_temp_dir_is_stalled(tmp_path: Path) -> None:
    copy = tmp_path / "out.log"
    shutil.copyfile(seed("004"), copy)  # mtime is now; the log's own timestamps say 2020
    data = _summary(copy)
    assert data["status"] == "stalled"
    assert 23000 in data["last_step"].values()
    assert [f["kind"] for f in data["findings"]] == ["stall", "overfitting"]  # issue 22
    result = CliRunner().invoke(main, ["check", str(copy)])
    assert result.exit_code == 1 and result.output.startswith(
        "stalled: log ends at step 23000 (last line 2020-12-12 05:58) with no end marker; last write "
    )
    assert result.output.count("\n") == 1  # check: one line


def test_piped_summary_is_one_finding_per_line(tmp_path: Path) -> None:
    """Not a terminal (grep, cron mail): no hard wrap at 80 columns."""
    copy = tmp_path / "out.log"
    shutil.copyfile(seed("004"), copy)
    done = subprocess.run(
        [sys.executable, "-m", "trainwatch", "summary", str(copy)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    stall = [ln for ln in lines if ln.lstrip().startswith("error")]
    assert len(stall) == 1 and stall[0].endswith("with no end marker") and "years" not in stall[0]
    assert len(stall[0]) > 80
    assert lines[0].startswith("STALLED  log ends at step 23000") and "; last write " in lines[0]
    (remedy,) = [ln for ln in lines if "py-spy" in ln]
    assert remedy.endswith("the scheduler's log says why")
    assert any(ln.startswith(f"source {copy}: ") and ln.endswith(" not understood") for ln in lines)


def test_plain_report_has_no_escape_sequences_and_the_sections() -> None:
    result = CliRunner().invoke(main, ["summary", str(seed("002"))])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "\x1b" not in out
    assert out.startswith("CRASHED")
    for text in ("step 1601 of 1191600", "where a step's time goes", "events: overflow 4", "findings", "→"):
        assert text in out


def test_healthy_mmengine_log_has_no_findings_while_it_runs() -> None:
    # mmengine (chg0901/openmmlab2-hong, Faster R-CNN): epoch 5 end, checkpoint save and validation.
    # Looked at 5 s after its last line, as the dashboard would have while the run was alive.
    path = REAL_LOGS / "mmengine__chg0901_openmmlab2-hong__frcnn_20230604_120745_L1394-1432.log"
    pipeline = Pipeline([str(path)])
    pipeline.read_to_end()
    store = pipeline.store
    last = max(store.last_log_time.values())
    assert not math.isnan(last)
    for state in store.sources.values():
        state.mtime = last + 1
    assert findings(store, now=last + 5) == []
    data = summary_json(store, now=last + 5)
    assert data["status"] == "running"
    assert data["findings"] == []


def test_print_summary_never_renders_log_text_as_markup() -> None:
    from rich.console import Console

    from trainwatch.records import Event, Step
    from trainwatch.store.store import Store

    store = Store()
    message = "RuntimeError: expected [/] got [bold]x[/bold] [@click=app.quit]"  # any text a log may hold
    store.add_many(
        [
            Step("train.log", None, 7, "2024-02-20T10:00:00", 1, {"loss": 2.5}),
            Event("train.log", None, 7, "2024-02-20T10:00:01", 2, "traceback", "error", message, {}),
        ]
    )
    console = Console(record=True, width=200, color_system=None)
    print_summary(store, console=console, now=1_760_000_000.0)
    out = console.export_text()
    assert out.startswith("CRASHED")
    assert message in out


def test_seed000_lightning_profiler_report_in_summary_json() -> None:
    """Seed 000: a Lightning SimpleProfiler `FIT Profiler Report`; shares of its `Total` row (1774.1 s)."""
    (profile,) = _summary(seed("000"))["profiles"]
    assert profile["title"] == "FIT Profiler Report" and profile["kind"] == "lightning_simple"
    top = profile["top"][0]
    assert top["name"] == "run_training_epoch" and top["total_s"] == 1750.6
    assert top["share"] == 0.9868  # the table's own 98.676 %
    assert "Total" not in [r["name"] for r in profile["top"]]
    phases = profile["phases"]["share"]
    assert list(phases) == ["data", "forward", "backward", "optimizer", "other"]
    assert phases["forward"] == 0.503 and phases["backward"] == 0.3808


def test_seed000_summary_text_shows_the_profiler_report() -> None:
    result = CliRunner().invoke(main, ["summary", str(seed("000"))])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(ln.startswith("profiler report: FIT Profiler Report") for ln in lines)
    (epoch,) = [ln for ln in lines if ln.strip().startswith("run_training_epoch")]
    assert epoch.endswith("98.7%")
    (forward,) = [ln for ln in lines if ln.strip().startswith("forward ")]
    assert forward.endswith("50.3%")
    for phase in ("data", "backward", "optimizer", "other"):
        assert any(ln.strip().startswith(phase + " ") for ln in lines), phase


def test_seed001_torch_profiler_report_in_summary() -> None:
    """Seed 001: torch.profiler key_averages of a DeepSpeed MoE step; shares of `train_step-0` (3.916 s)."""
    (profile,) = _summary(seed("001"))["profiles"]
    assert profile["kind"] == "torch_profiler"
    assert profile["basis"] == "of the profiled step (train_step-0)"
    top = profile["top"][0]
    assert top["name"] == "forward" and top["total_s"] == 3.796 and top["share"] == 0.9694
    assert "train_step-0" not in [r["name"] for r in profile["top"]]  # the 100 % itself
    assert list(profile["phases"]["share"]) == ["forward", "backward", "optimizer", "other"]
    assert profile["phases"]["comm_share"] == 0.9603

    result = CliRunner().invoke(main, ["summary", str(seed("001"))])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    (forward_row,) = [ln for ln in lines if ln.strip().startswith("forward ") and re.search(r"\d+(?:\.\d+)?s ", ln)]
    assert forward_row.endswith("96.9%")
    assert any("collectives 96.0% inside the phases above" in ln for ln in lines)
    assert "share of the profiled step (train_step-0)" in result.output


def test_no_profiles_key_is_an_empty_list() -> None:
    assert _summary(seed("002"))["profiles"] == []


def test_print_summary_shows_control_characters_instead_of_writing_them() -> None:
    """The report's console is the last step before the terminal: a name that reached the store
    raw (the pipeline already shows names so) is still shown, never sent, with its styling kept."""
    import io

    from rich.console import Console

    from trainwatch.records import Step
    from trainwatch.store.store import Store

    store = Store()
    name = "\x1b]0;T\x07[bold]\x9b2J\u202ex.log"
    store.source(name)
    store.add_many([Step(name, None, 7, "2024-02-20T10:00:00", 1, {"loss": 2.5})])
    out = io.StringIO()
    print_summary(store, console=Console(file=out, force_terminal=True, color_system="256", width=200))
    styled = out.getvalue()
    assert "source ␛]0;T[bold]\\x9b2J\\u202ex.log: " in styled  # (a rich Text drops BEL itself)
    assert "\x1b]" not in styled and "\x07" not in styled and "\x9b" not in styled and "\u202e" not in styled
    assert "\x1b[1;" in styled  # its own styling (the bold status) is still there
