"""How the step's time split evolves over the run: one stacked bar per step range, one rank at a
time, so "allreduce went from 5% to 30% of the step after step 2000" is visible at a glance.

The run is cut into as many equal step ranges as there are columns; each bar is the medians of
its range (diagnosis.shares.phase_trend), which only stacks timers that do not nest. The screen
redraws it at the charts' pace; it draws only while it is on screen (and when shown or resized).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.events import Resize, Show
from textual.widget import Widget

from trainwatch.diagnosis.phases import OTHER, ordered_phases
from trainwatch.diagnosis.shares import TrendBucket, phase_keys, phase_trend
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.diagnosis.window import median
from trainwatch.store.store import RankKey, Store
from trainwatch.ui.actions import bindings
from trainwatch.ui.data import needs_source, rank_label
from trainwatch.ui.redraw import CHARTS
from trainwatch.ui.widgets.chart import short_num
from trainwatch.ui.widgets.phase_bars import append_legend, phase_colour, phase_label

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

EIGHTHS = " ▁▂▃▄▅▆▇█"
Y_LABEL = 8  # "0.32s ┤" (six characters and the axis)


def render_trend(
    names: list[str], buckets: list[TrendBucket | None], width: int, height: int, *, seconds: bool = False
) -> Text:
    """Stacked bars (bottom = first phase), a y axis (share or seconds) and a step axis."""
    shown = [b for b in buckets if b is not None]
    if not shown:
        return Text("no per-phase timings in this log (DeepSpeed wall_clock_breakdown, Megatron timers)", style="dim")
    order = ordered_phases(names)
    if any(OTHER in b.seconds for b in shown):
        order.append(OTHER)
    height = max(2, height)
    plot_w = max(4, width - Y_LABEL)
    top = seconds_top([b.total for b in shown]) if seconds else 1.0
    columns: list[list[tuple[str, str]]] = []
    for c in range(plot_w):
        b = buckets[c * len(buckets) // plot_w]
        columns.append(_column(b, order, top, height, seconds))
    out = Text(no_wrap=True, overflow="crop")
    labels = {0: _y_label(top, seconds), height // 2: _y_label(top / 2, seconds), height - 1: _y_label(0.0, seconds)}
    for row in range(height):  # row 0 is the top line
        label = labels.get(row, "")
        out.append(f"{label[: Y_LABEL - 2]:>{Y_LABEL - 2}} " + ("┤" if label else "│"), style="dim")
        level = height - 1 - row
        for col in columns:
            ch, style = col[level]
            out.append(ch, style=style)
        out.append("\n")
    first, last = shown[0].first_step, shown[-1].last_step
    axis = [" "] * plot_w
    for pos, value in ((0, first), (plot_w // 2, (first + last) / 2), (plot_w - 1, last)):
        text = short_num(value)
        start = max(0, min(plot_w - len(text), pos - (len(text) // 2 if 0 < pos < plot_w - 1 else 0)))
        if pos == plot_w - 1:
            start = plot_w - len(text)
        axis[start : start + len(text)] = list(text)
    out.append(f"{'step':>{Y_LABEL - 2}} └", style="dim")
    out.append("".join(axis), style="dim")
    return out


def seconds_top(totals: list[float]) -> float:
    """The y range in seconds: a warm-up or checkpoint step 40x the others must not flatten the
    rest of the run, so ranges above 2x the 90th percentile are clipped (drawn with ▲)."""
    ordered = sorted(totals)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    top = ordered[-1]
    if p90 > 0 and top > 2 * p90:
        top = 1.25 * p90
    return top or 1.0


def _y_label(value: float, seconds: bool) -> str:
    if seconds:
        return "0" if value == 0 else fmt_duration(value)
    return f"{100 * value:.0f}%"


def _column(b: TrendBucket | None, order: list[str], top: float, height: int, seconds: bool) -> list[tuple[str, str]]:
    """Cells from the bottom: the phase covering most of each cell; the bar's top in eighths."""
    if b is None or b.total <= 0:
        return [("·" if i == 0 else " ", "dim") for i in range(height)]
    scale = height / (top if seconds else b.total)
    spans: list[tuple[str, float, float]] = []
    acc = 0.0
    for name in order:
        v = b.seconds.get(name, 0.0) * scale
        if v > 0:
            spans.append((name, acc, acc + v))
            acc += v
    cells: list[tuple[str, str]] = []
    for r in range(height):
        best, cover = "", 0.0
        filled = 0.0
        for name, lo, hi in spans:
            part = max(0.0, min(hi, r + 1) - max(lo, r))
            filled += part
            if part > cover:
                best, cover = name, part
        if not best:
            cells.append((" ", ""))
            continue
        eighths = 8 if filled >= 1 - 1e-9 else round(filled * 8)
        cells.append((EIGHTHS[eighths], phase_colour(order, best)))
    if acc > height + 1e-9:  # clipped: taller than the y range
        cells[-1] = ("▲", "bold")
    return cells


def trend_legend(names: list[str], buckets: list[TrendBucket | None], width: int, *, seconds: bool = False) -> Text:
    """Per phase: its median over the first quarter of the run -> over the last quarter (share
    of the step, or seconds): one warm-up range does not make the trend."""
    shown = [b for b in buckets if b is not None]
    out = Text(no_wrap=True, overflow="ellipsis")
    if not shown:
        return out
    order = ordered_phases(names)
    if any(OTHER in b.seconds for b in shown):
        order.append(OTHER)
    quarter = max(1, len(shown) // 4)
    early, late = shown[:quarter], shown[-quarter:]

    def value(part: list[TrendBucket], n: str) -> str:
        vs = [b.seconds.get(n, 0.0) if seconds else b.seconds.get(n, 0.0) / b.total for b in part]
        v = median(vs)
        return fmt_duration(v) if seconds else f"{100 * v:.0f}%"

    append_legend(out, [(n, f"{phase_label(n)} {value(early, n)} → {value(late, n)}") for n in order], order, width)
    return out


class PhaseTrend(Widget, can_focus=True):
    """The trend of one rank's phase split; `[` `]` change rank, `a` shares / seconds."""

    BINDINGS = bindings("phases")
    pace: ClassVar[str] = CHARTS
    DEFAULT_CSS = """
    PhaseTrend { border: round $panel; height: 1fr; padding: 0 1; text-wrap: nowrap; }
    PhaseTrend:focus { border: round $accent; }
    """

    def __init__(self, store: Store, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self.rank_index = 0
        self.seconds = False
        self.keys: list[RankKey] = []
        self._key: tuple[object, ...] | None = None
        self._text = Text("no per-phase timings yet", style="dim")
        self.border_title = "phase split over the run"

    def on_show(self, event: Show) -> None:
        self.call_after_refresh(self.update_from_store)

    def on_resize(self, event: Resize) -> None:
        self.update_from_store()

    def redraw(self, view: View) -> bool:
        return self.update_from_store()

    def update_from_store(self) -> bool:
        """Redraw if the store, the size or the options changed, and only while visible."""
        w, h = self.content_size.width, self.content_size.height
        if w <= 0 or h <= 0 or not self.is_on_screen:
            return False
        key = (self.store.version, w, h, self.rank_index, self.seconds)
        if key == self._key:
            return False
        self._key = key
        self.keys = phase_keys(self.store)
        if not self.keys:
            self._text = Text("no per-phase timings in this log (DeepSpeed wall_clock_breakdown, Megatron timers)")
            self._text.stylize("dim")
            self.refresh()
            return True
        self.rank_index %= len(self.keys)
        rank = self.keys[self.rank_index]
        names, buckets = phase_trend(self.store, rank, max(4, w - Y_LABEL))
        legend = trend_legend(names, buckets, w, seconds=self.seconds)
        legend_h = len(legend.plain.splitlines()) or 1
        head = self._head(rank, buckets)
        plot = render_trend(names, buckets, w, h - legend_h - 2, seconds=self.seconds)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append_text(head)
        text.append("\n")
        text.append_text(plot)
        text.append("\n")
        text.append_text(legend)
        self._text = text
        self.refresh()
        return True

    def _head(self, rank: RankKey, buckets: list[TrendBucket | None]) -> Text:
        hosts = len({k.host for k in self.keys if k.host}) > 1
        shown = [b for b in buckets if b is not None]
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append(rank_label(rank, needs_source(self.keys, hosts), hosts), style="bold")
        if len(self.keys) > 1:
            out.append(f" ({self.rank_index + 1}/{len(self.keys)}, [ ] other ranks)", style="dim")
        what = "seconds per step" if self.seconds else "share of the step"
        out.append(f"  {what}", style="bold")
        if shown:
            span = (shown[-1].last_step - shown[0].first_step) / max(1, len(buckets))
            out.append(f", median of each ~{short_num(max(1.0, span))} steps", style="dim")
        out.append("  (a: " + ("shares" if self.seconds else "seconds") + ")", style="dim")
        return out

    def action_rank(self, delta: int) -> None:
        if self.keys:
            self.rank_index = (self.rank_index + delta) % len(self.keys)
        self.update_from_store()

    def action_seconds(self) -> None:
        self.seconds = not self.seconds
        self.update_from_store()

    def render(self) -> Text:
        return self._text
