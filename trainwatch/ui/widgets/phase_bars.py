"""Where a step's time goes: one stacked bar per rank (forward, backward, allreduce,
optimizer, data...), averaged over the last steps, with each phase's share of the step."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.widget import Widget

from trainwatch.diagnosis.phases import OTHER, ordered_phases
from trainwatch.diagnosis.shares import other_seconds
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.ui.data import PhaseRow, phase_rows
from trainwatch.ui.redraw import CHARTS

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

COLOURS = (12, 10, 11, 13, 14, 9, 4, 2, 3, 5, 6)
# Display names: DeepSpeed's `step` timer is the optimizer step, not the "step time" next to it.
LABELS = {"step": "optimizer step", "step_microstep": "optimizer step (micro)"}


def phase_label(name: str) -> str:
    """How a phase is shown (the record keeps the log's name)."""
    return LABELS.get(name, name)


def phase_colour(names: list[str], name: str) -> str:
    if name == OTHER:
        return "color(8)"
    return f"color({COLOURS[names.index(name) % len(COLOURS)]})"


def append_legend(out: Text, items: list[tuple[str, str]], colour_names: list[str], width: int) -> None:
    """`■ label` per phase in its colour, wrapped to `width` (both phase views use it)."""
    used = 0
    for n, label in items:
        size = len(label) + 4
        if used and used + size > width:
            out.append("\n")
            used = 0
        out.append("■ ", style=phase_colour(colour_names, n))
        out.append(label + "  ")
        used += size


def render_phases(rows: list[PhaseRow], width: int, max_rows: int | None = None) -> Text:
    if not rows:
        return Text("no per-phase timings in this log (DeepSpeed wall_clock_breakdown, Megatron timers)", style="dim")
    names: list[str] = []
    for r in rows:
        names += [n for n in r.phases if n not in names]
    names = ordered_phases(names)
    label_w = min(14, max(len(r.label) for r in rows))
    totals = []
    for r in rows:
        s = sum(r.phases.values())
        totals.append(max(s, r.step_time_s or 0.0))
    longest = max(totals) or 1.0
    bar_w = max(10, width - label_w - 10)
    out = Text(no_wrap=True, overflow="ellipsis")
    # Legend: share of step time per phase (first row = first rank, or the only one),
    # wrapped by hand so the widget knows its height.
    # Shares of the printed phases plus `other` (shares.other_seconds), as the Phases tab has them.
    first = rows[0]
    other = other_seconds(first.step_time_s, sum(first.phases.values()))
    base = (sum(first.phases.values()) + other) or 1.0
    items = [(n, f"{phase_label(n)} {100 * first.phases[n] / base:.0f}%") for n in names if n in first.phases]
    if other > 0:
        items.append((OTHER, f"other {100 * other / base:.0f}%"))
    append_legend(out, items, names, width)
    shown = rows if max_rows is None else rows[:max_rows]
    for r, total in zip(shown, totals, strict=False):
        out.append("\n")
        out.append(r.label[:label_w].ljust(label_w) + " ")
        used = 0
        scale = bar_w / longest
        for n in names:
            v = r.phases.get(n)
            if not v:
                continue
            cells = round(v * scale)
            out.append("█" * cells, style=phase_colour(names, n))
            used += cells
        rest = round(total * scale) - used
        if rest > 0:
            out.append("░" * rest, style=phase_colour(names, OTHER))
            used += rest
        out.append(" " * max(0, bar_w - used) + " " + fmt_duration(total))
    if max_rows is not None and len(rows) > max_rows:
        out.append(f"\n+{len(rows) - max_rows} more ranks (Ranks tab)", style="dim")
    return out


class PhaseBars(Widget):
    """The overview's bars, redrawn at the charts' pace (medians of the last steps)."""

    pace: ClassVar[str] = CHARTS
    DEFAULT_CSS = """
    PhaseBars { border: round $panel; height: auto; max-height: 14; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "step time by phase (median of last 20)"
        self._text = Text("no per-phase timings yet", style="dim")
        self._key: tuple[object, ...] | None = None

    def redraw(self, view: View) -> bool:
        w = self.content_size.width or 60
        key = (view.version, w)
        if key == self._key:
            return False
        self._key = key
        rows = phase_rows(view.store)
        text = render_phases(rows, w, max_rows=8)
        if text.plain == self._text.plain:
            return False
        self._text = text
        self.refresh(layout=True)
        return True

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return max(1, len(self._text.plain.splitlines()))

    def render(self) -> Text:
        return self._text
