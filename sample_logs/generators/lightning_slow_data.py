"""A tiny real Lightning `Trainer.fit` on CPU with the SimpleProfiler, with or without a slow dataset.

Produces the `sample_logs/lightning__cpu_*` samples: Lightning's tqdm progress bar (`\\r`
frames), its `Trainer.fit` stopped message and the SimpleProfiler's `FIT Profiler Report`,
whose `[_TrainingEpochLoop].train_dataloader_next` row is the time spent waiting for batches.
With `--sleep S` the dataset's `__getitem__` sleeps S seconds per sample in the main process
(num_workers=0), so data loading dominates, as with a dataset that decodes on one core.

torch and lightning are NOT project dependencies; they live in a separate venv:
    python3 -m venv /work/torchenv
    /work/torchenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-*.whl lightning numpy
Exact commands (run from the repo root; stdout + stderr is the log):
    /work/torchenv/bin/python sample_logs/generators/lightning_slow_data.py --sleep 0.005 \\
        > sample_logs/lightning__cpu_simple_profiler_slow_dataset.log 2>&1
    /work/torchenv/bin/python sample_logs/generators/lightning_slow_data.py --sleep 0 \\
        > sample_logs/lightning__cpu_simple_profiler_healthy.log 2>&1
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings

import lightning as L
import torch
from lightning.pytorch.callbacks import TQDMProgressBar
from torch import nn
from torch.utils.data import DataLoader, Dataset


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

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self.sleep:
            time.sleep(self.sleep)
        return self.x[i], self.y[i]


class MLP(L.LightningModule):
    def __init__(self, lr: float) -> None:
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sleep", type=float, default=0.0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--epochs", type=int, default=2)
    args = p.parse_args()
    warnings.filterwarnings("ignore", message=".*does not have many workers.*")
    torch.set_num_threads(1)
    L.seed_everything(0)
    loader = DataLoader(Regression(640, args.sleep), batch_size=16, shuffle=True, num_workers=0)
    with tempfile.TemporaryDirectory() as root:
        trainer = L.Trainer(
            accelerator="cpu",
            max_epochs=args.epochs,
            profiler="simple",
            default_root_dir=root,
            log_every_n_steps=5,
            enable_model_summary=False,
            # the tqdm bar, as without `rich` installed (RichProgressBar draws nothing until the end
            # when stdout is not a terminal)
            callbacks=[TQDMProgressBar()],
        )
        trainer.fit(MLP(args.lr), loader)


if __name__ == "__main__":
    main()
