"""A followed file's appended lines of a learned shape (`CatchUp.live`) leave exactly the store
the per-line path leaves.

The head of a log is read as a catch-up reads it (in bulk: its shapes are learned), then every
other line arrives on its own, each followed by the end of the read (`at_eof`), as a followed
file's one-line appends do. Run twice, with the learned shapes on and off for those lines; the
store's contents and the source's counts must be identical. Over every seed, real log and sample
log, the corpus excerpts of the formats that have bulk shapes, and mutated hot lines.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from _perf_corpus import DS_LINE, ITER_LINE, TIMERS_LINE, real_logs
from test_bulk_catchup import CORPUS_LOGS, STEP_LINE, THROUGHPUT_LINE, mutated_hot_lines, store_dump

from trainwatch.lines.assembler import Line
from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import SourceParser, catchup
from trainwatch.parsers.runner.catchup import CatchUp
from trainwatch.store.store import Store

LOGS = real_logs("*.log")
LIVE = CatchUp.live  # (each `_follow` replaces it: the original, whatever was patched before)


def _follow(
    texts: list[str], head: int, live: bool, monkeypatch: pytest.MonkeyPatch, reads: list[int] | None = None
) -> tuple[dict[str, Any], int]:
    """The store and counts after `texts[:head]` in bulk, then the other lines read one by one
    (`reads`: so many lines a read, the end of a read after each; default one); and how many
    lines the learned shapes took."""
    taken = 0

    def counted(self: CatchUp, line: Line) -> Any:
        nonlocal taken
        parser = LIVE(self, line) if live else None
        taken += parser is not None
        return parser

    monkeypatch.setattr(CatchUp, "live", counted)
    monkeypatch.setattr(catchup, "BULK_SLICE", 512)  # (shapes learned in the head, however short)
    store = Store()
    parser = SourceParser("out.log", new_parsers(), lambda r: store.add_many((r,)), path="out.log")
    if head:
        parser.feed_block(1, "".join(t + "\n" for t in texts[:head]))
        parser.at_eof()
    no, sizes = head, iter(reads or ())
    while no < len(texts):
        for _ in range(next(sizes, 1)):
            if no < len(texts):
                parser.feed_line(Line(no + 1, texts[no]))
                no += 1
        parser.at_eof()
    parser.finish()
    st = parser.stats
    counts = (st.lines, st.understood, dict(st.records), st.duplicate_steps, st.parser_errors, sorted(st.ranks_seen))
    return {"store": store_dump(store), "stats": counts}, taken


def _assert_same(texts: list[str], head: int, monkeypatch: pytest.MonkeyPatch, reads: list[int] | None = None) -> int:
    with_shapes, taken = _follow(texts, head, True, monkeypatch, reads)
    per_line, _ = _follow(texts, head, False, monkeypatch, reads)
    assert with_shapes["stats"] == per_line["stats"], "the source's counts differ"
    assert with_shapes["store"] == per_line["store"], "store contents differ"
    return taken


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").replace("\r", "").split("\n")[:-1]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:60])
def test_live_lines_of_learned_shapes_agree_with_the_per_line_path_on_every_log(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _lines(path)[:6000]
    _assert_same(texts, len(texts) // 3, monkeypatch)


@pytest.mark.parametrize("path", CORPUS_LOGS, ids=lambda p: f"{p.parent.name}/{p.name[:50]}")
def test_live_lines_agree_on_the_corpus_excerpts_of_bulk_formats(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _lines(path)
    for head in sorted({len(texts) // 4, len(texts) // 2}):
        _assert_same(texts, head, monkeypatch)


def test_the_learned_shapes_take_the_live_lines_of_a_megatron_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Otherwise the comparisons above would compare the per-line path with itself."""
    texts = [DS_LINE] * 20 + [ITER_LINE, TIMERS_LINE] * 4
    texts += [ITER_LINE.replace(" 5/", f" {5 * k}/") for k in range(2, 40)]
    taken = _assert_same(texts, 28, monkeypatch)
    assert taken == 38  # every iteration line after the head; the timers (phases) go line by line


@pytest.mark.parametrize("trial", range(30))
def test_live_lines_agree_on_mutated_hot_lines(trial: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shuffled, repeated and mutated real lines, one by one after a head read in bulk: a
    half-matching line takes the per-line path, a step going back or repeated too."""
    rng = random.Random(trial)
    texts = mutated_hot_lines(rng, [DS_LINE] * 3 + [ITER_LINE, ITER_LINE, TIMERS_LINE, STEP_LINE, THROUGHPUT_LINE])
    _assert_same(texts, 28 + rng.randrange(40), monkeypatch)
    _assert_same(texts, 28, monkeypatch, [rng.randint(1, 6) for _ in texts])  # a few lines a read


TRACEBACK = ["Traceback (most recent call last):", '  File "train.py", line 1, in <module>', "RuntimeError: boom"]


def _stamped_step(n: int) -> str:
    return STEP_LINE.replace("step=100", f"step={n}").replace("00:01:20", f"00:01:{n % 60:02d}")


def test_a_traceback_released_by_a_restart_found_at_a_live_line_has_that_lines_rank_and_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A step going back (a resume) is found when the pending step goes out: the traceback held
    before it is released then, with the rank and time of the line being read — in one read of
    several lines, as a followed file's small append is read."""
    head = [_stamped_step(n) for n in range(1, 41)]
    for read in ([*TRACEBACK, _stamped_step(5)], [_stamped_step(41), *TRACEBACK, _stamped_step(6), _stamped_step(7)]):
        texts = head + read
        assert _assert_same(texts, len(head), monkeypatch, [len(read)]) > 0
        store, _ = _follow(texts, len(head), True, monkeypatch, [len(read)])
        tracebacks = [e for e in store["store"]["events"] if '"traceback"' in e]
        assert len(tracebacks) == 1 and '"rank": 0' in tracebacks[0] and "2020-12-12T00:01" in tracebacks[0]


def test_the_same_traceback_read_in_bulk_has_the_rank_and_time_the_per_line_path_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [_stamped_step(n) for n in range(1, 41)] + TRACEBACK + [_stamped_step(5)]
    bulk, _ = _follow(texts, len(texts), True, monkeypatch)
    per_line, _ = _follow(texts, 0, False, monkeypatch, [len(texts)])
    assert bulk["store"]["events"] == per_line["store"]["events"]
