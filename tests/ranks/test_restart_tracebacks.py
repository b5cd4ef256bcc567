"""A traceback printed before a relaunch belongs to the attempt that died: it keeps that
attempt's step and comes before the `restart` event (real torchrun --max-restarts 1 log)."""

from __future__ import annotations

from pathlib import Path

from trainwatch.pipeline import Pipeline
from trainwatch.records import Event, Record

LOG = Path(__file__).resolve().parents[2] / "sample_logs" / "ranks__torchrun_unprefixed_restart.log"


def events() -> list[Event]:
    out: list[Record] = []
    Pipeline([str(LOG)], sink=out.extend).read_to_end()
    return [r for r in out if isinstance(r, Event)]


def test_first_attempts_traceback_is_reported_in_that_attempt() -> None:
    evs = events()
    kinds = [e.kind for e in evs]
    restart = kinds.index("restart")
    failure = next(e for e in evs if e.kind == "traceback" and "simulated failure on rank 1" in e.message)
    # ` raise RuntimeError(f"simulated failure on rank {rank} at iteration {it}")` at iteration 6,
    # after the log's last `iteration 5/12` line of attempt 0 (line 27).
    assert evs.index(failure) < restart
    assert failure.step == 5 and failure.rank == 1 and not failure.attempt  # attempt 0
    assert evs[restart].attempt == 1
