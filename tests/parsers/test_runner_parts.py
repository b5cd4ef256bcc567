"""The runner's parts answer their named questions on their own (no SourceParser around them).

Lines are real: shared/seeds/002 (DeepSpeed log_dist), sample_logs/ranks__torchrun_tee3_straggler.log
(torchrun `--tee 3` prefix), a torchrun worker failure and banner (torch 2.x elastic agent).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from trainwatch.lines.assembler import Line
from trainwatch.parsers.runner.merge import SEEN_UNRANKED_MAX, PendingStep, StepMerger, step_records
from trainwatch.parsers.runner.probe import LabelProbe
from trainwatch.parsers.runner.ranks import CurrentLine, RankResolver, RecentOrigins
from trainwatch.parsers.runner.segments import Segments
from trainwatch.records import Event, Step

DS_STEP = (
    "[2024-02-20 09:50:10,987] [INFO] [logging.py:77:log_dist] [Rank 0] step=0, skipped=0, "
    "lr=[0.0002, 0.0002], mom=[[0.9, 0.999], [0.9, 0.999]]"
)
WORKER_FAILED = (
    "E1122 04:24:12.362000 8518 torch/distributed/elastic/multiprocessing/api.py:1002] failed "
    "(exitcode: -6) local_rank: 0 (pid: 8520) of binary: /usr/bin/python3"
)
BANNER = (
    "W1122 04:23:05.950000 8447 torch/distributed/run.py:874] Setting OMP_NUM_THREADS environment "
    "variable for each process to be 1 in default, to avoid your system being overloaded, please further "
    "tune the variable for optimal performance in your application as needed."
)


# ------------------------------------------------------------------ ranks
def test_a_rank_is_taken_from_prefix_then_parser_then_text_then_path() -> None:
    seen: set[int] = set()
    ranks = RankResolver(path_rank=7, seen=seen)
    line = CurrentLine(1, DS_STEP, None, None)
    assert ranks.resolve(3, is_progress=True, prefix_rank=5, current=line) == 5
    assert ranks.resolve(3, is_progress=True, prefix_rank=None, current=line) == 3
    assert ranks.resolve(None, is_progress=True, prefix_rank=None, current=line) == 0  # `[Rank 0]`
    assert ranks.resolve(None, is_progress=True, prefix_rank=None, current=None) == 7
    assert seen == {0, 3}  # ranks named by parser or text are world members; the prefix is noted by the caller


def test_unranked_progress_goes_to_the_one_reporting_rank_only_while_there_is_one() -> None:
    ranks = RankResolver(path_rank=None, seen=set())
    assert ranks.implicit() is None
    ranks.resolve(None, is_progress=True, prefix_rank=None, current=CurrentLine(1, DS_STEP, None, None))
    assert ranks.implicit() == 0
    assert ranks.resolve(None, is_progress=True, prefix_rank=None, current=None) == 0
    assert ranks.resolve(None, is_progress=False, prefix_rank=None, current=None) is None  # an event: no guess
    assert ranks.report(1) == 1
    assert ranks.implicit() is None
    assert ranks.all_reporting({0, 1}) and not ranks.all_reporting({2})


def test_absurd_rank_numbers_are_not_world_members() -> None:
    seen: set[int] = set()
    ranks = RankResolver(path_rank=None, seen=seen)
    ranks.note(-1)
    ranks.note(10**9)
    ranks.note(255)
    assert seen == {255}


def test_a_released_block_keeps_the_rank_and_host_of_its_own_line() -> None:
    origins = RecentOrigins(path_host="node1")
    origins.remember(CurrentLine(10, "timers", 3, "node1"))
    now = CurrentLine(11, "iteration", 1, "node1")
    assert origins.of(10, now) == (3, "node1")
    assert origins.of(None, now) == (1, "node1")
    assert origins.of(9, now) == (None, "node1")  # not remembered: the path's host
    assert origins.of(10, None) == (None, None)  # a release at end of input names no line's origin


# ------------------------------------------------------------------ labels
def test_srun_labels_are_honoured_once_the_source_uses_them_consistently() -> None:
    probe = LabelProbe()
    lines = [Line(i, f"{i % 2}: {DS_STEP}") for i in range(1, 17)]
    assert [probe.hold(line) for line in lines][-1] is True
    assert probe.decide() == lines and not probe.holding
    assert probe.mode == "srun"
    assert probe.split(f"1: {DS_STEP}", None) == (DS_STEP, 1, None, "task1")
    # `srun -l torchrun --tee 3`: the label is the node, `[default3]:` the local rank on it
    assert probe.split("1: [default3]:hello", None) == ("hello", 3, "task1", "task1")


def test_one_labelled_looking_line_does_not_make_a_labelled_source() -> None:
    probe = LabelProbe()
    for i, text in enumerate(["0: warmup", *[DS_STEP] * 15], 1):
        probe.hold(Line(i, text))
    probe.decide()
    assert probe.mode == ""
    assert probe.split("0: warmup", "worker-3") == ("0: warmup", None, "worker-3", "worker-3")


# ------------------------------------------------------------------- merge
def test_lines_of_one_step_merge_and_a_repeated_report_is_a_repeat() -> None:
    merger = StepMerger()
    merger.hold(PendingStep(None, 5, None, 1, {"loss": 2.0}))
    assert merger.merge(None, 5, None, {"lr": 1e-4}, "10:00") == "merged"
    assert merger.merge(None, 5, None, {"loss": 2.0}, None) == "repeat"
    assert merger.merge(None, 5, None, {"loss": 2.5}, None) == "apart"  # another rank's values
    assert merger.merge(None, None, None, {"loss": 2.0}, None) == "apart"  # no step number
    assert merger.merge(None, 5, "node2", {"loss": 2.0}, None) == "apart"
    assert merger.continues(0, 5) is False  # other rank
    pending = merger.take()
    assert pending is not None and pending.metrics == {"loss": 2.0, "lr": 1e-4} and pending.time == "10:00"
    assert merger.take() is None


def test_nan_values_repeat_each_other() -> None:
    merger = StepMerger()
    merger.hold(PendingStep(None, 5, None, 1, {"loss": math.nan}))
    assert merger.merge(None, 5, None, {"loss": math.nan}, None) == "repeat"


def test_an_unranked_step_line_seen_again_is_a_repeat_until_a_new_segment() -> None:
    merger = StepMerger()
    assert merger.is_repeat(PendingStep(None, 5, None, 1, {"loss": 2.0})) is False
    assert merger.is_repeat(PendingStep(None, 5, None, 2, {"loss": 2.0})) is True
    merger.forget_seen()
    assert merger.is_repeat(PendingStep(None, 5, None, 3, {"loss": 2.0})) is False


def test_unranked_steps_taken_in_columns_are_recognised_when_printed_again() -> None:
    """The catch-up hands over the steps it took in columns with their metrics to be made on
    demand: a line of one of them printed again is a repeat; other values of it are not; the
    metrics are made only when a step comes again; the oldest reports are forgotten first."""
    merger = StepMerger()
    made: list[int] = []

    def later(step: int) -> Callable[[], dict[str, float]]:
        def metrics() -> dict[str, float]:
            made.append(step)
            return {"loss": float(step), "lr": 1e-4}

        return metrics

    merger.saw_unranked([(step, later(step)) for step in range(1, 11)])
    assert made == []
    assert merger.is_repeat(PendingStep(None, 4, None, 9, {"lr": 1e-4, "loss": 4.0})) is True
    assert merger.is_repeat(PendingStep(None, 4, None, 9, {"lr": 1e-4, "loss": 5.0})) is False
    assert merger.is_repeat(PendingStep(None, 4, None, 9, {"lr": 1e-4, "loss": 5.0})) is True
    assert merger.is_repeat(PendingStep(None, 11, None, 9, {"lr": 1e-4, "loss": 11.0})) is False
    assert made == [4]
    merger.saw_unranked([(step, later(step)) for step in range(12, 12 + SEEN_UNRANKED_MAX)])
    assert merger.is_repeat(PendingStep(None, 12, None, 9, {"lr": 1e-4, "loss": 12.0})) is True
    assert merger.is_repeat(PendingStep(None, 2, None, 9, {"lr": 1e-4, "loss": 2.0})) is False  # forgotten


def test_a_step_goes_out_with_a_nan_event_per_watched_metric() -> None:
    records = step_records(PendingStep(0, 9, None, 4, {"loss": math.inf, "ratio": math.inf}), "t.log", 2)
    assert [type(r) for r in records] == [Step, Event]
    event = records[1]
    assert isinstance(event, Event) and event.kind == "nan" and event.data == {"metric": "loss"}
    assert {r.attempt for r in records} == {2}


# ---------------------------------------------------------------- segments
def test_a_rank_going_back_starts_a_new_segment() -> None:
    segments = Segments(0, announce=False)
    segments.record(None, 0, 10)
    assert segments.judge(11, 0, None) is None
    restart = segments.judge(4, 0, None)
    assert restart is not None and restart.begins_segment
    assert restart.message == "rank 0 went back from step 10 to 4"
    assert segments.begin_next() == 1
    assert segments.judge(4, 0, None) is None and segments.last_step(0) is None


def test_after_a_worker_failure_the_same_step_again_is_a_restart() -> None:
    segments = Segments(0, announce=False)
    segments.record(None, None, 10)
    assert segments.judge(10, None, None) is None
    assert segments.marker(WORKER_FAILED, None) == "failure"
    segments.arm()
    restart = segments.judge(10, None, None)
    assert restart is not None and restart.message == "a worker failed, then step 10 followed step 10"


def test_the_second_launcher_banner_is_a_relaunch() -> None:
    segments = Segments(0, announce=False)
    assert segments.marker(BANNER, "node1") == ""
    assert segments.marker(BANNER, "node2") == ""  # each node's launcher prints it once
    assert segments.marker(BANNER, "node1") == "relaunch"


def test_a_rewritten_file_restarts_when_its_steps_start_over() -> None:
    segments = Segments(0, announce=False)
    segments.record("n", 0, 50)
    segments.rewritten("file truncated")
    assert not segments.steady
    restart = segments.judge(1, None, None)  # labelled otherwise now: compared with the last step of any stream
    assert restart is not None and restart.message == "file truncated, then step 1 followed step 50"
    assert segments.steady


def test_an_attempt_named_by_the_path_is_announced_at_its_first_step() -> None:
    segments = Segments(2, announce=True)
    assert not segments.steady
    restart = segments.judge(None, 0, None)
    assert restart is not None and not restart.begins_segment
    assert restart.message == "torchrun attempt 2 (files under attempt_2/)"
    assert segments.judge(None, 0, None) is None


def test_bulk_steps_go_on_only_above_the_streams_last_step() -> None:
    segments = Segments(0, announce=False)
    assert segments.goes_on(0, 1)
    segments.record(None, 0, 7)
    assert not segments.goes_on(0, 7) and segments.goes_on(0, 8) and segments.goes_on(1, 1)
    assert segments.step_of_event(3) == 7  # a rank without steps: the last step of any rank
