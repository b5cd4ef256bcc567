"""Record files written by the frameworks' own writers (tests/real_writers.py), followed as they
grow, and a run directory's record files joined to its text log (sources/records/join.py)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from real_writers import HfRun, csv_logger, need, summary_writer
from record_run import Run

from trainwatch.pipeline import Pipeline
from trainwatch.store.store import RankKey

# The frameworks' own writers: importing them (torch, lightning) takes seconds.
pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ each writer alone, growing
def test_lightning_csv_logger_followed_through_its_header_rewrite(tmp_path: Path) -> None:
    logger = csv_logger(tmp_path)
    logger.log_metrics({"train_loss": 2.0, "epoch": 0}, step=49)
    logger.log_metrics({"train_loss": 1.75, "epoch": 0}, step=99)
    run = Run(tmp_path)
    run.round()
    assert run.steps("metrics.csv") == [(49, {"loss": 2.0, "epoch": 0.0}), (99, {"loss": 1.75, "epoch": 0.0})]
    metrics_csv = Path(logger.log_dir) / "metrics.csv"
    assert metrics_csv.read_text().splitlines()[0] == "epoch,step,train_loss"
    logger.log_metrics({"val_loss": 2.5, "epoch": 0}, step=99)  # a new key: Lightning rewrites the file
    assert metrics_csv.read_text().splitlines()[0] == "epoch,step,train_loss,val_loss"
    run.round()
    assert run.steps("metrics.csv")[2:] == [(99, {"eval_loss": 2.5, "epoch": 0.0})]
    logger.log_metrics({"train_loss": 1.5, "epoch": 1}, step=149)
    run.round()
    assert run.steps("metrics.csv")[3:] == [(149, {"loss": 1.5, "epoch": 1.0})]
    logger.finalize("success")
    run.round()
    assert len(run.steps("metrics.csv")) == 4  # the rows read once, whatever rewrote them


def test_hf_trainer_state_followed_as_each_checkpoint_rewrites_it(tmp_path: Path) -> None:
    transformers = need("transformers")
    state = transformers.TrainerState(max_steps=40)
    path = tmp_path / "trainer_state.json"
    state.log_history.append({"loss": 2.5, "learning_rate": 1e-4, "epoch": 0.25, "step": 10})
    state.save_to_json(str(path))
    run = Run(tmp_path)
    run.round()
    assert run.steps("trainer_state.json") == [(10, {"loss": 2.5, "lr": 1e-4, "epoch": 0.25})]
    for step, loss in ((20, 2.25), (30, 2.0)):
        state.log_history.append({"loss": loss, "learning_rate": 1e-4, "epoch": step / 40, "step": step})
        state.save_to_json(str(path))
        run.round()
    assert [(s, m["loss"]) for s, m in run.steps("trainer_state.json")] == [(10, 2.5), (20, 2.25), (30, 2.0)]


def test_summary_writer_event_file_followed_as_it_grows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = summary_writer(tmp_path, monkeypatch)
    writer.add_scalar("train/loss", 2.5, 1)
    writer.add_scalar("train/learning_rate", 0.5, 1)
    writer.flush()
    run = Run(tmp_path)
    run.round()
    (event_file,) = (p.name for p in tmp_path.iterdir() if p.name.startswith("events.out.tfevents."))
    assert run.steps(event_file) == [(1, {"loss": 2.5}), (1, {"lr": 0.5})]
    writer.add_scalar("train/loss", 2.2031, 2)  # stored as float32: read back as the value logged
    writer.add_scalar("eval/loss", 3.0, 2)
    writer.flush()
    run.round()
    assert run.steps(event_file)[2:] == [(2, {"loss": 2.2031}), (2, {"eval_loss": 3.0})]
    writer.close()


# ------------------------------------------------------------------ a run directory is one run
LOGS = [  # what an HF run logs every 10 steps; grad_norm is written by the run's own callback only
    (10, {"loss": 2.4817, "learning_rate": 5e-05, "epoch": 0.25}, 1.875),
    (20, {"loss": 2.2031, "learning_rate": 4e-05, "epoch": 0.5}, 1.5),
    (30, {"loss": 1.9902, "learning_rate": 3e-05, "epoch": 0.75}, 1.25),
]


def hf_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HfRun:
    run = HfRun(tmp_path, monkeypatch)
    for step, logs, grad_norm in LOGS:
        run.log(step, logs)
        run.writer.add_scalar("train/grad_norm", grad_norm, step)
        if step == 20:
            run.checkpoint()
    run.writer.flush()
    run.checkpoint()
    return run


def test_hf_run_directory_read_once_is_one_source_each_step_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hf_run(tmp_path, monkeypatch).close()
    # the printed dicts hold no step (PrinterCallback prints `logs` as they are)
    assert (tmp_path / "nohup.out").read_text().splitlines()[0] == (
        "{'loss': '2.482', 'learning_rate': '5e-05', 'epoch': '0.25'}"
    )
    pipeline = Pipeline([str(tmp_path)])
    pipeline.read_to_end()
    store = pipeline.store
    log = str(tmp_path / "nohup.out")
    assert {k.source for k in store.latest} == {log}  # one run: no source or rank per record file
    key = RankKey(log, None)
    for name in ("loss", "lr", "epoch", "grad_norm"):
        series = store.get_series(log, None, name)
        assert series is not None and list(series.steps) == [10.0, 20.0, 30.0], name
    loss = store.get_series(log, None, "loss")
    assert loss is not None and list(loss.values) == [2.4817, 2.2031, 1.9902]  # as logged, whichever file gave it
    assert store.latest[key]["grad_norm"] == 1.25  # only the event file has it
    assert store.latest_step[key] == 30 and store.step_records[key] == 3
    # every record file is still listed as a source read (with its format), beside the log
    assert {os.path.basename(s) for s in store.sources} >= {"nohup.out", "trainer_state.json"}


def test_hf_run_directory_exported_each_step_metric_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hf_run(tmp_path, monkeypatch).close()
    out = subprocess.run(
        [sys.executable, "-m", "trainwatch", "export", str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout
    records = [json.loads(line) for line in out.splitlines()]
    steps = [r for r in records if r["type"] == "step"]
    assert {r["source"] for r in steps} == {str(tmp_path / "nohup.out")}
    given = Counter((r["step"], name) for r in steps for name in r["metrics"])
    assert set(given.values()) == {1}  # no metric of a step given twice
    assert sorted(given) == sorted((s, n) for s, _, _ in LOGS for n in ("loss", "lr", "epoch", "grad_norm"))


def test_hf_run_followed_live_text_log_first_then_the_event_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Trainer's print arrives before the event file is flushed: the dict printed without a
    step is recognised in the event file's step by its values, so its loss is not doubled; what
    only the event file has (grad_norm) joins the log's step 10 (its tqdm frame)."""
    log = tmp_path / "nohup.out"
    log.write_text("  5%|▌         | 10/200 [00:05<01:35,  2.00it/s]\n")
    with open(log, "a") as out, contextlib.redirect_stdout(out):
        need("transformers.trainer_callback").PrinterCallback().on_log(
            None,
            need("transformers").TrainerState(),
            None,
            logs={"loss": 2.4817, "learning_rate": 5e-05, "epoch": 0.25},
        )
    writer = summary_writer(tmp_path / "runs" / "x", monkeypatch)
    writer.add_scalar("train/loss", 2.5, 0)
    writer.flush()
    run = Run(tmp_path)
    run.round()
    assert run.steps("nohup.out") == [
        (10, {"total_steps": 200.0, "step_time_s": 0.5}),
        (None, {"loss": 2.482, "lr": 5e-05, "epoch": 0.25}),  # buffered HF output: the step is not printed
        (0, {"loss": 2.5}),
    ]
    writer.add_scalar("train/loss", 2.4817, 10)
    writer.add_scalar("train/learning_rate", 5e-05, 10)
    writer.add_scalar("train/grad_norm", 1.875, 10)
    writer.flush()
    run.round()
    assert run.steps("nohup.out")[3:] == [(10, {"grad_norm": 1.875})]
    store = run.pipeline.store
    assert store.step_records[RankKey(str(log), None)] == 3  # step 10's part is not another step
    grad_norm = store.get_series(str(log), None, "grad_norm")
    assert grad_norm is not None and list(grad_norm.steps) == [10.0]
    writer.close()


def test_a_record_file_with_no_text_log_beside_it_stays_its_own_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logger = csv_logger(tmp_path / "lightning")
    logger.log_metrics({"train_loss": 2.0}, step=9)
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "train.log").write_text("starting\n")
    run = Run(tmp_path / "lightning", other)
    run.round()
    assert run.steps("metrics.csv") == [(9, {"loss": 2.0})]


def test_hf_checkpoint_appearing_after_the_log_gave_its_steps_does_not_give_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without TensorBoard, the first record file of an HF run is `checkpoint-N/trainer_state.json`,
    written long after the log printed those steps; and each checkpoint is a new file."""
    hf = HfRun(tmp_path, monkeypatch, tensorboard=False)
    run = Run(tmp_path)
    for step, logs, _grad_norm in LOGS:
        hf.log(step, logs)
        if step >= 20:
            hf.checkpoint()  # checkpoint-20, then checkpoint-30: each holds the whole history
        run.round()
    log = str(tmp_path / "nohup.out")
    assert {os.path.basename(f.spec.name) for f in run.pipeline.readers.values()} == {
        "nohup.out",
        "trainer_state.json",
    }
    loss = run.pipeline.store.get_series(log, None, "loss")
    assert loss is not None and list(loss.values) == [2.482, 2.203, 1.99]  # as printed, each once
    assert run.pipeline.store.step_records[RankKey(log, None)] == 3
    assert {r.source for r in run.records} == {log}


def test_hf_run_directory_followed_gives_the_printed_dicts_their_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's follow loop, started on a run directory, reads the joined record files
    before the log, as `summary` does: the charts' x axis is the step, not the dict's order."""
    hf_run(tmp_path, monkeypatch).close()
    pipeline = Pipeline([str(tmp_path)])
    pipeline.start()
    try:
        log = str(tmp_path / "nohup.out")
        deadline = time.monotonic() + 20
        while pipeline.store.latest.get(RankKey(log, None), {}).get("loss") != 1.9902 and time.monotonic() < deadline:
            time.sleep(0.05)
        loss = pipeline.store.get_series(log, None, "loss")
        assert loss is not None and list(loss.steps) == [10.0, 20.0, 30.0]
        assert list(loss.values) == [2.4817, 2.2031, 1.9902]
    finally:
        pipeline.stop()
