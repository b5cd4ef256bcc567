"""Vowpal Wabbit's progressive-validation table, read from real runs (tests/corpus/vowpal_wabbit): the
loss since the last row is the loss, holdout rows are the evaluation's, the pass is the epoch, and
`finished run` ends the run. Rows of numbers without the header are not Vowpal Wabbit's."""

from __future__ import annotations

from pathlib import Path

from _pipeline import read

from trainwatch.records import Event, Step

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "vowpal_wabbit"


def test_a_multi_pass_run_with_a_holdout_set() -> None:
    records, _ = read(CORPUS / "holdout-passes-finished.log")
    got = [r for r in records if isinstance(r, Step)]
    assert [s.step for s in got] == [None] * 6  # (rows at doubling example counts: no optimizer step)
    assert [s.metrics.get("loss") for s in got[:4]] == [1.0, 1.94155, 0.736181, 1.300793]
    assert [s.metrics["samples_seen"] for s in got] == [1, 2, 4, 8, 16, 32]
    assert [s.metrics.get("eval_loss") for s in got[4:]] == [0.0, 0.0]  # the rows marked `h`
    assert [e.kind for e in records if isinstance(e, Event)] == ["finished"]


def test_the_pass_column_is_the_epoch() -> None:
    records, _ = read(CORPUS / "progress-with-pass-column.log")
    got = [r for r in records if isinstance(r, Step)]
    assert [(s.metrics["loss"], s.metrics["epoch"]) for s in got][-3:] == [
        (0.054711, 2.0),
        (0.006646, 5.0),
        (0.001796, 11.0),
    ]


def test_rows_without_the_header_are_not_vowpal_wabbit(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("1.000000   1.000000            1         1.0   1.0000   0.0000        1\nfinished run\n")
    records, _ = read(log)
    assert not [r for r in records if isinstance(r, Step) and "samples_seen" in r.metrics]
    assert not [r for r in records if isinstance(r, Event) and r.kind == "finished"]
