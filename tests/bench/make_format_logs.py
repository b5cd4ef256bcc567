"""Logs of other formats than the bench's big DeepSpeed log, for its catch-up of formats.

Read line by line (no bulk shapes): a custom training loop's progress line (build-nanogpt's
`step 5 | loss: ... | tok/sec: ...`, read by the field reader) and the HF Trainer's logging dicts
(`{'loss': ..., 'epoch': ...}`). Read in bulk: Megatron-LM's own iteration line (right-aligned
fields; with the timestamp recent versions print before it, or without) and timers line, in a log
no rank is named in. One step a record, as long as asked.
Deterministic (a fixed seed), so a run compares with the last.
Usage: python tests/bench/make_format_logs.py OUT_DIR [SIZE_MB]
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

_START = datetime(2024, 4, 6)


def custom_loop_line(i: int, rng: random.Random) -> str:
    return (
        f"step {i:5d} | loss: {6 - i * 1e-5 + rng.random() * 0.1:.6f} | lr 6.0000e-04 | norm: {rng.random() + 0.5:.4f}"
        f" | dt: {300 + rng.random() * 20:.2f}ms | tok/sec: {rng.randint(1_600_000, 1_700_000):.2f}\n"
    )


def hf_trainer_line(i: int, rng: random.Random) -> str:
    return (
        f"{{'loss': {2.5 - i * 1e-6 + rng.random() * 0.1:.4f}, 'grad_norm': {rng.random() * 3:.6f}, "
        f"'learning_rate': {2e-5 * (1 - i / 1e7):.10e}, 'epoch': {i / 5000:.2f}}}\n"
    )


def megatron_lm_lines(i: int, rng: random.Random) -> str:
    return (
        f" iteration {i:8d}/ 5000000 | consumed samples: {512 * i:12d} | elapsed time per iteration (ms):"
        f" {800 + rng.random() * 400:.1f} | learning rate: {1.5e-4 * min(1.0, i / 2000):.3E} | global batch size:   512 |"
        f" lm loss: {8 - i * 1e-6 + rng.random() * 0.1:.6E} | loss scale: 262144.0 | grad norm: {rng.random() + 0.5:.3f} |"
        " number of skipped iterations:   0 | number of nan iterations:   0 |\n"
        f"time (ms) | forward-compute: {190 + rng.random() * 10:.2f} | backward-compute: {70 + rng.random() * 10:.2f} |"
        f" backward-params-all-reduce: {20 + rng.random():.2f} | optimizer: {60 + rng.random() * 5:.2f} |"
        f" batch-generator: {1 + rng.random() * 24:.2f}\n"
    )


def megatron_lm_stamped_lines(i: int, rng: random.Random) -> str:
    """Recent Megatron-LM: the iteration line starts with its time."""
    stamp = (_START + timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S")  # (a second a step)
    return f" [{stamp}]" + megatron_lm_lines(i, rng)


FORMATS: dict[str, Callable[[int, random.Random], str]] = {
    "custom_loop": custom_loop_line,
    "hf_trainer": hf_trainer_line,
    "megatron_lm": megatron_lm_lines,
    "megatron_lm_stamped": megatron_lm_stamped_lines,
}


def build(out: Path, name: str, size_mb: int) -> int:
    """Write `size_mb` MB of `name`'s lines to `out`; returns the number of lines."""
    line_of = FORMATS[name]
    rng = random.Random(16)
    limit = size_mb * 1_000_000
    written = lines = step = 0
    with open(out, "w", encoding="utf-8") as f:
        while written < limit:
            step += 1
            text = line_of(step, rng)
            f.write(text)
            written += len(text)
            lines += text.count("\n")
    return lines


if __name__ == "__main__":
    target = Path(sys.argv[1])
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    for fmt in FORMATS:
        print(fmt, build(target / f"{fmt}_{size}MB.log", fmt, size))
