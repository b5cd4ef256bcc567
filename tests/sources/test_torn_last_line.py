"""Reading to the end: a last line without newline is parsed only once the file is quiet.

A job that is writing `optimizer_step: 132.81` may have flushed only `optimizer_step: 13`;
parsing that would report 0.013 s. A finished log whose last line simply lacks a newline
(modded-nanogpt's train.log in shared/real_logs ends that way) is quiet, and is parsed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from trainwatch.pipeline import Pipeline
from trainwatch.records import Phases, Record

# seed 004, line 340, cut inside the last number as a block-buffered flush would cut it
COMPLETE = "rank=0 time (ms) | optimizer_gradients: 18.83 | optimizer_step: 132.81 | optimizer_allgather: 21.99\n"
TORN = "rank=0 time (ms) | optimizer_gradients: 12.59 | optimizer_step: 58.24 | optimizer_allgather: 1"


def _phases(path: Path) -> list[Phases]:
    got: list[Record] = []
    Pipeline([str(path)], sink=got.extend).read_to_end()
    return [r for r in got if isinstance(r, Phases)]


def test_a_torn_last_line_of_a_file_being_written_is_not_parsed(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text(COMPLETE + TORN)
    phases = _phases(log)
    assert [p.phases_s["optimizer_step"] for p in phases] == [0.13281]


def test_the_last_line_of_a_quiet_file_is_parsed(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text(COMPLETE + TORN)
    old = time.time() - 60
    os.utime(log, (old, old))
    phases = _phases(log)
    assert [p.phases_s["optimizer_step"] for p in phases] == [0.13281, 0.05824]
