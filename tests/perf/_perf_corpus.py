"""What both equivalence tests (fast paths, bulk catch-up) run over: every real log we have, and
seed 004's hot lines as printed."""

from __future__ import annotations

from pathlib import Path

from conftest import REAL_LOGS, SAMPLES, SEEDS


def real_logs(sample_glob: str) -> list[Path]:
    """Every seed and shared real log, plus the sample logs matching `sample_glob`."""
    return sorted(
        [p for p in SEEDS.glob("*") if p.is_file()]
        + [p for p in REAL_LOGS.glob("*") if p.is_file()]
        + [p for p in SAMPLES.glob(sample_glob) if p.is_file()]
    )


# Real lines, /work/shared/seeds/004 (DeepSpeed ZeRO + Megatron-LM GPT-2).
DS_LINE = "rank=0 time (ms) | optimizer_gradients: 18.83 | optimizer_step: 132.81 | optimizer_allgather: 21.99"
ITER_LINE = (
    " iteration        5/ 1000000 | elapsed time per iteration (ms): 1196.2 | learning rate 7.500E-08 |"
    " lm loss 1.098990E+01 | loss scale 4096.0 |"
)
TIMERS_LINE = (
    "time (ms) | forward: 567.42 | backward: 516.25 | allreduce: 0.00 | optimizer: 112.33 |"
    " batch generator: 224.32 | data loader: 222.92"
)
