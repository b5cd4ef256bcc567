"""Canonical metric and phase names (shared/spec/records.md)."""

from __future__ import annotations

import re
from functools import lru_cache

_NON_WORD = re.compile(r"[^0-9a-zA-Z]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# Printed label (already snake_cased) -> canonical metric name.
CANONICAL: dict[str, str] = {
    "lm_loss": "loss",
    "loss": "loss",
    "total_loss": "loss",
    "train_loss": "loss",
    "learning_rate": "lr",
    "lr": "lr",
    "grad_norm": "grad_norm",
    "gradient_norm": "grad_norm",
    "loss_scale": "loss_scale",
    "loss_scaler": "loss_scale",
    "elapsed_time_per_iteration_ms": "step_time_s",
    "batch_t": "step_time_s",
    "data_t": "data_time_s",
    "data_time": "data_time_s",
    "samples_per_sec": "samples_per_s",
    "samples_per_second": "samples_per_s",
    "curr_samples_per_sec": "samples_per_s",
    "tokens_per_sec": "tokens_per_s",
    "tokens_per_second": "tokens_per_s",
    "tps": "tokens_per_s",
    "tok_s": "tokens_per_s",
    "tflops": "tflops",
    "throughput_per_gpu_tflop_s_gpu": "tflops",
    "mfu": "mfu_pct",
    "epoch": "epoch",
    "train_epoch": "epoch",
    "eval_loss": "eval_loss",
    "val_loss": "eval_loss",
    "validation_loss": "eval_loss",
}

PHASE_ALIASES: dict[str, str] = {
    "fwd": "forward",
    "bwd": "backward",
    "fwd_microstep": "forward_microstep",
    "bwd_microstep": "backward_microstep",
    "bwd_inner": "backward_inner",
    "bwd_inner_microstep": "backward_inner_microstep",
    "bwd_allreduce": "backward_allreduce",
    "bwd_allreduce_microstep": "backward_allreduce_microstep",
}


@lru_cache(maxsize=4096)
def snake(label: str) -> str:
    """`Loss(CLIP)` -> `loss_clip`, `consumed samples` -> `consumed_samples`, `CurrSamplesPerSec` -> `curr_samples_per_sec`."""
    s = _CAMEL.sub("_", label.strip())
    s = s.replace("%", "_pct")
    return _NON_WORD.sub("_", s).strip("_").lower()


@lru_cache(maxsize=4096)
def metric_name(label: str) -> str:
    key = snake(label)
    return CANONICAL.get(key, key)


@lru_cache(maxsize=4096)
def phase_name(label: str) -> str:
    key = snake(label)
    return PHASE_ALIASES.get(key, key)
