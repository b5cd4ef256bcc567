"""The catch-up fast paths give exactly the records of the general paths.

DeepSpeed timer lines and Megatron iteration/timer lines in their printed form are split by
whole-line regexes (`FAST = True` in each module); every other form takes the general
per-field code. Here both are run over every seed log, real log and sample log, and over
variants of seed 004's lines that must leave the fast form (spacing, long ranks, units, torn
writes): the records must be identical, field for field.
"""

from __future__ import annotations

import json
import math
import random
from array import array
from pathlib import Path

import pytest
from _perf_corpus import DS_LINE, ITER_LINE, TIMERS_LINE, real_logs

from trainwatch.lines.assembler import Line
from trainwatch.parsers.formats import deepspeed, megatron
from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import SourceParser
from trainwatch.pipeline import Pipeline
from trainwatch.records import Record, to_dict
from trainwatch.store.series import Series

LOGS = real_logs("*")

# DS_LINE, ITER_LINE, TIMERS_LINE: real seed-004 lines (_perf_corpus.py).
# DeepSpeed log_dist form: saforem2/vault train-deepspeed-thetaGPU.md (shared/real_logs).
DS_LOG_DIST = (
    "[2022-02-08 17:31:00,366] [INFO] [logging.py:60:log_dist] [Rank 0] rank=0 time (ms) | forward: 6475.32 |"
    " backward: 3422.89 | backward_inner: 3105.27 | backward_allreduce: 317.44 | step: 8489.29"
)


def _dump(records: list[Record]) -> list[str]:
    return [json.dumps(to_dict(r), sort_keys=True) for r in records]


def _run_file(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], tuple[int, ...]]:
    monkeypatch.setattr(deepspeed, "FAST", fast)
    monkeypatch.setattr(megatron, "FAST", fast)
    records: list[Record] = []
    pipeline = Pipeline([str(path)], sink=records.extend)
    pipeline.read_to_end()
    state = pipeline.store.sources[str(path)]
    return _dump(records), (state.lines, state.not_understood, state.duplicate_steps, state.parser_errors)


def _run_lines(texts: list[str], fast: bool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setattr(deepspeed, "FAST", fast)
    monkeypatch.setattr(megatron, "FAST", fast)
    records: list[Record] = []
    parser = SourceParser("out.log", new_parsers(), records.append, path="out.log")
    parser.feed_lines(Line(i + 1, t) for i, t in enumerate(texts))
    parser.finish()
    return _dump(records)


@pytest.mark.slow  # every real log read twice
@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:60])
def test_fast_and_general_paths_agree_on_real_logs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _run_file(path, True, monkeypatch)
    slow = _run_file(path, False, monkeypatch)
    assert fast == slow


def test_the_fast_forms_match_the_real_lines() -> None:
    """Otherwise the comparison above would only compare the general path with itself."""
    m = deepspeed._PRINTED_LINE.match(DS_LINE)
    assert m is not None and deepspeed._PRINTED_BODY.fullmatch(m.group("body"))
    iteration = megatron._ITERATION.search(ITER_LINE)
    assert iteration is not None and megatron._PRINTED_FIELDS.fullmatch(ITER_LINE[iteration.end() :])
    assert megatron._PRINTED_TIMERS.fullmatch(TIMERS_LINE[len("time (ms) |") :])


VARIANTS = [
    DS_LINE,
    DS_LINE.replace("rank=0 ", "rank=0  "),  # two spaces
    DS_LINE.replace("rank=0", "rank=1234567890123456789"),  # beyond 18 digits: not a rank
    DS_LINE + "  ",  # trailing spaces
    DS_LINE.replace("18.83", "1.883e+01"),
    DS_LINE.replace("18.83", "18."),
    DS_LINE.replace("18.83", "18.83ms"),  # not a number
    DS_LINE.replace(" | optimizer_step", "|optimizer_step"),
    DS_LINE.replace("optimizer_step", "optimizer_step2"),
    DS_LINE.replace("rank=0 ", ""),  # unranked, DeepSpeed names only
    DS_LINE.replace("rank=0 ", "").replace("optimizer_step", "grads sync"),  # unranked, not DeepSpeed's
    DS_LOG_DIST,
    DS_LOG_DIST.replace("[Rank 0] rank=0 ", "[Rank 3] "),
    ITER_LINE,
    ITER_LINE.replace("lm loss 1.098990E+01 |", "lm loss 1.0989"),  # torn write
    ITER_LINE.replace("learning rate 7.500E-08", "learning rate: 7.500E-08"),
    ITER_LINE.replace("loss scale 4096.0", "loss scale   4096.0"),
    ITER_LINE.replace("loss scale 4096.0", "loss scale 4096."),
    ITER_LINE.replace("loss scale 4096.0", "loss scale nan"),
    ITER_LINE + " number of skipped iterations:   0 | number of nan iterations:   0 |",
    ITER_LINE + " TFLOPs: 51.23 | samples per second: 12.5 | tokens per gpu per second (tgs): 3000.5 |",
    ITER_LINE + " consumed samples:         2560 | global batch size:   512 |",
    ITER_LINE + " grad norm: 2.345 | params norm: 250.1 | num zeros: 0.0 |",
    ITER_LINE.replace(" iteration", "[2024-04-06 02:59:36] iteration"),
    ITER_LINE.replace(" iteration", " [Rank 2] iteration"),
    ITER_LINE + " x=1 | 2nd loss: 3.0 |",
    TIMERS_LINE,
    TIMERS_LINE.replace("batch generator", "batch  generator"),
    TIMERS_LINE.replace("224.32", "224"),
    TIMERS_LINE.replace("data loader: 222.92", "data loader: 222.92 "),
    TIMERS_LINE.replace("forward", "forward-compute"),
    TIMERS_LINE.replace("forward", "fwd 1.5"),
    "[2024-04-06 02:59:36] " + TIMERS_LINE,
]


@pytest.mark.parametrize("text", VARIANTS)
def test_fast_and_general_paths_agree_on_variants(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each variant after the real lines, so step state (DeepSpeed's counter, Megatron's last
    # iteration) is the one a run has.
    texts = [DS_LINE, ITER_LINE, TIMERS_LINE, text, text.replace("5/", "10/"), DS_LINE]
    assert _run_lines(texts, True, monkeypatch) == _run_lines(texts, False, monkeypatch)


# ------------------------------------------------------------------ series compaction
def _reference_compact(steps: list[float], values: list[float], times: list[float]) -> tuple[list[float], ...]:
    """The contract of `Series._compact`: in each group of four of the older half, keep the
    first minimum and the first maximum (in order), or the group's ends when all are NaN."""
    half = (len(values) // 2) // 4 * 4
    keep: list[int] = []
    for i in range(0, half, 4):
        finite = [j for j in range(i, i + 4) if not math.isnan(values[j])]
        if not finite:
            keep += [i, i + 3]
            continue
        lo = min(finite, key=values.__getitem__)
        hi = max(finite, key=values.__getitem__)
        keep += sorted({lo, hi})
    keep += range(half, len(values))
    return [steps[j] for j in keep], [values[j] for j in keep], [times[j] for j in keep]


def test_series_compaction_keeps_first_min_and_max_of_each_group() -> None:
    rng = random.Random(7)
    choices = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, 2.0]
    for _ in range(200):
        series = Series(64)
        steps: list[float] = []
        values: list[float] = []
        times: list[float] = []
        for k in range(rng.randint(60, 600)):
            v = rng.choice([*choices, rng.random()])
            t = rng.choice([math.nan, float(k)])
            series.append(float(k), v, t)
            steps.append(float(k))
            values.append(v)
            times.append(t)
            if len(values) > series.capacity:
                steps, values, times = (list(x) for x in _reference_compact(steps, values, times))
        assert [repr(v) for v in series.values] == [repr(v) for v in values]
        assert list(series.steps) == steps
        assert [repr(t) for t in series.times] == [repr(t) for t in times]
        assert isinstance(series.values, array)


# ------------------------------------------------------------------ repeated end-of-data
def test_repeated_at_eof_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A followed file that does not change is polled again and again: the polls that find
    nothing new must not emit or change anything (they are skipped)."""
    lines = [
        DS_LINE,
        ITER_LINE,
        "Traceback (most recent call last):",
        '  File "pretrain_gpt2.py", line 5, in <module>',
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ]
    once: list[Record] = []
    parser = SourceParser("out.log", new_parsers(), once.append, path="out.log")
    parser.feed_lines(Line(i + 1, t) for i, t in enumerate(lines))
    parser.at_eof()
    parser.finish()
    polled: list[Record] = []
    parser = SourceParser("out.log", new_parsers(), polled.append, path="out.log")
    parser.feed_lines(Line(i + 1, t) for i, t in enumerate(lines))
    for _ in range(3):
        parser.at_eof()
    changes = parser.changes
    parser.at_eof()
    assert parser.changes == changes
    parser.finish()
    assert _dump(polled) == _dump(once)
    assert any(to_dict(r).get("kind") == "traceback" for r in polled)
