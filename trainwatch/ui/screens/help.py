"""`?`: every key, generated from the action table with the user's `[keymap]` applied."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from trainwatch.ui.actions import Action, help_rows


def help_table(table: Sequence[Action], keymap: Mapping[str, str]) -> Table:
    """Every key, from the action table, as the user has them."""
    out = Table("where", "key", "what", box=None, highlight=False, show_edge=False)
    for where, key, what in help_rows(table, keymap):
        out.add_row(Text(where, style="dim"), Text(key, style="bold"), Text(what))
    return out


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]  # noqa: RUF012
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 76; max-width: 100%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1; }
    """

    def __init__(self, table: Sequence[Action], keymap: Mapping[str, str]) -> None:
        super().__init__()
        self.table, self.keymap = table, keymap

    def compose(self) -> ComposeResult:
        with VerticalScroll() as v:
            v.border_title = "trainwatch keys"
            v.border_subtitle = "esc to close"
            yield Static(help_table(self.table, self.keymap))
            yield Static(
                Text(
                    "Status and findings come from the log alone: a run is stalled when no step arrived for much "
                    "longer than its usual step interval; crashed when the log ends with a failure or a kill.",
                    style="dim",
                )
            )
