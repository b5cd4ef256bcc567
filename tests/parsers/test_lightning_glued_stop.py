"""Lightning's end-of-fit message arrives glued to the last bar frame.

Source: sample_logs/lightning__cpu_simple_profiler_healthy.log, a real Lightning 2.6 `Trainer.fit`
on CPU with the tqdm bar writing to a file (sample_logs/generators/lightning_slow_data.py)."""

from __future__ import annotations

from _pipeline import read
from conftest import SAMPLES
from fw_recorder import run

from trainwatch.parsers.formats.lightning import LightningParser
from trainwatch.records import Event, Step

BAR = "Epoch 1: 100%|██████████| 40/40 [00:03<00:00, 10.75it/s, v_num=0, train_loss=0.910]"


def test_stop_message_after_the_last_frame_is_the_finished_event() -> None:
    rec, understood = run(LightningParser(), f"\r{BAR}`Trainer.fit` stopped: `max_epochs=2` reached.\n")
    assert understood == [True]
    (s,) = rec.steps
    assert s.step == 80 and s.data["metrics"]["loss"] == 0.910
    (e,) = [c for c in rec.calls if c.kind == "event"]
    assert e.data["kind"] == "finished"
    assert e.data["data"] == {"max_epochs": 2}
    assert e.data["message"] == "`Trainer.fit` stopped: `max_epochs=2` reached."


def test_a_bar_without_the_message_is_no_finish() -> None:
    rec, _ = run(LightningParser(), f"\r{BAR}\n")
    assert not [c for c in rec.calls if c.kind == "event"]


def test_real_run_reads_finished_after_its_last_step() -> None:
    records, _ = read(SAMPLES / "lightning__cpu_simple_profiler_healthy.log")
    finished = [r for r in records if isinstance(r, Event) and r.kind == "finished"]
    steps = [r for r in records if isinstance(r, Step)]
    assert len(finished) == 1 and finished[0].data == {"max_epochs": 2}
    assert steps[-1].step == 80
