"""JSONL and CSV exactly as the contract writes them."""

from __future__ import annotations

import csv
import io
import json
import math

from trainwatch.records import Event, Phases, Profile, Step
from trainwatch.views.export import CsvWriter, JsonlWriter


def test_jsonl_records_match_the_contract() -> None:
    out = io.StringIO()
    w = JsonlWriter(out)
    w.write(
        [
            Step("logs/out.log", 0, 100, "2020-12-12T00:01:20.672", 1234, {"loss": 9.598498, "grad_norm": math.nan}),
            Phases("logs/out.log", 0, 100, None, 1235, {"forward": 0.31849}),
            Event("logs/out.log", 0, 523, None, 5678, "overflow", "warning", "OVERFLOW!", {"new_scale": 32768}),
            Profile(
                "logs/out.log",
                None,
                None,
                None,
                1,
                "FIT Profiler Report",
                "lightning_simple",
                ({"name": "x", "num_calls": 5},),
            ),
        ]
    )
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows[0] == {
        "type": "step",
        "source": "logs/out.log",
        "rank": 0,
        "step": 100,
        "time": "2020-12-12T00:01:20.672",
        "line": 1234,
        "metrics": {"loss": 9.598498, "grad_norm": "nan"},
    }
    assert rows[1]["phases_s"] == {"forward": 0.31849}
    assert (
        rows[2]["kind"] == "overflow" and rows[2]["severity"] == "warning" and rows[2]["data"] == {"new_scale": 32768}
    )
    assert rows[3]["rows"] == [{"name": "x", "num_calls": 5}] and rows[3]["title"] == "FIT Profiler Report"


def test_csv_has_fixed_columns_then_sorted_metrics() -> None:
    out = io.StringIO()
    w = CsvWriter(out)
    w.write([Step("a.log", None, 1, None, 3, {"loss": 2.5}), Phases("a.log", None, 1, None, 4, {"forward": 1.0})])
    w.write([Step("a.log", None, 2, None, 9, {"lr": 0.001, "loss": math.inf})])
    w.close()
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["source", "rank", "step", "time", "line", "loss", "lr"]
    assert rows[1] == ["a.log", "", "1", "", "3", "2.5", ""]
    assert rows[2] == ["a.log", "", "2", "", "9", "inf", "0.001"]


def test_host_and_attempt_are_written_only_when_known() -> None:
    out = io.StringIO()
    JsonlWriter(out).write(
        [
            Step("a.log", 1, 5, None, 2, {"loss": 1.0}),
            Step("a.log", 1, 5, None, 9, {"loss": 1.0}, host="worker-1", attempt=1),
        ]
    )
    plain, extended = (json.loads(line) for line in out.getvalue().splitlines())
    assert "host" not in plain and "attempt" not in plain
    assert extended["host"] == "worker-1" and extended["attempt"] == 1


def test_what_reaches_a_terminal_holds_no_control() -> None:
    """Writers are the last step before a terminal: a name or text that reached them raw (the
    pipeline already shows names so) is still written inert — JSONL as the same data escaped,
    CSV shown."""
    name = "\x1b]52;c;cHduZWQ=\x07\x9b2J\u202ex.log"
    step = Step(name, 0, 1, None, 3, {"loss": 2.5})
    event = Event(name, 0, 1, None, 4, "traceback", "error", "boom \x9d0;T\x9c", {})
    out = io.StringIO()
    JsonlWriter(out).write([step, event])
    assert all(c not in out.getvalue() for c in "\x1b\x07\x9b\x9d\x9c\u202e")
    assert [json.loads(line)["source"] for line in out.getvalue().splitlines()] == [name, name]
    out = io.StringIO()
    w = CsvWriter(out)
    w.write([step])
    w.close()
    assert list(csv.reader(io.StringIO(out.getvalue())))[1][0] == "␛]52;c;cHduZWQ=␇\\x9b2J\\u202ex.log"
