"""The frameworks' own writers of record files, for tests that follow what they write: PyTorch's
`SummaryWriter`, Lightning's `CSVLogger`, HF's `TrainerState.save_to_json` and the Trainer's own
logging callbacks. They come with the extra `writers` (`make test` installs it). Without them a
test is skipped on a workstation, and fails under CI (`CI=true`) and `make test`
(`TRAINWATCH_NEED_WRITERS=1`): both install them, so a missing one is a broken setup, not a test
to skip."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import types
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def need(module: str) -> ModuleType:
    """`module` imported, else a skip (a failure under CI)."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        said = f"{module} is not installed ({error}): pip install -e '.[writers]' (make test does)"
        if os.environ.get("CI", "").lower() == "true" or os.environ.get("TRAINWATCH_NEED_WRITERS") == "1":
            pytest.fail(said, pytrace=False)
        pytest.skip(said)


def no_tensorflow(monkeypatch: pytest.MonkeyPatch) -> None:
    """tensorboard's TensorFlow-free path (`tensorboard.compat.notf` is its switch): else it imports
    `tensorflow` when anything by that name is importable, and `tests/corpus/tensorflow/` is."""
    monkeypatch.setitem(sys.modules, "tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))


def summary_writer(log_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`torch.utils.tensorboard.SummaryWriter` writing under log_dir."""
    need("tensorboard")
    no_tensorflow(monkeypatch)
    tensorboard = need("torch.utils.tensorboard")
    return tensorboard.SummaryWriter(log_dir=str(log_dir))


def csv_logger(root: Path) -> Any:
    """Lightning's `CSVLogger` (fabric's: the one `lightning.pytorch.loggers.CSVLogger` extends),
    writing each step at once (`flush_logs_every_n_steps=1`)."""
    loggers = need("lightning.fabric.loggers")
    return loggers.CSVLogger(root_dir=str(root), name="lightning_logs", flush_logs_every_n_steps=1)


class HfRun:
    """What `Trainer.log` does with one dict of metrics, by the Trainer's own pieces: the entry
    appended to `state.log_history` (with its step), `PrinterCallback.on_log` printing the dict to
    the run's `nohup.out` (what `nohup python train.py` keeps: the Trainer's stdout with tqdm
    disabled), `TensorBoardCallback.on_log` writing it to `runs/<name>/events.out.tfevents.*`
    (`report_to="tensorboard"`); `checkpoint` is `save_to_json` into `checkpoint-N/`."""

    def __init__(self, run_dir: Path, monkeypatch: pytest.MonkeyPatch, tensorboard: bool = True) -> None:
        transformers = need("transformers")
        callbacks = need("transformers.trainer_callback")
        self.run_dir = run_dir
        self.state = transformers.TrainerState(max_steps=1000, logging_steps=10, save_steps=20)
        self.printer = callbacks.PrinterCallback()
        self.log_path = run_dir / "nohup.out"
        self.log_path.touch()
        self.writer: Any = None
        self.tensorboard: Any = None
        if tensorboard:
            self.writer = summary_writer(run_dir / "runs" / "Nov24_19-40-00_node1", monkeypatch)
            integrations = need("transformers.integrations")
            self.tensorboard = integrations.TensorBoardCallback(tb_writer=self.writer)

    def log(self, step: int, logs: dict[str, float], print_it: bool = True) -> None:
        self.state.global_step = step
        self.state.epoch = logs.get("epoch", self.state.epoch)
        self.state.log_history.append({**logs, "step": step})
        if print_it:
            with open(self.log_path, "a") as out, contextlib.redirect_stdout(out):
                self.printer.on_log(None, self.state, None, logs=dict(logs))
        if self.tensorboard is not None:
            self.tensorboard.on_log(None, self.state, None, logs=dict(logs))

    def checkpoint(self) -> Path:
        folder = self.run_dir / f"checkpoint-{self.state.global_step}"
        folder.mkdir(exist_ok=True)
        self.state.save_to_json(str(folder / "trainer_state.json"))
        return folder

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
