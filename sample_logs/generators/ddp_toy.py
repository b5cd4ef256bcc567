"""A tiny DDP job (gloo, CPU) that prints Megatron-LM style progress from every rank.

Used only to regenerate the `sample_logs/ranks__*` samples with real launchers
(torchrun); trainwatch itself never imports torch. torch is NOT a project dependency:
install it into the venv just for this, e.g.
    .venv/bin/pip install /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl
The exact launcher commands that produced each sample are in `make_rank_samples.sh`.

What it prints (formats copied from Megatron-LM's `training_log` and `Timers.log`,
megatron/training/training.py and megatron/core/timers.py):
- every rank prints the iteration line; loss is all-reduced (mean) and the elapsed time
  max-reduced, so all ranks print *identical* lines, as replicated `print` calls do;
- the last rank prints the `(min, max) time across ranks (ms):` block, where the
  straggler's `batch-generator` time shows;
- `--slow-rank R --slow-s S`: rank R sleeps S seconds in data loading every step;
- `--crash-rank R --crash-step K`: rank R raises at step K (only in the first attempt
  with `--crash-first-attempt-only`, so a torchrun restart then completes).

Launched by `srun -n 4` instead of torchrun (no RANK in the environment, SLURM_PROCID
set), task 0 hosts the rendezvous store itself on MASTER_ADDR:MASTER_PORT (default
127.0.0.1:29650); see make_srun_samples.sh.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import datetime

import torch
import torch.distributed as dist
from torch import nn


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--micro-batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-s", type=float, default=0.0)
    p.add_argument("--crash-rank", type=int, default=-1)
    p.add_argument("--crash-step", type=int, default=-1)
    p.add_argument("--crash-first-attempt-only", action="store_true")
    p.add_argument("--timers-every", type=int, default=5)
    return p.parse_args()


def fmt_time(name: str, lo: float, hi: float) -> str:
    return "\n    {}: ({:.2f}, {:.2f})".format((name + " ").ljust(48, "."), lo, hi)


def slurm_env() -> bool:
    """Started by srun, not torchrun: take rank and world size from Slurm's task ids."""
    if "RANK" in os.environ or "SLURM_PROCID" not in os.environ:
        return False
    os.environ["RANK"] = os.environ["SLURM_PROCID"]
    os.environ["WORLD_SIZE"] = os.environ["SLURM_NTASKS"]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29650")
    return True


def init_process_group(attempt: int) -> None:
    """gloo over the launcher's store, keys prefixed per attempt.

    torchrun keeps its TCPStore across worker-group restarts; without a per-attempt
    prefix the restarted ranks read the dead ranks' gloo addresses and time out.
    Under srun there is no launcher store: rank 0 hosts it."""
    hosted = slurm_env()
    store = dist.TCPStore(
        os.environ["MASTER_ADDR"],
        int(os.environ["MASTER_PORT"]),
        int(os.environ["WORLD_SIZE"]),
        is_master=hosted and os.environ["RANK"] == "0",
        wait_for_workers=False,
    )
    dist.init_process_group(
        "gloo",
        store=dist.PrefixStore(f"attempt_{attempt}/", store),
        rank=int(os.environ["RANK"]),
        world_size=int(os.environ["WORLD_SIZE"]),
    )


def main() -> None:
    args = parse_args()
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    init_process_group(attempt)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1234 + rank)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(99 + rank)
    consumed = 0
    for it in range(1, args.steps + 1):
        t0 = time.perf_counter()
        # "data loading"
        tb = time.perf_counter()
        x = torch.randn(args.micro_batch, 32, generator=gen)
        y = x.sum(dim=1, keepdim=True)
        if rank == args.slow_rank:
            time.sleep(args.slow_s)
        batch_s = time.perf_counter() - tb
        if rank == args.crash_rank and it == args.crash_step and (attempt == 0 or not args.crash_first_attempt_only):
            raise RuntimeError(f"simulated failure on rank {rank} at iteration {it}")
        tf = time.perf_counter()
        opt.zero_grad()
        loss = nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1e9)
        fb_s = time.perf_counter() - tf
        to = time.perf_counter()
        opt.step()
        opt_s = time.perf_counter() - to
        elapsed = time.perf_counter() - t0
        consumed += args.micro_batch * world
        stats = torch.tensor([loss.item(), grad_norm.item()])
        dist.all_reduce(stats)
        stats /= world
        el = torch.tensor([elapsed])
        dist.all_reduce(el, op=dist.ReduceOp.MAX)
        line = f" [{datetime.now().strftime('%Y-%m-%d %H:%M:%S')}]"
        line += f" iteration {it:8d}/{args.steps:8d} |"
        line += f" consumed samples: {consumed:12d} |"
        line += f" elapsed time per iteration (ms): {el.item() * 1000.0:.1f} |"
        line += f" learning rate: {args.lr:.6E} |"
        line += f" global batch size: {args.micro_batch * world:5d} |"
        line += f" lm loss: {stats[0].item():.6E} |"
        line += f" loss scale: {1.0:.1f} |"
        line += f" grad norm: {stats[1].item():.3f} |"
        line += f" number of skipped iterations: {0:3d} |"
        line += f" number of nan iterations: {0:3d} |"
        print(line, flush=True)
        if args.timers_every and it % args.timers_every == 0:
            times = torch.tensor([fb_s, opt_s, batch_s]) * 1000.0
            lo, hi = times.clone(), times.clone()
            dist.all_reduce(lo, op=dist.ReduceOp.MIN)
            dist.all_reduce(hi, op=dist.ReduceOp.MAX)
            if rank == world - 1:
                out = "(min, max) time across ranks (ms):"
                for i, name in enumerate(("forward-backward", "optimizer", "batch-generator")):
                    out += fmt_time(name, lo[i].item(), hi[i].item())
                print(out, flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
