"""The bench's big log (seed 004's training section repeated) reads as one run: every step
counter of each repetition continues, so no false relaunch is read from the repetition."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import seed
from trainwatch.pipeline import Pipeline

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import make_big_log  # (tests/bench/make_big_log.py)


def test_big_log_is_one_run(tmp_path: Path) -> None:
    seed("004")  # skips cleanly without ../shared
    log = tmp_path / "big.log"
    make_big_log.build(log, 8)  # seed 004 (3.4 MB) twice and a part
    pipeline = Pipeline([str(log)], window_bytes=0)
    pipeline.read_to_end()
    store = pipeline.store
    assert store.current_attempt == 0
    assert not [e for e in store.events if e.kind == "restart"]
    assert set(store.latest_step.values()) == {make_big_log_last_step(log)}


def make_big_log_last_step(log: Path) -> int:
    return max(int(m.group(2)) for m in make_big_log.ITER.finditer(log.read_bytes()))
