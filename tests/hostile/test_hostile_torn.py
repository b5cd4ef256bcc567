"""A line that half-matches yields nothing rather than a wrong number.

A log read while it is written ends in a torn line: ` ... | lm loss 2.1` whose writer has
`49121E+00 |` still to come. While following, the assembler holds a line until its newline
(the torn tail is never parsed). When reading once to the end (`summary`, `export`), a final
line without newline is released as complete: the assembler cannot know whether the writer
stopped there, so only a parser that knows its format's terminator can refuse the cut value.
Megatron ends every field with ` |`, so a cut field is recognisable; DeepSpeed's breakdown
line (`time (ms) | a: 1.0 | b: 2.0`) has no terminator and cannot be told apart.

Lines: sample_logs/megatron__gpt2_deepspeed.log (seed 004, DeepSpeed + Megatron GPT-2).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from trainwatch.pipeline import Pipeline
from trainwatch.records import Phases, Record, Step
from trainwatch.sources.schedule import ROUND_BUDGET

IT5 = (
    " iteration        5/ 1000000 | elapsed time per iteration (ms): 1196.2 | learning rate 7.500E-08 |"
    " lm loss 1.098990E+01 | loss scale 4096.0 |\n"
)
IT10 = (
    " iteration       10/ 1000000 | elapsed time per iteration (ms): 930.5 | learning rate 1.500E-07 |"
    " lm loss 1.098910E+01 | loss scale 4096.0 |\n"
)
# iteration 15 with its loss changed to 2.149121 (the value the torn write cuts to `2.1`)
IT15 = (
    " iteration       15/ 1000000 | elapsed time per iteration (ms): 928.2 | learning rate 2.250E-07 |"
    " lm loss 2.149121E+00 | loss scale 4096.0 |\n"
)
IT15_CUT = IT15[: IT15.index("2.149121") + 3]  # "... | lm loss 2.1"
DS_OPT = "rank=0 time (ms) | optimizer_gradients: 18.83 | optimizer_step: 132.81 | optimizer_allgather: 21.99\n"
DS_OPT_CUT = DS_OPT[: DS_OPT.index("132.81") + 2]  # "... | optimizer_step: 13"


def _steps(records: list[Record]) -> dict[int | None, Step]:
    return {r.step: r for r in records if isinstance(r, Step)}


def _wait(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


class _Follower:
    """A Pipeline following one file in its background thread, collecting every record."""

    def __init__(self, path: Path) -> None:
        self.records: list[Record] = []
        self._lock = threading.Lock()
        self.pipeline = Pipeline([str(path)], sink=self._sink, force_poll=True, poll_interval=0.02)
        self.path = path

    def _sink(self, batch: list[Record]) -> None:
        with self._lock:
            self.records.extend(batch)

    def snapshot(self) -> list[Record]:
        with self._lock:
            return list(self.records)

    def read_up_to_size(self) -> bool:
        state = next(iter(self.pipeline.readers.values())).state
        size = self.path.stat().st_size
        return _wait(lambda: state.offset >= size)

    def __enter__(self) -> _Follower:
        self.pipeline.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.pipeline.stop()


def test_follow_never_parses_the_torn_last_line_and_reads_it_once_complete(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(IT5 + IT10 + IT15_CUT)
    with _Follower(log) as follower:
        assert follower.read_up_to_size()
        assert _wait(lambda: {5, 10} <= set(_steps(follower.snapshot())))
        time.sleep(0.2)  # several more poll rounds over the torn tail
        assert 15 not in _steps(follower.snapshot())
        with log.open("a") as f:
            f.write(IT15[len(IT15_CUT) :])
        assert _wait(lambda: 15 in _steps(follower.snapshot()))
        assert _steps(follower.snapshot())[15].metrics["loss"] == 2.149121


def test_follow_holds_a_deepspeed_breakdown_cut_mid_number(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(IT5 + DS_OPT + DS_OPT_CUT)
    with _Follower(log) as follower:
        assert follower.read_up_to_size()
        assert _wait(lambda: len([r for r in follower.snapshot() if isinstance(r, Phases)]) == 1)
        time.sleep(0.2)
        phases = [r.phases_s for r in follower.snapshot() if isinstance(r, Phases)]
        assert phases == [{"optimizer_gradients": 0.01883, "optimizer_step": 0.13281, "optimizer_allgather": 0.02199}]
        with log.open("a") as f:
            f.write(DS_OPT[len(DS_OPT_CUT) :])
        assert _wait(lambda: len([r for r in follower.snapshot() if isinstance(r, Phases)]) == 2)
        phases = [r.phases_s for r in follower.snapshot() if isinstance(r, Phases)]
        assert phases[1]["optimizer_step"] == 0.13281


def test_follow_stopped_mid_line_shows_but_does_not_parse_it(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(IT5 + IT15_CUT)
    records: list[Record] = []
    pipeline = Pipeline([str(log)], sink=records.extend, force_poll=True, poll_interval=0.02)
    for feed in pipeline.readers.values():  # one round of the follow loop
        feed.pump(ROUND_BUDGET)
    pipeline.finish_all(final=False)  # following stopped: the writer may still be running
    assert set(_steps(records)) == {5}
    state = next(iter(pipeline.readers.values())).state
    assert any(text.endswith("lm loss 2.1") for _no, text in state.recent)  # shown in the raw log


def test_read_to_end_megatron_cut_loss_is_not_reported_as_2_1(tmp_path: Path) -> None:
    """`summary` on a live log: the final unterminated line is released, but `lm loss 2.1` has no
    closing `|`, so Megatron reads the fields before it and not the cut one."""
    log = tmp_path / "train.log"
    log.write_text(IT5 + IT10 + IT15_CUT)
    records: list[Record] = []
    Pipeline([str(log)], sink=records.extend).read_to_end()
    steps = _steps(records)
    assert steps[10].metrics["loss"] == 1.098910e01
    assert "loss" not in steps.get(15, Step("x", None, 15, None, 0, {})).metrics
    assert all(s.metrics.get("loss") != 2.1 for s in steps.values())


def test_read_to_end_megatron_cut_inside_any_field_never_gives_a_shorter_number(tmp_path: Path) -> None:
    """Every cut of the iteration line: each value reported is the full printed value or absent."""
    full = {"step_time_s": 0.9282, "lr": 2.25e-07, "loss": 2.149121, "loss_scale": 4096.0, "total_steps": 1e6}
    line = IT15.rstrip("\n")
    for cut in range(line.index("|") + 1, len(line) + 1):
        log = tmp_path / f"cut{cut}.log"
        log.write_text(IT10 + line[:cut])
        records: list[Record] = []
        Pipeline([str(log)], sink=records.extend).read_to_end()
        got = _steps(records).get(15)
        if got is None:
            continue
        for name, value in got.metrics.items():
            assert value == full[name], (line[:cut], name, value)
