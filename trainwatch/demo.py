"""`trainwatch demo`: replay a bundled real training log into a temp file at a job's pace
and open the dashboard on it.

Lines are written in bursts, one burst per logged step (what a training loop prints at each
log interval), so the dashboard sees what it would see live. The gaps between bursts follow
the log's own timestamps, compressed so something moves every ~0.3-1 s.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from trainwatch.numbers import parse_number
from trainwatch.parsers.timestamps import line_time
from trainwatch.store.store import iso_to_epoch

DEMO_LOG = "deepspeed_megatron_gpt2.log"
# A line that ends one step's burst (Megatron `iteration N/`, open_clip `Global Steps:`, DeepSpeed `step=N`).
STEP_LINE = re.compile(r"\biteration\s+\d+\s*/|Global Steps:|\bstep=\d+")
ELAPSED_MS = re.compile(r"elapsed time per iteration \(ms\):\s*([\d.]+)")
ITERATION = re.compile(r"\biteration\s+(\d+)\s*/")
COMPRESS = 8.0  # log seconds per replay second
MIN_GAP, MAX_GAP = 0.3, 1.0
PREAMBLE_LINES = 40  # lines per burst before the first step (startup chatter)
PREAMBLE_GAP = 0.05


def bundled_log() -> bytes:
    return resources.files("trainwatch").joinpath("demo_logs").joinpath(DEMO_LOG).read_bytes()


def bursts(text: str) -> Iterator[tuple[float, str]]:
    """(seconds to wait before writing, lines to write) for each burst of the log.

    A burst starts at a step line and runs up to the next step line that is more than a
    few lines away, so the lines printed together at one step (DeepSpeed `step=` and
    `timer.py`, Megatron `iteration` and its `time (ms)` timers) are written together."""
    chunk: list[str] = []
    gap: float | None = None
    since_step: int | None = None  # lines since the last step line in this chunk
    last_t: float | None = None
    last_iter: int | None = None
    for line in text.splitlines(keepends=True):
        is_step = STEP_LINE.search(line) is not None
        if is_step and since_step is not None and since_step > 3:
            yield _pace(gap), "".join(chunk)
            chunk, gap, since_step = [], None, None
        elif since_step is None and not is_step and len(chunk) >= PREAMBLE_LINES:
            yield PREAMBLE_GAP, "".join(chunk)
            chunk = []
        if is_step:
            if since_step is None:
                if chunk:  # startup chatter before the first step
                    yield PREAMBLE_GAP, "".join(chunk)
                    chunk = []
                gap = _log_gap(line, last_t, last_iter)
            since_step = 0
            t = iso_to_epoch(line_time(line))
            if t == t:  # not nan
                last_t = t
            m = ITERATION.search(line)
            if m:
                last_iter = int(m.group(1))
        elif since_step is not None:
            since_step += 1
        chunk.append(line)
    if chunk:
        yield (_pace(gap) if since_step is not None else PREAMBLE_GAP), "".join(chunk)


def _pace(gap: float | None) -> float:
    return min(MAX_GAP, max(MIN_GAP, gap / COMPRESS)) if gap is not None else 0.6


def _log_gap(line: str, last_t: float | None, last_iter: int | None) -> float | None:
    """Seconds this step took in the original run: from timestamps, else the printed step time."""
    t = iso_to_epoch(line_time(line))
    if last_t is not None and t == t and t > last_t:
        return t - last_t
    m, it = ELAPSED_MS.search(line), ITERATION.search(line)
    if m and it:
        ms = parse_number(m.group(1))
        steps = int(it.group(1)) - last_iter if last_iter is not None else 1
        if ms is not None and ms == ms and steps > 0:
            return ms / 1000 * steps
    return None


class Replayer(threading.Thread):
    """Writes the bursts into `path`, sleeping between them, until done or stopped."""

    def __init__(self, text: str, path: Path, speed: float = 1.0) -> None:
        super().__init__(name="trainwatch-demo", daemon=True)
        self.text = text
        self.path = path
        self.speed = max(0.01, speed)
        self.stop_event = threading.Event()

    def run(self) -> None:
        with open(self.path, "a", encoding="utf-8") as out:
            for gap, chunk in bursts(self.text):
                if self.stop_event.wait(gap / self.speed):
                    return
                out.write(chunk)
                out.flush()

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=2)


def run_demo(speed: float = 1.0) -> None:
    from trainwatch.ui.app import run_dashboard

    workdir = Path(tempfile.mkdtemp(prefix="trainwatch-demo-"))
    path = workdir / DEMO_LOG
    path.touch()
    replayer = Replayer(bundled_log().decode("utf-8", errors="replace"), path, speed)
    replayer.start()
    try:
        run_dashboard([str(path)])
    finally:
        replayer.stop()
        shutil.rmtree(workdir, ignore_errors=True)
