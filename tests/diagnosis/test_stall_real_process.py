"""A real process writes a training log and then hangs: the followed file stops growing -> stalled.

The child replays, one progress line every 0.05 s, the first epoch of a real mmengine run
(sample_logs/mmengine__runner_cpu_healthy.log, sample_logs/generators/mmengine_slow_data.py: its
Config says max_epochs=2, so 80 iterations) and then blocks reading its stdin, alive but silent,
like a job stuck in a collective. The stall threshold comes from the run's cadence (never less
than MIN_STALL_S), so the test asks `run_status` at a later wall clock instead of waiting for it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conftest import SAMPLES

from trainwatch.diagnosis.findings import findings
from trainwatch.diagnosis.status import MIN_STALL_S, run_status
from trainwatch.pipeline import Pipeline

WRITER = """
import sys, time
src, dst = sys.argv[1], sys.argv[2]
with open(src, "rb") as f, open(dst, "ab", buffering=0) as out:
    for raw in f:
        out.write(raw)
        if b"Epoch(train)" in raw:
            time.sleep(0.05)
        if b"[1][40/40]" in raw:
            break
sys.stdin.read()  # hang: alive, writing nothing
"""


def _wait(cond, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def test_a_real_process_that_stops_writing_reads_stalled_from_its_cadence(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(b"")
    pipeline = Pipeline([str(log)])
    pipeline.start()
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(SAMPLES / "mmengine__runner_cpu_healthy.log"), str(log)],
        stdin=subprocess.PIPE,
    )
    try:
        assert _wait(lambda: any(s.caught_up_monotonic is not None for s in pipeline.store.sources.values()), 10)
        # while it writes: running
        assert _wait(lambda: pipeline.store.latest_step and max(pipeline.store.latest_step.values()) >= 10, 20)
        assert run_status(pipeline.store).state == "running"
        # it wrote its first epoch and went quiet, still alive
        assert _wait(lambda: pipeline.store.latest_step and max(pipeline.store.latest_step.values()) == 40, 20)
        size = log.stat().st_size
        time.sleep(0.3)
        assert log.stat().st_size == size and child.poll() is None
        now = time.time()
        assert run_status(pipeline.store, now=now).state == "running"  # 0.3 s of silence is no stall
        assert run_status(pipeline.store, now=now + MIN_STALL_S / 2).state == "running"
        later = run_status(pipeline.store, now=now + MIN_STALL_S + 30)
        assert later.state == "stalled" and later.last_step == 40 and later.total_steps == 80
        assert later.age_s >= MIN_STALL_S + 30 and later.stall_after_s == MIN_STALL_S
        assert later.reason.startswith("no step for ") and "after step 40" in later.reason
        found = findings(pipeline.store, now=now + MIN_STALL_S + 30)
        assert [f.kind for f in found] == ["stall"]
        assert found[0].steps == (40,) and "py-spy dump" in found[0].remedy
    finally:
        child.kill()
        child.wait(5)
        pipeline.stop()
