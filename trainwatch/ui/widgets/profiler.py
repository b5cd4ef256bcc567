"""Profiler reports printed into the log (Lightning, torch.profiler, DeepSpeed flops
profiler) as sortable tables with a share bar, each under the step breakdown it implies
(diagnosis.profile_phases: data / forward / backward / optimizer / other, and collectives)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Static

from trainwatch.diagnosis.profile_phases import ProfileBreakdown, profile_breakdown
from trainwatch.records import Profile
from trainwatch.store.store import Store
from trainwatch.ui.format import fmt_duration, fmt_num
from trainwatch.ui.widgets.phase_bars import ordered_phases, phase_colour

BAR = 12


def share_column(rows: tuple[Mapping[str, Any], ...]) -> tuple[str, bool] | None:
    """The column a share bar is drawn from: a percentage if printed, else the largest time total."""
    keys = [k for k in rows[0] if k != "name"] if rows else []
    for k in keys:
        if k.endswith("_pct") and ("total" in k or k == "percentage_pct"):
            return k, True
    for k in keys:
        if k.endswith("_pct"):
            return k, True
    totals = [k for k in keys if k.endswith("_s") and "total" in k] or [k for k in keys if k.endswith("_s")]
    if totals:
        return totals[0], False
    return None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def cells_for(profile: Profile) -> tuple[list[str], list[list[Text]], list[list[Any]]]:
    rows = profile.rows
    columns = ["name"] + [k for k in (rows[0] if rows else {}) if k != "name"]
    share = share_column(rows)
    header = [*columns, "share"] if share else columns
    total = 0.0
    if share and not share[1]:
        total = sum(v for r in rows if (v := _num(r.get(share[0]))) is not None and not math.isnan(v))
    out, raw = [], []
    for r in rows:
        line: list[Text] = []
        values: list[Any] = []
        for c in columns:
            v = r.get(c)
            values.append(v)
            if (n := _num(v)) is not None:
                line.append(Text(fmt_num(n), justify="right"))
            else:
                line.append(Text("" if v is None else str(v)))
        if share:
            v = _num(r.get(share[0])) or 0.0
            frac = v / 100 if share[1] else (v / total if total else 0.0)
            frac = max(0.0, min(1.0, frac))
            cells = round(frac * BAR)
            line.append(Text("█" * cells + "░" * (BAR - cells) + f" {100 * frac:5.1f}%", style="cyan"))
            values.append(frac)
        out.append(line)
        raw.append(values)
    return header, out, raw


def _pct(share: float) -> str:
    return f"{100 * share:.1f}%" if share < 0.01 else f"{100 * share:.0f}%"


def breakdown_text(b: ProfileBreakdown, width: int) -> Text:
    """A headline ("73% of the profiled step is data"), one stacked bar and its legend."""
    width = max(20, width)
    names = ordered_phases([p.name for p in b.phases])
    order = {n: i for i, n in enumerate([*names, "other"])}
    phases = sorted(b.phases, key=lambda p: order.get(p.name, len(order)))
    top = max(b.phases, key=lambda p: p.share if p.name != "other" else -1.0)
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"{_pct(top.share)} {b.basis} is {top.name}", style="bold")
    out.append(f"  ({fmt_duration(b.total_s)} in all)", style="dim")
    out.append("\n")
    used = 0
    for p in phases:
        cells = min(width - used, round(p.share * width))
        out.append(("░" if p.name == "other" else "█") * cells, style=phase_colour(names, p.name))
        used += cells
    if used < width:
        out.append(" " * (width - used))
    out.append("\n")
    for p in phases:
        out.append("■ ", style=phase_colour(names, p.name))
        rows = f" ({', '.join(p.rows)})" if p.rows and len(phases) <= 3 else ""
        out.append(f"{p.name} {_pct(p.share)}{rows}  ")
    if b.comm is not None:
        out.append("\n")
        out.append(f"collectives {_pct(b.comm.share)}", style="bold")
        out.append(f" inside the phases above ({', '.join(b.comm.rows)})", style="dim")
    return out


class BreakdownBar(Widget):
    """The implied step breakdown of one profile, drawn at the pane's width."""

    DEFAULT_CSS = """
    BreakdownBar { height: auto; padding: 0 1; margin-bottom: 1; }
    """

    def __init__(self, breakdown: ProfileBreakdown, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.breakdown = breakdown

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return 4 if self.breakdown.comm is not None else 3

    def render(self) -> Text:
        return breakdown_text(self.breakdown, self.content_size.width or 60)


class ProfileTable(DataTable[Text]):
    """One profile report; `o` (or clicking a header) sorts by the next column."""

    BINDINGS = [Binding("o", "sort_next", "Sort")]  # noqa: RUF012

    def __init__(self, profile: Profile, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self.profile = profile
        self.header, self.cells, self.raw = cells_for(profile)
        self.sort_index = -1
        self.sort_reverse = True

    def on_mount(self) -> None:
        for i, c in enumerate(self.header):
            self.add_column(c, key=str(i))
        self._fill(list(range(len(self.cells))))

    def _fill(self, order: list[int]) -> None:
        self.clear()
        for i in order:
            self.add_row(*self.cells[i], key=str(i))

    def sort_by(self, index: int) -> None:
        if index == self.sort_index:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_index, self.sort_reverse = index, index != 0

        def key(i: int) -> tuple[int, Any]:
            v = self.raw[i][index] if index < len(self.raw[i]) else None
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return (0, v)
            return (1, str(v or ""))

        self._fill(sorted(range(len(self.cells)), key=key, reverse=self.sort_reverse))

    def action_sort_next(self) -> None:
        self.sort_by((self.sort_index + 1) % len(self.header))

    def on_data_table_header_selected(self, message: DataTable.HeaderSelected) -> None:
        message.stop()
        self.sort_by(int(str(message.column_key.value)))


class ProfilerPane(VerticalScroll):
    DEFAULT_CSS = """
    ProfilerPane ProfileTable { height: auto; max-height: 24; margin-bottom: 1; }
    ProfilerPane .profile-title { background: $boost; padding: 0 1; }
    """

    def __init__(self, store: Store, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self.count = 0

    def compose(self) -> ComposeResult:
        yield Static(Text("no profiler reports in this log", style="dim"), id="profiler-empty")

    def update_from_store(self) -> None:
        with self.store.lock:
            profiles = list(self.store.profiles)
        if len(profiles) == self.count:
            return
        if not self.count and profiles:
            self.query_one("#profiler-empty").remove()
        for p in profiles[self.count :]:
            title = Text(p.title, style="bold")
            title.append(f"  ({p.kind}, {p.source}:{p.line})", style="dim")
            self.mount(Static(title, classes="profile-title"))
            breakdown = profile_breakdown(p)
            if breakdown is not None:
                self.mount(BreakdownBar(breakdown))
            self.mount(ProfileTable(p))
        self.count = len(profiles)
