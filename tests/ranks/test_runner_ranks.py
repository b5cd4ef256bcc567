"""SourceParser's rank resolution, label detection and duplicate logic, with a probe parser.

The probe parser reports one step per line that carries `step=<n>` or Megatron's
`iteration <n>/`; it records the text it was offered, so the tests see what a format
parser sees. All input lines are real (sources noted); where a test places a real line
under a per-rank path, that is how the launcher would have written it.
"""

from __future__ import annotations

import re
from typing import ClassVar

from trainwatch.lines.assembler import Kind, Line
from trainwatch.parsers.base import Emitter, Parser
from trainwatch.parsers.runner import SourceParser
from trainwatch.records import Event, Record, Step

_STEP = re.compile(r"(?:\bstep=|\biteration +)(\d+)")
_LOSS = re.compile(r"lm loss: (\S+) \|")


class Probe(Parser):
    name: ClassVar[str] = "probe"
    title: ClassVar[str] = "probe"
    triggers: ClassVar[tuple[str, ...]] = ()  # offered every line

    def __init__(self) -> None:
        self.seen: list[str] = []

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        self.seen.append(text)
        m = _STEP.search(text)
        if not m:
            return False
        loss = _LOSS.search(text)
        out.step(int(m.group(1)), {"loss": float(loss.group(1)) if loss else 1.0})
        return True


def run(lines: list[str], path: str = "out.log") -> tuple[list[Record], Probe, SourceParser]:
    probe = Probe()
    records: list[Record] = []
    sp = SourceParser(path, [probe], records.append, path=path)
    sp.feed_lines(Line(i, t, Kind.LINE) for i, t in enumerate(lines, 1))
    sp.finish()
    return records, probe, sp


# shared/seeds/002: DeepSpeed log_dist line naming rank 0.
DS_STEP = (
    "[2024-02-20 09:50:10,987] [INFO] [logging.py:77:log_dist] [Rank 0] step=0, skipped=0, "
    "lr=[0.0002, 0.0002], mom=[[0.9, 0.999], [0.9, 0.999]]"
)
# sample_logs/ranks__torchrun_tee3_straggler.log, one Megatron iteration line (as printed).
MEGATRON = (
    " [2026-11-22 04:23:12] iteration        1/       6 | consumed samples:           32 | "
    "elapsed time per iteration (ms): 95.0 | learning rate: 1.000000E-03 | global batch size:    32 | "
    "lm loss: 2.626758E+01 | loss scale: 1.0 | grad norm: 7.737 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |"
)


def steps(records: list[Record]) -> list[Step]:
    return [r for r in records if isinstance(r, Step)]


def test_precedence_prefix_over_text_over_path() -> None:
    # text > path: DeepSpeed says [Rank 0] in a file whose name says rank 3
    recs, _, _ = run([DS_STEP], path="rank_logs/20240220094941_rank3.log")
    assert [s.rank for s in steps(recs)] == [0]
    # path alone
    recs, _, _ = run([MEGATRON], path="rank_logs/20240220094941_rank3.log")
    assert [s.rank for s in steps(recs)] == [3]
    # prefix > text > path: the same DeepSpeed line tee'd by torchrun for local rank 2
    recs, probe, _ = run(["[default2]:" + DS_STEP], path="rank_logs/20240220094941_rank3.log")
    assert [s.rank for s in steps(recs)] == [2]
    assert probe.seen == [DS_STEP]  # the parser never sees the launcher prefix


def test_identical_unprefixed_lines_are_one_step_and_counted_as_duplicates() -> None:
    recs, _, sp = run([MEGATRON] * 4)
    assert [(s.rank, s.step) for s in steps(recs)] == [(None, 1)]
    assert sp.stats.duplicate_steps == 3


def test_same_step_with_other_values_is_not_merged_into_one_report() -> None:
    # Two ranks printing their own (local) loss for iteration 1, unprefixed: both are kept.
    other = MEGATRON.replace("lm loss: 2.626758E+01", "lm loss: 2.713581E+01")
    recs, _, sp = run([MEGATRON, other])
    assert [s.metrics["loss"] for s in steps(recs)] == [26.26758, 27.13581]
    assert sp.stats.duplicate_steps == 0


def test_one_leading_number_is_not_an_srun_label() -> None:
    # `0: ` only at the start of one line: the source is not srun-labelled, so the line's
    # text reaches the parser unchanged and gets no rank from it.
    line = "0: [2026-02-02 12:00:00] iteration 10/100 | consumed samples: 100 |"
    recs, probe, _ = run([line, MEGATRON, MEGATRON.replace("iteration        1/", "iteration        2/")])
    assert probe.seen[0] == line
    assert [s.rank for s in steps(recs)] == [None, None, None]


def test_pdsh_host_labels_are_stripped_and_banners_counted_per_host(samples) -> None:
    # stas00/ml-engineering training/emulate-multi-node.md: two `deepspeed -H hostfile`
    # runs appended into one file; each run prints WORLD INFO DICT once per node.
    lines = (samples / "ranks__deepspeed_pdsh_two_nodes_relaunch.log").read_text().splitlines()
    recs, probe, sp = run(lines)
    # the host label is stripped before parsing: DeepSpeed's own timestamp starts the text
    assert (
        "[2022-09-08 12:07:10,635] [INFO] [launch.py:142:main] nnodes=2, num_local_procs=1, node_rank=1" in probe.seen
    )
    restarts = [r for r in recs if isinstance(r, Event) and r.kind == "restart"]
    # one relaunch: the second run's first WORLD INFO DICT (worker-0, line 21)
    assert [(r.line, r.data["attempt"]) for r in restarts] == [(21, 1)]
    assert lines[20].startswith("worker-0: [2022-09-08 12:07:10,635]")
    assert sp.stats.ranks_seen == set()


def test_rank_going_back_starts_a_new_segment_and_keeps_the_rerun() -> None:
    # The same rank (prefix) re-running iterations 1..2 after reaching 2: a restart.
    it2 = MEGATRON.replace("iteration        1/", "iteration        2/")
    lines = ["[default0]:" + MEGATRON, "[default0]:" + it2, "[default0]:" + MEGATRON, "[default0]:" + it2]
    recs, _, _ = run(lines)
    kinds = [(r.type, r.step, getattr(r, "rank", None)) for r in recs]
    assert kinds == [
        ("step", 1, 0),
        ("step", 2, 0),
        ("event", 1, None),
        ("step", 1, 0),
        ("step", 2, 0),
    ]
    restart = recs[2]
    assert isinstance(restart, Event) and restart.kind == "restart" and restart.data == {"attempt": 1}
