"""Events (overflow, nan, oom, nccl_timeout, traceback, signal, crash, checkpoint...) with
severity colours; Enter on one opens the raw log at its line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable, Static

from trainwatch.records import Event
from trainwatch.ui.actions import bindings
from trainwatch.ui.data import events_copy
from trainwatch.ui.redraw import NUMBERS

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

SEVERITY = {"error": "bold red", "warning": "yellow", "info": "cyan"}
# "where" before "message": the message is the long column, cut by the screen edge, never the line number.
COLUMNS = ("time", "step", "rank", "kind", "where", "message")
WHERE_WIDTH = 32
# Python logging's default `LEVEL:dotted.logger.name:` prefix (torch elastic: `WARNING:torch.distributed.
# elastic.multiprocessing.api:Sending process 3664692 closing signal SIGHUP`). Hidden on screen only.
LOGGER_PREFIX = re.compile(r"^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL):[A-Za-z_][\w.]*:\s*")


def display_message(message: str) -> str:
    """The event's message as shown: without a logging prefix that would start every row alike."""
    return LOGGER_PREFIX.sub("", message, count=1) or message


def where_text(source: str, line: int, width: int = WHERE_WIDTH) -> str:
    """`file:LINE` in at most `width` characters: the line number always, the file name
    shortened in the middle when it is long (the directory is in the header and the Log tab)."""
    suffix = f":{line}"
    name = PurePath(source).name or source
    room = max(3, width - len(suffix))
    if len(name) > room:
        head = (room - 1) // 2
        name = name[:head] + "…" + name[len(name) - (room - 1 - head) :]
    return name + suffix


def event_cells(ev: Event) -> list[Text]:
    style = SEVERITY.get(ev.severity, "")
    when = ev.time[11:19] if ev.time and len(ev.time) >= 19 else (ev.time or "")
    return [
        Text(when, style="dim"),
        Text("-" if ev.step is None else str(ev.step), justify="right"),
        Text("-" if ev.rank is None else str(ev.rank), justify="right"),
        Text(ev.kind, style=style),
        Text(where_text(ev.source, ev.line), style="dim"),
        Text(display_message(ev.message)[:300], style="red" if ev.severity == "error" else ""),
    ]


class EventsTable(DataTable[Text]):
    """Every event, appended as the store gets them; Enter posts `Jump` to the event's line."""

    BINDINGS = bindings("events")
    pace: ClassVar[str] = NUMBERS
    DEFAULT_CSS = """
    EventsTable { height: 1fr; }
    """

    @dataclass
    class Jump(Message):
        source: str
        line: int

    @dataclass
    class Added(Message):
        """Events were added: `total` of them so far, `errors` among the last 50."""

        total: int
        errors: int

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self.events: list[Event] = []
        self._seen = 0  # events taken from the store (by count)

    def redraw(self, view: View) -> bool:
        if not view.changed:
            return False
        new, self._seen = events_copy(view.store, self._seen)
        if not new:
            return False
        self.add_events(new)
        errors = sum(1 for e in self.events[-50:] if e.severity == "error")
        self.post_message(self.Added(self._seen, errors))
        return True

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


class RecentEvents(Static):
    """The overview's last events, newest last."""

    pace: ClassVar[str] = NUMBERS

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._seen = 0
        self._recent: list[Event] = []

    def on_mount(self) -> None:
        self.update(recent_events_text([], 1))

    def redraw(self, view: View) -> bool:
        if not view.changed:
            return False
        new, self._seen = events_copy(view.store, self._seen)
        if not new:
            return False
        self._recent = (self._recent + new)[-50:]
        self.update(recent_events_text(self._recent, max(3, self.content_size.height or 8)))
        return True


def recent_events_text(events: list[Event], limit: int) -> Text:
    """A compact list for the overview: newest last, severity coloured."""
    out = Text(no_wrap=True, overflow="ellipsis")
    if not events:
        return out.append("no events so far (overflow, NaN, OOM, NCCL timeout, crash, signal, checkpoint)", style="dim")
    for i, ev in enumerate(events[-limit:]):
        if i:
            out.append("\n")
        out.append(f"{ev.kind:<12} ", style=SEVERITY.get(ev.severity, ""))
        if ev.step is not None:
            out.append(f"step {ev.step} ", style="dim")
        if ev.rank is not None:
            out.append(f"r{ev.rank} ", style="dim")
        out.append(display_message(ev.message))
    return out
