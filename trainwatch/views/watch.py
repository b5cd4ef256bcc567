"""`trainwatch watch`: what changed in a run's health, as plain data (no terminal, no threads).

Each look takes the verdicts every other view uses — `run_status` (running / stalled / finished /
crashed / unknown; warm-up, evaluation pauses and checkpoint saves are already not stalls there)
and the error and warning `findings` — and `ChangeDetector` turns the sequence of looks into
notices, one per change of status and one per new finding.

When a change is told (the rule the README documents):
- the first look (once the backlog is read) is the baseline, told at once with its findings (the
  user's command runs for it unless it is running or unknown: nothing needs the user yet);
- a new status is told once it has held for the settle time (a traceback printed in the middle of
  training reads "crashed" until the next step; a run finishing its eval reads "running" again);
- a run that goes back and forth is told once: after two changes told within the flap window
  (there and back), a further change must hold for the whole flap window before it is told — if
  the run really stays stalled, that is said at most one window late;
- a finding (its kind and ranks) is told once per watch, when it has held for the settle time;
  the crash and stall findings are the status's own story and are not told again as findings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from trainwatch.diagnosis.findings import Finding, SpikeMemo, findings, record_findings
from trainwatch.diagnosis.status import RunStatus, run_status
from trainwatch.lines.sanitize import printable
from trainwatch.settling import StatusSettler
from trainwatch.store.store import Store

TOLD_SEVERITIES = ("error", "warning")
STATUS_FINDINGS = ("crash", "stall")  # already told by the status line
ENDS = ("finished", "crashed")  # the watch stops once one of these is told (unless --forever)
QUIET_START = ("running", "unknown")  # a watch starting on these prints them without running CMD
MAX_SOURCES_NAMED = 1  # `a.log and 3 more`: an environment variable, not a listing

FindingKey = tuple[str, tuple[int, ...], tuple[str | None, ...]]


@dataclass(frozen=True)
class Judgement:
    """One look at the run: its status and the findings worth telling."""

    status: str
    reason: str
    source: str
    step: int | None
    findings: tuple[tuple[Finding, str], ...] = ()  # each with the source(s) it concerns


@dataclass(frozen=True)
class Notice:
    """One change to tell: a line to print and the environment of the user's command."""

    when: float  # wall clock (epoch seconds)
    status: str  # the run's status (for a finding: the status at that look)
    reason: str  # the status's reason, or the finding's sentence
    source: str
    step: int | None
    finding: str = ""  # the finding's kind; "" for a change of status
    severity: str = ""  # the finding's severity
    unreported: int = 0  # changes that did not hold since the last status told
    calls_hook: bool = True  # False for the starting status when it asks nothing of the user

    def line(self) -> str:
        """`2026-05-01 03:12:09 crashed: rank 1 RuntimeError: boom after step 12 [out.log]`."""
        stamp = datetime.fromtimestamp(self.when).strftime("%Y-%m-%d %H:%M:%S")
        what = f"{self.severity} {self.finding}" if self.finding else self.status
        text = f"{stamp} {what}: {self.reason}"
        if self.source:
            text += f" [{self.source}]"
        if self.unreported:
            brief = "change" if self.unreported == 1 else "changes"
            text += f" ({self.unreported} brief {brief} not told)"
        return printable(text)

    def env(self) -> dict[str, str]:
        """TRAINWATCH_* for the --on-change command: the same text as the line, made printable."""
        return {
            "TRAINWATCH_STATUS": printable(self.status),
            "TRAINWATCH_REASON": printable(self.reason),
            "TRAINWATCH_SOURCE": printable(self.source),
            "TRAINWATCH_STEP": "" if self.step is None else str(self.step),
            "TRAINWATCH_FINDING": printable(self.finding),
        }


def _named(sources: Sequence[str]) -> str:
    unique = list(dict.fromkeys(s for s in sources if s))
    if len(unique) <= MAX_SOURCES_NAMED:
        return ", ".join(unique)
    return f"{', '.join(unique[:MAX_SOURCES_NAMED])} and {len(unique) - MAX_SOURCES_NAMED} more"


def _status_source(status: RunStatus, all_sources: Sequence[str]) -> str:
    """The file a status is about: the failure's, else the ranks' in that state, else every source."""
    if status.failure is not None and status.failure.source:
        return status.failure.source
    return _named([r.source for r in status.ranks if r.state == status.state and r.source] or list(all_sources))


def _finding_source(f: Finding, status: RunStatus, all_sources: Sequence[str]) -> str:
    ranks = set(f.ranks)
    return _named([r.source for r in status.ranks if r.rank in ranks and r.source] or list(all_sources))


def judge(
    store: Store, now: float | None = None, stall_after: float | None = None, memo: SpikeMemo | None = None
) -> Judgement:
    """One look with the existing judgement: `run_status` and `findings` (memo: kept across looks)."""
    status = run_status(store, now, stall_after=stall_after)
    found = findings(store, now, status=status, records_only=record_findings(store, memo))
    with store.lock:
        sources = list(store.sources)
    told = tuple(
        (f, _finding_source(f, status, sources))
        for f in found
        if f.severity in TOLD_SEVERITIES and f.kind not in STATUS_FINDINGS
    )
    return Judgement(status.state, status.reason, _status_source(status, sources), status.last_step, told)


def finding_key(f: Finding) -> FindingKey:
    return (f.kind, f.ranks, f.hosts)


@dataclass
class ChangeDetector:
    """Turns looks into notices by the module's rule (the status part is `StatusSettler`'s).
    Times are wall-clock seconds, passed in."""

    settle_s: float
    flap_s: float
    _status: StatusSettler = field(init=False)
    _told_findings: set[FindingKey] = field(default_factory=set)
    _finding_since: dict[FindingKey, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._status = StatusSettler(self.settle_s, self.flap_s)

    @property
    def told_status(self) -> str | None:
        return self._status.told_status

    def look(self, j: Judgement, now: float, final: bool = False) -> list[Notice]:
        """The notices this look brings. final: the input ended, nothing will change any more:
        what is pending is told now."""
        out: list[Notice] = []
        baseline = self._status.told_status is None
        told = self._status.look(j.status, now, final)
        if told is not None:
            calls = told.change or j.status not in QUIET_START
            out.append(Notice(now, j.status, j.reason, j.source, j.step, unreported=told.unreported, calls_hook=calls))
        present: set[FindingKey] = set()
        for f, source in j.findings:
            key = finding_key(f)
            present.add(key)
            if key in self._told_findings:
                continue
            since = self._finding_since.setdefault(key, now)
            if baseline or final or now - since >= self.settle_s:
                self._told_findings.add(key)
                step = max(f.steps) if f.steps else j.step
                out.append(Notice(now, j.status, f.text, source, step, f.kind, f.severity))
        for key in list(self._finding_since):
            if key not in present:  # must hold without a gap
                del self._finding_since[key]
        return out

    @property
    def ended(self) -> bool:
        """The told status is an end: finished or crashed."""
        return self.told_status in ENDS
