"""A tiny real mmengine `Runner` training on CPU, with or without a slow dataset.

Produces the `sample_logs/mmengine__runner_*` samples: mmengine's own logger prints
`Epoch(train) [e][i/n]  lr: ...  eta: ...  time: ...  data_time: ...  loss: ...` every
`--interval` iterations. With `--sleep S` the dataset's `__getitem__` sleeps S seconds per
sample and the DataLoader runs in the main process (num_workers=0), so data loading dominates
the step, as it does in a real run whose dataset decodes images on one core.
`--lr` set absurdly high makes the loss really diverge (spike, then inf/NaN).

torch and mmengine are NOT project dependencies; they live in a separate venv:
    python3 -m venv /work/torchenv
    /work/torchenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-*.whl mmengine numpy
Exact commands (run from the repo root; the runner's stdout is the log):
    /work/torchenv/bin/python sample_logs/generators/mmengine_slow_data.py --sleep 0.01 \
        > sample_logs/mmengine__runner_cpu_slow_dataset.log 2>&1
    /work/torchenv/bin/python sample_logs/generators/mmengine_slow_data.py --sleep 0 \
        > sample_logs/mmengine__runner_cpu_healthy.log 2>&1
    /work/torchenv/bin/python sample_logs/generators/mmengine_slow_data.py --sleep 0 --lr 1e4 \
        --no-clip --epochs 1 > sample_logs/mmengine__runner_cpu_diverging_lr.log 2>&1
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from mmengine.config import Config
from mmengine.model import BaseModel
from mmengine.registry import DATASETS, MODELS
from mmengine.runner import Runner
from torch import nn
from torch.utils.data import Dataset


@DATASETS.register_module()
class Regression(Dataset):
    """A fixed random regression problem; `sleep` stands in for slow decoding / storage."""

    def __init__(self, n: int, sleep: float) -> None:
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 256, generator=g)
        w = torch.randn(256, 1, generator=g)
        self.y = self.x @ w / 16 + 0.1 * torch.randn(n, 1, generator=g)
        self.sleep = sleep

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        if self.sleep:
            time.sleep(self.sleep)
        return {"inputs": self.x[i], "target": self.y[i]}


@MODELS.register_module()
class MLP(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1))

    def forward(self, inputs: torch.Tensor, target: torch.Tensor, mode: str = "tensor"):  # type: ignore[override]
        out = self.net(inputs)
        if mode == "loss":
            return {"loss": nn.functional.mse_loss(out, target)}
        return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sleep", type=float, default=0.0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--no-clip", action="store_true")
    p.add_argument("--lr-gamma", type=float, default=1.0, help="multiply the lr by this every iteration")
    p.add_argument("--interval", type=int, default=5)
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as work_dir:
        # Built from a Config, as tools/train.py does, so the runner prints it (with max_epochs).
        cfg = Config(
            {
                "model": {"type": "MLP"},
                "work_dir": work_dir,
                "train_dataloader": {
                    "dataset": {"type": "Regression", "n": 640, "sleep": args.sleep},
                    "sampler": {"type": "DefaultSampler", "shuffle": True},
                    "collate_fn": {"type": "default_collate"},
                    "batch_size": 16,
                    "num_workers": 0,
                },
                "optim_wrapper": {
                    "optimizer": {"type": "SGD", "lr": args.lr, "momentum": 0.9},
                    **({} if args.no_clip else {"clip_grad": {"max_norm": 10.0}}),
                },
                "train_cfg": {"by_epoch": True, "max_epochs": args.epochs},
                **(
                    {"param_scheduler": {"type": "ExponentialLR", "gamma": args.lr_gamma, "by_epoch": False}}
                    if args.lr_gamma != 1.0
                    else {}
                ),
                "default_hooks": {
                    "logger": {"type": "LoggerHook", "interval": args.interval},
                    "checkpoint": {"type": "CheckpointHook", "interval": 1},
                },
                "randomness": {"seed": 0},
            }
        )
        runner = Runner.from_cfg(cfg)
        runner.train()


if __name__ == "__main__":
    main()
