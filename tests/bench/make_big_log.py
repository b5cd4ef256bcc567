"""Build a large DeepSpeed + Megatron log from seed 004 for the catch-up benchmark.

The header of seed 004 is kept once; its training section (from the first `rank=0 time`
line on) is repeated with iteration and `step=` numbers continuing, so the result parses
like one long, real run: no counter of the repetition goes back, so no false restart is read
(`test_big_log_is_one_run` checks it). Usage: python tests/bench/make_big_log.py OUT [SIZE_MB]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared"
ITER = re.compile(rb"^( iteration)( +\d+)(/)", re.M)
DS_STEP = re.compile(rb"(\] step=)(\d+)(,)")
TIMER = re.compile(rb"(timer\.py:\d+:stop\] 0/)(\d+)(,)")
VALID = re.compile(rb"(validation loss at iteration )(\d+)( )")
MEMORY = re.compile(rb"(after )(\d+)( iterations memory)")  # Megatron's memory report, once
TOTAL = re.compile(rb"(/ +)1000000( \|)")  # `iteration   995/ 1000000 |`
TRAIN_ITERS = re.compile(rb"(train_iters \.+ )1000000\b")  # the printed arguments


def seed_004() -> Path:
    matches = sorted((SHARED / "seeds").glob("004_*"))
    if not matches:
        sys.exit("bench: ../shared/seeds/004_* not found beside the project")
    return matches[0]


def build(out: Path, size_mb: int) -> int:
    data = seed_004().read_bytes()
    start = data.index(b"rank=0 time (ms)")
    start = data.rindex(b"\n", 0, start) + 1
    header, body = data[:start], data[start:]
    # Seed 004 runs towards 1,000,000 iterations, which a 200 MB copy passes: the copy's run is
    # 100x longer, so however big the file, it is a run short of its total (never "finished").
    header = header.replace(b"train-iters 1000000", b"train-iters 100000000")
    header = TRAIN_ITERS.sub(rb"\g<1>100000000", header)
    body = TOTAL.sub(rb"\g<1>100000000\g<2>", body)
    last_iter = max(int(m.group(2)) for m in ITER.finditer(body))
    target = size_mb * 1024 * 1024
    written = 0
    offset = 0
    with out.open("wb") as f:
        f.write(header)
        written += len(header)
        while written < target:

            def shift(m: re.Match[bytes], off: int = offset) -> bytes:
                # keep Megatron's right-aligned padding (`iteration    23005/`)
                field = m.group(2)
                number = str(int(field) + off).encode()
                if field.startswith(b" "):
                    number = b" " + number.rjust(len(field) - 1)
                return m.group(1) + number + m.group(3)

            chunk = (
                body
                if offset == 0
                else ITER.sub(shift, DS_STEP.sub(shift, TIMER.sub(shift, VALID.sub(shift, MEMORY.sub(shift, body)))))
            )
            f.write(chunk)
            written += len(chunk)
            offset += last_iter
    return written


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    n = build(Path(sys.argv[1]), size)
    print(f"wrote {n / 1e6:.0f} MB to {sys.argv[1]}")
