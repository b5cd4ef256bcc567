"""The top of the dashboard: what is being watched, and how the run is going, at a glance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Static

from trainwatch.diagnosis.clock import fmt_age, written_at
from trainwatch.diagnosis.findings import Finding
from trainwatch.diagnosis.judge import Judgement
from trainwatch.diagnosis.progress import Progress, progress_parts
from trainwatch.lines.sanitize import printable
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


@dataclass(frozen=True)
class SourcesShown:
    """What the sources line shows that does not move with the clock: taken on news, and only
    aged on the idle 1 s clock (256 sources: a pass over them all each second was most of the
    clock's cost)."""

    head: Text  # sources, history, formats, ranks, follow modes
    newest: float | None  # the latest write time of any source (None: no write time known)
    oldest: tuple[float, str] | None  # the earliest one and its source, with two or more
    tail: Text  # a note, "reading…"


def sources_shown(
    sources: list[SourceState],
    ranks: list[int],
    hosts: Mapping[str, list[int]] | None = None,
    waiting: Sequence[str] = (),
) -> SourcesShown:
    """Sources, formats, follow mode and the last write to each. With `hosts` (node -> its
    ranks, when the log names two or more nodes) the ranks are listed per node. `waiting`: with
    no source yet, what the paths given found (`a/*.log: no file matches this pattern yet`)."""
    out = Text(no_wrap=True, overflow="ellipsis")
    tail = Text(no_wrap=True, overflow="ellipsis")
    if not sources:
        if waiting:  # (said on stderr too, under the dashboard's screen: here is where it is read)
            out.append("waiting: ", style="dim")
            return SourcesShown(out.append(printable("; ".join(waiting)), style="yellow"), None, None, tail)
        return SourcesShown(out.append("no sources", style="dim"), None, None, tail)
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
    written = [(w, s) for w, s in ((written_at(s), s) for s in sources) if w]
    newest = oldest = None
    if written:
        newest = max(w for w, _s in written)
        if len(written) > 1:
            first, source = min(written, key=lambda ws: ws[0])
            oldest = (first, short_source(source.source, 24))
    notes = [s.note for s in sources if s.note]
    if notes:
        # Nothing read yet (a mistyped path waited for): the note is the whole story, on its own line.
        tail.append("\n⚠ " if not any(s.lines for s in sources) else "  ⚠ ", style="yellow")
        tail.append(notes[0], style="yellow")
    if history is None and any(s.catching_up for s in sources):
        tail.append("  reading…", style="dim italic")
    return SourcesShown(out, newest, oldest, tail)


def sources_text(shown: SourcesShown, now_wall: float, *, newest_elsewhere: bool = False) -> Text:
    """The sources line at `now_wall`: the ages of the newest and the oldest write.
    `newest_elsewhere`: the progress line above prints the last write's age; here only a source
    written longer ago than that (a file that stopped) is named."""
    out = shown.head.copy()
    if shown.newest is not None:
        newest = fmt_age(max(0.0, now_wall - shown.newest))
        oldest = None
        if shown.oldest is not None:
            first, source = shown.oldest
            oldest = (fmt_age(max(0.0, now_wall - first)), source)
        if not newest_elsewhere:
            out.append("  last write: ", style="dim")
            out.append(newest)
            if oldest is not None:
                out.append(f" (oldest {oldest[0]}: {oldest[1]})", style="dim")
        elif oldest is not None and oldest[0] != newest:
            out.append(f"  oldest write: {oldest[0]} ({oldest[1]})", style="dim")
    out.append_text(shown.tail)
    return out


def ages_shown(verdict: Judgement, shown: SourcesShown | None, now_wall: float) -> tuple[str, ...]:
    """The ages the header prints at `now_wall` (`progress_line`'s and `sources_text`'s): the
    header is drawn again on the clock only when one of them moves."""
    ages = [fmt_age(verdict.age_at(now_wall))]
    if shown is not None:
        if shown.newest is not None:
            ages.append(fmt_age(max(0.0, now_wall - shown.newest)))
        if shown.oldest is not None:
            ages.append(fmt_age(max(0.0, now_wall - shown.oldest[0])))
    return tuple(ages)


def source_line(
    sources: list[SourceState], now_wall: float, ranks: list[int], hosts: Mapping[str, list[int]] | None = None
) -> Text:
    """Sources, formats, follow mode and the age of the last write to each (`sources_shown`
    aged at `now_wall`)."""
    return sources_text(sources_shown(sources, ranks, hosts), now_wall)


def _ranks(ranks: list[int]) -> str:
    if len(ranks) <= 8:
        return ",".join(map(str, ranks))
    return f"{len(ranks)} ({ranks[0]}–{ranks[-1]})"


# Where the dashboard shows what diagnosis only counts (it knows no keys).
PROFILER_HINT = "Profiler tab, key 5"
WRITE_AGE = "  last write "  # the progress line's age of the last write (the sources line's is then left out)


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
        out.append(WRITE_AGE, style="dim")
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
        # Called each time the header's text changes (every second: the ages): the same word
        # again must not update the Static, whose `update` re-arranges the whole screen (its
        # width is its word's) — a third of an idle dashboard's CPU on 256 files.
        if status == getattr(self, "_status", None):
            return
        self._status = status
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

    _pending: tuple[Text, Text, Text] | None = None  # news that came before the children were mounted

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
        try:
            status = self.query_one(StatusBadge)
        except NoMatches:
            # Mounted, its children not yet (news from a fast first read arrives that early):
            # shown once they are, the latest text only.
            self._pending = (sources, progress, findings)
            self.call_after_refresh(self._show_pending)
            return
        self._pending = None
        self._last = text
        badge, rest = split_badge(progress)
        status.set_status(badge)
        body = sources.copy()
        if findings.plain:
            body.append("\n")
            body.append_text(findings)
        # Same number of lines (an age ticking, a new step): repaint only; a layout pass
        # re-arranges the whole screen and costs ~3x more (idle CPU). Only the part whose text
        # changed is repainted: each repaint is a compositor pass (most of an idle tick).
        same_height = last is not None and last.plain.count("\n") == text.plain.count("\n")
        shown: tuple[Text, Text] | None = getattr(self, "_parts", None)
        if shown is None or shown[0] != rest:
            self.query_one("#header-progress", Static).update(rest, layout=False)
        if shown is None or shown[1] != body or not same_height:
            self.query_one("#header-rest", Static).update(body, layout=not same_height)
        self._parts = (rest, body)

    def _show_pending(self) -> None:
        pending = self._pending
        if pending is not None:
            self.show(*pending)


def split_badge(progress: Text) -> tuple[str, Text]:
    """`progress_line`'s status word (its first span, ` RUNNING `) and the rest of the line."""
    word = progress.plain.split(" ", 2)[1] if progress.plain.startswith(" ") else ""
    return word.lower(), progress[len(word) + 2 :] if word else progress
