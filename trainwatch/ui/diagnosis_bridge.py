"""A thin call into `trainwatch.diagnosis` (written separately): the dashboard shows its
verdict and findings and computes none of its own. If the module is absent, the status is
"unknown" and there are no findings — never a guess."""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trainwatch.store.store import Store


@dataclass(frozen=True)
class Verdict:
    status: str  # running | stalled | finished | crashed | unknown
    reason: str = ""
    eta_s: float | None = None
    sec_per_step: float | None = None
    # (source, rank, host) -> (state, reason) per rank, when the diagnosis gives them
    ranks: Mapping[tuple[str, int | None, str | None], tuple[str, str]] = field(default_factory=dict)
    # Seconds since the last step as judged at `judged_at` (wall clock): the header ages it
    # itself on its 1 s clock instead of waiting for the next judgement.
    age_s: float | None = None
    judged_at: float | None = None

    def age_at(self, now: float) -> float | None:
        """The last step's age now: the judged age plus the time since the judgement."""
        if self.age_s is None or self.judged_at is None:
            return None
        return self.age_s + max(0.0, now - self.judged_at)


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: str
    message: str
    ranks: tuple[int, ...] = field(default_factory=tuple)
    hosts: tuple[str | None, ...] = field(default_factory=tuple)  # node of each rank, when known


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _module(name: str) -> Any | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class Judge:
    """Judges the run for the dashboard: the run's status computed once for the verdict and the
    findings, and the findings that depend on the records alone reused while the store has not
    changed (an idle run is re-judged every few seconds: time alone can make it stalled)."""

    def __init__(self) -> None:
        self._version = -1
        self._records_only: list[Any] | None = None
        self.recomputed = True  # whether the last call computed the record findings again
        memo = getattr(_module("trainwatch.diagnosis.findings"), "SpikeMemo", None)
        self._memo = memo() if memo is not None else None

    def __call__(self, store: Store, now: float | None) -> tuple[Verdict, list[Finding]]:
        status_fn = getattr(_module("trainwatch.diagnosis.status"), "run_status", None)
        mod = _module("trainwatch.diagnosis.findings")
        findings_fn = getattr(mod, "findings", None)
        records_fn = getattr(mod, "record_findings", None)
        if status_fn is None or findings_fn is None or records_fn is None:
            return run_status(store, now), findings(store, now)
        with store.lock:
            self.recomputed = store.version != self._version or self._records_only is None
            if self.recomputed:
                self._records_only = records_fn(store, self._memo)
                self._version = store.version
            result = status_fn(store, now=now)
            found = findings_fn(store, now=now, status=result, records_only=self._records_only)
        return _verdict(result, now), [_finding(f) for f in found or ()]


def run_status(store: Store, now: float | None) -> Verdict:
    mod = _module("trainwatch.diagnosis.status")
    fn = getattr(mod, "run_status", None) if mod is not None else None
    if fn is None:
        return Verdict("unknown", "diagnosis not available")
    return _verdict(fn(store, now=now), now)


def _verdict(result: Any, now: float | None) -> Verdict:
    if isinstance(result, str):
        return Verdict(result)
    status = _get(result, "status") or _get(result, "state") or "unknown"
    reason = _get(result, "reason") or _get(result, "message") or _get(result, "why") or ""
    ranks = {}
    for r in _get(result, "ranks") or ():
        if _get(r, "source") is not None:
            where = (str(_get(r, "source")), _get(r, "rank"), _get(r, "host"))
            ranks[where] = (str(_get(r, "state", "")), str(_get(r, "reason", "")))
    return Verdict(
        str(status),
        header_reason(str(status), str(reason)),
        _eta(result),
        _finite(_get(result, "sec_per_step")),
        ranks,
        _finite(_get(result, "write_age_s")),
        now,
    )


# What the header already shows beside the reason (step N of M, s/step, the last step's age).
_SHOWN_PART = re.compile(r"^(?:step \d+(?: of \d+)?|\S+ ?\S*/step|last (?:step|write) .*(?: ago|now))$")
_STALL_LEAD = re.compile(r"^no step for .+? after step \d+ ")
_STEP_TAIL = re.compile(r"(?: after step \d+| \(step \d+\))$")


def header_reason(status: str, reason: str) -> str:
    """The reason without what the header prints itself (computed less often, so the two would
    disagree): a running run keeps only the news ("stopped: rank 3 at step 160"), a stalled one
    "no new step (usual 0.93 s/step) and no end marker", a crash its cause without "after step N"."""
    if status == "running":
        return ", ".join(p for p in reason.split(", ") if not _SHOWN_PART.match(p))
    if status == "stalled":
        reason = _STALL_LEAD.sub("no new step ", reason)
    # "...shutting down workers after step 23000": the last step is the header's step N
    return _STEP_TAIL.sub("", reason)


def _finite(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not math.isnan(v) and not math.isinf(v) else None


def _eta(result: Any) -> float | None:
    mod = _module("trainwatch.diagnosis.eta")
    fn = getattr(mod, "eta_s", None) if mod is not None else None
    return _finite(fn(result)) if fn is not None else None


def findings(store: Store, now: float | None) -> list[Finding]:
    mod = _module("trainwatch.diagnosis.findings")
    fn = getattr(mod, "findings", None) if mod is not None else None
    if fn is None:
        return []
    return [_finding(f) for f in fn(store, now=now) or ()]


def _finding(f: Any) -> Finding:
    ranks = _get(f, "ranks") or ()
    return Finding(
        str(_get(f, "kind", "")),
        str(_get(f, "severity", "info")),
        str(_get(f, "message", "")),
        tuple(int(r) for r in ranks if isinstance(r, int)),
        tuple(_get(f, "hosts") or ()),
    )
