"""Judging a run again and again (the dashboard does, every second or few): the status computed
once for the verdict and the findings, and the findings that depend on the records alone kept
until the store changes (`Store.derived`): an idle run is re-judged only because time alone can
make it stalled."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainwatch.diagnosis.findings import Finding, SpikeMemo, findings, record_findings
from trainwatch.diagnosis.status import RankStatus, RunStatus, run_status
from trainwatch.store.store import RankKey, Store


@dataclass(frozen=True)
class Judgement:
    """A verdict and its findings as of `judged_at` (wall clock), shown as they are."""

    status: RunStatus
    findings: tuple[Finding, ...] = ()
    judged_at: float | None = None

    def age_at(self, now: float) -> float | None:
        """Seconds since the last write, now: the judged age plus the time since the judgement
        (a screen ages it on its own clock instead of waiting for the next judgement)."""
        age = self.status.write_age_s
        if math.isnan(age) or self.judged_at is None:
            return None
        return age + max(0.0, now - self.judged_at)

    def rank_states(self) -> dict[RankKey, RankStatus]:
        """Each rank stream's own state and why."""
        return {r.key: r for r in self.status.ranks}


NOT_JUDGED = Judgement(RunStatus("unknown", "", ()))


def not_judged(reason: str) -> Judgement:
    """No verdict, and why ("diagnosis failed: ValueError")."""
    return Judgement(RunStatus("unknown", reason, (), cause=reason))


class Judge:
    """Judges one store again and again; `recomputed` says whether the last call computed the
    record findings again (the store had changed) or reused them."""

    def __init__(self) -> None:
        self._memo = SpikeMemo()
        self.recomputed = True

    def __call__(self, store: Store, now: float) -> Judgement:
        computed = False

        def compute() -> list[Finding]:
            nonlocal computed
            computed = True
            return record_findings(store, self._memo)

        with store.lock:
            records = store.derived("record_findings", compute)
            status = run_status(store, now=now)
            found = findings(store, now=now, status=status, records_only=records)
        self.recomputed = computed
        return Judgement(status, tuple(found), now)
