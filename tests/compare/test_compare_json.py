"""`trainwatch compare RUN RUN --json`: one summary per run, kept apart, each as `summary --json`
of that run alone would print it. Logs: two real mmengine runs of the same toy model, one with a
learning rate that diverges (sample_logs/mmengine__runner_cpu_*.log)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from trainwatch.cli import main
from trainwatch.views.compare import run_labels, short_name

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
HEALTHY = str(SAMPLES / "mmengine__runner_cpu_healthy.log")
DIVERGING = str(SAMPLES / "mmengine__runner_cpu_diverging_lr.log")


def _json(args: list[str]) -> dict:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_compare_json_keeps_each_run_as_its_own_summary() -> None:
    doc = _json(["compare", HEALTHY, DIVERGING, "--json", "--label", "base"])
    assert [r["label"] for r in doc["runs"]] == ["base", "mmengine__runner_cpu_diverging_lr"]
    for run, path in zip(doc["runs"], (HEALTHY, DIVERGING), strict=True):
        alone = _json(["summary", path, "--json"])
        assert run["sources"] == [path] == alone["sources"]  # no run's file is read into another
        assert run["last_step"] == alone["last_step"]
        assert run["status"] == alone["status"]
        assert run["latest"] == alone["latest"]
    healthy, diverging = doc["runs"]
    assert healthy["latest"]["-"]["loss"] == 0.6851
    assert diverging["latest"]["-"]["loss"] == "nan"  # the diverged run's loss is its own


def test_compare_needs_two_runs_and_no_more_labels_than_runs() -> None:
    one = CliRunner().invoke(main, ["compare", HEALTHY, "--json"])
    assert one.exit_code == 2 and "at least two runs" in one.stderr
    extra = CliRunner().invoke(main, ["compare", HEALTHY, DIVERGING, "--label", "a", "--label", "b", "--label", "c"])
    assert extra.exit_code == 2 and "3 --label for 2 runs" in extra.stderr


def test_a_missing_run_is_named_in_the_error() -> None:
    result = CliRunner().invoke(main, ["compare", HEALTHY, "/nonexistent/run.log", "--json"])
    assert result.exit_code == 2
    assert "run:" in result.stderr and "/nonexistent/run.log" in result.stderr


def test_short_names_from_paths_and_repeated_names_numbered() -> None:
    assert short_name("logs/exp1/out.log") == "out"
    assert short_name("logs/exp1/") == "exp1"
    assert short_name("runs/lr3e-4/*.log") == "lr3e-4"
    assert run_labels(["a/out.log", "b/out.log", "c/train.txt"], ["first"]) == ["first", "out", "train"]
    assert run_labels(["a/out.log", "b/out.log"], []) == ["out", "out#2"]
