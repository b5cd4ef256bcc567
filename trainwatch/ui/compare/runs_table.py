"""The Runs tab: one row per run, side by side (status, last step, latest and best loss, pace, ETA,
and how many ranks the run has: its loss is their mean, its chart line the middle of their band)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

from trainwatch.diagnosis.units import fmt_duration
from trainwatch.ui.data.runs import RunRow
from trainwatch.ui.format import fmt_num
from trainwatch.ui.widgets.chart import colour
from trainwatch.ui.widgets.ranks import STATE_STYLE

COLUMNS = ("run", "status", "last step", "loss", "best loss", "pace", "ETA", "ranks")


def _seconds(v: float) -> str:
    return "-" if math.isnan(v) else fmt_duration(v)


def row_cells(index: int, row: RunRow) -> list[Text]:
    """The cells of one run's row; the run's name in its chart colour (log text: never markup)."""
    step = "-" if row.last_step is None else f"{row.last_step:,}"
    if row.last_step is not None and row.total_steps:
        step += f" of {row.total_steps:,}"
    no_loss = math.isnan(row.latest_loss) and math.isnan(row.best_loss)
    return [
        Text("■ ", style=f"color({colour(index)})") + Text(row.label),
        Text(row.state, style=STATE_STYLE.get(row.state, "")),
        Text(step),
        Text("-" if no_loss else fmt_num(row.latest_loss)),  # a diverged run's last loss reads "nan"
        Text("-" if math.isnan(row.best_loss) else fmt_num(row.best_loss)),
        Text("-" if math.isnan(row.pace_s) else f"{_seconds(row.pace_s)}/step"),
        Text(_seconds(row.eta_s)),
        Text(str(row.ranks)),
    ]


class RunsTable(DataTable[Text]):
    """Every run's row, updated cell by cell."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_columns(*COLUMNS)

    def show(self, rows: Sequence[RunRow]) -> None:
        for i, row in enumerate(rows):
            cells = row_cells(i, row)
            key = str(i)
            if key not in self.rows:
                self.add_row(*cells, key=key)
                continue
            for column, cell in zip(self.columns, cells, strict=False):
                if self.get_cell(key, column) != cell:
                    self.update_cell(key, column, cell, update_width=True)  # a live run's cells grow

    def labels(self) -> list[str]:
        """The runs' names as shown (tests)."""
        return [self.get_row_at(i)[0].plain[2:] for i in range(self.row_count)]
