"""The Log tab's line view: Textual's `Log` with the search term marked on every line it
draws and the current match's line lit, so a match is seen, not just counted; in the merged
view, each line's source label styled (a style on the plain text: a label is never markup)."""

from __future__ import annotations

import re
from collections.abc import Callable

from rich.highlighter import Highlighter
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.actions import SkipAction
from textual.strip import Strip
from textual.widgets import Log

GUTTER = " │ "  # between a line's number and its text (see rawlog.fmt_line): matches start after it
MATCH_STYLE = Style(reverse=True, bold=True)  # reverse video: seen with NO_COLOR too
CURRENT_LINE_STYLE = Style(bgcolor="grey23", underline=True)
LABEL_COLORS = ("cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan", "bright_magenta")


def label_style(label: str) -> Style:
    """The same colour for a source's label on every line (bold: seen with NO_COLOR too)."""
    return Style(bold=True, color=LABEL_COLORS[sum(label.encode()) % len(LABEL_COLORS)])


class MatchHighlighter(Highlighter):
    """Marks each occurrence of the search (plain or regex, case-insensitive unless asked) in a
    line's text (not its number), and styles the source label of a merged view's line."""

    def __init__(self) -> None:
        self.pattern: re.Pattern[str] | None = None
        self.label_width = 0  # the merged view's labels: characters 1..label_width of a line

    def set_needle(self, needle: str, regex: bool = False, case: bool = False) -> None:
        try:
            source = needle if regex else re.escape(needle)
            self.pattern = re.compile(source, 0 if case else re.IGNORECASE) if needle else None
        except re.error:
            self.pattern = None

    def highlight(self, text: Text) -> None:
        if self.label_width:
            label = text.plain[1 : 1 + self.label_width]
            text.stylize(label_style(label.strip()), 1, 1 + self.label_width)
        if self.pattern is None:
            return
        plain = text.plain
        gutter = plain.find(GUTTER)
        start = gutter + len(GUTTER) if gutter >= 0 else 0
        for found in self.pattern.finditer(plain, start):
            if found.end() > found.start():
                text.stylize(MATCH_STYLE, found.start(), found.end())


class LogView(Log):
    """A `Log` whose lines show the search matches; `current` is the index of the current match's line.

    Keys move it at once, as in `less`: Textual animates a page over a quarter second, which
    redraws the whole view a dozen times and makes held PageDown lag behind the key."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(highlight=True, **kwargs)  # type: ignore[arg-type]
        self.matcher = MatchHighlighter()
        self.highlighter = self.matcher
        self.current: int | None = None

    def show_matches(self, needle: str, current: int | None, regex: bool = False, case: bool = False) -> None:
        """Mark `needle` and the line at index `current` (None: no current match), then redraw."""
        self.matcher.set_needle(needle, regex, case)
        self.current = current
        self.refresh()

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if self.current is not None and self.scroll_offset.y + y == self.current:
            return Strip(Segment.apply_style(list(strip), post_style=CURRENT_LINE_STYLE), strip.cell_length)
        return strip

    def _at_once(self, scroll: Callable[..., object]) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction()
        scroll(animate=False)

    def action_page_down(self) -> None:
        self._at_once(self.scroll_page_down)

    def action_page_up(self) -> None:
        self._at_once(self.scroll_page_up)

    def action_scroll_down(self) -> None:
        self._at_once(self.scroll_down)

    def action_scroll_up(self) -> None:
        self._at_once(self.scroll_up)
