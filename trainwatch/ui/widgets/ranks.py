"""Every rank side by side: a DataTable updated cell by cell (never cleared per tick)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from rich.text import Text
from textual.widgets import DataTable

from trainwatch.store.store import RankKey
from trainwatch.ui.data import RankRow
from trainwatch.ui.format import fmt_age, fmt_duration, fmt_num, sparkline

COLUMNS = ("rank", "step", "step time", "throughput", "loss", "updated", "status", "trend")
THROUGHPUT_UNITS = {"samples_per_s": "samples/s", "tokens_per_s": "tok/s", "tflops": "TFLOP/s", "mfu_pct": "% MFU"}


STATE_STYLE = {"running": "green", "finished": "blue", "stalled": "yellow", "crashed": "bold red"}


def row_cells(
    row: RankRow,
    now_mono: float,
    stragglers: set[int],
    states: Mapping[tuple[str, int | None], tuple[str, str]] | None = None,
    trend_w: int = 20,
) -> list[Text]:
    thr = "-"
    if row.throughput:
        name, value = row.throughput
        thr = f"{fmt_num(value)} {THROUGHPUT_UNITS.get(name, name)}"
    age = fmt_age(now_mono - row.last_seen_mono) if row.last_seen_mono is not None else "never"
    state = (states or {}).get((row.key.source, row.key.rank))
    status = Text(state[0], style=STATE_STYLE.get(state[0], "")) if state else Text("")
    if row.key.rank is not None and row.key.rank in stragglers:
        status.append(" straggler" if status.plain else "straggler", style="yellow")
    if row.errors:
        status.append(f" {row.errors} error{'s' if row.errors > 1 else ''}", style="bold red")
    step_time = (
        fmt_duration(row.step_time_s) if row.step_time_s is not None and not math.isnan(row.step_time_s) else "-"
    )
    return [
        Text(row.label),
        Text(fmt_num(float(row.step)) if row.step is not None else "-", justify="right"),
        Text(step_time, justify="right"),
        Text(thr, justify="right"),
        Text(fmt_num(row.loss), justify="right"),
        Text(age, justify="right"),
        status,
        Text(sparkline(row.trend, trend_w), style="cyan"),
    ]


class RanksTable(DataTable[Text]):
    DEFAULT_CSS = """
    RanksTable { height: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self._rows: set[RankKey] = set()

    def on_mount(self) -> None:
        for c in COLUMNS:
            self.add_column(c, key=c)

    def show(
        self,
        rows: list[RankRow],
        now_mono: float,
        stragglers: set[int],
        states: Mapping[tuple[str, int | None], tuple[str, str]] | None = None,
    ) -> None:
        for row in rows:
            key = f"{row.key.source}\x00{row.key.rank}"
            cells = row_cells(row, now_mono, stragglers, states)
            if row.key not in self._rows:
                self._rows.add(row.key)
                self.add_row(*cells, key=key)
                continue
            for col, cell in zip(COLUMNS, cells, strict=False):
                if self.get_cell(key, col) != cell:
                    self.update_cell(key, col, cell)
