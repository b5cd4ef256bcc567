"""The top of the dashboard: what is being watched, and how the run is going, at a glance."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Static

from trainwatch.diagnosis.clock import fmt_age, written_at
from trainwatch.diagnosis.findings import Finding
from trainwatch.diagnosis.judge import Judgement
from trainwatch.diagnosis.progress import Progress, progress_parts
from trainwatch.store.store import SourceState, history_pending
from trainwatch.ui.data import short_source
from trainwatch.ui.format import fmt_num
from trainwatch.ui.widgets.findings import SEVERITY_ICON, SEVERITY_STYLE

STATUS_STYLE = {
    "running": "bold black on green",
    "finished": "bold black on blue",
    "stalled": "bold black on yellow",
    "crashed": "bold white on red",
    "unknown": "bold reverse",
}


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
    history = history_pending(sources)
    if history is not None:
        # The store holds the tail window (the present): the status is judged from it, and what
        # needs the whole run (restart counts, overfitting) is not final until the history is read.
        out.append(f"  history {int(history * 100)}%", style="bold yellow")
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
        # Nothing read yet (a mistyped path waited for): the note is the whole story, on its own line.
        out.append("\n⚠ " if not any(s.lines for s in sources) else "  ⚠ ", style="yellow")
        out.append(notes[0], style="yellow")
    if history_pending(sources) is None and any(s.catching_up for s in sources):
        out.append("  reading…", style="dim italic")
    return out


def _ranks(ranks: list[int]) -> str:
    if len(ranks) <= 8:
        return ",".join(map(str, ranks))
    return f"{len(ranks)} ({ranks[0]}–{ranks[-1]})"


# Where the dashboard shows what diagnosis only counts (it knows no keys).
PROFILER_HINT = "Profiler tab, key 5"


def progress_line(verdict: Judgement, prog: Progress, now_wall: float | None = None) -> Text:
    """Status, step N of M, s/step and ETA (`progress_parts`: the line `check` and `summary`
    print, from the store as of its last change), the last write's age (aged on the 1 s clock
    from `now_wall`) and the verdict's cause. Every step number and age is printed once, in one
    format, so two parts of the line cannot disagree."""
    out = Text(no_wrap=True, overflow="ellipsis")
    status = verdict.status.state
    out.append(f" {status.upper()} ", style=STATUS_STYLE.get(status, "bold reverse"))
    out.append("  ")
    parts = progress_parts(prog, eta=status in ("running", "unknown"), num=lambda n: fmt_num(float(n)))
    if not parts:
        out.append("no steps yet", style="dim")
    for part in parts:
        if part.role == "step":
            out.append(part.label, style="dim")
            out.append(part.value, style="bold")
        elif part.role == "total":
            out.append(part.text, style="dim")
            frac = prog.fraction or 0.0
            cells = 20
            full = int(frac * cells)
            out.append(" ▕" + "█" * full + "░" * (cells - full) + "▏", style="green")
            out.append(f"{100 * frac:.1f}%")
        elif part.role == "budget":
            out.append(part.text, style="dim")
        elif part.role == "pace":
            out.append(f"  {part.text}")
        elif part.role == "eta":
            out.append("  " + part.label, style="dim")
            out.append(part.value, style="bold")
    age = verdict.age_at(now_wall) if now_wall is not None else None
    if parts and age is not None and status in ("running", "stalled"):
        out.append("  last write ", style="dim")
        out.append(fmt_age(age))
    cause = verdict.status.cause
    if status == "unknown":
        said = cause or "no verdict"
        if verdict.status.profiles:
            said += f" ({PROFILER_HINT})"
        out.append(f"  ({said})", style="dim")
    elif cause:
        out.append("  — " + cause)
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
        out.append(f"  (+{len(items) - limit} more, with remedies: Events tab, key 3)", style="dim")
    return out


STATES = ("running", "finished", "stalled", "crashed", "unknown")


class StatusBadge(Static):
    """RUNNING / STALLED / ...: coloured by its class (`-running`, `-stalled`, ...) on the theme's
    variables in app.tcss, so a theme switch (`ctrl+p` -> theme) recolours it."""

    DEFAULT_CSS = """
    StatusBadge { width: auto; height: 1; padding: 0 1; text-style: bold; }
    """

    def set_status(self, status: str) -> None:
        state = status if status in STATES else "unknown"
        for other in STATES:
            self.set_class(other == state, f"-{other}")
        self.update(status.upper())


class RunHeader(Widget):
    """The badge and the rest of the progress line, then sources and findings. `show` takes the
    lines as `progress_line` (which starts with the badge's text), `source_line` and
    `findings_text` build them; the badge's own colour comes from CSS, not from that Text."""

    DEFAULT_CSS = """
    RunHeader { height: auto; padding: 0 1; background: $boost; }
    RunHeader > Horizontal { height: 1; }
    RunHeader Static { text-wrap: nowrap; text-overflow: ellipsis; }
    RunHeader #header-progress { width: 1fr; }
    RunHeader #header-rest { height: auto; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield StatusBadge(id="header-status")
            yield Static(id="header-progress")
        yield Static(id="header-rest")

    def show(self, sources: Text, progress: Text, findings: Text) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append_text(progress)
        text.append("\n")
        text.append_text(sources)
        if findings.plain:
            text.append("\n")
            text.append_text(findings)
        last: Text | None = getattr(self, "_last", None)
        if last == text:
            return
        self._last = text
        badge, rest = split_badge(progress)
        self.query_one(StatusBadge).set_status(badge)
        body = sources.copy()
        if findings.plain:
            body.append("\n")
            body.append_text(findings)
        # Same number of lines (an age ticking, a new step): repaint only; a layout pass
        # re-arranges the whole screen and costs ~3x more (idle CPU).
        same_height = last is not None and last.plain.count("\n") == text.plain.count("\n")
        self.query_one("#header-progress", Static).update(rest, layout=False)
        self.query_one("#header-rest", Static).update(body, layout=not same_height)


def split_badge(progress: Text) -> tuple[str, Text]:
    """`progress_line`'s status word (its first span, ` RUNNING `) and the rest of the line."""
    word = progress.plain.split(" ", 2)[1] if progress.plain.startswith(" ") else ""
    return word.lower(), progress[len(word) + 2 :] if word else progress
