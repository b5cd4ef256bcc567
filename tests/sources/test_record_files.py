"""Record files frameworks write (sources/records): found in a run directory beside its text log,
followed as they grow, read as the same `Step` records text logs give."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest
from record_run import Run

from trainwatch.pipeline import Pipeline
from trainwatch.records import Step
from trainwatch.sources.problems import ProblemKind
from trainwatch.sources.records import tfevents


# ------------------------------------------------------------------ HF trainer_state.json
@dataclasses.dataclass
class TrainerState:
    """The fields of `transformers.TrainerState` this reader looks at, saved as it saves them."""

    epoch: float = 0.0
    global_step: int = 0
    max_steps: int = 0
    log_history: list[dict[str, float]] = dataclasses.field(default_factory=list)

    def save_to_json(self, json_path: Path) -> None:
        """As `TrainerState.save_to_json` (transformers/trainer_callback.py): the whole state,
        `json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\\n"`, written over the file."""
        json_string = json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\n"
        with open(json_path, "w", encoding="utf-8") as f:
            f.write(json_string)


def test_trainer_state_rewritten_at_each_checkpoint_gives_each_entry_once(tmp_path: Path) -> None:
    (tmp_path / "nohup.out").write_text("starting\n")
    ckpt = tmp_path / "checkpoint-2"
    ckpt.mkdir()
    state = TrainerState(max_steps=4)
    state.log_history += [
        {"loss": 2.5, "learning_rate": 1e-4, "grad_norm": 1.5, "epoch": 0.5, "step": 1},
        {"loss": 2.25, "learning_rate": 9e-5, "grad_norm": 1.25, "epoch": 1.0, "step": 2},
    ]
    state.save_to_json(ckpt / "trainer_state.json")
    run = Run(tmp_path)
    run.round()
    # the run's record file, joined to its text log: its steps are the log's (sources/records/join.py)
    assert run.steps("nohup.out") == [
        (1, {"loss": 2.5, "lr": 1e-4, "grad_norm": 1.5, "epoch": 0.5}),
        (2, {"loss": 2.25, "lr": 9e-5, "grad_norm": 1.25, "epoch": 1.0}),
    ]
    state.log_history += [
        {"eval_loss": 2.75, "eval_runtime": 0.5, "epoch": 1.0, "step": 2},
        {"loss": 2.0, "learning_rate": 8e-5, "epoch": 1.5, "step": 3},
        {"train_runtime": 9.5, "train_loss": 2.3, "epoch": 2.0, "step": 4},
    ]
    state.save_to_json(ckpt / "trainer_state.json")
    run.round()
    assert run.steps("nohup.out")[2:] == [
        (2, {"eval_loss": 2.75, "eval_runtime": 0.5}),  # step 2's epoch was given already
        (3, {"loss": 2.0, "lr": 8e-5, "epoch": 1.5}),
        # the run's closing averages are not one step's loss
        (4, {"train_runtime": 9.5, "train_loss": 2.3, "epoch": 2.0}),
    ]
    assert {os.path.basename(f.state.source) for f in run.pipeline.readers.values()} == {
        "nohup.out",
        "trainer_state.json",
    }


def test_trainer_state_caught_mid_write_waits_for_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "trainer_state.json"
    state = TrainerState(log_history=[{"loss": 1.5, "step": 10}])
    state.save_to_json(path)
    whole = path.read_text()
    path.write_text(whole[: len(whole) // 2])
    run = Run(path)
    run.round()
    assert run.steps("trainer_state.json") == []
    path.write_text(whole)
    run.round()
    assert run.steps("trainer_state.json") == [(10, {"loss": 1.5})]


# ------------------------------------------------------------------ JSON lines
def test_jsonl_metrics_followed_line_by_line_and_a_torn_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "train/loss": 3.0, "lr": 0.001}\n{"step": 2, "loss": 2.')
    run = Run(tmp_path)
    run.round()
    assert run.steps("metrics.jsonl") == [(1, {"loss": 3.0, "lr": 0.001})]
    with open(path, "a") as f:
        f.write('5, "tokens_per_sec": 1000}\n')
    run.round()
    assert run.steps("metrics.jsonl") == [(1, {"loss": 3.0, "lr": 0.001}), (2, {"loss": 2.5, "tokens_per_s": 1000.0})]


# ------------------------------------------------------------------ Lightning metrics.csv
class ExperimentWriter:
    """Lightning's CSVLogger writer, as `_ExperimentWriter` in lightning/fabric/loggers/csv_logs.py
    (`log_metrics` adds `step`, `save` appends rows with `csv.DictWriter` under
    `metrics_keys`, new keys sorted onto the end; when keys are new and the file exists,
    `_rewrite_with_new_header` rewrites it: old rows read with `csv.DictReader`, written again under
    the longer header), without the fsspec filesystem."""

    NAME_METRICS_FILE = "metrics.csv"

    def __init__(self, log_dir: Path) -> None:
        self.metrics: list[dict[str, float]] = []
        self.metrics_keys: list[str] = []
        self.metrics_file_path = log_dir / self.NAME_METRICS_FILE

    def log_metrics(self, metrics_dict: dict[str, float], step: int | None = None) -> None:
        if step is None:
            step = len(self.metrics)
        metrics = dict(metrics_dict)
        metrics["step"] = step
        self.metrics.append(metrics)

    def save(self) -> None:
        if not self.metrics:
            return
        new_keys = self._record_new_keys()
        file_exists = self.metrics_file_path.is_file()
        if new_keys and file_exists:
            self._rewrite_with_new_header(self.metrics_keys)
        with open(self.metrics_file_path, mode=("a" if file_exists else "w"), newline="") as file:
            writer = csv.DictWriter(file, fieldnames=self.metrics_keys)
            if not file_exists:
                writer.writeheader()
            writer.writerows(self.metrics)
        self.metrics = []

    def _record_new_keys(self) -> set[str]:
        current_keys = set().union(*self.metrics)
        new_keys = current_keys - set(self.metrics_keys)
        self.metrics_keys.extend(sorted(new_keys))
        return new_keys

    def _rewrite_with_new_header(self, fieldnames: list[str]) -> None:
        with open(self.metrics_file_path, newline="") as file:
            metrics = list(csv.DictReader(file))
        with open(self.metrics_file_path, "w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=fieldnames)
            writer.writeheader()
            writer.writerows(metrics)


def test_lightning_csv_rows_then_a_longer_header_rewrite(tmp_path: Path) -> None:
    version = tmp_path / "lightning_logs" / "version_0"
    version.mkdir(parents=True)
    writer = ExperimentWriter(version)
    writer.log_metrics({"train_loss": 2.0, "epoch": 0}, step=49)
    writer.log_metrics({"train_loss": 1.75, "epoch": 0}, step=99)
    writer.save()
    run = Run(tmp_path)
    run.round()
    assert run.steps("metrics.csv") == [(49, {"loss": 2.0, "epoch": 0.0}), (99, {"loss": 1.75, "epoch": 0.0})]
    writer.log_metrics({"val_loss": 2.5, "epoch": 0}, step=99)  # a new column: the file is rewritten
    writer.log_metrics({"train_loss": 1.5, "epoch": 1}, step=149)
    writer.save()
    header = (version / "metrics.csv").read_text().splitlines()[0]
    assert header == "epoch,step,train_loss,val_loss"
    run.round()
    assert run.steps("metrics.csv")[2:] == [(99, {"eval_loss": 2.5, "epoch": 0.0}), (149, {"loss": 1.5, "epoch": 1.0})]


# ------------------------------------------------------------------ MLflow file store
def log_metric(run_dir: Path, key: str, value: float, timestamp: int, step: int) -> None:
    """As MLflow's `FileStore.log_metric` (mlflow/store/tracking/file_store.py): appends
    `"{timestamp} {value} {step}\\n"` to `<run>/metrics/<key>` (a `/` in the key is a subdirectory)."""
    path = run_dir / "metrics" / key
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(f"{timestamp} {value} {step}\n")


def test_mlflow_run_metrics_directory_is_one_source_and_new_metrics_appear(tmp_path: Path) -> None:
    run_dir = tmp_path / "mlruns" / "0" / "4f1c"
    run_dir.mkdir(parents=True)
    (run_dir / "meta.yaml").write_text("run_id: 4f1c\n")
    log_metric(run_dir, "train/loss", 2.5, 1_700_000_000_000, 1)
    run = Run(tmp_path)
    run.round()
    assert run.steps("metrics") == [(1, {"loss": 2.5})]
    log_metric(run_dir, "train/loss", 2.25, 1_700_000_001_000, 2)
    log_metric(run_dir, "learning_rate", 0.0001, 1_700_000_001_000, 2)
    run.round()
    assert sorted(run.steps("metrics")[1:], key=str) == [(2, {"loss": 2.25}), (2, {"lr": 0.0001})]
    assert [r.time for r in run.records][:1] == ["2023-11-14T22:13:20+00:00"]
    assert len(run.pipeline.readers) == 1  # meta.yaml is not a log; the metrics directory is one source


# ------------------------------------------------------------------ TensorBoard event files
@pytest.fixture
def event_file_writer(monkeypatch: pytest.MonkeyPatch) -> Any:
    """tensorboard's `EventFileWriter`, on its TensorFlow-free stub: `tensorboard.compat.notf` is
    the package's switch for it. Without it tensorboard imports `tensorflow` when anything by that
    name is importable, and `tests/corpus/tensorflow/` is, once pytest puts `tests/corpus` on the path."""
    pytest.importorskip("tensorboard")
    monkeypatch.setitem(sys.modules, "tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    return EventFileWriter


def scalar_event(tag: str, value: float, step: int, *, tensor: bool = False) -> Any:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.util import tensor_util

    if tensor:
        summary = summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag=tag, tensor=tensor_util.make_tensor_proto(value))]
        )
    else:
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
    return event_pb2.Event(wall_time=time.time(), step=step, summary=summary)


def test_tfevents_followed_as_written_by_tensorboards_writer(tmp_path: Path, event_file_writer: Any) -> None:
    EventFileWriter = event_file_writer
    (tmp_path / "nohup.out").write_text("step 1\n")
    writer = EventFileWriter(str(tmp_path))
    writer.add_event(scalar_event("train/loss", 2.5, 1))
    writer.add_event(scalar_event("train/learning_rate", 0.5, 1))
    writer.flush()
    run = Run(tmp_path)
    run.round()
    names = {os.path.basename(f.state.source) for f in run.pipeline.readers.values()}
    assert "nohup.out" in names and any(n.startswith("events.out.tfevents.") for n in names)
    # joined to the run's text log: the scalars of one step read together are one step
    assert run.steps("nohup.out") == [(1, {"loss": 2.5, "lr": 0.5})]
    writer.add_event(scalar_event("eval/loss", 3.0, 2))
    writer.add_event(scalar_event("train/tokens per sec", 1000.0, 2, tensor=True))
    writer.flush()
    run.round()
    assert run.steps("nohup.out")[1:] == [(2, {"eval_loss": 3.0, "tokens_per_s": 1000.0})]
    writer.close()


def test_tfevents_torn_last_record_waits_for_its_rest_and_is_not_read_again(
    tmp_path: Path, event_file_writer: Any
) -> None:
    EventFileWriter = event_file_writer
    source = tmp_path / "written"
    source.mkdir()
    writer = EventFileWriter(str(source))
    for step in (1, 2, 3):
        writer.add_event(scalar_event("train/loss", float(step), step))
    writer.close()
    (written,) = source.iterdir()
    data = written.read_bytes()
    target = tmp_path / "run" / written.name
    target.parent.mkdir()
    cut = len(data) - 7  # the last record's tail not written yet
    target.write_bytes(data[:cut])
    run = Run(target.parent)
    run.round()
    assert [s for s, _ in run.steps(written.name)] == [1, 2]
    with open(target, "ab") as f:
        f.write(data[cut:])
    run.round()
    assert [s for s, _ in run.steps(written.name)] == [1, 2, 3]


def test_without_tensorboard_the_extra_is_named_once_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trainwatch.pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "tensorboard_available", lambda: False)
    for name in ("events.out.tfevents.1.host", "events.out.tfevents.2.host"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "nohup.out").write_text("hello\n")
    run = Run(tmp_path)
    run.round()
    said = [p.message for p in run.pipeline.problems if p.kind is ProblemKind.NOT_READ]
    assert said == [tfevents.MISSING]
    assert "trainwatch-tui[tensorboard]" in said[0]
    assert [os.path.basename(f.state.source) for f in run.pipeline.readers.values()] == ["nohup.out"]


def test_the_follow_loop_reads_a_record_file_that_appears_and_grows(tmp_path: Path) -> None:
    (tmp_path / "train.log").write_text("starting\n")
    records: list[Any] = []
    pipeline = Pipeline([str(tmp_path)], sink=records.extend)
    pipeline.start()
    try:
        state = TrainerState(log_history=[{"loss": 3.0, "step": 1}])
        state.save_to_json(tmp_path / "trainer_state.json")

        def steps() -> list[int | None]:
            return [r.step for r in list(records) if isinstance(r, Step)]

        deadline = time.monotonic() + 10
        while steps() != [1] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert steps() == [1]
        state.log_history.append({"loss": 2.5, "step": 2})
        state.save_to_json(tmp_path / "trainer_state.json")
        while steps() != [1, 2] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert steps() == [1, 2]
    finally:
        pipeline.stop()
