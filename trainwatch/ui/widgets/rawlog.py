"""The raw log: the last lines of one source, following until scrolled up (End resumes);
`/` search (matches marked, `n`/`N`), `f` filter, Esc clears both, `[`/`]` switch source.
Lines come from the pipeline's bounded ring of recent sanitized lines, and the status line
says which lines that is; older lines (a jump from the events list) are read by a worker thread."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import var
from textual.widgets import Input, Static

from trainwatch.lines.sanitize import printable
from trainwatch.store.store import SourceState, Store
from trainwatch.ui.actions import bindings
from trainwatch.ui.linereader import read_context
from trainwatch.ui.redraw import NUMBERS
from trainwatch.ui.widgets.logview import LogView

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

Lines = list[tuple[int, str]]
MAX_SHOWN = 10_000  # lines the view holds: the ring's lines plus those that arrived since


def fmt_line(no: int, text: str, mark: bool = False) -> str:
    return f"{'▶' if mark else ' '}{no:>7} │ {text}"


def snapshot_ring(state: SourceState) -> Lines:
    """A copy of the ring the reader thread appends to (under the store's lock: never half-written)."""
    return state.lines_now()


def first_number(lines: Sequence[tuple[int, str]]) -> int:
    """The first line number among `lines` (0 for none): markers are numbered 0."""
    return next((no for no, _ in lines if no), 0)


def last_index(lines: Lines, no: int) -> int | None:
    """Where line `no` is, the last copy of it: after a truncation the ring holds the old
    lines 1..K, the `file truncated` marker, then the new lines 1.. — the file as it is now
    is the last copy."""
    for i in range(len(lines) - 1, -1, -1):
        if lines[i][0] == no:
            return i
    return None


class LogPane(Vertical):
    """The Log tab. `following`, `search` and `filter` are reactives: setting one redraws
    the view and the status line through its `watch_` method, whoever sets it."""

    BINDINGS = bindings("log")
    pace: ClassVar[str] = NUMBERS
    DEFAULT_CSS = """
    LogPane { height: 1fr; }
    LogPane #log-status { height: 1; background: $boost; padding: 0 1; }
    LogPane Log { height: 1fr; }
    LogPane Input { display: none; }
    LogPane Input.visible { display: block; }
    """

    following: var[bool] = var(True, init=False)
    search: var[str] = var("", init=False)
    filter: var[str] = var("", init=False)

    def __init__(self, store: Store, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self.source_index = 0
        self.matches: list[int] = []  # indexes into self.shown
        self.match_at = -1
        self.shown: Lines = []
        self.context_of: int | None = None  # line jumped to, when showing a file excerpt
        self._last_no = 0  # the last line number read (from the ring or the excerpt)
        self._held_from = 0  # the first line number the view holds (0: none)
        self._input_mode = ""
        self._unwritten: list[str] = []  # lines for the Log widget while it is hidden

    def compose(self) -> ComposeResult:
        yield Static(id="log-status")
        yield LogView(max_lines=MAX_SHOWN, auto_scroll=True, id="log")
        yield Input(placeholder="search", id="log-input")

    def on_mount(self) -> None:
        self.watch(self.log_widget, "scroll_y", self._scrolled, init=False)

    @property
    def log_widget(self) -> LogView:
        return self.query_one(LogView)

    def sources(self) -> list[SourceState]:
        with self.store.lock:
            return list(self.store.sources.values())

    def current(self) -> SourceState | None:
        srcs = self.sources()
        if not srcs:
            return None
        self.source_index %= len(srcs)
        return srcs[self.source_index]

    # ------------------------------------------------------------ reactives
    def watch_following(self, following: bool) -> None:
        if self.is_mounted:
            self.log_widget.auto_scroll = following
            self._status()

    def watch_filter(self) -> None:
        """A new filter (or none, after Esc) rebuilds the view from the ring: the lines it hid come back."""
        if not self.is_mounted:
            return
        state = self.current()
        if self.context_of is None and state is not None:
            self._rebuild(snapshot_ring(state))
        else:
            self._status()

    def watch_search(self) -> None:
        if self.is_mounted:
            self._recompute_matches()
            self._show_matches()
            self._status()

    def _scrolled(self, old: float, new: float) -> None:
        """Scrolling up (keys, wheel, scrollbar) pauses following; a resize that clamps the
        view to the end does not. Only End / G resumes."""
        if new < old and not self.log_widget.is_vertical_scroll_end:
            self.following = False
        if not self.following:
            self._status()

    # ----------------------------------------------------------- refreshing
    def redraw(self, view: View) -> bool:
        self.update_from_store()
        return True

    def update_from_store(self) -> None:
        """Append what the pipeline read since the last redraw; when the ring moved past lines
        the view never got (more arrived than it holds), start again from the ring: no gap."""
        state = self.current()
        if state is None or self.context_of is not None:
            self._status()
            return
        last = state.last_line_no()
        if last is not None and last == self._last_no:  # nothing new: no copy of the ring
            self._status()
            return
        ring = snapshot_ring(state)
        if not ring:
            self._status()
            return
        first = first_number(ring)
        if ring[-1][0] < self._last_no or (self._last_no and first > self._last_no + 1):
            self._rebuild(ring)  # file truncated/replaced (numbering restarted), or lines skipped
            return
        new = [(no, t) for no, t in ring if no > self._last_no]
        if not new:
            self._status()
            return
        if not self._held_from:
            self._held_from = first_number(new)
        if self.filter:
            new = [(no, t) for no, t in new if self.filter.lower() in t.lower()]
        self._last_no = ring[-1][0]
        if new:
            start = len(self.shown)
            self.shown += new
            dropped = max(0, len(self.shown) - MAX_SHOWN)
            if dropped:
                self.shown = self.shown[dropped:]
                self._held_from = first_number(self.shown)
            self._extend_matches(start - dropped, dropped)
            self._write([fmt_line(no, t) for no, t in new])
        self._status()

    def _write(self, lines: list[str]) -> None:
        """Append to the Log widget now if it is on screen, else when it is shown: every write
        changes the Log's virtual size, which re-lays out the whole screen even when hidden."""
        self._unwritten += lines
        if len(self._unwritten) > MAX_SHOWN:
            del self._unwritten[:-MAX_SHOWN]
        if self.is_on_screen:
            self._flush()

    def _flush(self) -> None:
        if self._unwritten:
            lines, self._unwritten = self._unwritten, []
            self.log_widget.write_lines(lines)
            self._show_matches()
            self._keep_end()

    def _keep_end(self) -> None:
        """Following: be at the end once the layout is done. `Log` scrolls on write, before its
        scrollbars take their row, which left the newest line just below the view."""
        if self.following:
            self.log_widget.scroll_end(animate=False)

    def on_show(self) -> None:
        self._flush()

    def _rebuild(self, lines: Sequence[tuple[int, str]], mark: int | None = None) -> None:
        held = list(lines)[-MAX_SHOWN:]
        self._held_from = first_number(held)
        if self.filter:
            held = [(no, t) for no, t in held if self.filter.lower() in t.lower() or no == mark]
        self.shown = held
        if self.context_of is None:
            self._last_no = max((no for no, _ in lines), default=self._last_no)
        log = self.log_widget
        self._unwritten = []
        log.clear()
        at = last_index(self.shown, mark) if mark is not None else None
        log.write_lines([fmt_line(no, t, i == at) for i, (no, t) in enumerate(self.shown)], scroll_end=self.following)
        self._keep_end()
        self._recompute_matches()
        self._show_matches()
        self._status()

    def _status(self) -> None:
        if not self.is_mounted:
            return
        state = self.current()
        text = Text(no_wrap=True, overflow="ellipsis")
        n = len(self.sources())
        if state is None:
            text.append("no sources", style="dim")
        else:
            text.append(f"source {self.source_index + 1}/{n}: ", style="dim")
            text.append(state.source, style="bold")  # a Text: a file may be named `[bold]x.log`
        text.append_text(self._extent())
        if self.filter:
            text.append("  filter: ", style="dim")
            text.append(self.filter, style="bold")
            text.append(f" ({len(self.shown):,} lines)")
        if self.search:
            text.append("  search: ", style="dim")
            text.append(self.search, style="bold")
            text.append(f" {self.match_at + 1 if self.match_at >= 0 else 0}/{len(self.matches)}")
        if self.following:
            text.append("  following", style="green")
        else:
            top = self.top_line()
            at = f" at line {top:,}" if top else ""
            text.append(f"  paused{at} — End to follow", style="yellow")
        # Static.update() re-lays out the screen: skip it when nothing changed (idle CPU).
        if text != getattr(self, "_last_status", None):
            self._last_status = text
            self.query_one("#log-status", Static).update(text)

    def _extent(self) -> Text:
        """Which lines of the file the view holds, said whenever that is not the whole file."""
        if self.context_of is not None:
            if not self.shown:
                return Text(f"  reading the file around line {self.context_of:,}", style="yellow")
            lo, hi = self._held_from, max(no for no, _ in self.shown)
            return Text(f"  showing lines {lo:,}-{hi:,} of the file, around line {self.context_of:,}", style="yellow")
        if self._held_from > 1 and self._last_no:
            return Text(
                f"  showing lines {self._held_from:,}-{self._last_no:,} of {self._last_no:,} (older lines: not kept)",
                style="yellow",
            )
        return Text()

    def top_line(self) -> int | None:
        """The number of the line at the top of the view (None when it is empty)."""
        index = int(self.log_widget.scroll_offset.y)
        return self.shown[index][0] if 0 <= index < len(self.shown) and self.shown[index][0] else None

    # ------------------------------------------------------------- actions
    def action_source(self, delta: int) -> None:
        n = len(self.sources())
        if n:
            self.source_index = (self.source_index + delta) % n
            self.context_of = None
            self._last_no = 0
            state = self.current()
            self._rebuild(snapshot_ring(state) if state else [])

    def action_follow(self) -> None:
        self.following = True
        if self.context_of is not None:
            self.context_of = None
            state = self.current()
            self._rebuild(snapshot_ring(state) if state else [])
        self.log_widget.scroll_end(animate=False)
        self._status()

    def action_search(self) -> None:
        self._open_input("search", self.search)

    def action_filter(self) -> None:
        self._open_input("filter", self.filter)

    def _open_input(self, mode: str, value: str) -> None:
        self._input_mode = mode
        box = self.query_one(Input)
        box.placeholder = f"{mode} (Enter to apply, Esc to cancel)"
        box.value = value
        box.add_class("visible")
        box.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        box = self.query_one(Input)
        box.remove_class("visible")
        if self._input_mode == "filter":
            self.filter = message.value
        else:
            self.search = message.value
            self.action_next_match()
        self.log_widget.focus()

    def _recompute_matches(self) -> None:
        needle = self.search.lower()
        self.matches = [i for i, (_, t) in enumerate(self.shown) if needle in t.lower()] if needle else []
        self.match_at = -1

    def _extend_matches(self, start: int, dropped: int) -> None:
        """Keep the matches right when lines arrive (from index `start`) and `dropped` old ones go."""
        if not self.search:
            return
        current = self.matches[self.match_at] - dropped if self.match_at >= 0 else None
        needle = self.search.lower()
        kept = [i - dropped for i in self.matches if i >= dropped]
        self.matches = kept + [i for i in range(max(start, 0), len(self.shown)) if needle in self.shown[i][1].lower()]
        self.match_at = self.matches.index(current) if current is not None and current in self.matches else -1
        self._show_matches()

    def _show_matches(self) -> None:
        current = self.matches[self.match_at] if 0 <= self.match_at < len(self.matches) else None
        self.log_widget.show_matches(self.search, current)

    def action_next_match(self) -> None:
        self._step_match(1)

    def action_prev_match(self) -> None:
        self._step_match(-1)

    def _step_match(self, delta: int) -> None:
        if not self.matches:
            self._status()
            return
        self.match_at = (self.match_at + delta) % len(self.matches)
        self._show_matches()
        self._scroll_to_index(self.matches[self.match_at])
        self._status()

    def _scroll_to_index(self, index: int) -> None:
        self.following = False
        log = self.log_widget
        log.scroll_to(y=max(0, index - log.size.height // 2), animate=False)

    def _scroll_if_paused(self, index: int) -> None:
        # Runs after a refresh: the user may have pressed End (follow) in between, which wins.
        if not self.following:
            self._scroll_to_index(index)

    def action_clear(self) -> None:
        """Esc: closes the input box if open, else clears search and filter (the view is whole
        again) and follows."""
        box = self.query_one(Input)
        if box.has_class("visible"):
            box.remove_class("visible")
            self.log_widget.focus()
            return
        self.search = ""
        self.filter = ""
        self.action_follow()

    # --------------------------------------------------------------- jumps
    def jump(self, source: str, line: int) -> None:
        """Show `line` of `source`: from the ring when it is recent, else read from the file."""
        names = [s.source for s in self.sources()]
        if source in names:
            self.source_index = names.index(source)
        state = self.current()
        self.following = False
        self.log_widget.focus()
        ring = snapshot_ring(state) if state else []
        if ring and (last_index(ring, line) is not None or ring[0][0] <= line <= ring[-1][0]):
            self.context_of = None
            self.set_reactive(LogPane.filter, "")  # no watcher: the rebuild below marks the line
            self._rebuild(ring, mark=line)
            idx = last_index(self.shown, line)
            self.call_after_refresh(self._scroll_if_paused, len(self.shown) - 1 if idx is None else idx)
        elif state is not None and state.path:
            self.context_of = line
            self._status()
            self._read_context(state.path, line)
        self._status()

    @work(thread=True, exclusive=True, group="log-context")
    def _read_context(self, path: str, line: int) -> None:
        try:
            lines = read_context(path, line)
        except OSError as exc:
            lines = [(line, printable(f"cannot read {path}: {exc.strerror}"))]
        self.app.call_from_thread(self._show_context, lines, line)

    def _show_context(self, lines: Lines, line: int) -> None:
        self.context_of = line
        self._rebuild(lines, mark=line)
        idx = next((i for i, (no, _) in enumerate(self.shown) if no == line), 0)
        self.call_after_refresh(self._scroll_if_paused, idx)
