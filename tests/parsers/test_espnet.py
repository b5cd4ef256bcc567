"""ESPnet2 trainer reports. Sources: espnet/espnet issue #2674 (LM recipe, batch ranges) and #3170 (ASR
conformer, grad norm nan warnings), both kept in tests/corpus/espnet/ with their provenance."""

from __future__ import annotations

from pathlib import Path

from _feed import events, steps
from _pipeline import read

from trainwatch.records import Phases

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "espnet"


def test_batch_range_reports_are_steps_with_phases() -> None:
    records, _ = read(CORPUS / "espnet2_lm_trainer_batch_ranges_issue2674.log")
    got = steps(records)
    assert [s.step for s in got][:3] == [4875, 5250, 5625]
    assert got[0].metrics == {"loss": 1.281, "lr": 0.1, "data_time_s": 0.001, "step_time_s": 0.014, "epoch": 17.0}
    phases = [r for r in records if isinstance(r, Phases)]
    assert phases[0].step == 4875
    assert phases[0].phases_s == {"forward": 0.005, "backward": 0.005, "optimizer": 1.970e-04}


def test_grad_norm_nan_warning_is_a_nan_event_and_the_report_keeps_its_fields() -> None:
    records, _ = read(CORPUS / "espnet2_grad_norm_nan_warnings_issue3170.log")
    nan = events(records, "nan")
    assert nan and all(e.data == {"metric": "grad_norm"} for e in nan)
    (report,) = steps(records)
    assert report.step == 12640
    assert report.metrics["loss"] == 65.129 and report.metrics["lr"] == 1.485e-05
    assert report.metrics["loss_att"] == 124.079 and report.metrics["acc"] == 0.065
