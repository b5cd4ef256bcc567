"""The bulk catch-up path (parsers/bulk.py, `SourceParser.feed_block`) leaves exactly the store
the per-line path leaves.

Both are run (`catchup.BULK` on/off, like the `FAST` switches of test_fast_paths.py) over every
seed, real log and sample log, over a few MB of seed 004 repeated by tests/bench/make_big_log.py
with a restart, a NaN, an inf and a second rank spliced in, and over mutated hot lines; the
`summary --json` object, the store's contents (every series point, latest values, steps,
events, counts) and the raw-log ring must be identical. The bulk thresholds are lowered so
that small logs go through the bulk path too.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from _perf_corpus import DS_LINE, ITER_LINE, TIMERS_LINE, real_logs
from conftest import seed

from trainwatch.columns import ColumnBlock, RecordShape
from trainwatch.lines.assembler import Line
from trainwatch.parsers import bulk
from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import SourceParser, catchup
from trainwatch.parsers.timestamps import line_time
from trainwatch.pipeline import Pipeline
from trainwatch.records import to_dict
from trainwatch.sources import reader as reader_module
from trainwatch.store.store import Store, iso_to_epoch
from trainwatch.views.summary import summary_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import make_big_log  # tests/bench/make_big_log.py

LOGS = real_logs("*.log")
# The corpus excerpts of the formats that have bulk shapes (DeepSpeed's and Megatron's lines).
CORPUS = Path(__file__).resolve().parents[1] / "corpus"
BULK_HINTS = ("iteration", "time (ms)", "step=", "SamplesPerSec")
CORPUS_LOGS = sorted(
    p for p in CORPUS.glob("*/*.log") if any(h in p.read_text(encoding="utf-8", errors="replace") for h in BULK_HINTS)
)

# DS_LINE, ITER_LINE, TIMERS_LINE: real seed-004 lines (_perf_corpus.py).
STEP_LINE = (
    "[2020-12-12 00:01:20,672] [INFO] [logging.py:60:log_dist] [Rank 0] step=100, skipped=0,"
    " lr=[1.5e-06, 1.5e-06], mom=[(0.9, 0.999), (0.9, 0.999)]"
)
THROUGHPUT_LINE = "[2020-12-12 00:01:20,672] [INFO] [timer.py:166:stop] 0/100, SamplesPerSec=421.75204796909713"
# (and a stall's age: "no step for 7.5s after step N" — both runs read the files at their own time)
_AGO = re.compile(
    r"(?:[0-9.]+ ?(?:µs|ms|s|m|min|h|d|years) ago|\bnow\b|(?<=no step for )[0-9.]+ ?(?:µs|ms|s|m|min|h|d|years)\b)"
)


def _r(x: float) -> str:
    return repr(x)  # NaN == NaN, -0.0 != 0.0


def store_dump(store: Store) -> dict[str, Any]:
    """Everything the views read from the store (not the ingest wall-clock times)."""
    series = {
        repr(tuple(k)): (
            list(map(_r, s.steps)),
            list(map(_r, s.values)),
            list(map(_r, s.times)),
            s.count,
            s.compactions,
        )
        for k, s in store.series.items()
    }
    return {
        "series": series,
        "series_order": [repr(tuple(k)) for k in store.series],
        "latest": {repr(k): [(n, _r(v)) for n, v in d.items()] for k, d in store.latest.items()},
        "latest_phases": {repr(k): [(n, _r(v)) for n, v in d.items()] for k, d in store.latest_phases.items()},
        "latest_step": {repr(k): v for k, v in store.latest_step.items()},
        "step_records": {repr(k): v for k, v in store.step_records.items()},
        "observations": {repr(k): [(o.step, _r(o.log_time)) for o in d] for k, d in store.observations.items()},
        "last_log_time": {repr(k): _r(v) for k, v in store.last_log_time.items()},
        "first_log_time": _r(store.first_log_time),
        "events": sorted(json.dumps(to_dict(e), sort_keys=True) for e in store.events),
        "event_counts": dict(store.event_counts),
        "profiles": [json.dumps(to_dict(p), sort_keys=True) for p in store.profiles],
        "ranks": sorted(store.ranks),
        "total_steps": store.total_steps,
        "records_added": store.records_added,
        # the attempts (a block's rows are one attempt's)
        "current_attempt": store.current_attempt,
        "key_attempt": {repr(k): v for k, v in store.key_attempt.items()},
        "attempt_span": {repr(k): v for k, v in store.attempt_span.items()},
    }


def _source_dump(store: Store) -> dict[str, Any]:
    out = {}
    for name, st in store.sources.items():
        out[name] = (
            st.formats,
            st.lines,
            st.not_understood,
            st.duplicate_steps,
            st.parser_errors,
            sorted(st.ranks_seen),
            list(st.recent),
        )
    return out


def _run(paths: list[str], bulk: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    monkeypatch.setattr(catchup, "BULK", bulk)
    pipeline = Pipeline(paths)
    pipeline.read_to_end()
    store = pipeline.store
    # "last write now" / "3s ago": the files are written during the test, the one thing two runs cannot share
    text = _AGO.sub("<ago>", json.dumps(summary_json(store), sort_keys=True, default=str, ensure_ascii=False))
    summary = json.loads(text)
    return summary, store_dump(store), _source_dump(store)


@pytest.fixture
def small_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small logs through the bulk path: any read, shapes learned every few lines."""
    monkeypatch.setattr(reader_module, "BULK_MIN_BYTES", 1)
    monkeypatch.setattr(reader_module, "CATCHUP_BYTES", 1)  # (in bulk even where it does not pay)
    monkeypatch.setattr(catchup, "BULK_SLICE", 2048)


def _assert_same(path_list: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    bulk = _run(path_list, True, monkeypatch)
    per_line = _run(path_list, False, monkeypatch)
    assert bulk[0] == per_line[0], "summary --json differs"
    assert bulk[1] == per_line[1], "store contents differ"
    assert bulk[2] == per_line[2], "source state / raw-log ring differs"


def _blocks_of(monkeypatch: pytest.MonkeyPatch) -> list[ColumnBlock]:
    """The column blocks the store is given from now on (a spy on `Store.extend`)."""
    blocks: list[ColumnBlock] = []
    original = Store.extend

    def spy(self: Store, block: ColumnBlock) -> None:
        blocks.append(block)
        original(self, block)

    monkeypatch.setattr(Store, "extend", spy)
    return blocks


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:60])
def test_bulk_and_per_line_agree_on_every_log(path: Path, monkeypatch: pytest.MonkeyPatch, small_bulk: None) -> None:
    _assert_same([str(path)], monkeypatch)


@pytest.mark.parametrize("path", CORPUS_LOGS, ids=lambda p: f"{p.parent.name}/{p.name[:50]}")
def test_bulk_and_per_line_agree_on_the_corpus_excerpts_of_bulk_formats(
    path: Path, monkeypatch: pytest.MonkeyPatch, small_bulk: None
) -> None:
    """Megatron-LM forks, NeMo, Megatron-Bridge, Pai-Megatron-Patch, DeepSpeed examples..."""
    _assert_same([str(path)], monkeypatch)


def test_the_bulk_path_is_taken_on_seed_004(monkeypatch: pytest.MonkeyPatch, small_bulk: None) -> None:
    """Otherwise the comparisons above would compare the per-line path with itself."""
    blocks = _blocks_of(monkeypatch)
    pipeline = Pipeline([str(seed("004"))])
    pipeline.read_to_end()
    groups = [g for b in blocks for g in b.groups.values()]
    shapes = {(g.template.owner.name, g.template.kind) for g in groups if not isinstance(g.template, RecordShape)}
    assert shapes == {("deepspeed", "phases"), ("megatron", "phases"), ("megatron", "step")}
    rows = sum(len(b) for b in blocks)
    assert rows > 0.9 * (23000 + 4600 + 4600)  # nearly every hot line of the 33k-line log
    # Steps the per-line path emits inside a run of hot lines join the blocks as rows: DeepSpeed's
    # timestamped `step=N` (+ timer.py) steps, with their log time, and Megatron's validation.
    records = [g for g in groups if isinstance(g.template, RecordShape)]
    ds_steps = [g for g in records if "skipped" in g.template.names]
    printed = seed("004").read_text(encoding="utf-8").count("] step=")
    assert sum(len(g) for g in ds_steps) > 0.7 * printed  # (2 KB slices here: a block closes at each slice end)
    assert all(g.times and None not in g.times and "lr" in g.template.names for g in ds_steps)
    # Records of the same names share one group per block (not a group per record).
    assert 10 * len(ds_steps) < sum(len(g) for g in ds_steps)
    assert any("eval_loss" in g.template.names for g in records)


def _big_log(tmp_path: Path, splice: list[tuple[float, str]]) -> Path:
    """~3 MB of seed 004 repeated (make_big_log), with lines spliced in at fractions of it."""
    path = tmp_path / "big.log"
    make_big_log.build(path, 3)
    lines = path.read_text(encoding="utf-8").split("\n")
    for fraction, text in sorted(splice, reverse=True):
        at = int(len(lines) * fraction)
        lines[at:at] = text.split("\n")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.mark.slow  # a big generated log
def test_bulk_and_per_line_agree_on_a_big_log_with_a_restart_nan_and_a_second_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_log(
        tmp_path,
        [
            (0.2, ITER_LINE.replace("1.098990E+01", "1E+999")),  # float() gives inf: a nan event
            (0.3, ITER_LINE.replace(" 5/", " 7/")),  # steps go back: a restart
            (0.35, ITER_LINE.replace(" 5/", " 7/")),  # the very same line again
            (0.4, DS_LINE.replace("rank=0", "rank=1")),  # a second reporting rank: unranked lines now unknown
            (0.5, "[2024-05-01 10:00:00] iteration 3/ 10 | lm loss 2.0 |"),  # a stamped form, per line
            (0.6, " iteration        5/ 1000000 | lm loss nan |"),
            (0.7, "(min, max) time across ranks (ms):\n    forward-compute ....: (1.0, 2.0)"),
        ],
    )
    monkeypatch.setattr(reader_module, "BULK_MIN_BYTES", 1)
    monkeypatch.setattr(reader_module, "CATCHUP_BYTES", 1)  # (in bulk even where it does not pay)
    _assert_same([str(path)], monkeypatch)


@pytest.mark.slow  # a big generated log
def test_a_big_log_is_read_in_bulk_at_the_default_thresholds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _big_log(tmp_path, [])
    _assert_same([str(path)], monkeypatch)


# ------------------------------------------------------------------ mutated hot lines
def _mutate(rng: random.Random, text: str) -> str:
    """A hot line changed the ways logs and torn writes change them."""
    choice = rng.randrange(9)
    i = rng.randrange(len(text))
    if choice == 0:
        return text[:i] + text[i + 1 :]  # a character lost
    if choice == 1:
        return text[:i] + rng.choice("0123456789.-+eE |:=x") + text[i:]
    if choice == 2:
        return text[:i]  # torn
    if choice == 3:
        return text.replace("rank=0", f"rank={rng.choice([1, 2, 10**6, 10**18])}")
    if choice == 4:
        return text.replace(" 5/", f" {rng.choice([1, 3, 5, 9, 10**17])}/")
    if choice == 5:
        return text.replace("1.098990E+01", rng.choice(["nan", "inf", "1E+400", "-0.0", "1.0E-400", "١٢.٥"]))
    if choice == 6:
        return "[rank1]:" + text
    if choice == 7:
        return text.replace(" ", "  ", 1)
    return text


def mutated_hot_lines(rng: random.Random, base: list[str]) -> list[str]:
    """The learned shapes' lines first, then 300 lines drawn from `base`: Megatron's steps going
    on, repeated or going back, 15 % of the lines mutated (`_mutate`)."""
    texts: list[str] = [DS_LINE] * 20 + [ITER_LINE, TIMERS_LINE] * 4  # the shapes get learned
    step = 5
    for _ in range(300):
        text = rng.choice(base)
        if text is ITER_LINE:
            step += rng.choice([5, 5, 5, 0, -5])
            text = text.replace(" 5/", f" {max(step, 0)}/")
        if rng.random() < 0.15:
            text = _mutate(rng, text)
        texts.append(text)
    return texts


def _records_to_store(texts: list[str], bulk: bool) -> dict[str, Any]:
    store = Store()
    sink: list[Any] = []
    parser = SourceParser("out.log", new_parsers(), sink.append, path="out.log")
    if bulk:
        parser.feed_block(1, "".join(t + "\n" for t in texts))
    else:
        parser.feed_lines(Line(i + 1, t) for i, t in enumerate(texts))
    parser.finish()
    store.add_many(sink)
    st = parser.stats
    return {
        "store": store_dump(store),
        "stats": (
            st.lines,
            st.understood,
            dict(st.records),
            st.duplicate_steps,
            st.parser_errors,
            sorted(st.ranks_seen),
        ),
    }


@pytest.mark.parametrize("trial", range(40))
def test_bulk_and_per_line_agree_on_mutated_hot_lines(trial: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shuffled, repeated and mutated real lines: a half-matching line must take the per-line
    path (and give what it gives there), never a number from the bulk path."""
    monkeypatch.setattr(catchup, "BULK_SLICE", 512)
    rng = random.Random(trial)
    texts = mutated_hot_lines(rng, [DS_LINE] * 5 + [ITER_LINE, TIMERS_LINE, STEP_LINE, THROUGHPUT_LINE])
    bulk = _records_to_store(texts, True)
    per_line = _records_to_store(texts, False)
    assert bulk == per_line


def test_nan_in_a_hot_line_is_an_event_in_bulk_too(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [DS_LINE, ITER_LINE, TIMERS_LINE] * 10 + [ITER_LINE.replace("5/", "500/").replace("1.098990E+01", "1E+999")]
    texts += [TIMERS_LINE]
    monkeypatch.setattr(catchup, "BULK_SLICE", 64)
    bulk = _records_to_store(texts, True)
    assert bulk["store"]["event_counts"].get("nan") == 1
    assert bulk == _records_to_store(texts, False)


def test_series_extend_compacts_like_append() -> None:
    from array import array

    from trainwatch.store.series import Series

    rng = random.Random(3)
    for _ in range(50):
        one, bulk = Series(64), Series(64)
        points = [(float(k), rng.choice([math.nan, rng.random(), -0.0, 0.0])) for k in range(rng.randint(0, 700))]
        for x, v in points:
            one.append(x, v, math.nan)
        i = 0
        while i < len(points):
            j = i + rng.randint(1, 200)
            chunk = points[i:j]
            bulk.extend(
                array("d", [x for x, _ in chunk]),
                array("d", [v for _, v in chunk]),
                array("d", [math.nan]) * len(chunk),
            )
            i = j
        assert (list(map(_r, one.values)), list(one.steps), one.count, one.compactions) == (
            list(map(_r, bulk.values)),
            list(bulk.steps),
            bulk.count,
            bulk.compactions,
        )


# ------------------------------------------------------------------ runs in columns
# seed 002 (DeepSpeed CoCa, /work/shared/seeds/002_*) prints these timers behind a log_dist
# prefix; seed 004's DeepSpeed prints the same `rank=0 time (ms) | ...` form bare, as here.
MICRO_LINE = (
    "rank=0 time (ms) | forward_microstep: 6475.24 | backward_microstep: 3422.95 |"
    " backward_inner_microstep: 3105.30 | backward_allreduce_microstep: 317.44 | step_microstep: 8489.25"
)
GLOBAL_LINE = (
    "rank=0 time (ms) | forward: 6475.32 | backward: 3422.89 | backward_inner: 3105.27 |"
    " backward_allreduce: 317.44 | step: 8489.29"
)


def _count_runs(monkeypatch: pytest.MonkeyPatch) -> dict[bool, int]:
    """Rows taken in columns (True) and runs handed back to the row-by-row path (False)."""
    taken = {True: 0, False: 0}
    original = catchup.CatchUp._columns

    def spy(self: catchup.CatchUp, rows: Any, where: Any, a: int, b: int, no: int) -> int:
        stop = original(self, rows, where, a, b, no)
        taken[True] += stop - a
        taken[False] += stop < b
        return stop

    monkeypatch.setattr(catchup.CatchUp, "_columns", spy)
    return taken


def test_runs_of_hot_lines_go_in_as_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Otherwise the comparisons above would only test the row-by-row bulk path. DeepSpeed's
    timestamped step=N and timer.py lines are in the runs too: a run is a slice of the file."""
    path = _big_log(tmp_path, [])
    taken = _count_runs(monkeypatch)
    _assert_same([str(path)], monkeypatch)
    lines = path.read_text(encoding="utf-8").count("\n")
    assert taken[True] > 0.9 * lines  # (the first slice is read per line: it teaches the shapes)
    assert taken[False] < lines / 1000  # (a slice that ends in a step's lines: its last lines)


def test_one_parsers_shapes_interleaved_in_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """DeepSpeed's optimizer, micro-step and global timers (three shapes, one parser state)
    between Megatron iteration lines, in one run: steps as the per-line path counts them.
    (Megatron's timers line is left out: its `forward` would share a series with DeepSpeed's.)"""
    monkeypatch.setattr(catchup, "BULK_SLICE", 4096)
    texts = [STEP_LINE.replace("step=100", "step=0")]
    step = 0
    for _ in range(60):
        step += 1
        texts += [DS_LINE, MICRO_LINE, MICRO_LINE, GLOBAL_LINE]
        texts.append(ITER_LINE.replace(" 5/", f" {step}/"))
    taken = _count_runs(monkeypatch)
    bulk = _records_to_store(texts, True)
    assert taken[True] > 0.7 * len(texts) and taken[False] <= 10  # (the first slice is read per line)
    assert bulk == _records_to_store(texts, False)
    (forward,) = [v for k, v in bulk["store"]["series"].items() if "'phase', 'forward'" in k]
    assert forward[0][:3] == ["1.0", "2.0", "3.0"]  # the global timers close steps 1, 2, 3...


@pytest.mark.parametrize("unusual", ["step going back", "second rank"])
def test_an_unusual_run_is_read_row_by_row(unusual: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catchup, "BULK_SLICE", 4096)
    texts = [DS_LINE] * 10 + [ITER_LINE, TIMERS_LINE] * 3
    for k in range(40):
        ds = DS_LINE.replace("rank=0", "rank=1") if unusual == "second rank" and k % 2 else DS_LINE
        texts += [ds, TIMERS_LINE]
        back = unusual == "step going back" and k == 20
        texts.append(ITER_LINE.replace(" 5/", f" {3 if back else 10 + k}/"))
    taken = _count_runs(monkeypatch)
    bulk = _records_to_store(texts, True)
    assert taken[False] > 0
    assert bulk == _records_to_store(texts, False)
    if unusual == "step going back":
        assert bulk["store"]["event_counts"].get("restart") == 1


def test_printed_milliseconds_are_converted_like_ms_to_s(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwatch.numbers import ms_to_s
    from trainwatch.parsers import bulk

    monkeypatch.setattr(bulk, "SECONDS_CACHE", 50)  # the cache fills and is cleared on the way
    rng = random.Random(5)
    texts = [f"{rng.uniform(0, 10 ** rng.randint(0, 7)):.{rng.randint(1, 6)}f}" for _ in range(2000)]
    texts += ["0.00", "18.83", "18.83", "907.6", "123456789.123"]
    for chunk in (texts[:7], texts, texts[::-1]):
        assert list(map(_r, bulk._seconds(chunk))) == [_r(ms_to_s(float(t))) for t in chunk]


def test_a_run_ending_in_a_step_line_leaves_that_step_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last iteration line of a run is still pending: DeepSpeed's `step=N` report of the
    same step right after it merges into the same record, as on the per-line path."""
    monkeypatch.setattr(catchup, "BULK_SLICE", 4096)
    texts = [DS_LINE] * 10 + [ITER_LINE, TIMERS_LINE] * 3
    for k in range(1, 30):
        texts += [DS_LINE, TIMERS_LINE, ITER_LINE.replace(" 5/", f" {100 * k}/")]
        if k % 3 == 0:
            # (the same lr as the iteration line: a report of the same step, merged)
            texts.append(STEP_LINE.replace("step=100", f"step={100 * k}").replace("1.5e-06", "7.5e-08"))
    taken = _count_runs(monkeypatch)
    bulk = _records_to_store(texts, True)
    assert taken[True] > 0.3 * len(texts)
    assert bulk == _records_to_store(texts, False)
    steps = next(iter(bulk["store"]["step_records"].values()))
    assert steps == 3 + 29  # each `step=N` line merged into its iteration's record (not 3 + 29 + 9)


@pytest.mark.parametrize("lr", ["7.5e-08", "1.5e-06"], ids=["same-lr-merged", "other-lr-apart"])
def test_an_iteration_line_after_deepspeeds_step_line_stays_in_bulk(lr: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 004's order: DeepSpeed's `step=N` and timer.py lines (timed shapes: the pending step
    with its log time), then Megatron's `iteration N`. With the same lr the iteration merges into
    the pending step; with another lr it is a step of its own (the pending one goes out first).
    Either way, as on the per-line path, and none of those lines is handed back to it."""
    monkeypatch.setattr(catchup, "BULK_SLICE", 4096)
    texts = [DS_LINE] * 10 + [ITER_LINE, TIMERS_LINE] * 3
    for k in range(1, 30):
        texts += [DS_LINE] * 4
        texts.append(STEP_LINE.replace("step=100", f"step={100 * k}").replace("1.5e-06", lr))
        texts.append(THROUGHPUT_LINE.replace("0/100", f"0/{100 * k}"))
        texts += [ITER_LINE.replace(" 5/", f" {100 * k}/"), TIMERS_LINE]
    per_line: list[str] = []
    original = catchup.CatchUp._fallback

    def spy(self: catchup.CatchUp, no: int, text: str, *, learn: bool) -> None:
        per_line.append(text)
        original(self, no, text, learn=learn)

    monkeypatch.setattr(catchup.CatchUp, "_fallback", spy)
    taken = _count_runs(monkeypatch)
    bulk = _records_to_store(texts, True)
    assert bulk == _records_to_store(texts, False)
    assert not [t for t in per_line[10:] if " iteration " in t]
    # the first step= and timer.py lines (the first slice, read per line) teach their shapes
    assert not [t for t in per_line if "] step=" in t or "SamplesPerSec=" in t]
    steps = next(iter(bulk["store"]["step_records"].values()))
    assert steps == 3 + 29 * (1 if lr == "7.5e-08" else 2)
    # the step=N, timer.py and iteration lines of a step are merged (or kept apart) in the
    # column runs, which they no longer cut: row by row are only the lines at a slice's end
    assert taken[True] > 0.7 * len(texts) and taken[False] <= 10  # (the first slice is read per line)


def test_timestamped_steps_join_the_block_with_their_log_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """DeepSpeed's `step=N` + timer.py steps (timed shapes: a pending step with its log time) become rows of
    the open block, between the iteration rows of the series they share (lr, loss, total_steps):
    the store holds what the per-line path gives, log times (one going back), a NaN lr and a
    relaunch included."""
    monkeypatch.setattr(catchup, "BULK_SLICE", 4096)
    texts = [DS_LINE] * 10 + [ITER_LINE, TIMERS_LINE] * 3
    for k in range(1, 40):
        stamp = f"[2020-12-12 00:{(k * 7) % 60:02d}:{k % 60:02d},672]"  # wraps: a log time going back
        step_line = STEP_LINE.replace("step=100", f"step={100 * k}").replace("[2020-12-12 00:01:20,672]", stamp)
        if k == 17:
            step_line = step_line.replace("1.5e-06, 1.5e-06", "nan, nan")
        texts += [step_line, THROUGHPUT_LINE.replace("0/100", f"0/{100 * k}")]
        lr = "1.500E-06" if k % 2 else "7.500E-08"  # (the same lr as the step line: merged; else apart)
        for i in range(0, 100, 20):  # seed 004's order
            texts.append(ITER_LINE.replace(" 5/", f" {100 * k + i}/").replace("7.500E-08", lr))
            texts += [TIMERS_LINE] + [DS_LINE] * 3
        if k == 30:
            texts += [DS_LINE, ITER_LINE.replace(" 5/", " 10/"), TIMERS_LINE]  # a relaunch
    store_records: list[Any] = []
    original = Store.add_many
    monkeypatch.setattr(Store, "add_many", lambda self, rs: (store_records.extend(rs), original(self, rs))[1])
    bulk = _records_to_store(texts, True)
    rows = [g for r in store_records if type(r) is ColumnBlock for g in r.groups.values()]
    timed = [t for g in rows if isinstance(g.template, RecordShape) for t in g.times or () if t is not None]
    assert len(timed) > 25  # most of the 39 `step=N` steps, not closing the block
    assert bulk == _records_to_store(texts, False)
    times = next(v[2] for k, v in bulk["store"]["series"].items() if "'metric', 'skipped'" in k)
    assert times[:2] == [_r(iso_to_epoch("2020-12-12T00:07:01.672")), _r(iso_to_epoch("2020-12-12T00:14:02.672"))]


def _mutate_stamped(rng: random.Random, text: str) -> str:
    """A timestamped DeepSpeed line changed the ways real logs differ (other stamps, ranks, lr
    lists, counters) and torn writes change it."""
    choice = rng.randrange(10)
    if choice == 0:
        return text.replace("[2020-12-12 00:01:20,672]", rng.choice(STAMPS))
    if choice == 1:
        return text.replace("[Rank 0]", rng.choice(["[Rank 1]", "[Rank 0]  ", "[Rank 1234567890]", "[rank 0]", ""]))
    if choice == 2:
        return text.replace("1.5e-06, 1.5e-06", rng.choice(["7.5e-08, 7.5e-08", "nan, nan", "1.5e-06", "", "1,5e-06"]))
    if choice == 3:
        return text.replace("0/100", rng.choice(["0/7", "3/100", "0/100000000000000000000", "0/-1"]))
    if choice == 4:
        return text.replace("421.75204796909713", rng.choice(["nan", "inf", "1E+400", "-0.0", "4.2e2", "421,75"]))
    if choice == 5:
        return text + rng.choice(["  ", "\t", " x"])
    if choice == 6:
        return text.replace("SamplesPerSec=", "RunningAvgSamplesPerSec=", 1)
    if choice == 7:
        return text.replace("step=", "global_step=", 1)
    i = rng.randrange(len(text))
    return text[:i] if choice == 8 else text[:i] + rng.choice("0123456789.-+eE |:=x[]") + text[i + 1 :]


LAUNCH_LINE = "[2024-01-01 00:00:00,000] [INFO] [launch.py:138:main] WORLD INFO DICT: {'localhost': [0]}"
STAMPS = [
    "[2020-12-12 00:01:20]",
    "[2020/12/12 00:01:20.5]",
    "[2020-12-12T00:01:20.123456]",
    "[2020-12-12 00:01:20,6721234]",
    "[20-12-12 00:01:20,672]",
    "[2020-12-12 00:01:20,672 INFO]",
    "2020-12-12 00:01:20,672",
]


@pytest.mark.parametrize("trial", range(40))
def test_bulk_and_per_line_agree_on_mutated_stamped_lines(trial: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 004's cycle with its timestamped `step=N` and timer.py lines changed: the steps, ranks,
    times and merges of the per-line path, whichever lines keep the learned shapes."""
    rng = random.Random(trial)
    monkeypatch.setattr(catchup, "BULK_SLICE", rng.choice([256, 1024, 4096]))
    texts: list[str] = [DS_LINE] * 10 + [ITER_LINE, TIMERS_LINE] * 3
    step = 100
    for _ in range(60):
        step += rng.choice([100, 100, 100, 0, -100, -300])
        stamped = [
            STEP_LINE.replace("step=100", f"step={max(step, 0)}"),
            THROUGHPUT_LINE.replace("0/100", f"0/{max(step, 0)}"),
        ]
        stamped = [_mutate_stamped(rng, t) if rng.random() < 0.3 else t for t in stamped]
        if rng.random() < 0.1:
            stamped.reverse()
        if rng.random() < 0.1:
            stamped.pop(rng.randrange(2))
        texts += [DS_LINE] * rng.randrange(6) + stamped
        if rng.random() < 0.05:
            texts.append(LAUNCH_LINE)  # a relaunch: the next rows are the next attempt's
        lr = rng.choice(["1.500E-06", "7.500E-08"])
        texts += [ITER_LINE.replace(" 5/", f" {max(step, 0)}/").replace("7.500E-08", lr), TIMERS_LINE]
    bulk = _records_to_store(texts, True)
    assert bulk == _records_to_store(texts, False)


@pytest.mark.parametrize("stamped", [True, False], ids=["with-step-lines", "template-rows-only"])
def test_rows_after_a_relaunch_are_the_new_attempts(
    stamped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_bulk: None
) -> None:
    """The launcher's banner again starts attempt 1 between two rows of one slice: the block
    open then holds attempt 0's rows and goes out before the first row of attempt 1 (its
    first step, the attempts' spans and `summary --json`'s attempts are the per-line path's)."""
    monkeypatch.setattr(catchup, "BULK_SLICE", 4096)

    def cycle(k: int) -> list[str]:
        lines = [DS_LINE] * 3
        if stamped:
            lines += [STEP_LINE.replace("step=100", f"step={k}"), THROUGHPUT_LINE.replace("0/100", f"0/{k}")]
        return [*lines, ITER_LINE.replace(" 5/", f" {k}/"), TIMERS_LINE]

    texts = [LAUNCH_LINE] + [DS_LINE] * 10 + [ITER_LINE, TIMERS_LINE] * 3
    for k in range(1, 40):
        texts += cycle(10 * k)
    texts.append(LAUNCH_LINE)  # the launcher again: attempt 1, from step 300
    for k in range(30, 60):
        texts += cycle(10 * k)
    path = tmp_path / "out.log"
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    _assert_same([str(path)], monkeypatch)
    summary = _run([str(path)], True, monkeypatch)[0]
    assert [(a["attempt"], a["first_step"]) for a in summary["attempts"]] == [(0, 5), (1, 300)]


def test_the_first_lines_teach_the_shapes_in_short_slices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines are read one by one until their shapes are learned: in 16 KB slices, not in a whole
    256 KB slice (the dashboard's 4 MB tail window of a big log took 2,500 lines per line first)."""
    path = _big_log(tmp_path, [])
    tail = tmp_path / "tail.log"
    data = path.read_bytes()
    tail.write_bytes(data[data.index(b"\n", len(data) // 2) + 1 :])  # from the middle of a run, as a window
    per_line: list[int] = []
    original = SourceParser.feed_line
    monkeypatch.setattr(SourceParser, "feed_line", lambda self, line: (per_line.append(line.no), original(self, line)))
    Pipeline([str(tail)]).read_to_end()
    first = [n for n in per_line if n <= 3000]  # 256 KB of this log: about 2,500 lines
    assert 0 < len(first) < 500, len(first)  # the first lines, until each shape is learned
    _assert_same([str(tail)], monkeypatch)


@pytest.mark.parametrize("enabled", [True, False])
def test_a_catch_up_leaves_the_garbage_collector_as_it_found_it(
    enabled: bool, monkeypatch: pytest.MonkeyPatch, small_bulk: None
) -> None:
    """The bulk path pauses the cyclic collector while it reads (its allocations are acyclic):
    paused during the read, as before afterwards, even when the read fails half-way."""
    import gc

    seen: list[bool] = []
    original = catchup.CatchUp._slice

    def spy(self: catchup.CatchUp, text: str, pos: int, end: int, no: int) -> int:
        seen.append(gc.isenabled())
        return original(self, text, pos, end, no)

    monkeypatch.setattr(catchup.CatchUp, "_slice", spy)
    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        Pipeline([str(seed("004"))]).read_to_end()
        assert seen and not any(seen)
        assert gc.isenabled() is enabled

        def boom(self: catchup.CatchUp, text: str, pos: int, end: int, no: int) -> int:
            raise RuntimeError("a bug in the bulk path")

        monkeypatch.setattr(catchup.CatchUp, "_slice", boom)
        with pytest.raises(RuntimeError):
            catchup.CatchUp.read(_catch_up(), "x\n", 0, 1)
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()


def _catch_up() -> catchup.CatchUp:
    parser = SourceParser("s", new_parsers(), lambda record: None)
    return parser._catchup


def test_timer_lines_alone_count_their_own_steps_in_bulk_as_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loop printing only DeepSpeed's old `0/N, SamplesPerSec=` lines (no engine `step=N`): each line
    is its own step on both paths (the bulk template's step is the per-line parser's)."""
    monkeypatch.setattr(catchup, "BULK_SLICE", 512)
    texts = [
        f"[2021-01-26 21:{i // 60 % 60:02d}:{i % 60:02d},613] [INFO] [timer.py:166:stop] 0/{10 * i}, "
        f"SamplesPerSec={36 + i / 1000}"
        for i in range(1, 400)
    ]
    bulk = _records_to_store(texts, True)
    assert bulk == _records_to_store(texts, False)
    (steps,) = [v[0] for k, v in bulk["store"]["series"].items() if "running_avg_samples_per_s" in k]
    assert steps[:3] == [_r(10.0), _r(20.0), _r(30.0)] and steps[-1] == _r(3990.0)


def _grown(path: Path, text: bytes, bulk: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], int]:
    """The store after `text` arrived 9,000 bytes at a time (chunks end mid-line), read after each."""
    monkeypatch.setattr(catchup, "BULK", bulk)
    blocks: list[int] = []
    read = catchup.CatchUp.read

    def counted(self: catchup.CatchUp, text: str, *args: Any) -> Any:
        blocks.append(len(text))
        return read(self, text, *args)

    monkeypatch.setattr(catchup.CatchUp, "read", counted)
    path.write_bytes(b"")
    pipeline = Pipeline([str(path)])
    feed = pipeline.readers[str(path)]
    with open(path, "ab") as f:
        for i in range(0, len(text), 9000):
            f.write(text[i : i + 9000])
            f.flush()
            while feed.pump():
                pass
    return store_dump(pipeline.store), len(blocks)


def test_a_file_growing_fast_is_read_in_bulk_as_it_arrives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A followed file growing some KB a read (1000 Megatron lines/s) goes through the bulk path
    as it arrives, torn writes included, and leaves the store the per-line path leaves when it
    reads the same bytes at the same moments."""
    text = seed("004").read_bytes()
    text = text[: text.index(b"\n", 1_000_000) + 1]  # ~110 reads; the first ones are setup lines
    bulk, blocks = _grown(tmp_path / "out.log", text, True, monkeypatch)
    per_line, none = _grown(tmp_path / "out.log", text, False, monkeypatch)
    assert blocks > 50 and none == 0
    assert bulk == per_line


# Megatron-LM's own iteration and timers lines (tests/corpus/megatron_lm/, issue 743 and the 345M
# GPT run): numbers right-aligned in their fields, and no rank anywhere in the log.
MLM_ITER = (
    " iteration {n:8d}/    5000 | consumed samples: {samples:12d} | elapsed time per iteration (ms): {ms:.1f} |"
    " learning rate: {lr:.3E} | global batch size:    16 | lm loss: {loss:.6E} | loss scale: 262144.0 |"
    " grad norm: {gn:.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |"
)
MLM_TIMERS = (
    "time (ms) | forward-compute: {f:.2f} | backward-compute: 73.02 | backward-params-all-reduce: 20.10 |"
    " optimizer: 63.01 | batch-generator: 25.27"
)
MLM_VALIDATION = (
    "-" * 96
    + "\n validation loss at iteration {n} | lm loss value: 6.329505E+00 | lm loss PPL: 5.608791E+02 | \n"
    + "-" * 96
)


def _megatron_lm_log(path: Path, iterations: int, *, ranks: int = 1, seed: int = 0, stamped: bool = False) -> Path:
    """An unranked Megatron-LM log: every counter goes on; `ranks` unprefixed ranks print each
    iteration line (the same values: the per-line path counts the repeats); `stamped`: each
    iteration line starts with its time, as recent Megatron-LM prints it (` [2024-04-06 02:56:58]`,
    tests/corpus/megatron_lm/mixtral_timestamped_load_balancing_issue756.log)."""
    rng = random.Random(seed)
    lines = ["training ...", "[before the start of training step] datetime: 2022-10-31 08:35:51 "]
    for n in range(1, iterations + 1):
        values = {"n": n, "samples": 16 * n, "ms": rng.uniform(800, 1200), "lr": 1.5e-4 * min(1, n / 500)}
        values |= {"loss": 10 * 0.999**n + 2, "gn": rng.uniform(0.5, 3)}
        stamp = f" [2024-04-06 {n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}]" if stamped else ""  # (n < 86400)
        lines += [stamp + MLM_ITER.format(**values)] * ranks
        lines.append(MLM_TIMERS.format(f=rng.uniform(190, 200)))
        if n % 500 == 0:
            lines.append(MLM_VALIDATION.format(n=n))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("stamped", [False, True], ids=["plain", "stamped"])
def test_an_unranked_megatron_lm_log_is_read_in_bulk(
    stamped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_bulk: None
) -> None:
    """No rank reports in such a log: its records have no rank, on both paths; its iteration
    lines (right-aligned fields; stamped: with their log time) and timers lines go in blocks."""
    path = _megatron_lm_log(tmp_path / "out.log", 3000, stamped=stamped)
    _assert_same([str(path)], monkeypatch)
    monkeypatch.setattr(catchup, "BULK", True)
    blocks = _blocks_of(monkeypatch)
    pipeline = Pipeline([str(path)])
    pipeline.read_to_end()
    groups = [g for b in blocks for g in b.groups.values()]
    assert {g.rank for g in groups} == {None}
    kinds = {"record" if isinstance(g.template, RecordShape) else g.template.kind for g in groups}
    assert kinds == {"step", "phases"}  # (stamped: each row with its log time, not a record)
    phases = sum(len(g) for g in groups if g.template.kind == "phases")
    assert phases > 0.9 * 3000 and sum(len(g) for g in groups) - phases > (0.7 if stamped else 0.9) * 3000
    # (2 KB slices here: a slice's last stamped step stays open for the next lines, read per line)
    loss = pipeline.store.get_series(str(path), None, "loss")
    assert loss is not None and loss.count == 3000 and list(loss.steps[:3]) == [1.0, 2.0, 3.0]
    assert (loss.times[1] - loss.times[0] == 1.0) if stamped else math.isnan(loss.times[0])
    assert pipeline.store.ranks == set()


@pytest.mark.parametrize("trial", range(16))
def test_unranked_lines_agree_when_ranks_repeat_them_or_steps_go_back(
    trial: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_bulk: None
) -> None:
    """Two unprefixed ranks print every iteration line (repeats: counted, not stored twice);
    lines of one step with other values, steps going back, wrapped and torn lines, a rank that
    starts to report: the bulk path must leave what the per-line path leaves."""
    rng = random.Random(trial)
    base = _megatron_lm_log(tmp_path / "base.log", 400, ranks=rng.choice([1, 2]), seed=trial, stamped=trial % 2 == 1)
    lines = base.read_text().split("\n")
    for _ in range(25):
        at = rng.randrange(2, len(lines))
        line = lines[at]
        choice = rng.randrange(6)
        if choice == 0:
            lines.insert(at, line)  # the same line again
        elif choice == 1 and "iteration" in line:
            lines.insert(at, line.replace("grad norm: ", "grad norm: 1"))  # the same step, another value
        elif choice == 2 and "iteration" in line:
            lines.insert(at, line[: rng.randrange(len(line))])  # wrapped or torn
        elif choice == 3:
            lines.insert(at, lines[max(2, at - rng.randrange(1, 40))])  # an earlier line again (a step back)
        elif choice == 4:
            lines.insert(at, "[Rank 1] (after 100 iterations) memory (MB) | allocated: 2029.2 | max allocated: 5373.4")
        elif choice == 5:
            lines.insert(at, line.replace("  ", " ", 1))  # padding otherwise
    path = tmp_path / "out.log"
    path.write_text("\n".join(lines), encoding="utf-8")
    _assert_same([str(path)], monkeypatch)


def test_a_wrapped_iteration_record_keeps_its_lines_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hard-wrapped iteration record's head waits for its next line: a whole iteration line
    after it is read per line (the parser drops the head there), not in columns."""
    monkeypatch.setattr(catchup, "BULK_SLICE", 512)
    head = ITER_LINE.replace(" 5/", " 45/")[:60]
    texts = [DS_LINE] * 20 + [ITER_LINE, TIMERS_LINE] * 4
    texts += [head, ITER_LINE.replace(" 5/", " 50/"), TIMERS_LINE, " iteration       55/ 1000000"] + [DS_LINE] * 3
    assert _records_to_store(texts, True) == _records_to_store(texts, False)


@pytest.mark.parametrize("stamped", [False, True], ids=["plain", "stamped"])
def test_an_unranked_file_growing_fast_is_read_in_bulk_as_it_arrives(
    stamped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for a Megatron-LM log no rank is named in: its live reads pay in bulk now."""
    text = _megatron_lm_log(tmp_path / "base.log", 2500, stamped=stamped).read_bytes()
    bulk, blocks = _grown(tmp_path / "out.log", text, True, monkeypatch)
    per_line, none = _grown(tmp_path / "out.log", text, False, monkeypatch)
    assert blocks > 50 and none == 0
    assert bulk == per_line


def test_a_stamped_shape_reads_its_time_as_the_per_line_path_does() -> None:
    """Recent Megatron-LM's stamped iteration line: its shape takes the time from the stamp's
    text, which `admit` checks against `line_time` (a shape that read it otherwise is refused)."""
    parsers = new_parsers()
    megatron = next(p for p in parsers if p.name == "megatron")
    values = {"n": 15, "samples": 240, "ms": 5926.4, "lr": 3e-6, "loss": 1.957101, "gn": 2.853}
    line = " [2024-04-06 02:56:58]" + MLM_ITER.format(**values)
    template = megatron.bulk_template(line)
    assert template is not None and template.timed
    offered = [(p, tuple(p.triggers)) for p in parsers if p.triggers]
    assert bulk.admit(template, line, offered, ())
    match = re.fullmatch(template.regex, line)
    assert match is not None
    assert template.time(match.groups()) == line_time(line.lstrip()) == "2024-04-06T02:56:58"
    assert not bulk.admit(dataclasses.replace(template, time_of=lambda stamp: stamp), line, offered, ())
    fraction = line.replace(":58]", ":58.250]")  # (a stamp with a fraction: per line)
    other = megatron.bulk_template(fraction)
    assert other is None or not bulk.admit(other, fraction, offered, ())
