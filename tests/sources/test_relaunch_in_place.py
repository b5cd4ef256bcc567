"""A job relaunched into the file we follow (`> out.log`, `open(path, "w")`, a new file at the
path): a new run segment, as a relaunch printed into the same file is — a `restart` event, the
new steps in attempt 1 (the same values again are kept, not dropped as duplicates), status judged
on them, and a marker in the raw lines where the numbering starts again. A rotation under a run
that goes on (copytruncate, rename + reopen) is not a restart.

Lines: Megatron-LM iteration lines (see follow_helpers; seed 004 / sample_logs/megatron__gpt2_deepspeed.log).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from follow_helpers import Follower, assert_each_step_once, expected_loss, kill, megatron_line, start_writer

from trainwatch.diagnosis.status import run_status
from trainwatch.pipeline import Pipeline

FIRST_RUN = "f = open(sys.argv[1], 'ab', buffering=0)\nfor i in range(1, 101): f.write(line(i))\n"
# The relaunch: `python pretrain_gpt.py > out.log` truncates, then iterations from its checkpoint.
RELAUNCH = """
f = open(sys.argv[1], "wb", buffering=0)
for i in range(5, 31):
    f.write(line(i)); time.sleep(0.01)
"""
CRASH = (
    b"Traceback (most recent call last):\n"
    b'  File "pretrain_gpt.py", line 134, in <module>\n'
    b"    pretrain(train_valid_test_datasets_provider, model_provider, forward_step)\n"
    b"RuntimeError: CUDA error: an illegal memory access was encountered\n"
)


def restarts(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == "event" and r["kind"] == "restart"]


def test_truncate_and_relaunch_is_a_new_segment(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    follower = Follower([str(log)])
    try:
        assert start_writer(FIRST_RUN, str(log)).wait(10) == 0
        assert follower.wait_steps(100), follower.stderr
        assert start_writer(RELAUNCH, str(log)).wait(10) == 0
        assert follower.wait_steps(126), follower.stderr
        assert follower.stop() == 0
    finally:
        kill(follower.proc)
    steps = follower.loss_steps()
    first = [s for s in steps if "attempt" not in s]
    second = [s for s in steps if s.get("attempt") == 1]
    assert len(first) + len(second) == len(steps)
    assert_each_step_once(first, range(1, 101))
    assert_each_step_once(second, range(5, 31))  # the same lines as before: kept, not "duplicates"
    assert [s["line"] for s in second[:2]] == [1, 2]
    (restart,) = restarts(follower.records)
    assert restart["data"] == {"attempt": 1} and restart["attempt"] == 1
    assert restart["step"] == 5 and restart["line"] == 1
    size = len(b"".join(megatron_line(i) for i in range(1, 101)))
    assert restart["message"] == (f"restart (attempt 1): file truncated at {size} bytes, then step 5 followed step 100")


def test_delete_and_recreate_by_a_relaunch_is_a_new_segment(tmp_path: Path) -> None:
    log = tmp_path / "nohup.out"
    log.write_bytes(b"".join(megatron_line(i) for i in range(1, 51)))
    follower = Follower([str(log)])
    try:
        assert follower.wait_steps(50)
        log.unlink()
        relaunch = start_writer(
            "f = open(sys.argv[1], 'ab', buffering=0)\nfor i in range(1, 21): f.write(line(i)); time.sleep(0.01)\n",
            str(log),
        )
        assert relaunch.wait(10) == 0
        assert follower.wait_steps(70), follower.stderr
        assert follower.stop() == 0
    finally:
        kill(follower.proc)
    (restart,) = restarts(follower.records)
    assert restart["message"] == (
        "restart (attempt 1): file replaced (rotated or recreated), then step 1 followed step 50"
    )
    assert_each_step_once([s for s in follower.loss_steps() if s.get("attempt") == 1], range(1, 21))


@pytest.fixture
def following(tmp_path: Path) -> Iterator[tuple[Path, Pipeline, Callable[[int], None]]]:
    """An in-process follower (the dashboard's pipeline and store) of tmp_path/out.log."""
    log = tmp_path / "out.log"
    log.touch()
    pipeline = Pipeline([str(log)])
    stop = threading.Event()
    thread = threading.Thread(target=pipeline.follow, args=(stop,), daemon=True)
    thread.start()

    def wait_last_step(step: int) -> None:
        deadline = time.monotonic() + 15
        key_steps = pipeline.store.latest_step
        while time.monotonic() < deadline:
            with pipeline.store.lock:
                if step in key_steps.values():
                    return
            time.sleep(0.02)
        raise AssertionError(f"step {step} never arrived: {dict(key_steps)}")

    try:
        yield log, pipeline, wait_last_step
    finally:
        stop.set()
        thread.join(5)


def test_status_follows_the_relaunched_segment_and_the_ring_marks_the_truncation(
    following: tuple[Path, Pipeline, Callable[[int], None]],
) -> None:
    log, pipeline, wait_last_step = following
    assert start_writer(FIRST_RUN, str(log)).wait(10) == 0
    wait_last_step(100)
    later = run_status(pipeline.store, now=time.time() + 600)  # ten minutes without a step
    assert later.state == "stalled" and later.last_step == 100
    assert start_writer(RELAUNCH, str(log)).wait(10) == 0
    wait_last_step(30)
    status = run_status(pipeline.store)
    assert status.state == "running" and status.last_step == 30, status.reason
    assert status.reason.startswith("step 30 of 100000")
    ring = list(pipeline.store.sources[str(log)].recent)
    size = len(b"".join(megatron_line(i) for i in range(1, 101)))
    at = ring.index((0, f"── file truncated at {size} bytes: following from the start ──"))
    assert ring[at - 1][0] == 100 and "iteration      100/" in ring[at - 1][1]
    assert ring[at + 1][0] == 1 and "iteration        5/" in ring[at + 1][1]
    latest = pipeline.store.latest[next(iter(pipeline.store.latest))]
    assert latest["loss"] == expected_loss(30)


def test_a_relaunch_after_a_crash_is_running_not_crashed(
    following: tuple[Path, Pipeline, Callable[[int], None]],
) -> None:
    """The old run's traceback sits at line 101 of the old text; the new text numbers from 1."""
    log, pipeline, wait_last_step = following
    log.write_bytes(b"".join(megatron_line(i) for i in range(1, 101)) + CRASH)
    wait_last_step(100)
    deadline = time.monotonic() + 15
    while run_status(pipeline.store).state != "crashed" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert run_status(pipeline.store).state == "crashed"
    assert start_writer(RELAUNCH, str(log)).wait(10) == 0
    wait_last_step(30)
    status = run_status(pipeline.store)
    assert status.state == "running" and status.last_step == 30, status.reason
