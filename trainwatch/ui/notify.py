"""`open --notify`: the bell and a desktop notification when the run turns crashed or stalled.

The notification is written to the terminal as OSC 9 (`ESC ] 9 ; text BEL`: iTerm2, Windows
Terminal, kitty, wezterm) and OSC 777 (`ESC ] 777 ; notify ; title ; body BEL`: urxvt, foot, VTE);
a terminal that knows neither ignores them. Their text comes from the log (the verdict's reason),
so it is made printable (no ESC, no BEL, no C1 that could end our sequence and start another),
rid of `;` where `;` separates fields, and bounded. When to tell follows `watch`'s rule
(`trainwatch.settling`): a status must hold for the settle time and a flapping run is told once.
The first status seen once the backlog is read is the baseline, not told: the user sees it.
Textual-free: the app gives the function that rings and writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from trainwatch.lines.sanitize import printable
from trainwatch.settling import FLAP_FACTOR, SETTLE_S, StatusSettler

NOTIFIED = ("crashed", "stalled")
TITLE = "trainwatch"
MAX_BODY = 200  # characters of the reason in a notification (desktop popups show a line or two)
MAX_TITLE = 60


def _inert(text: str, limit: int) -> str:
    """Untrusted text made fit for the inside of an OSC string: printable, one line, bounded."""
    text = " ".join(printable(text).split())  # tabs and runs of spaces: one space
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Notification:
    """One desktop notification: the run's new status and why, already made inert."""

    title: str
    body: str

    @classmethod
    def of(cls, status: str, reason: str, source: str = "") -> Notification:
        title = _inert(f"{TITLE}: {status}" + (f" [{source}]" if source else ""), MAX_TITLE)
        return cls(title, _inert(reason or status, MAX_BODY))

    def sequences(self) -> str:
        """OSC 9 then OSC 777, each ended by BEL; `;` separates OSC 777's fields, so not in them."""
        title777, body777 = self.title.replace(";", ","), self.body.replace(";", ",")
        return f"\x1b]9;{self.title}: {self.body}\x07\x1b]777;notify;{title777};{body777}\x07"


class StatusNotifier:
    """Feeds each verdict to the settle/flap rule and sends a notification when the status told
    turns crashed or stalled. `send` rings and writes (the app's), or collects (tests)."""

    def __init__(self, send: Callable[[Notification], None], settle_s: float = SETTLE_S) -> None:
        self.send = send
        self.settler = StatusSettler(settle_s, FLAP_FACTOR * settle_s)
        self.sent: int = 0

    def look(self, status: str, reason: str, source: str, now: float, caught_up: bool) -> Notification | None:
        """One verdict at wall time `now`. caught_up: the backlog is read (before, no baseline
        is taken: a half-read log is not the run's state)."""
        if not caught_up and self.settler.told_status is None:
            return None
        told = self.settler.look(status, now)
        if told is None or not told.change or told.status not in NOTIFIED:
            return None
        note = Notification.of(status, reason, source)
        self.sent += 1
        self.send(note)
        return note
