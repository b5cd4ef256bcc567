"""A tiny mmengine `Runner` job (DDP, gloo, CPU) in which every rank logs its OWN timings.

Used only to regenerate the `sample_logs/ranks__mmengine_*` samples with a real launcher
(torchrun) and a real framework logger; trainwatch itself never imports torch or mmengine.
Needs torch + mmengine (NOT project dependencies), e.g. the shared venv /work/torchenv:
    /work/torchenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-*.whl mmengine
The exact commands that produced each sample are in `make_mmengine_rank_samples.sh`.

Why mmengine: its `IterTimerHook` measures `time` and `data_time` on each rank and its
`LogProcessor` does not reduce them across ranks, so a rank that is slow to load data
shows a large `data_time` while every rank's `time` is about equal (the fast ranks wait
for it in DDP's gradient allreduce). The lines are mmengine 0.10's own output:
    11/22 05:40:12 - mmengine - INFO - Iter(train) [10/40]  lr: 1.0000e-02  eta: ...  time: 0.1102  data_time: 0.1001  loss: ...

What is ours (not mmengine's defaults), all via mmengine's public API:
- the process group is created here (gloo) before the Runner, because mmengine's
  `init_dist('pytorch')` calls `torch.cuda.set_device`, which a CPU build cannot do;
  DDP is built with `device_ids=None` (CPU) through `model_wrapper_cfg`;
- the Runner's logger is built with `distributed=True` (`build_logger` passes it to
  `MMLogger.get_instance`), so each rank also writes its own file
  `<work_dir>/<ts>/<ts>_<user@host>_device<d>_rank<N>.log`;
- `--all-ranks-stdout`: every rank's console handler logs INFO (mmengine keeps ranks > 0
  at ERROR on the console), so `torchrun --tee 3` shows each rank's own lines;
- `--slow-rank R --slow-s S`: rank R's collate function sleeps S seconds per batch
  (a slow decode / slow disk on one node);
- `--stop-rank R --stop-iter K --stop-s S`: rank R sleeps S seconds once, in the data
  loading of iteration K (a rank that stops advancing; the others block in the allreduce).
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

import torch
import torch.distributed as dist
from mmengine.logging import MMLogger
from mmengine.model import BaseModel
from mmengine.runner import Runner
from torch import nn
from torch.utils.data import DataLoader, Dataset, DistributedSampler


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=40)
    p.add_argument("--interval", type=int, default=5)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--work-dir", default="/tmp/tw_mmengine_work")
    p.add_argument("--all-ranks-stdout", action="store_true")
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-s", type=float, default=0.0)
    p.add_argument("--stop-rank", type=int, default=-1)
    p.add_argument("--stop-iter", type=int, default=-1)
    p.add_argument("--stop-s", type=float, default=0.0)
    return p.parse_args()


class Points(Dataset):
    def __init__(self, n: int) -> None:
        g = torch.Generator().manual_seed(7)
        self.x = torch.randn(n, 32, generator=g)
        self.y = self.x.sum(dim=1, keepdim=True)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"inputs": self.x[i], "targets": self.y[i]}


class Collate:
    """Stacks a batch; on the slow rank it also sleeps (the straggler's slow data loading)."""

    def __init__(self, rank: int, args: argparse.Namespace) -> None:
        self.rank, self.args, self.batches = rank, args, 0

    def __call__(self, items: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
        self.batches += 1
        if self.rank == self.args.slow_rank:
            time.sleep(self.args.slow_s)
        if self.rank == self.args.stop_rank and self.batches == self.args.stop_iter:
            time.sleep(self.args.stop_s)
        return {k: torch.stack([it[k] for it in items]) for k in items[0]}


class Regressor(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, inputs: torch.Tensor, targets: torch.Tensor, mode: str = "tensor") -> Any:
        pred = self.net(inputs)
        if mode == "loss":
            return {"loss": nn.functional.mse_loss(pred, targets)}
        return pred


class RankLoggingRunner(Runner):
    """`Runner.build_logger` passes its keyword arguments to `MMLogger.get_instance`."""

    all_ranks_stdout = False

    def build_logger(self, log_level: int | str = "INFO", log_file: str | None = None, **kwargs: Any) -> MMLogger:
        logger = super().build_logger(log_level, log_file, distributed=True, **kwargs)
        if self.all_ranks_stdout:
            for handler in logger.handlers:
                if type(handler) is logging.StreamHandler:
                    handler.setLevel(log_level)
        return logger


def main() -> None:
    args = parse_args()
    dist.init_process_group("gloo")  # env:// from torchrun
    rank, world = dist.get_rank(), dist.get_world_size()
    data = Points(args.batch * world * args.iters)
    loader = DataLoader(
        data,
        batch_size=args.batch,
        sampler=DistributedSampler(data, world, rank, shuffle=True, seed=0),
        collate_fn=Collate(rank, args),
        num_workers=0,
    )
    RankLoggingRunner.all_ranks_stdout = args.all_ranks_stdout
    runner = RankLoggingRunner(
        model=Regressor(),
        work_dir=args.work_dir,
        train_dataloader=loader,
        optim_wrapper={"optimizer": {"type": "SGD", "lr": 0.01}},
        train_cfg={"by_epoch": False, "max_iters": args.iters},
        log_processor={"by_epoch": False},
        default_hooks={
            "logger": {"type": "LoggerHook", "interval": args.interval},
            "checkpoint": None,
        },
        launcher="pytorch",
        env_cfg={"dist_cfg": {"backend": "gloo"}},
        randomness={"seed": 1234},
        log_level="INFO",
        # the Runner reads the wrapper from its config (not a keyword argument)
        cfg={
            "model_wrapper_cfg": {"type": "MMDistributedDataParallel", "device_ids": None, "broadcast_buffers": False}
        },
    )
    runner.train()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
