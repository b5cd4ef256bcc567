"""`?`: every key, in one place."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS: tuple[tuple[str, str, str], ...] = (
    ("everywhere", "q", "quit"),
    ("everywhere", "?", "this help"),
    ("everywhere", "ctrl+p", "command palette (every action)"),
    ("everywhere", "1 2 3 4 5 6", "overview · ranks · events · log · profiler · phases"),
    ("charts", "+ / -", "more / less EMA smoothing of loss"),
    ("charts", "l", "log scale on the y axis"),
    ("charts", "x", "x axis: step / wall time"),
    ("charts", "z", "zoom: last 200 / 1000 / 10000 points / all"),
    ("charts", "m", "pick the metrics to chart"),
    ("events", "enter", "open the raw log at the event's line"),
    ("log", "/", "search; n / N next / previous match"),
    ("log", "f", "filter lines"),
    ("log", "[ ]", "previous / next source"),
    ("log", "end / G", "follow the end again"),
    ("log", "esc", "clear search and filter"),
    ("phases", "[ ]", "previous / next rank"),
    ("phases", "a", "share of the step / seconds per step"),
    ("profiler", "o", "sort by the next column (or click a header)"),
)


def help_table() -> Table:
    table = Table("where", "key", "what", box=None, highlight=False, show_edge=False)
    for where, key, what in KEYS:
        table.add_row(Text(where, style="dim"), Text(key, style="bold"), Text(what))
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]  # noqa: RUF012
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 76; max-width: 100%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll() as v:
            v.border_title = "trainwatch keys"
            v.border_subtitle = "esc to close"
            yield Static(help_table())
            yield Static(
                Text(
                    "Status and findings come from the log alone: a run is stalled when no step arrived for much "
                    "longer than its usual step interval; crashed when the log ends with a failure or a kill.",
                    style="dim",
                )
            )
