"""Profiler reports printed into the log (Lightning, torch.profiler, DeepSpeed flops
profiler) as sortable tables with a share bar, each under the step breakdown it implies
(diagnosis.profile_phases: data / forward / backward / optimizer / other, and collectives)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Resize
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from trainwatch.diagnosis.phases import ordered_phases
from trainwatch.diagnosis.profile_phases import ProfileBreakdown, profile_breakdown
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.records import Profile
from trainwatch.store.store import Store
from trainwatch.ui.actions import bindings
from trainwatch.ui.format import fmt_num
from trainwatch.ui.redraw import NUMBERS
from trainwatch.ui.widgets.phase_bars import phase_colour

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

BAR = 10
NAME_MIN = 16  # the name column never gets narrower than this (the detail line has the full name)
PAD = 2  # DataTable's cell padding, both sides of a column
_WORDS = {"cpu": "CPU", "cuda": "CUDA", "gpu": "GPU", "flops": "FLOPs", "pct": "%"}


def row_keys(rows: tuple[Mapping[str, Any], ...]) -> list[str]:
    """Every column of the report in print order (Lightning's `Total` row has no mean duration)."""
    keys: dict[str, None] = {}
    for r in sorted(rows, key=len, reverse=True):  # the fullest row has the header's order
        keys.update((k, None) for k in r if k != "name")
    return list(keys)


def share_column(rows: tuple[Mapping[str, Any], ...]) -> tuple[str, bool] | None:
    """The column a share bar is drawn from: a percentage if printed, else the largest time total."""
    keys = row_keys(rows)
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


def column_label(key: str, per_cell_units: bool) -> str:
    """`self_cpu_pct` -> `self CPU %`, `mean_duration_s` -> `mean duration (s)` (`total time`
    when each cell carries its own unit, as torch.profiler prints them)."""
    unit = ""
    if key.endswith("_s"):
        key, unit = key[:-2], "" if per_cell_units else " (s)"
    words = [_WORDS.get(w, w) for w in key.split("_")]
    return " ".join(words) + unit


def fmt_seconds_cell(seconds: float, per_cell_units: bool, decimals: int) -> str:
    """A duration the way the log writes it: torch.profiler gives every cell its own unit
    (`13.980ms`, `140.000us`, `3.916s`); Lightning writes seconds, so a column stays in seconds
    with one number of decimals (never `1.40e-04` above `0.01398`)."""
    if math.isnan(seconds):
        return "nan"
    if not per_cell_units:
        return f"{seconds:.{decimals}f}"
    a = abs(seconds)
    if a >= 1:
        return f"{seconds:.3f}s"
    if a >= 1e-3:
        return f"{seconds * 1e3:.3f}ms"
    return f"{seconds * 1e6:.3f}us"


def _decimals(values: list[float]) -> int:
    """Decimals for a seconds column: the smallest nonzero value keeps two significant digits
    (at most 6 decimals, fewer for long runs)."""
    nonzero = [abs(v) for v in values if v and math.isfinite(v)]
    if not nonzero:
        return 2
    digits = 1 - math.floor(math.log10(min(nonzero)))
    return max(2, min(6, digits))


def middle_ellipsis(text: str, width: int) -> str:
    """Keep both ends (`[Callback]ModelCheckpoint{…}.on_train_epoch_end`): the start says who,
    the end says which hook."""
    if len(text) <= width:
        return text
    if width <= 1:
        return text[:width]
    head = (width - 1) * 2 // 5
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def bar_text(frac: float) -> Text:
    frac = max(0.0, min(1.0, frac))
    cells = round(frac * BAR)
    return Text("█" * cells + "░" * (BAR - cells) + f" {100 * frac:5.1f}%", style="cyan", no_wrap=True)


@dataclass
class ProfileCells:
    """What a profile table shows: headers and cells (the name is shortened at draw time), the raw
    values the columns sort by, and the index of the share column (None without one)."""

    header: list[str]
    names: list[str]
    cells: list[list[Text]]  # every column but the name
    raw: list[list[Any]]  # every column, name first
    share_index: int | None


def cells_for(profile: Profile) -> ProfileCells:
    """Name, share bar, then the numeric columns, then any text columns (input shapes...)."""
    rows = profile.rows
    keys = row_keys(rows)
    numeric = [k for k in keys if any(_num(r.get(k)) is not None for r in rows)]
    text_keys = [k for k in keys if k not in numeric]
    per_cell = profile.kind == "torch_profiler"
    share = share_column(rows)
    total = 0.0
    if share and not share[1]:
        total = sum(v for r in rows if (v := _num(r.get(share[0]))) is not None and not math.isnan(v))
    decimals = {k: _decimals([v for r in rows if (v := _num(r.get(k))) is not None]) for k in numeric}
    header = ["name"] + (["share"] if share else []) + [column_label(k, per_cell) for k in numeric + text_keys]
    out = ProfileCells(header, [], [], [], 1 if share else None)
    for r in rows:
        line: list[Text] = []
        values: list[Any] = [str(r.get("name", ""))]
        if share:
            v = _num(r.get(share[0])) or 0.0
            frac = v / 100 if share[1] else (v / total if total else 0.0)
            line.append(bar_text(frac))
            values.append(frac)
        for k in numeric:
            n = _num(r.get(k))
            values.append(n)
            if n is None:
                cell = ""
            elif k.endswith("_s"):
                cell = fmt_seconds_cell(n, per_cell, decimals[k])
            elif k.endswith("_pct"):
                cell = f"{n:.2f}%"
            else:
                cell = fmt_num(n)
            line.append(Text(cell, justify="right", no_wrap=True))
        for k in text_keys:
            v = r.get(k)
            values.append(v)
            line.append(Text("" if v is None else str(v), no_wrap=True))
        out.names.append(values[0])
        out.cells.append(line)
        out.raw.append(values)
    return out


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


ARROW = 2  # " ▼" on the sorted column's header


class ProfileTable(DataTable[Text]):
    """One profile report, by share of the time (largest first); `o` (or clicking a header) sorts
    by the next column. The name column gets what the numbers leave of the width, shortened in
    the middle; the highlighted row's full name and numbers are in the detail line below."""

    BINDINGS = bindings("profiler")

    @dataclass
    class Detail(Message):
        table: ProfileTable
        text: Text

    def __init__(self, profile: Profile, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self.profile = profile
        self.data = cells_for(profile)
        self.header = self.data.header
        share = self.data.share_index
        self.sort_index = share if share is not None else -1
        self.sort_reverse = True
        self.order = self._sorted() if share is not None else list(range(len(self.data.cells)))
        self.widths = [
            max([len(h)] + [c.cell_len for c in (row[i] for row in self.data.cells)])
            for i, h in enumerate(self.header[1:])
        ]
        self.name_width = -1

    def name_width_for(self, width: int) -> int:
        """What the other columns leave of `width` (at least NAME_MIN, at most the longest name)."""
        others = sum(w + PAD for w in self.widths) + ARROW  # the sorted column's arrow
        longest = max([len(self.header[0])] + [len(n) for n in self.data.names])
        room = width - others - PAD - 2  # - the vertical scrollbar
        return max(NAME_MIN, min(longest, room))

    def on_resize(self, event: Resize) -> None:
        self._layout(event.size.width)

    def on_mount(self) -> None:
        self._layout(self.size.width or self.app.size.width)

    def _layout(self, width: int) -> None:
        name_w = self.name_width_for(width)
        if name_w == self.name_width:
            return
        self.name_width = name_w
        self.clear(columns=True)
        self.add_column(self.header_label(0), width=name_w, key="0")
        for i, w in enumerate(self.widths, start=1):
            room = max(w, len(self.header[i]) + ARROW) if i == self.sort_index else w
            self.add_column(self.header_label(i), width=room, key=str(i))
        self._fill(self.order)

    def header_label(self, index: int) -> Text:
        """A column's header, with ▼ (largest first) or ▲ on the column the rows are sorted by."""
        label = Text(self.header[index])
        if index == self.sort_index:
            label.append(" ▼" if self.sort_reverse else " ▲", style="bold")
        return label

    def _fill(self, order: list[int]) -> None:
        self.order = order
        self.clear()
        for i in order:
            name = Text(middle_ellipsis(self.data.names[i], self.name_width), no_wrap=True)
            self.add_row(name, *self.data.cells[i], key=str(i))

    def _sorted(self) -> list[int]:
        index = self.sort_index

        def key(i: int) -> tuple[int, Any]:
            v = self.data.raw[i][index] if index < len(self.data.raw[i]) else None
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return (0, v)
            return (1, str(v or ""))

        return sorted(range(len(self.data.cells)), key=key, reverse=self.sort_reverse)

    def sort_by(self, index: int) -> None:
        if index == self.sort_index:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_index, self.sort_reverse = index, index != 0
        self.order = self._sorted()
        self.name_width = -1  # the columns again: the arrow moved, and its width with it
        self._layout(self.size.width or self.app.size.width)

    def action_sort_next(self) -> None:
        self.sort_by((self.sort_index + 1) % len(self.header))

    def on_data_table_header_selected(self, message: DataTable.HeaderSelected) -> None:
        message.stop()
        self.sort_by(int(str(message.column_key.value)))

    def detail(self, index: int) -> Text:
        """The full name of row `index` and every number, as one line."""
        out = Text(no_wrap=False)
        out.append(self.data.names[index], style="bold")
        for h, c in zip(self.header[1:], self.data.cells[index], strict=False):
            if c.plain.strip():
                out.append(f"  {h} ", style="dim")
                out.append(c.plain.strip())
        return out

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        message.stop()
        if message.row_key.value is not None:
            self.post_message(self.Detail(self, self.detail(int(message.row_key.value))))


class ProfilerPane(VerticalScroll):
    pace: ClassVar[str] = NUMBERS
    DEFAULT_CSS = """
    ProfilerPane ProfileTable { height: auto; max-height: 24; width: 1fr; }
    ProfilerPane .profile-title { background: $boost; padding: 0 1; }
    ProfilerPane .profile-detail { padding: 0 1; margin-bottom: 1; color: $text-muted; }
    """

    def __init__(self, store: Store, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self.count = 0
        self.details: dict[int, Static] = {}

    def compose(self) -> ComposeResult:
        yield Static(Text("no profiler reports in this log", style="dim"), id="profiler-empty")

    def redraw(self, view: View) -> bool:
        if not view.changed:
            return False
        self.update_from_store()
        return True

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
            table = ProfileTable(p)
            detail = Static(table.detail(table.order[0]) if table.order else Text(), classes="profile-detail")
            self.details[id(table)] = detail
            self.mount(table)
            self.mount(detail)
        if not self.count and profiles and self.has_focus:  # shown before its first report arrived
            self.call_after_refresh(self.focus_first)
        self.count = len(profiles)

    def focus_first(self) -> None:
        """Focus the first table (its `o` Sort shows in the footer), or the pane while it has none."""
        tables = self.query(ProfileTable)
        if tables:
            tables.first().focus()
        else:
            self.focus()

    def on_profile_table_detail(self, message: ProfileTable.Detail) -> None:
        detail = self.details.get(id(message.table))
        if detail is not None:
            detail.update(message.text)
