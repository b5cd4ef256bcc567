"""The raw log: the last lines of one source, following unless scrolled up; `/` search,
`f` filter, `[`/`]` switch source. Lines come from the pipeline's bounded ring of recent
sanitized lines; older lines (a jump from the events list) are read by a worker thread."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Log, Static

from trainwatch.lines.sanitize import printable
from trainwatch.store.store import SourceState, Store
from trainwatch.ui.actions import bindings
from trainwatch.ui.linereader import read_context
from trainwatch.ui.redraw import NUMBERS

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

Lines = list[tuple[int, str]]


def fmt_line(no: int, text: str, mark: bool = False) -> str:
    return f"{'▶' if mark else ' '}{no:>7} │ {text}"


def snapshot_ring(state: SourceState) -> Lines:
    """A copy of the ring the reader thread appends to (under the store's lock: never half-written)."""
    return state.lines_now()


def last_index(lines: Lines, no: int) -> int | None:
    """Where line `no` is, the last copy of it: after a truncation the ring holds the old
    lines 1..K, the `file truncated` marker, then the new lines 1.. — the file as it is now
    is the last copy."""
    for i in range(len(lines) - 1, -1, -1):
        if lines[i][0] == no:
            return i
    return None


class LogPane(Vertical):
    BINDINGS = bindings("log")
    pace: ClassVar[str] = NUMBERS
    DEFAULT_CSS = """
    LogPane { height: 1fr; }
    LogPane #log-status { height: 1; background: $boost; padding: 0 1; }
    LogPane Log { height: 1fr; }
    LogPane Input { display: none; }
    LogPane Input.visible { display: block; }
    """

    def __init__(self, store: Store, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.store = store
        self.source_index = 0
        self.filter = ""
        self.search = ""
        self.matches: list[int] = []  # indexes into self.shown
        self.match_at = -1
        self.shown: Lines = []
        self.context_of: int | None = None  # line jumped to, when showing a file excerpt
        self.following = True
        self._last_no = 0
        self._input_mode = ""
        self._unwritten: list[str] = []  # lines for the Log widget while it is hidden

    def compose(self) -> ComposeResult:
        yield Static(id="log-status")
        yield Log(max_lines=10_000, auto_scroll=True, id="log")
        yield Input(placeholder="search", id="log-input")

    @property
    def log_widget(self) -> Log:
        return self.query_one(Log)

    def sources(self) -> list[SourceState]:
        with self.store.lock:
            return list(self.store.sources.values())

    def current(self) -> SourceState | None:
        srcs = self.sources()
        if not srcs:
            return None
        self.source_index %= len(srcs)
        return srcs[self.source_index]

    # ----------------------------------------------------------- refreshing
    def redraw(self, view: View) -> bool:
        self.update_from_store()
        return True

    def update_from_store(self) -> None:
        """Append what the pipeline read since the last redraw."""
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
        if ring[-1][0] < self._last_no:  # file truncated/replaced: numbering restarted
            self._rebuild(ring)
            return
        new = [(no, t) for no, t in ring[-2000:] if no > self._last_no]
        if not new:
            self._status()
            return
        if self.filter:
            new = [(no, t) for no, t in new if self.filter.lower() in t.lower()]
        self._last_no = ring[-1][0]
        if new:
            self.shown += new
            if len(self.shown) > 10_000:
                self.shown = self.shown[-10_000:]
            self._write([fmt_line(no, t) for no, t in new])
        self._status()

    def _write(self, lines: list[str]) -> None:
        """Append to the Log widget now if it is on screen, else when it is shown: every write
        changes the Log's virtual size, which re-lays out the whole screen even when hidden."""
        self._unwritten += lines
        if len(self._unwritten) > 10_000:
            del self._unwritten[:-10_000]
        if self.is_on_screen:
            self._flush()

    def _flush(self) -> None:
        if self._unwritten:
            lines, self._unwritten = self._unwritten, []
            self.log_widget.write_lines(lines)

    def on_show(self) -> None:
        self._flush()

    def _rebuild(self, lines: Sequence[tuple[int, str]], mark: int | None = None) -> None:
        if self.filter:
            lines = [(no, t) for no, t in lines if self.filter.lower() in t.lower() or no == mark]
        self.shown = list(lines)[-10_000:]
        if self.context_of is None:
            self._last_no = max((no for no, _ in lines), default=self._last_no)
        log = self.log_widget
        self._unwritten = []
        log.clear()
        at = last_index(self.shown, mark) if mark is not None else None
        log.write_lines([fmt_line(no, t, i == at) for i, (no, t) in enumerate(self.shown)], scroll_end=self.following)
        self._recompute_matches()
        self._status()

    def _status(self) -> None:
        state = self.current()
        text = Text(no_wrap=True, overflow="ellipsis")
        n = len(self.sources())
        if state is None:
            text.append("no sources", style="dim")
        else:
            text.append(f"source {self.source_index + 1}/{n}: ", style="dim")
            text.append(state.source, style="bold")  # a Text: a file may be named `[bold]x.log`
        if self.context_of is not None:
            text.append(f"  showing the file around line {self.context_of}", style="yellow")
        if self.filter:
            text.append("  filter: ", style="dim")
            text.append(self.filter, style="bold")
        if self.search:
            text.append("  search: ", style="dim")
            text.append(self.search, style="bold")
            text.append(f" {self.match_at + 1 if self.match_at >= 0 else 0}/{len(self.matches)}")
        text.append(
            "  following" if self.following else "  paused (End: follow)", style="green" if self.following else "yellow"
        )
        # Static.update() re-lays out the screen: skip it when nothing changed (idle CPU).
        if text != getattr(self, "_last_status", None):
            self._last_status = text
            self.query_one("#log-status", Static).update(text)

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
        self.log_widget.auto_scroll = True
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
        value = message.value
        if self._input_mode == "filter":
            self.filter = value
            state = self.current()
            if self.context_of is None and state is not None:
                self._rebuild(snapshot_ring(state))
        else:
            self.search = value
            self._recompute_matches()
            self.action_next_match()
        self.log_widget.focus()

    def _recompute_matches(self) -> None:
        needle = self.search.lower()
        self.matches = [i for i, (_, t) in enumerate(self.shown) if needle and needle in t.lower()] if needle else []
        self.match_at = -1

    def action_next_match(self) -> None:
        self._step_match(1)

    def action_prev_match(self) -> None:
        self._step_match(-1)

    def _step_match(self, delta: int) -> None:
        if not self.matches:
            self._status()
            return
        self.match_at = (self.match_at + delta) % len(self.matches)
        self._scroll_to_index(self.matches[self.match_at])
        self._status()

    def _scroll_to_index(self, index: int) -> None:
        self.following = False
        log = self.log_widget
        log.auto_scroll = False
        log.scroll_to(y=max(0, index - log.size.height // 2), animate=False)

    def _scroll_if_paused(self, index: int) -> None:
        # Runs after a refresh: the user may have pressed End (follow) in between, which wins.
        if not self.following:
            self._scroll_to_index(index)

    def action_clear(self) -> None:
        box = self.query_one(Input)
        if box.has_class("visible"):
            box.remove_class("visible")
            self.log_widget.focus()
            return
        self.search, self.filter, self.matches = "", "", []
        self.action_follow()

    # --------------------------------------------------------------- jumps
    def jump(self, source: str, line: int) -> None:
        """Show `line` of `source`: from the ring when it is recent, else read from the file."""
        names = [s.source for s in self.sources()]
        if source in names:
            self.source_index = names.index(source)
        state = self.current()
        self.following = False
        self.log_widget.auto_scroll = False
        self.log_widget.focus()
        ring = snapshot_ring(state) if state else []
        if ring and (last_index(ring, line) is not None or ring[0][0] <= line <= ring[-1][0]):
            self.context_of = None
            self.filter = ""
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
