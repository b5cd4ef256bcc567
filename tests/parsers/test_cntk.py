"""CNTK, from the two excerpts of tests/corpus/cntk: CNTK 1.x epoch summaries and minibatch blocks, and a
BrainScript run that turns NaN (MSVC's `1.#QNAN000`) and stops."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from _pipeline import read

from trainwatch.records import Event, Step

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "cntk"


def test_epoch_summaries_and_blocks_carry_their_epoch_and_no_invented_step() -> None:
    records, _ = read(CORPUS / "brainscript_finished_epoch_per_sample_issue194.log")
    got = [r for r in records if isinstance(r, Step)]
    assert [(s.step, s.metrics["epoch"], s.metrics["loss"]) for s in got] == [
        (None, 16.0, 0.62585586),
        (None, 17.0, 0.61816498),
        (None, 17.0, 0.61884153),
    ]
    assert got[0].metrics["lr"] == 4.6875e-05  # `4.6875e-005`, a three-digit exponent
    assert got[1].metrics["samples_per_s"] == 530.0
    assert got[1].metrics["step_time_s"] == pytest.approx(60.3761 / 500)  # the block's time over its minibatches


def test_msvc_nan_is_a_nan_loss_and_the_exception_a_crash() -> None:
    records, _ = read(CORPUS / "brainscript_minibatch_qnan_exception_issue406.log")
    got = [r for r in records if isinstance(r, Step)]
    assert len(got) == 2
    assert got[0].metrics["loss"] == 5.87155566
    assert math.isnan(got[1].metrics["loss"])
    kinds = [r.kind for r in records if isinstance(r, Event)]
    assert "nan" in kinds
    assert "crash" in kinds
    crash = next(r for r in records if isinstance(r, Event) and r.kind == "crash")
    assert crash.message == "The training criterion is not a number (NAN). Stop"


def test_the_loss_is_the_criterion_by_name_and_error_rates_never_are(tmp_path: Path) -> None:
    log = tmp_path / "cntk.log"
    log.write_text(
        " Minibatch[   1- 100]: errs = 1.08% * 6400; ce = 0.0347 * 6400\n"  # the error rate printed first
        "Final Results: Minibatch[1-11]: errs = 8.5% * 10000\n"  # a test run's summary: an evaluation
        "Finished Evaluation [1]: Minibatch[1-10]: metric = 12.5% * 10000;\n",
        encoding="utf-8",
    )
    records, _ = read(log)
    got = [r.metrics for r in records if isinstance(r, Step)]
    assert got == [{"errs_pct": 1.08, "loss": 0.0347}, {"eval_errs_pct": 8.5}, {"eval_metric_pct": 12.5}]
