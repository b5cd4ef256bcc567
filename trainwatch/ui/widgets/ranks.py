"""Every rank side by side: a DataTable updated cell by cell (never cleared per tick).

In synchronous training every rank prints the same step time (the fast ones wait for the slow
one in the allreduce), so a straggler's row only says *why* it is flagged through the time it
spends outside the collectives: its data loading and its forward/backward compute. Those
columns appear when some rank's log has them.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from trainwatch.diagnosis.clock import fmt_age
from trainwatch.diagnosis.status import RankStatus
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.store.store import RankKey
from trainwatch.ui.data import RankRow, rank_rows
from trainwatch.ui.format import fmt_num, sparkline
from trainwatch.ui.redraw import NUMBERS

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

COLUMNS = ("rank", "step", "step time", "throughput", "loss", "updated", "status", "trend")
# Shown after "step time" when some rank has them: (column, RankRow attribute).
OPTIONAL = (("data", "data_s"), ("compute", "compute_s"))
THROUGHPUT_UNITS = {
    "samples_per_s": "samples/s",
    "running_avg_samples_per_s": "samples/s (running avg)",
    "samples_per_s_per_gpu": "samples/s/GPU",
    "tokens_per_s": "tok/s",
    "tokens_per_s_per_gpu": "tok/s/GPU",
    "tflops": "TFLOP/s",
    "mfu_pct": "% MFU",
}


STATE_STYLE = {"running": "green", "finished": "blue", "stalled": "yellow", "crashed": "bold red"}

# A straggler: a rank number (any node), or (node, rank) when the log names nodes.
StragglerId = int | tuple[str | None, int]


def columns_for(rows: list[RankRow]) -> tuple[str, ...]:
    """The base columns, plus data/compute when some rank has them."""
    extra = tuple(name for name, attr in OPTIONAL if any(getattr(r, attr) is not None for r in rows))
    return COLUMNS[:3] + extra + COLUMNS[3:]


def _seconds(v: float | None) -> str:
    return fmt_duration(v) if v is not None and not math.isnan(v) else "-"


def is_straggler(key: RankKey, stragglers: Collection[StragglerId]) -> bool:
    if key.rank is None:
        return False
    return (key.host, key.rank) in stragglers or key.rank in stragglers


def row_cells(
    row: RankRow,
    now_wall: float,
    stragglers: Collection[StragglerId],
    states: Mapping[RankKey, RankStatus] | None = None,
    trend_w: int = 20,
    columns: tuple[str, ...] = COLUMNS,
) -> list[Text]:
    thr = "-"
    if row.throughput:
        name, value = row.throughput
        thr = f"{fmt_num(value)} {THROUGHPUT_UNITS.get(name, name)}"
    age = fmt_age(now_wall - row.written_wall) if row.written_wall is not None else "never"
    state = (states or {}).get(row.key)
    status = Text(state.state, style=STATE_STYLE.get(state.state, "")) if state else Text("")
    if is_straggler(row.key, stragglers):
        status.append(" straggler" if status.plain else "straggler", style="yellow")
    if row.errors:
        status.append(f" {row.errors} error{'s' if row.errors > 1 else ''}", style="bold red")
    cells = {
        "rank": Text(row.label),
        "step": Text(fmt_num(float(row.step)) if row.step is not None else "-", justify="right"),
        "step time": Text(_seconds(row.step_time_s), justify="right"),
        "data": Text(_seconds(row.data_s), justify="right"),
        "compute": Text(_seconds(row.compute_s), justify="right"),
        "throughput": Text(thr, justify="right"),
        "loss": Text(fmt_num(row.loss), justify="right"),
        "updated": Text(age, justify="right"),
        "status": status,
        "trend": Text(sparkline(row.trend, trend_w), style="cyan"),
    }
    return [cells[c] for c in columns]


class RanksTable(DataTable[Text]):
    """Redrawn with the numbers while its tab is shown (and once before, to have rows)."""

    pace: ClassVar[str] = NUMBERS
    DEFAULT_CSS = """
    RanksTable { height: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self._rows: set[RankKey] = set()
        self._columns: tuple[str, ...] = ()
        self._pending_cursor: str | None = None  # the row key the cursor returns to after a reorder

    def on_mount(self) -> None:
        self._set_columns(COLUMNS)

    def _set_columns(self, columns: tuple[str, ...]) -> None:
        """Rebuild when a column appears (once per run: the first data/phase timings)."""
        self.clear(columns=True)
        self._rows.clear()
        self._columns = columns
        for c in columns:
            self.add_column(c, key=c)

    def _appends_in_order(self, rows: list[RankRow]) -> bool:
        """Rows that are new can go at the end: the ranks the table shows come first."""
        shown = [row.key in self._rows for row in rows]
        return shown == sorted(shown, reverse=True)

    def _reorder(self, rows: list[RankRow]) -> None:
        """Ranks appeared out of order (256 per-rank files read in any order): rebuild the table in
        the rows' order, the cursor staying on its rank."""
        at = self.cursor_row
        current = self.ordered_rows[at].key.value if 0 <= at < self.row_count else None
        self.clear()
        self._rows.clear()
        self._pending_cursor = current

    def redraw(self, view: View) -> bool:
        if view.tab != "ranks" and self.row_count:
            return False  # hidden: brought up to date when the tab is shown
        stragglers = {
            (f.hosts[i] if i < len(f.hosts) else None, r)
            for f in view.findings
            if f.kind == "straggler"
            for i, r in enumerate(f.ranks)
        }
        self.show(rank_rows(view.store), view.now_wall, stragglers, view.verdict.rank_states())
        return True

    def show(
        self,
        rows: list[RankRow],
        now_wall: float,
        stragglers: Collection[StragglerId],
        states: Mapping[RankKey, RankStatus] | None = None,
    ) -> None:
        columns = columns_for(rows)
        if columns != self._columns:
            self._set_columns(columns)
        elif any(row.key not in self._rows for row in rows) and not self._appends_in_order(rows):
            self._reorder(rows)
        for row in rows:
            key = f"{row.key.source}\x00{row.key.host}\x00{row.key.rank}"
            cells = row_cells(row, now_wall, stragglers, states, columns=columns)
            if row.key not in self._rows:
                self._rows.add(row.key)
                self.add_row(*cells, key=key)
                continue
            for col, cell in zip(columns, cells, strict=True):
                if self.get_cell(key, col) != cell:
                    # Measuring a column again costs a pass over all its rows (256 ranks, every
                    # second): only when the new text is wider than the column.
                    wider = cell.cell_len > self.columns[ColumnKey(col)].content_width
                    self.update_cell(key, col, cell, update_width=wider)
        if self._pending_cursor is not None:
            key, self._pending_cursor = self._pending_cursor, None
            if key in self.rows:
                self.move_cursor(row=self.get_row_index(key))
