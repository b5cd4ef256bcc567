"""The raw log: the last lines of one source, following until scrolled up (End resumes);
`/` search (matches marked, `n`/`N`), `f` filter, Esc clears both (and cancels a scan),
`[`/`]` switch source, `Home`/`g` line 1, `e`/`E` the next/previous event line, `R`/`C` regex and
case for search, `M` the merged view of every file of the run by timestamp (ui/merged.py): paged
through windows of the merge; search and filter there cover the lines read.

Following shows the pipeline's bounded ring of recent sanitized lines. A file source also has
the reader's sparse line index: `Home`, a jump, scrolling past the window's edge and `n`/`N`
read only the window they need from the file (a worker thread seeks to the nearest indexed
line), and search and filter scan the whole file in a worker, with progress. A stream (stdin,
a FIFO) cannot be read again: it has the ring only, and the status line says which lines."""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import var
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from trainwatch.lines.sanitize import printable
from trainwatch.sources.line_index import LineIndex
from trainwatch.store.store import SourceState, Store
from trainwatch.ui import merged
from trainwatch.ui.actions import bindings
from trainwatch.ui.linereader import Needle, Scan, read_lines, scan
from trainwatch.ui.redraw import NUMBERS
from trainwatch.ui.widgets.logview import LogView

if TYPE_CHECKING:
    from trainwatch.ui.widgets.panel import View

Lines = list[tuple[int, str]]
MAX_SHOWN = 10_000  # lines the view holds: the ring's lines plus those that arrived since
WINDOW = 2_000  # lines of a file read at a time when paging through it


def fmt_line(no: int, text: str, mark: bool = False) -> str:
    return f"{'▶' if mark else ' '}{no:>7} │ {text}"


def fmt_merged(label: str, width: int, no: int, text: str) -> str:
    """A merged view's line: its source's label (styled by LogView), its number in that file."""
    return f" {label:<{width}} {no:>7} │ {text}"


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
    regex: var[bool] = var(False, init=False)  # search options (R / C)
    case: var[bool] = var(False, init=False)

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
        self.hits: array[int] | None = None  # a whole-file search's matching line numbers
        self.hit_count = 0  # matching lines of the file (hits keeps at most linereader.MAX_HITS)
        self.hit_at = -1
        self.filter_count = 0  # a whole-file filter's matching lines
        self.scanning = ""  # "searching" / "filtering" while a scan runs
        self.scan_done = 0.0  # its progress, 0..1
        self._loading = False  # a window of the file is being read
        self.marked: int | None = None  # the line the last jump went to (`e`/`E` go on from it)
        self._epoch = 0  # the line index's epoch when the file was last read
        self.merge: list[merged.File] | None = None  # the merged view's files (None: one source)
        self.window: merged.Window | None = None  # the merged view's lines read
        self.merged_lines: list[merged.Line] = []  # the lines it shows (the window, filtered)

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
        """A new filter scans the whole file when there is one; none (after Esc) rebuilds the
        view from the ring: the lines it hid come back."""
        if not self.is_mounted:
            return
        if self.merge is not None:
            if self.window is not None:
                self._show_merge(self.window, None)
            return
        state = self.current()
        file = self.file_of(state)
        if self.filter and file is not None:
            self.following = False
            self._scan(file[0], self.filter, keep=True)
            return
        if self.context_of is None and state is not None:
            self._rebuild(snapshot_ring(state))
        else:
            self._status()

    def watch_search(self) -> None:
        """A new search scans the whole file when there is one, else the lines the view holds."""
        if self.is_mounted:
            self.hits, self.hit_count, self.hit_at = None, 0, -1
            self._recompute_matches()
            self._show_matches()
            file = self.file_of(self.current())
            if self.search and file is not None and self.merge is None:
                self._scan(file[0], self.search, keep=False)
            elif self.scanning == "searching":
                self.workers.cancel_group(self, "log-search")
                self.scanning = ""
            self._status()

    def watch_regex(self) -> None:
        self._options_changed()

    def watch_case(self) -> None:
        self._options_changed()

    def _options_changed(self) -> None:
        """A search option toggled: the search runs again with it (the input box says them)."""
        if not self.is_mounted:
            return
        self.query_one(Input).placeholder = self._placeholder(self._input_mode or "search")
        if self.search:
            self.watch_search()
            if self.merge is not None or self.file_of(self.current()) is None:
                self.action_next_match()
        self._status()

    def needle(self) -> Needle:
        return Needle(self.search, regex=self.regex, case=self.case)

    def _scrolled(self, old: float, new: float) -> None:
        """Scrolling up (keys, wheel, scrollbar) pauses following; a resize that clamps the
        view to the end does not. Only End / G resumes."""
        if new < old and not self.log_widget.is_vertical_scroll_end:
            self.following = False
        if not self.following:
            self._page_if_at_edge(new < old)
            self._status()

    def _page_if_at_edge(self, up: bool) -> None:
        """Paging through a file window: at its top or bottom edge, read the adjoining window."""
        if self.merge is not None:
            self._page_merge(up)
            return
        state = self.current()
        file = self.file_of(state)
        if file is None or self.filter or self._loading or not self.shown:
            return
        log = self.log_widget
        top = self.top_line()
        if top is None:
            return
        if up and log.scroll_offset.y == 0 and self._held_from > 1:  # the ring's top too: older lines
            self._load(max(1, self._held_from - WINDOW // 2), top, mark=self.context_of)
        elif self.context_of is None:
            return  # the ring's end: End follows
        elif not up and log.is_vertical_scroll_end and self.shown[-1][0] < file[1].lines:
            self._load(max(1, self.shown[-1][0] - WINDOW // 2), top, mark=self.context_of)

    # ----------------------------------------------------------- refreshing
    def redraw(self, view: View) -> bool:
        self.update_from_store()
        return True

    def update_from_store(self) -> None:
        """Append what the pipeline read since the last redraw; when the ring moved past lines
        the view never got (more arrived than it holds), start again from the ring: no gap."""
        if self.merge is not None:
            self._status()  # a window of the merge: End reads its end again
            return
        state = self.current()
        file = self.file_of(state)
        if file is not None and self.context_of is not None and file[1].epoch != self._epoch:
            self.action_follow()  # the file was truncated or replaced: the lines read from it are gone
            return
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

    def _rebuild(self, lines: Sequence[tuple[int, str]], mark: int | None = None, keep_search: bool = False) -> None:
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
        if keep_search and self.hits is not None:
            self.matches = []
        else:
            self.hits, self.hit_count, self.hit_at = None, 0, -1
            self._recompute_matches()
        self._show_matches()
        self._status()

    def _status(self) -> None:
        if not self.is_mounted:
            return
        state = self.current()
        text = Text(no_wrap=True, overflow="ellipsis")
        n = len(self.sources())
        if self.merge is not None:
            text.append(f"merged: {len(self.merge)} files by time", style="bold")
        elif state is None:
            text.append("no sources", style="dim")
        else:
            text.append(f"source {self.source_index + 1}/{n}: ", style="dim")
            text.append(state.source, style="bold")  # a Text: a file may be named `[bold]x.log`
        if self.filter:
            text.append("  filter: ", style="dim")
            text.append(self.filter, style="bold")
            if self.scanning == "filtering":
                text.append(f" filtering {self.scan_done:.0%} (Esc cancels)", style="yellow")
            elif self.merge is not None:
                text.append(f" ({len(self.shown):,} of the lines read)")
            elif self.context_of is not None and self.file_of(state) is not None:
                more = f", first {len(self.shown):,} shown" if self.filter_count > len(self.shown) else ""
                text.append(f" ({self.filter_count:,} lines of the file{more})")
            else:
                text.append(f" ({len(self.shown):,} lines)")
        if self.search:
            text.append("  search: ", style="dim")
            text.append(self.search, style="bold")
            options = [o for o, on in (("regex", self.regex), ("case", self.case)) if on]
            if options:
                text.append(f" [{', '.join(options)}]", style="dim")
            if self.scanning == "searching":
                text.append(f" searching {self.scan_done:.0%} (Esc cancels)", style="yellow")
            elif self.hits is not None:
                text.append(f" {self.hit_at + 1 if self.hit_at >= 0 else 0}/{self.hit_count:,} in the file")
            else:
                text.append(f" {self.match_at + 1 if self.match_at >= 0 else 0}/{len(self.matches)}")
                if self.merge is not None:
                    text.append(" in the lines read (the whole file: one source, M)", style="dim")
        # Which lines are held comes after the search's count: a long line is cut at its end.
        text.append_text(self._merge_status() if self.merge is not None else self._extent())
        if self.merge is not None:
            text.append("  Home/End: first/last · M: one source", style="dim")
        elif self.following:
            text.append("  following", style="green")
        else:
            top = self.top_line()
            at = f" at line {top:,}" if top else ""
            text.append(f"  paused{at} — End to follow", style="yellow")
        # Static.update() re-lays out the screen: skip it when nothing changed (idle CPU).
        if text != getattr(self, "_last_status", None):
            self._last_status = text
            self.query_one("#log-status", Static).update(text, layout=False)  # (one line, its height fixed)

    def _merge_status(self) -> Text:
        """What the merged view shows: how many files, which lines of the merge, where it is."""
        files = self.merge or []
        text = Text()
        window = self.window
        if window is None or self._loading:
            text.append("  reading…", style="yellow")
            return text
        at_start = all(no <= 1 for no in window.start)
        at_end = all(no > f.lines for no, f in zip(window.end, files, strict=True))
        where = "the whole merge" if at_start and at_end else "from the first line" if at_start else ""
        where = where or ("to the last line" if at_end else "a window")
        text.append(f"  {len(window.lines):,} lines read, {where}", style="yellow")
        top = int(self.log_widget.scroll_offset.y)
        if 0 <= top < len(self.merged_lines):
            stamp = self.merged_lines[top].stamp
            if stamp:
                text.append(f"  at {stamp[:-7] if stamp.endswith('.000000') else stamp}")
        return text

    def _extent(self) -> Text:
        """Which lines of the file the view holds, said whenever that is not the whole file."""
        if self.context_of is not None:
            if not self.shown:
                return Text(f"  reading the file around line {self.context_of:,}", style="yellow")
            lo, hi = self._held_from, max(no for no, _ in self.shown)
            state = self.current()
            file = self.file_of(state)
            if file is not None:
                indexing = " (still indexing)" if state is not None and state.catching_up else ""
                return Text(f"  lines {lo:,}-{hi:,} of {file[1].lines:,}{indexing}, read from the file", style="yellow")
            return Text(f"  showing lines {lo:,}-{hi:,} of the file, around line {self.context_of:,}", style="yellow")
        if self._held_from > 1 and self._last_no and self.file_of(self.current()) is not None:
            return Text(
                f"  showing lines {self._held_from:,}-{self._last_no:,} of {self._last_no:,} (Home / g: from line 1)",
                style="yellow",
            )
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

    @staticmethod
    def file_of(state: SourceState | None) -> tuple[str, LineIndex] | None:
        """The file and its line index, when the source is a file (a stream has neither)."""
        if state is None or state.path is None or state.line_index is None:
            return None
        return state.path, state.line_index

    # ------------------------------------------------------------- actions
    def action_home(self) -> None:
        """Line 1: of the file when there is one (read through the index), else of the ring."""
        self.following = False
        if self.merge is not None:
            self._read_merge("home", [], None)
            return
        file = self.file_of(self.current())
        if file is None:
            self.log_widget.scroll_home(animate=False)
            self._status()
            return
        self.set_reactive(LogPane.filter, "")
        self.marked = None
        self._load(1, 1)

    def action_event(self, delta: int) -> None:
        """The next (delta 1) / previous (-1) line of this source the parsers made an event of
        (errors, warnings, restarts...), from the line at the top of the view (or the one marked)."""
        state = self.current()
        if state is None:
            return
        with self.store.lock:
            lines = sorted({e.line for e in self.store.events if e.source == state.source and e.line})
        here = self.marked if self.marked is not None else (self.top_line() or 0)
        if delta > 0:
            target = next((no for no in lines if no > here), None)
        else:
            target = next((no for no in reversed(lines) if no < here), None)
        if target is None:
            self.notify("no further event line in this source", timeout=2)
            return
        self.jump(state.source, target)

    def action_source(self, delta: int) -> None:
        n = len(self.sources())
        if self.merge is not None:
            self._leave_merge()
            delta = 0  # [ / ] in the merged view: back to the source selected before
        if n:
            self.source_index = (self.source_index + delta) % n
            self.context_of = None
            self._last_no = 0
            state = self.current()
            self._rebuild(snapshot_ring(state) if state else [])

    def action_follow(self) -> None:
        if self.merge is not None:  # End: the last lines of the merge, read again (new lines too)
            self.following = False
            self._read_merge("tail", [], None)
            return
        self.following = True
        self.marked = None
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

    def action_toggle_regex(self) -> None:
        self.regex = not self.regex

    def action_toggle_case(self) -> None:
        self.case = not self.case

    def _placeholder(self, mode: str) -> str:
        if mode != "search":
            return f"{mode} (Enter to apply, Esc to cancel)"
        regex, case = "on" if self.regex else "off", "on" if self.case else "off"
        return f"search (regex {regex}: R, case-sensitive {case}: C; Enter to apply, Esc to cancel)"

    def _open_input(self, mode: str, value: str) -> None:
        self._input_mode = mode
        box = self.query_one(Input)
        box.placeholder = self._placeholder(mode)
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
            try:
                Needle(message.value, regex=self.regex, case=self.case).text_pattern()
            except re.error as exc:
                self.notify(f"not a valid regex: {exc}", title="Search", severity="error", markup=False)
                self.log_widget.focus()
                return
            self.search = message.value  # a file: its watcher starts the scan, which goes to the first match
            if self.file_of(self.current()) is None or self.merge is not None:
                self.action_next_match()
        self.log_widget.focus()

    def _matcher(self) -> re.Pattern[str] | None:
        """The search over the lines the view holds (None: no search, or not a valid regex)."""
        if not self.search:
            return None
        try:
            return self.needle().text_pattern()
        except re.error:
            return None

    def _recompute_matches(self) -> None:
        pattern = self._matcher()
        self.matches = [i for i, (_, t) in enumerate(self.shown) if pattern.search(t)] if pattern else []
        self.match_at = -1

    def _extend_matches(self, start: int, dropped: int) -> None:
        """Keep the matches right when lines arrive (from index `start`) and `dropped` old ones go."""
        if not self.search:
            return
        current = self.matches[self.match_at] - dropped if self.match_at >= 0 else None
        pattern = self._matcher()
        if pattern is None:
            return
        kept = [i - dropped for i in self.matches if i >= dropped]
        self.matches = kept + [i for i in range(max(start, 0), len(self.shown)) if pattern.search(self.shown[i][1])]
        self.match_at = self.matches.index(current) if current is not None and current in self.matches else -1
        self._show_matches()

    def _show_matches(self) -> None:
        if self.hits is not None:
            line = self.hits[self.hit_at] if 0 <= self.hit_at < len(self.hits) else None
            current = last_index(self.shown, line) if line is not None else None
        else:
            current = self.matches[self.match_at] if 0 <= self.match_at < len(self.matches) else None
        self.log_widget.show_matches(self.search, current, self.regex, self.case)

    def action_next_match(self) -> None:
        self._step_match(1)

    def action_prev_match(self) -> None:
        self._step_match(-1)

    def _step_match(self, delta: int) -> None:
        if self.hits is not None:
            self._step_hit(delta)
            return
        if not self.matches:
            self._status()
            return
        self.match_at = (self.match_at + delta) % len(self.matches)
        self._show_matches()
        self._scroll_to_index(self.matches[self.match_at])
        self._status()

    def _step_hit(self, delta: int) -> None:
        """`n`/`N` over a whole-file search: the line is shown from the view, or read from the file."""
        hits = self.hits
        if not hits:
            self._status()
            return
        if self.hit_at < 0:  # the first step: the first match at or after the view's top line
            top = self.top_line() or 1
            after = next((i for i, no in enumerate(hits) if no >= top), 0)
            self.hit_at = after if delta > 0 else (after - 1) % len(hits)
        else:
            self.hit_at = (self.hit_at + delta) % len(hits)
        line = hits[self.hit_at]
        state = self.current()
        if state is not None:
            self.jump(state.source, line, keep_search=True)
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
        if self.scanning:
            self.workers.cancel_group(self, "log-search")
            self.workers.cancel_group(self, "log-filter")
            self.scanning = ""
        self.search = ""
        self.filter = ""
        if self.merge is None:  # the merged view stays where it is, whole again
            self.action_follow()

    # --------------------------------------------------------------- jumps
    def jump(self, source: str, line: int, keep_search: bool = False) -> None:
        """Show `line` of `source`: from the view or the ring when they hold it, else read from the
        file around it (through the line index: never from line 1)."""
        if self.merge is not None:
            self._leave_merge()
        names = [s.source for s in self.sources()]
        if source in names:
            self.source_index = names.index(source)
        state = self.current()
        self.following = False
        self.marked = line
        self.log_widget.focus()
        if keep_search and self.context_of is not None and last_index(self.shown, line) is not None:
            self.context_of = line
            self._show_matches()
            self._scroll_to_index(last_index(self.shown, line) or 0)
            self._status()
            return
        ring = snapshot_ring(state) if state else []
        if ring and (last_index(ring, line) is not None or ring[0][0] <= line <= ring[-1][0]):
            self.context_of = None
            self.set_reactive(LogPane.filter, "")  # no watcher: the rebuild below marks the line
            self._rebuild(ring, mark=line, keep_search=keep_search)
            idx = last_index(self.shown, line)
            self.call_after_refresh(self._scroll_if_paused, len(self.shown) - 1 if idx is None else idx)
        elif state is not None and state.path:
            self.set_reactive(LogPane.filter, "")
            self.context_of = line
            self._load(max(1, line - WINDOW // 2), line, mark=line, keep_search=keep_search)
        self._status()

    def _load(self, first: int, at: int, mark: int | None = None, keep_search: bool = False) -> None:
        """Read WINDOW lines of the file from line `first` (a worker), then show them with line
        `at` in the view and `mark` marked."""
        state = self.current()
        if state is None or state.path is None:
            return
        self._loading = True
        if state.line_index is not None:
            self._epoch = state.line_index.epoch
        self._read_window(state.path, state.line_index, first, at, mark, keep_search)

    @work(thread=True, exclusive=True, group="log-context")
    def _read_window(
        self, path: str, index: LineIndex | None, first: int, at: int, mark: int | None, keep_search: bool
    ) -> None:
        try:
            lines = read_lines(path, index, first, WINDOW)
        except OSError as exc:
            lines = [(at, printable(f"cannot read {path}: {exc.strerror}"))]
        self.app.call_from_thread(self._show_window, lines, at, mark, keep_search)

    def _show_window(self, lines: Lines, at: int, mark: int | None, keep_search: bool) -> None:
        self._loading = False
        self.context_of = mark if mark is not None else at
        self._rebuild(lines, mark=mark, keep_search=keep_search)
        idx = next((i for i, (no, _) in enumerate(self.shown) if no >= at), 0)
        if mark is None:  # paging / Home: the line at the top, as it was
            self.call_after_refresh(self._scroll_top_if_paused, idx)
        else:
            self.call_after_refresh(self._scroll_if_paused, idx)

    def _scroll_top_if_paused(self, index: int) -> None:
        if not self.following:
            self.log_widget.scroll_to(y=index, animate=False)
            self._status()

    # ---------------------------------------------------------------- scans
    def _scan(self, path: str, needle: str, keep: bool) -> None:
        self.scanning = "filtering" if keep else "searching"
        self.scan_done = 0.0
        self._status()
        if keep:
            self._run_filter(path, Needle(needle))
        else:
            self._run_search(path, self.needle())

    # One group each: a search started while a filter scans does not cancel the filter.
    @work(thread=True, exclusive=True, group="log-filter")
    def _run_filter(self, path: str, needle: Needle) -> None:
        self._run_scan(path, needle, True)

    @work(thread=True, exclusive=True, group="log-search")
    def _run_search(self, path: str, needle: Needle) -> None:
        self._run_scan(path, needle, False)

    def _run_scan(self, path: str, needle: Needle, keep: bool) -> None:
        """Search or filter the whole file (linereader.scan), telling the status its progress."""
        worker = get_current_worker()

        def progress(done: float) -> None:
            self.app.call_from_thread(self._scan_progress, done)

        try:
            found = scan(path, needle, keep=keep, progress=progress, cancelled=lambda: worker.is_cancelled)
        except OSError as exc:
            found = Scan(kept=[(0, printable(f"cannot read {path}: {exc.strerror}"))], done=True)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._scan_finished, needle, keep, found)

    def _scan_progress(self, done: float) -> None:
        if self.scanning:
            self.scan_done = done
            self._status()

    def _scan_finished(self, needle: Needle, keep: bool, found: Scan) -> None:
        self.scanning = ""
        if keep:
            if needle.text != self.filter:
                return
            self.filter_count = found.count
            self.context_of = found.kept[0][0] if found.kept else 0
            self._rebuild(found.kept)
            self.call_after_refresh(self._scroll_top_if_paused, 0)
            return
        if needle != self.needle():
            return
        self.hits, self.hit_count, self.hit_at = found.hits, found.count, -1
        self._step_hit(1)

    # ---------------------------------------------------------- merged view
    def action_merged(self) -> None:
        """M: every file of the run interleaved by timestamp, from its last lines; M again: one source."""
        if self.merge is not None:
            self._leave_merge()
            self.action_follow()
            return
        files = [(s.source, f) for s in self.sources() if (f := self.file_of(s)) is not None]
        if len(files) < 2:
            self.notify(f"the merged view needs two files or more; this run has {len(files)}", timeout=3)
            return
        labels = merged.short_labels([name for name, _ in files])
        self.merge = [
            merged.File(path, index, index.lines, label)
            for (_, (path, index)), label in zip(files, labels, strict=True)
        ]
        self.window, self.merged_lines = None, []
        self.following = False
        self.context_of = None
        self.marked = None
        self.set_reactive(LogPane.filter, "")
        if self.scanning:
            self.workers.cancel_group(self, "log-search")
            self.workers.cancel_group(self, "log-filter")
            self.scanning = ""
        self.hits, self.hit_count, self.hit_at = None, 0, -1
        self.log_widget.matcher.label_width = max(len(label) for label in labels)
        self._read_merge("tail", [], None)

    def _leave_merge(self) -> None:
        self.merge, self.window, self.merged_lines = None, None, []
        self.workers.cancel_group(self, "log-merge")
        self._loading = False
        self.log_widget.matcher.label_width = 0
        self.context_of = None
        self._last_no = 0

    def _read_merge(self, kind: str, cursor: list[int], top: tuple[int, int] | None) -> None:
        """Read a window of the merge in a worker: `home`, `tail`, or from / up to a cursor
        (`forward` / `backward`); `top` (file, line) is the line to keep at the view's top."""
        if self.merge is None:
            return
        self._loading = True
        self._status()
        self._merge_worker(self.merge, kind, cursor, top)

    @work(thread=True, exclusive=True, group="log-merge")
    def _merge_worker(
        self, files: list[merged.File], kind: str, cursor: list[int], top: tuple[int, int] | None
    ) -> None:
        if kind in ("home", "tail"):  # opened again: the files' new lines, and their first timestamps
            files = [merged.open_file(f.path, f.index, f.label) for f in files]
        try:
            if kind == "home":
                window = merged.home(files, WINDOW)
            elif kind == "tail":
                window = merged.tail(files, WINDOW)
            elif kind == "forward":
                window = merged.forward(files, cursor, WINDOW)
            else:
                window = merged.backward(files, cursor, WINDOW)
        except OSError as exc:
            self.app.call_from_thread(self.notify, f"cannot read: {exc}", severity="error", markup=False)
            window = merged.Window([], cursor or [1] * len(files), cursor or [1] * len(files))
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._merge_read, files, window, kind, top)

    def _merge_read(
        self, files: list[merged.File], window: merged.Window, kind: str, top: tuple[int, int] | None
    ) -> None:
        self._loading = False
        if self.merge is None:
            return
        self.merge = files
        self._show_merge(window, top, at_end=kind == "tail")

    def _show_merge(self, window: merged.Window, top: tuple[int, int] | None, at_end: bool = False) -> None:
        """Show a window of the merge (filtered by the filter), with `top` at the top, else its
        first or (`at_end`) last line."""
        files = self.merge or []
        self.window = window
        needle = self.filter.lower()
        self.merged_lines = [ln for ln in window.lines if not needle or needle in ln.text.lower()]
        self.shown = [(ln.no, ln.text) for ln in self.merged_lines]
        width = self.log_widget.matcher.label_width
        log = self.log_widget
        self._unwritten = []
        log.clear()
        log.write_lines([fmt_merged(files[ln.file].label, width, ln.no, ln.text) for ln in self.merged_lines])
        self._recompute_matches()
        self._show_matches()
        index = 0
        if top is not None:
            index = next((i for i, ln in enumerate(self.merged_lines) if (ln.file, ln.no) == top), 0)
        self.call_after_refresh(self._merge_scroll, len(self.merged_lines) if at_end else index)
        self._status()

    def _merge_scroll(self, index: int) -> None:
        if index >= len(self.merged_lines):
            self.log_widget.scroll_end(animate=False)
        else:
            self.log_widget.scroll_to(y=index, animate=False)
        self._status()

    def _page_merge(self, up: bool) -> None:
        """At the top or bottom edge of the merge's window, read the window before / after it
        (from its middle: the line at the top stays at the top)."""
        window, files = self.window, self.merge or []
        if window is None or self._loading or self.filter or not window.lines:
            return
        log = self.log_widget
        top_index = int(log.scroll_offset.y)
        if not 0 <= top_index < len(window.lines):
            return
        top = (window.lines[top_index].file, window.lines[top_index].no)
        middle = window.cursor_at(len(window.lines) // 2)
        if up and log.scroll_offset.y == 0 and any(no > 1 for no in window.start):
            self._read_merge("backward", middle, top)
        elif (
            not up
            and log.is_vertical_scroll_end
            and any(no <= f.lines for no, f in zip(window.end, files, strict=True))
        ):
            self._read_merge("forward", middle, top)
