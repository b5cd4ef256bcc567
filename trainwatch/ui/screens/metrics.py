"""`m`: choose which metrics are charted, listed and returned in the dashboard's order (loss
first, then the default charts' order, then the rest by name), never more than are shown."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static
from textual.widgets.selection_list import Selection

from trainwatch.ui.data import DEFAULT_CHARTS, title_for
from trainwatch.ui.screens.dashboard import MAX_CHARTS


def chart_order(names: list[str]) -> list[str]:
    """The default charts' order first (loss, step time, lr ...), then the others by name."""
    rank = {n: i for i, n in enumerate(DEFAULT_CHARTS)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


class MetricPicker(ModalScreen[list[str] | None]):
    """A choice past MAX_CHARTS is refused at once, with a message naming it: the dashboard
    would otherwise drop a chart without a word."""

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
        self.available = chart_order(available)
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        with Vertical() as v:
            v.border_title = "metrics to chart"
            v.border_subtitle = "space: toggle · enter: apply · esc: cancel"
            yield SelectionList[str](
                *(Selection(Text(f"{title_for(n)}  ({n})"), n, n in self.chosen) for n in self.available)
            )
            yield Static(Text(f"at most {MAX_CHARTS} are shown at once", style="dim"), id="picker-note")

    def on_selection_list_selection_toggled(self, event: SelectionList.SelectionToggled[str]) -> None:
        """Undo the toggle that would make one chart too many, and say which one was refused."""
        picker = event.selection_list
        if len(picker.selected) <= MAX_CHARTS:
            self.query_one("#picker-note", Static).update(Text(f"at most {MAX_CHARTS} are shown at once", style="dim"))
            return
        name = event.selection.value
        picker.deselect(name)
        said = f"{title_for(name)} not added: at most {MAX_CHARTS} charts; deselect one first"
        self.query_one("#picker-note", Static).update(Text(said, style="bold yellow"))
        self.notify(said, severity="warning", timeout=4)

    def action_apply(self) -> None:
        picked = self.query_one(SelectionList).selected
        self.dismiss([n for n in self.available if n in picked][:MAX_CHARTS])

    def action_cancel(self) -> None:
        self.dismiss(None)
