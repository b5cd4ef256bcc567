"""The top of the dashboard: what is being watched, and how the run is going, at a glance."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.widgets import Static

from trainwatch.diagnosis.clock import fmt_age, written_at
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.store.store import SourceState
from trainwatch.ui.data import Progress, short_source
from trainwatch.ui.diagnosis_bridge import Finding, Verdict
from trainwatch.ui.format import fmt_num

STATUS_STYLE = {
    "running": "bold black on green",
    "finished": "bold black on blue",
    "stalled": "bold black on yellow",
    "crashed": "bold white on red",
    "unknown": "bold reverse",
}
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
SEVERITY_ICON = {"error": "✖", "warning": "▲", "info": "●"}


def source_line(
    sources: list[SourceState], now_wall: float, ranks: list[int], hosts: Mapping[str, list[int]] | None = None
) -> Text:
    """Sources, formats, follow mode and the age of the last write to each. With `hosts` (node ->
    its ranks, when the log names two or more nodes) the ranks are listed per node."""
    out = Text(no_wrap=True, overflow="ellipsis")
    if not sources:
        return out.append("no sources", style="dim")
    formats: list[str] = []
    for s in sources:
        formats += [f for f in s.formats if f not in formats]
    if len(sources) == 1:
        s = sources[0]
        out.append(short_source(s.source, 48), style="bold")
    else:
        out.append(f"{len(sources)} sources", style="bold")
    out.append("  format: ", style="dim")
    out.append(", ".join(formats) if formats else "not recognised yet")
    if ranks:
        out.append("  ranks: ", style="dim")
        if hosts and len(hosts) > 1:
            out.append(" ".join(f"{host}:{_ranks(rs)}" for host, rs in hosts.items()))
        else:
            out.append(_ranks(ranks))
    modes = sorted({s.follow_mode for s in sources if s.follow_mode})
    out.append("  follow: ", style="dim")
    out.append(", ".join(modes) if modes else "read once")
    # A file's own mtime says when it was written (not when we read it: a 2020 log opened now is
    # not "written 9s ago"); stdin has no mtime, so there the arrival time is all there is.
    written = [(written_at(s), s) for s in sources]
    ages = [(max(0.0, now_wall - w), s) for w, s in written if w]
    if ages:
        newest = min(ages, key=lambda a: a[0])
        out.append("  last write: ", style="dim")
        out.append(fmt_age(newest[0]))
        if len(ages) > 1:
            oldest = max(ages, key=lambda a: a[0])
            out.append(f" (oldest {fmt_age(oldest[0])}: {short_source(oldest[1].source, 24)})", style="dim")
    notes = [s.note for s in sources if s.note]
    if notes:
        out.append("  ⚠ " + notes[0], style="yellow")
    if any(s.catching_up for s in sources):
        out.append("  reading…", style="dim italic")
    return out


def _ranks(ranks: list[int]) -> str:
    if len(ranks) <= 8:
        return ",".join(map(str, ranks))
    return f"{len(ranks)} ({ranks[0]}–{ranks[-1]})"


def progress_line(verdict: Verdict, prog: Progress, now_wall: float | None = None) -> Text:
    """Status, step N of M (from the store, as of its last change), s/step, ETA, the last step's
    age (aged on the 1 s clock from `now_wall`) and the verdict's reason. Every step number and
    age is printed once, in one format, so two parts of the line cannot disagree."""
    out = Text(no_wrap=True, overflow="ellipsis")
    status = verdict.status or "unknown"
    out.append(f" {status.upper()} ", style=STATUS_STYLE.get(status, "bold reverse"))
    out.append("  ")
    if prog.step is None:
        out.append("no steps yet", style="dim")
    else:
        out.append("step ", style="dim")
        out.append(fmt_num(float(prog.step)), style="bold")
        if prog.total:
            out.append(f" of {fmt_num(float(prog.total))}", style="dim")
            frac = prog.fraction or 0.0
            cells = 20
            full = int(frac * cells)
            out.append(" ▕" + "█" * full + "░" * (cells - full) + "▏", style="green")
            out.append(f"{100 * frac:.1f}%")
        per_step = verdict.sec_per_step or prog.step_time_s
        if per_step:
            out.append(f"  {fmt_duration(per_step)}/step")
        eta = verdict.eta_s if verdict.status != "unknown" else prog.eta_s
        if eta is not None and status in ("running", "unknown"):
            out.append("  ETA ", style="dim")
            out.append(fmt_duration(eta), style="bold")
        age = verdict.age_at(now_wall) if now_wall is not None else None
        if age is not None and status in ("running", "stalled"):
            out.append("  last write ", style="dim")
            out.append(fmt_age(age))
    if verdict.reason and status != "unknown":
        out.append("  — " + verdict.reason)
    elif status == "unknown":
        out.append("  (" + (verdict.reason or "no verdict") + ")", style="dim")
    return out


def findings_text(items: list[Finding], limit: int = 3) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    if not items:
        return out
    for i, f in enumerate(items[:limit]):
        if i:
            out.append("\n")
        style = SEVERITY_STYLE.get(f.severity, "")
        out.append(f"{SEVERITY_ICON.get(f.severity, '•')} {f.kind}: ", style=style)
        out.append(f.message)
    if len(items) > limit:
        out.append(f"  (+{len(items) - limit} more, see summary)", style="dim")
    return out


class RunHeader(Static):
    DEFAULT_CSS = """
    RunHeader { height: auto; padding: 0 1; background: $boost; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def show(self, sources: Text, progress: Text, findings: Text) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append_text(progress)
        text.append("\n")
        text.append_text(sources)
        if findings.plain:
            text.append("\n")
            text.append_text(findings)
        last: Text | None = getattr(self, "_last", None)
        if last != text:
            self._last = text
            # Same number of lines (an age ticking, a new step): repaint this widget only; a
            # layout pass re-arranges the whole screen and costs ~3x more (idle CPU).
            same_height = last is not None and last.plain.count("\n") == text.plain.count("\n")
            self.update(text, layout=not same_height)
