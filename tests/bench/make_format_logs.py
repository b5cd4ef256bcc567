"""Logs of the formats read line by line (no bulk shapes), for the bench's per-line catch-up.

A custom training loop's progress line (build-nanogpt's `step 5 | loss: ... | tok/sec: ...`, read
by the field reader) and the HF Trainer's logging dicts (`{'loss': ..., 'epoch': ...}`), one a
step, as long as asked. Deterministic (a fixed seed), so a run compares with the last.
Usage: python tests/bench/make_format_logs.py OUT_DIR [SIZE_MB]
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path


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


FORMATS: dict[str, Callable[[int, random.Random], str]] = {
    "custom_loop": custom_loop_line,
    "hf_trainer": hf_trainer_line,
}


def build(out: Path, name: str, size_mb: int) -> int:
    """Write `size_mb` MB of `name`'s lines to `out`; returns the number of lines."""
    line_of = FORMATS[name]
    rng = random.Random(16)
    limit = size_mb * 1_000_000
    written = lines = 0
    with open(out, "w", encoding="utf-8") as f:
        while written < limit:
            lines += 1
            text = line_of(lines, rng)
            f.write(text)
            written += len(text)
    return lines


if __name__ == "__main__":
    target = Path(sys.argv[1])
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    for fmt in FORMATS:
        print(fmt, build(target / f"{fmt}_{size}MB.log", fmt, size))
