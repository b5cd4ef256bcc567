"""Every finding with its remedy, above the events they come from (the header has room for
the first three messages only, and none for what to do about them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.widgets import Static

from trainwatch.diagnosis.findings import Finding
from trainwatch.store.store import history_pending
from trainwatch.ui.redraw import NUMBERS

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
SEVERITY_ICON = {"error": "✖", "warning": "▲", "info": "●"}


def findings_list_text(items: Sequence[Finding]) -> Text:
    """One finding a line, as the header words it, and its remedy under it ("→ ...")."""
    out = Text()
    for i, f in enumerate(items):
        if i:
            out.append("\n")
        out.append(f"{SEVERITY_ICON.get(f.severity, '•')} {f.kind}: ", style=SEVERITY_STYLE.get(f.severity, ""))
        out.append(f.message)
        if f.remedy:
            out.append("\n  → " + f.remedy, style="dim")
    return out


def findings_text(items: Sequence[Finding], history: float | None) -> Text:
    """The findings, and while the store holds big files' tail windows (`history`: the share of
    the history read) a line saying they are the window's, not the whole run's."""
    text = findings_list_text(items)
    if history is not None and items:
        text.append(
            f"\n(history {int(history * 100)}%: from the last MBs of the log only; restart counts and"
            " trends over the whole run come once the history is read)",
            style="dim italic",
        )
    return text


class FindingsList(Static):
    """The Events tab's findings; hidden while there are none."""

    pace: ClassVar[str] = NUMBERS

    DEFAULT_CSS = """
    FindingsList { height: auto; max-height: 40%; padding: 0 1; border-bottom: solid $panel; }
    """

    def redraw(self, view: View) -> bool:
        with view.store.lock:
            history = history_pending(list(view.store.sources.values()))
        return self.show(view.findings, history)

    def show(self, items: Sequence[Finding], history: float | None = None) -> bool:
        """True if the text changed (`history`: as `findings_text`)."""
        text = findings_text(items, history)
        self.display = bool(items)
        if getattr(self, "_last", None) == text:
            return False
        self._last = text
        # A layout pass re-arranges the whole screen (an idle dashboard's findings change every
        # few seconds: "no new step for 25s"): only when this list's height changes. Off screen
        # (another tab) it is laid out when its tab is shown.
        if not self.is_on_screen:
            self.update(text, layout=False)
            return True
        width = self.content_size.width
        if not width:
            self.update(text)
            return True
        before = self.get_content_height(self.size, self.size, width)
        self.update(text, layout=False)
        if self.get_content_height(self.size, self.size, width) != before:
            self.refresh(layout=True)
        return True
