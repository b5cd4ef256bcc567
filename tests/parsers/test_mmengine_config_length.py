"""mmengine's printed Config gives an epoch-based run its length (`total_steps`).

Sources: sample_logs/mmengine__runner_cpu_healthy.log, a real mmengine 0.10.7 `Runner.from_cfg`
run on CPU (sample_logs/generators/mmengine_slow_data.py); the wrapped `train_cfg = dict(` form
and `max_iters=10000` from open-mmlab/mmengine PR #926 (the iteration-based atss config)."""

from __future__ import annotations

from _pipeline import read_steps
from conftest import SAMPLES
from fw_recorder import run

from trainwatch.parsers.formats.mmengine import MMEngineParser

CONFIG = (
    "11/22 05:34:23 - mmengine - INFO - Config:\n"
    "default_hooks = dict(\n"
    "    checkpoint=dict(interval=1, type='CheckpointHook'),\n"
    "    logger=dict(interval=5, type='LoggerHook'))\n"
    "model = dict(type='MLP')\n"
    "randomness = dict(seed=0)\n"
    "train_cfg = dict(by_epoch=True, max_epochs=2)\n"
    "train_dataloader = dict(\n"
    "    batch_size=16,\n"
)
LINE = (
    "11/22 05:34:24 - mmengine - INFO - Epoch(train) [1][ 5/40]  lr: 1.0000e-03  eta: 0:00:00  time: 0.0093  "
    "data_time: 0.0008  grad_norm: 3.5950  loss: 1.0415\n"
)


def test_max_epochs_times_iterations_per_epoch_is_the_run_length() -> None:
    rec, understood = run(MMEngineParser(), CONFIG + LINE)
    (s,) = rec.steps
    assert s.step == 5 and s.data["metrics"]["total_steps"] == 80.0
    assert all(understood)


def test_without_a_config_the_length_stays_unknown() -> None:
    (s,) = run(MMEngineParser(), LINE)[0].steps
    assert "total_steps" not in s.data["metrics"]


def test_wrapped_iteration_based_train_cfg() -> None:
    text = (
        "train_cfg = dict(\n"
        "    _delete_=True,\n"
        "    by_epoch=False,\n"
        "    max_iters=10000,\n"
        "    val_interval=2000\n"
        ")\n"
        "02/21 00:06:12 - mmengine - INFO - Iter(train) [   50/10000]  lr: 4.0000e-02  eta: 0:34:04  time: 0.2055  "
        "data_time: 0.0109  memory: 4732  loss: nan  loss_cls: nan  loss_bbox: 1.2836  loss_centerness: 4.9563\n"
    )
    (s,) = run(MMEngineParser(), text)[0].steps
    assert s.step == 50 and s.data["metrics"]["total_steps"] == 10000.0


def test_other_max_settings_are_not_the_run_length() -> None:
    text = "param_scheduler = dict(\n    max_epochs=99, type='CosineAnnealingLR')\n" + LINE
    (s,) = run(MMEngineParser(), text)[0].steps
    assert "total_steps" not in s.data["metrics"]


def test_real_runner_log_reaches_its_length() -> None:
    steps = read_steps(SAMPLES / "mmengine__runner_cpu_healthy.log")
    assert steps[-1].step == 80 and steps[-1].metrics["total_steps"] == 80.0
