"""Events (overflow, nan, oom, nccl_timeout, traceback, signal, crash, checkpoint...) with
severity colours; Enter on one opens the raw log at its line."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from trainwatch.records import Event
from trainwatch.ui.data import short_source

SEVERITY = {"error": "bold red", "warning": "yellow", "info": "cyan"}
COLUMNS = ("time", "step", "rank", "kind", "message", "where")


def event_cells(ev: Event) -> list[Text]:
    style = SEVERITY.get(ev.severity, "")
    when = ev.time[11:19] if ev.time and len(ev.time) >= 19 else (ev.time or "")
    return [
        Text(when, style="dim"),
        Text("-" if ev.step is None else str(ev.step), justify="right"),
        Text("-" if ev.rank is None else str(ev.rank), justify="right"),
        Text(ev.kind, style=style),
        Text(ev.message[:300], style="red" if ev.severity == "error" else ""),
        Text(f"{short_source(ev.source, 24)}:{ev.line}", style="dim"),
    ]


class EventsTable(DataTable[Text]):
    DEFAULT_CSS = """
    EventsTable { height: 1fr; }
    """

    @dataclass
    class Jump(Message):
        source: str
        line: int

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self.events: list[Event] = []

    def on_mount(self) -> None:
        for c in COLUMNS:
            self.add_column(c, key=c)

    def add_events(self, events: list[Event]) -> None:
        at_end = self.cursor_row >= len(self.events) - 1
        for ev in events:
            self.add_row(*event_cells(ev), key=str(len(self.events)))
            self.events.append(ev)
        if at_end and events and not self.has_focus:
            self.move_cursor(row=len(self.events) - 1)

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        message.stop()
        index = int(message.row_key.value or 0)
        if 0 <= index < len(self.events):
            ev = self.events[index]
            self.post_message(self.Jump(ev.source, ev.line))


def recent_events_text(events: list[Event], limit: int) -> Text:
    """A compact list for the overview: newest last, severity coloured."""
    out = Text(no_wrap=True, overflow="ellipsis")
    if not events:
        return out.append("no events", style="dim")
    for i, ev in enumerate(events[-limit:]):
        if i:
            out.append("\n")
        out.append(f"{ev.kind:<12} ", style=SEVERITY.get(ev.severity, ""))
        if ev.step is not None:
            out.append(f"step {ev.step} ", style="dim")
        if ev.rank is not None:
            out.append(f"r{ev.rank} ", style="dim")
        out.append(ev.message)
    return out
