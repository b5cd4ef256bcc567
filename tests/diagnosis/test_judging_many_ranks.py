"""The diagnosis at 256 ranks: what the dashboard re-judges every second or so must give the
same answers as judging from scratch (spike verdicts reused for points whose baseline did not
change, cadences kept per store version, the median of the other ranks without a sort per rank)."""

from __future__ import annotations

import math
import random

import pytest

import trainwatch.diagnosis.findings.numerics as findings_module
from trainwatch.diagnosis.cadence import cadences
from trainwatch.diagnosis.findings import (
    SPIKE_MIN_BASE,
    SPIKE_MIN_REL,
    SPIKE_WINDOW,
    SPIKE_Z,
    SpikeMemo,
    findings,
    record_findings,
)
from trainwatch.diagnosis.findings.numerics import _spike_verdicts, loss_spikes
from trainwatch.diagnosis.status import run_status
from trainwatch.diagnosis.window import mad, median, median_without, recent
from trainwatch.records import Step
from trainwatch.store.series import Series
from trainwatch.store.store import Store


def reference_verdicts(values: list[float]) -> list[tuple[float, float] | None]:
    """The definition, written plainly: point i against the median/MAD of the SPIKE_WINDOW before it."""
    out: list[tuple[float, float] | None] = [None] * len(values)
    for i in range(SPIKE_MIN_BASE, len(values)):
        base = values[max(0, i - SPIKE_WINDOW) : i]
        med = median(base)
        jump = values[i] - med
        if jump <= SPIKE_MIN_REL * abs(med):
            continue
        spread = mad(base, med)
        z = jump / spread if spread > 0 else math.inf
        if z >= SPIKE_Z:
            out[i] = (z, med)
    return out


def loss_walk(rng: random.Random, n: int) -> list[float]:
    """A noisy falling loss with a few spikes, a flat stretch (MAD 0) and repeated values."""
    values = []
    for i in range(n):
        v = round(4.0 / (1 + i / 300) + rng.gauss(0, 0.02), 3)
        if rng.random() < 0.01:
            v *= rng.choice((1.5, 3.0))
        if 400 <= i < 460:
            v = 2.0
        values.append(v)
    return values


def test_sliding_window_verdicts_are_the_definition() -> None:
    rng = random.Random(1)
    for _ in range(20):
        values = loss_walk(rng, rng.randint(0, 700))
        steps = [float(i) for i in range(len(values))]
        assert _spike_verdicts(steps, values, None) == reference_verdicts(values)


def test_verdicts_reused_across_looks_equal_a_fresh_judgement(monkeypatch: pytest.MonkeyPatch) -> None:
    """A series growing a few points between looks, its window sliding once full (as a
    1000-point series does under RECENT + SPIKE_WINDOW): every look equals a fresh one, and
    far fewer points are judged than a fresh look judges."""
    judged = [0]
    real = findings_module._judge_points

    def counting(values: list[float], lo: int, hi: int, out: list) -> None:  # type: ignore[type-arg]
        judged[0] += max(0, hi - lo)
        real(values, lo, hi, out)

    monkeypatch.setattr(findings_module, "_judge_points", counting)
    fresh = 0
    rng = random.Random(2)
    values = loss_walk(rng, 1500)
    series = Series()
    old = None
    i = 0
    while i < len(values):
        for _ in range(rng.randint(1, 40)):
            if i < len(values):
                series.append(float(i * 5), values[i])
                i += 1
        steps, vals = recent(series, 544)
        got = _spike_verdicts(steps, vals, old)
        assert got == reference_verdicts(vals)
        fresh += max(0, len(vals) - SPIKE_MIN_BASE)
        old = (steps, vals, got)
    assert judged[0] < fresh / 5


def test_loss_spike_finding_is_the_same_with_the_dashboards_memo() -> None:
    rng = random.Random(3)
    store, memo = Store(), SpikeMemo()
    walks = {rank: loss_walk(rng, 900) for rank in range(16)}
    for upto in range(50, 901, 50):
        store.add_many(
            Step("rank.log", rank, i, None, i, {"loss": walks[rank][i]})
            for i in range(upto - 50, upto)
            for rank in walks
        )
        assert loss_spikes(store, memo) == loss_spikes(store)
    assert loss_spikes(store) is not None  # the walks have spikes: the comparison is not of two Nones


def test_median_of_the_other_ranks_without_sorting_per_rank() -> None:
    rng = random.Random(4)
    for n in (2, 3, 4, 7, 256):
        steps = [float(rng.choice((100, 100, 105, 110, 95, 400))) for _ in range(n)]
        ordered = sorted(steps)
        for i, s in enumerate(steps):
            assert median_without(ordered, s) == median(steps[:i] + steps[i + 1 :])


def test_cadences_are_computed_again_once_the_store_changes() -> None:
    store = Store()
    store.add_many(Step("a.log", 0, i, f"2024-01-01T00:00:{i:02d}", i, {"loss": 1.0}) for i in range(10))
    first = cadences(store)
    assert cadences(store) is first  # the same store version: kept
    store.add(Step("a.log", 0, 10, "2024-01-01T00:00:30", 10, {"loss": 1.0}))
    again = cadences(store)
    assert again is not first
    assert run_status(store, now=1704067300.0).last_step == 10


def test_findings_from_kept_record_findings_equal_findings_from_scratch() -> None:
    rng = random.Random(5)
    store = Store()
    walk = loss_walk(rng, 600)
    store.add_many(Step("a.log", 0, i, None, i, {"loss": v, "step_time_s": 0.5}) for i, v in enumerate(walk))
    kept = record_findings(store, SpikeMemo())
    assert findings(store, now=0.0, records_only=kept) == findings(store, now=0.0)
    assert any(f.kind == "loss_spike" for f in kept)
