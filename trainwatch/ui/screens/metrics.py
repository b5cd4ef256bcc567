"""`m`: choose which metrics are charted."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static
from textual.widgets.selection_list import Selection

from trainwatch.ui.data import title_for


class MetricPicker(ModalScreen[list[str] | None]):
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "cancel", "Cancel"),
        Binding("enter", "apply", "Apply", priority=True),
    ]
    DEFAULT_CSS = """
    MetricPicker { align: center middle; }
    MetricPicker > Vertical { width: 60; max-width: 100%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; }
    MetricPicker SelectionList { height: auto; max-height: 30; }
    """

    def __init__(self, available: list[str], chosen: list[str]) -> None:
        super().__init__()
        self.available = available
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        with Vertical() as v:
            v.border_title = "metrics to chart"
            v.border_subtitle = "space: toggle · enter: apply · esc: cancel"
            yield SelectionList[str](
                *(Selection(Text(f"{title_for(n)}  ({n})"), n, n in self.chosen) for n in self.available)
            )
            yield Static(Text("at most 6 are shown at once", style="dim"))

    def action_apply(self) -> None:
        picked = self.query_one(SelectionList).selected
        self.dismiss([n for n in self.available if n in picked])

    def action_cancel(self) -> None:
        self.dismiss(None)
