"""Ranks end to end (Pipeline) on real multi-rank logs made by real launchers.

Samples: sample_logs/ranks__torchrun_* and sample_logs/ranks_logdir_restart/, produced by
torchrun 2.13 (CPU, gloo) with sample_logs/generators/make_rank_samples.sh; the exact
command of each is in that script. Ranks are checked against what the launcher wrote on
the record's own line, never against numbers typed into the test.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from conftest import SAMPLES, seed

from trainwatch.pipeline import Pipeline
from trainwatch.records import Event, Phases, Record, Step

_ITER = re.compile(r"\biteration +(\d+)/")
_TEE = re.compile(r"^\[default(\d+)\]:")


def read(*paths: Path) -> tuple[list[Record], Pipeline]:
    records: list[Record] = []
    pipeline = Pipeline([str(p) for p in paths], sink=records.extend)
    pipeline.read_to_end()
    return records, pipeline


def iteration_lines(path: Path) -> list[tuple[int, str]]:
    return [(no, t) for no, t in enumerate(path.read_text().splitlines(), 1) if _ITER.search(t)]


def test_tee3_every_step_carries_the_rank_its_line_was_prefixed_with() -> None:
    path = SAMPLES / "ranks__torchrun_tee3_straggler.log"
    records, pipeline = read(path)
    lines = path.read_text().splitlines()
    steps = [r for r in records if isinstance(r, Step)]
    assert len(steps) == len(iteration_lines(path))  # one record per rank's line
    for s in steps:
        m = _TEE.match(lines[s.line - 1])
        assert m is not None and s.rank == int(m.group(1)), lines[s.line - 1]
    by_rank: dict[int | None, list[int | None]] = defaultdict(list)
    for s in steps:
        by_rank[s.rank].append(s.step)
    printed: dict[int, list[int]] = defaultdict(list)
    for _, text in iteration_lines(path):
        m = _TEE.match(text)
        assert m is not None
        printed[int(m.group(1))].append(int(_ITER.search(text).group(1)))
    assert sorted(by_rank) == [0, 1, 2, 3]
    # each rank's steps are exactly the iterations its own lines show, in order. (This
    # real capture lost one of rank 2's lines: torchrun's tee printed an empty
    # `[default0]:` line around rank 2's iteration 10, line 56.)
    assert by_rank == printed
    assert all(seq == sorted(seq) for seq in by_rank.values())
    assert pipeline.readers[str(path)].parser.stats.ranks_seen == {0, 1, 2, 3}


def test_tee3_megatron_timer_block_belongs_to_the_rank_that_printed_it() -> None:
    # The last rank prints `(min, max) time across ranks`; other ranks' iteration lines
    # interleave with it, and the block is released on one of them.
    path = SAMPLES / "ranks__torchrun_tee3_straggler.log"
    records, _ = read(path)
    lines = path.read_text().splitlines()
    phases = [r for r in records if isinstance(r, Phases)]
    assert phases
    for p in phases:
        m = _TEE.match(lines[p.line - 1])
        assert m is not None and p.rank == int(m.group(1))
        assert "(min, max) time across ranks" in lines[p.line - 1]


def test_tee3_crash_traceback_ranks() -> None:
    path = SAMPLES / "ranks__torchrun_tee3_crash.log"
    records, pipeline = read(path)
    lines = path.read_text().splitlines()
    for s in (r for r in records if isinstance(r, Step)):
        m = _TEE.match(lines[s.line - 1])
        assert m is not None and s.rank == int(m.group(1))
    raised = [r for r in records if isinstance(r, Event) and r.kind == "traceback" and "simulated failure" in r.message]
    assert raised, "the failing rank's traceback"
    assert {r.rank for r in raised} == {int(re.search(r"on rank (\d+)", raised[0].message).group(1))}
    assert pipeline.readers[str(path)].parser.stats.ranks_seen == {0, 1, 2, 3}


def test_unprefixed_identical_lines_restart_segments() -> None:
    # No --tee: 4 workers print identical iteration lines into torchrun's stdout; rank 1
    # fails at iteration 6, torchrun restarts the group, which re-runs from iteration 1
    # with the same seeds, so attempt 1 prints exactly the lines attempt 0 printed.
    path = SAMPLES / "ranks__torchrun_unprefixed_restart.log"
    records, pipeline = read(path)
    its = iteration_lines(path)
    seq = [int(_ITER.search(t).group(1)) for _, t in its]
    # the attempts, as the file shows them: iteration numbers start over once
    back = next(i for i in range(1, len(seq)) if seq[i] < seq[i - 1])
    first, second = sorted(set(seq[:back])), sorted(set(seq[back:]))
    assert first[0] == second[0] == 1 and len(second) > len(first)

    steps = [r for r in records if isinstance(r, Step)]
    assert all(s.rank is None for s in steps)
    restarts = [r for r in records if isinstance(r, Event) and r.kind == "restart"]
    assert len(restarts) == 1 and restarts[0].data == {"attempt": 1}
    assert restarts[0].line == its[back][0]  # on the first re-run iteration line
    before = [s.step for s in steps if s.line < restarts[0].line]
    after = [s.step for s in steps if s.line >= restarts[0].line]
    assert before == first  # one record per iteration, not one per rank
    assert after == second  # the re-run iterations are kept, not taken for duplicates
    stats = pipeline.readers[str(path)].parser.stats
    assert stats.duplicate_steps == len(its) - len(steps)


def test_logdir_attempts_are_kept_apart() -> None:
    root = SAMPLES / "ranks_logdir_restart"
    records, pipeline = read(root)
    attempt_files = sorted(root.glob("*/attempt_*/*/stdout.log"))
    assert len(attempt_files) == 8  # 2 attempts x 4 local ranks
    steps = [r for r in records if isinstance(r, Step)]
    for f in attempt_files:
        mine = [s for s in steps if s.source == str(f)]
        rank = int(f.parent.name)
        assert mine and {s.rank for s in mine} == {rank}
        assert [s.step for s in mine] == [int(_ITER.search(t).group(1)) for _, t in iteration_lines(f)]
    # attempt_0 stopped at the failure, attempt_1 re-ran from iteration 1 to the end
    a0 = [s.step for s in steps if "/attempt_0/0/" in s.source]
    a1 = [s.step for s in steps if "/attempt_1/0/" in s.source]
    assert a0[0] == a1[0] == 1 and a1[-1] > a0[-1]
    restarts = [r for r in records if isinstance(r, Event) and r.kind == "restart"]
    assert len(restarts) == 1, "one event per restart, not one per rank file"
    assert "/attempt_1/0/stdout.log" in restarts[0].source and restarts[0].data == {"attempt": 1}
    # the launcher's own log has no rank
    launcher = str(root / "launcher.log")
    assert all(r.rank is None for r in records if r.source == launcher and not isinstance(r, Event))
    assert launcher in pipeline.readers


def test_seed002_world_membership_ranks_are_noted() -> None:
    # shared/seeds/002: only rank 0 reports progress, but the log names ranks 0-3 in
    # `for rank: N`, `Rank N: Completed store-based barrier`, `Process (global: N, ...)`.
    path = seed("002")
    _, pipeline = read(path)
    assert pipeline.readers[str(path)].parser.stats.ranks_seen == {0, 1, 2, 3}
