"""sources -> lines -> parsers -> sink. Runs once (summary, export) or follows (TUI, --follow).

The pipeline never touches the UI: it hands batches of records to its sinks (the store, an
exporter) and keeps each source's `SourceState` up to date in the store.

Following: local sources are read when inotify (a background thread watching their parent
directories) wakes the loop, and stat-polled every `SAFETY_POLL_S` (spread out when there are
hundreds) in case a change was missed; sources on network filesystems, or all with `force_poll`, are polled every
`poll_interval`. Every round gives each source at most `ROUND_BUDGET` bytes, so a
multi-GB backlog in one file never holds back the live lines of the others.

Catch-up: a large read of whole clean lines goes to `SourceParser.feed_block`, which turns the
lines of known hot shapes into column blocks the store appends in one call per series
(`parsers/bulk.py`, `columns.py`). Only the store understands those blocks: a pipeline with other sinks
(`export`, which streams every `Record`) keeps the per-line path, with identical records.
"""

from __future__ import annotations

import fnmatch
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from trainwatch.lines.assembler import Kind, Line, LineAssembler
from trainwatch.lines.sanitize import printable
from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import SourceParser
from trainwatch.records import Record
from trainwatch.sources.discover import NOT_REGULAR, STOPPED, SourceSpec, expand, has_magic, rediscover
from trainwatch.sources.poll import PollClock
from trainwatch.sources.stdin import StdinSource
from trainwatch.sources.tail import CHUNK, HEAD_BYTES, Ev, FileTail, TailEvent
from trainwatch.sources.watch import DirWatcher, fstype_of, is_network_fs
from trainwatch.store.store import SourceState, Store

BatchSink = Callable[[list[Record]], None]
POLL_INTERVAL_S = 0.25  # polling sources (network filesystems, --poll)
SAFETY_POLL_S = 1.0  # inotify sources: stat anyway this often...
SAFETY_POLLS_PER_S = 100  # ...or less often with many files: at most this many such stats a second
SAFETY_TICK_S = 0.25  # safety polls fall on this grid
ROUND_BUDGET = 1024 * 1024  # bytes per source per round while following
TORN_LINE_QUIET_S = 2.0
REDISCOVER_EVERY_S = 2.0
REDISCOVER_MIN_GAP_S = 0.1
MAX_SLEEP_S = 1.0  # longest sleep of the follow loop; `stop()` wakes it at once...
EXTERNAL_STOP_SLEEP_S = 0.25  # ...a stop event set by a signal handler (which must not touch locks) within this
BULK_MIN_BYTES = 256 * 1024  # reads at least this large (catch-up) go through the bulk path


class SourceReader:
    """One source: its byte reader, a line assembler per stream, its parsers and state."""

    def __init__(
        self,
        spec: SourceSpec,
        sink: BatchSink,
        state: SourceState,
        wake: Callable[[], None],
        bulk_ok: Callable[[], bool] = lambda: False,
    ) -> None:
        self.spec = spec
        self._bulk_ok = bulk_ok
        self.state = state
        self._sink = sink
        self._batch: list[Record] = []
        self.assemblers: dict[int, LineAssembler] = {}
        self.parser = SourceParser(state.source, new_parsers(), self._batch.append, path=spec.path)
        self.tail = FileTail(spec.path) if spec.path is not None else None
        self.stdin: StdinSource | None = None
        self._wake = wake
        self.finished = False
        self.event_driven = True  # pumped when woken (inotify, stdin); else on its poll timer
        self.next_due = 0.0
        self._synced = -1  # parser.changes at the last _sync_stats
        state.path = spec.path
        if spec.path is None:
            self.stdin = StdinSource(wake=wake)
            state.follow_mode = "stdin"

    @property
    def assembler(self) -> LineAssembler:
        """The assembler of the newest stream (the file the path names now)."""
        if not self.assemblers:
            self.assemblers[0] = LineAssembler()
        return self.assemblers[max(self.assemblers)]

    def _feed(self, lines: Iterable[Line]) -> None:
        """Parse lines, and keep the complete ones in the bounded ring the dashboard's raw log shows."""
        lines = list(lines)
        recent = self.state.recent
        cap = recent.maxlen
        if cap is not None and len(lines) > cap:
            # Catch-up batches hold millions of lines: only the last `cap` can stay in the ring.
            tail: list[tuple[int, str]] = []
            for line in reversed(lines):
                if line.kind is Kind.LINE:
                    tail.append((line.no, line.text))
                    if len(tail) >= cap:
                        break
            tail.reverse()
            recent.extend(tail)
        else:
            recent.extend((line.no, line.text) for line in lines if line.kind is Kind.LINE)
        self.parser.feed_lines(lines)

    def _feed_bytes(self, asm: LineAssembler, data: bytes) -> None:
        """Bytes of one stream: a large read of whole clean lines in bulk, else line by line."""
        if len(data) >= BULK_MIN_BYTES and self._bulk_ok():
            if asm.has_partial:  # the previous read's last line: complete it line by line
                cut = data.find(b"\n") + 1
                self._feed(asm.feed(data[:cut]))
                data = data[cut:]
            block = asm.feed_clean_block(data)
            if block is not None:
                first, text = block
                self._feed_block(first, asm.next_line_no - first, text)
                data = data[data.rfind(b"\n") + 1 :]
        self._feed(asm.feed(data))

    def _feed_block(self, first: int, count: int, text: str) -> None:
        recent = self.state.recent
        cap = recent.maxlen if recent.maxlen is not None else count
        tail = text[:-1].rsplit("\n", cap)  # only the last `cap` lines can stay in the ring
        if len(tail) > cap:
            tail = tail[1:]
        recent.extend(zip(range(first + count - len(tail), first + count), tail, strict=True))
        self.parser.feed_block(first, text)

    def _emit(self) -> None:
        if self._batch:
            batch = self._batch[:]
            self._batch.clear()
            self._sink(batch)

    def _apply(self, event: TailEvent) -> None:
        if event.kind is Ev.REPLACED:
            self.assemblers.setdefault(event.gen, LineAssembler())
            self.parser.at_eof()
            self._starts_again(event.note)
            return
        asm = self.assemblers.get(event.gen)
        if asm is None:
            if event.kind is not Ev.DATA:
                return
            asm = self.assemblers[event.gen] = LineAssembler()
        if event.kind is Ev.DATA:
            self._feed_bytes(asm, event.data)
            return
        # The stream restarts (truncated) or ended for good (rotated away): its unfinished
        # line is torn — shown, never parsed.
        self._feed(asm.abandon())
        self.parser.at_eof()
        if event.kind is Ev.RESET:
            asm.reset()
            self._starts_again(event.note)
        else:
            del self.assemblers[event.gen]

    def _starts_again(self, note: str) -> None:
        """The path's content starts again from line 1 (truncated, rewritten, replaced): a marker
        in the raw lines (their numbers restart), and the parsers judge whether it is a relaunch."""
        note = note or "file started again"
        self.state.recent.append((0, f"── {note}: following from the start ──"))
        self.parser.content_restarted(note)

    def pump(self, limit: int = CHUNK) -> bool:
        """Read what is available (up to about `limit` bytes). True if more is waiting right now."""
        if self.finished:
            return False
        more = False
        if self.tail is not None:
            got = self.tail.read(limit)
            for event in got.events:
                self._apply(event)
            if got.got_data:
                self.state.last_data_wall = time.time()
                self.state.last_data_monotonic = time.monotonic()
            if got.notes:
                self.state.note = got.notes[-1]
            elif got.got_data and self.state.note.startswith("waiting"):
                self.state.note = ""
            self.state.size = max(self.tail.size, self.tail.offset)
            self.state.offset = self.tail.offset
            self.state.mtime = self.tail.mtime
            self.state.catching_up = not got.at_eof
            more = not got.at_eof
        elif self.stdin is not None:
            data, ended = self.stdin.read(limit)
            if data:
                self._feed_bytes(self.assembler, data)
                self.state.last_data_wall = time.time()
                self.state.last_data_monotonic = time.monotonic()
                self.state.offset += len(data)
                self.state.size = self.state.offset
            if ended:
                self.finish(final=True)
                return False
            more = len(data) >= limit
            self.state.catching_up = more
        if not more:
            self.parser.at_eof()
        self._sync_stats()
        self._emit()
        if not more and self.state.caught_up_monotonic is None:
            # Set after this batch reached the store: steps stored later arrived live.
            self.state.caught_up_monotonic = time.monotonic()
        return more

    def quiet(self) -> bool:
        """A safety poll may skip this source: the path still names the file read to its end,
        unchanged since (same inode, size, mtime). Far cheaper than a read: one stat."""
        tail = self.tail
        if tail is None or tail.current is None or tail.draining or self.state.catching_up:
            return False
        try:
            st = os.stat(tail.path)
        except OSError:
            return False
        handle = tail.current
        return (
            (st.st_dev, st.st_ino) == handle.ident
            and st.st_size == handle.offset == handle.size
            and st.st_mtime == handle.mtime
        )

    def finish(self, final: bool = True) -> None:
        """No more input will be read from this source.

        final: the input really ended (read to its end, stdin closed), so a last line
        without newline is complete. Otherwise (following stopped) it may be torn by a
        writer still running: it is shown, not parsed."""
        if self.finished:
            return
        self.finished = True
        if self.tail is not None:
            for event in self.tail.finish_events():
                asm = self.assemblers.pop(event.gen, None)
                if asm is not None:
                    self._feed(asm.finish() if final else asm.abandon())
        for asm in self.assemblers.values():
            self._feed(asm.finish() if final else asm.abandon())
        self.assemblers.clear()
        self.parser.finish()
        self.state.ended = True
        self.state.catching_up = False
        self._sync_stats()
        self._emit()

    def close(self) -> None:
        if self.tail is not None:
            self.tail.close()

    def _sync_stats(self) -> None:
        if self.parser.changes == self._synced:
            return  # an idle poll: nothing parsed since the last copy
        self._synced = self.parser.changes
        stats = self.parser.stats
        self.state.formats = stats.formats
        self.state.lines = stats.lines
        self.state.not_understood = stats.not_understood
        self.state.duplicate_steps = stats.duplicate_steps
        self.state.parser_errors = stats.parser_errors
        self.state.ranks_seen = set(stats.ranks_seen)


class Pipeline:
    def __init__(
        self,
        paths: Sequence[str],
        *,
        store: Store | None = None,
        sink: BatchSink | None = None,
        poll_interval: float | None = None,
        force_poll: bool = False,
    ) -> None:
        self.paths = list(paths)
        self.store = store if store is not None else Store()
        self._sinks: list[BatchSink] = [sink] if sink is not None else []
        self.poll_interval = poll_interval if poll_interval and poll_interval > 0 else POLL_INTERVAL_S
        self.force_poll = force_poll
        self.readers: dict[str, SourceReader] = {}
        self.problems: list[str] = []
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._patterns: set[str] = set()
        self._watcher: DirWatcher | None = None
        self._following = False
        self._rediscover_now = False
        # Called from the follow thread after a round that read data or added sources (the
        # dashboard redraws on it instead of polling the store); must not block.
        self.on_activity: Callable[[], None] | None = None
        self._poll_clocks: dict[str, PollClock] = {}  # polled sources: stat often while active
        specs, problems = expand(self.paths)
        self.problems = problems
        for spec in specs:
            self._add(spec)
            if spec.pattern:
                self._patterns.add(spec.pattern)
        for raw in self.paths:
            if raw != "-" and (os.path.isdir(raw) or (has_magic(raw) and not os.path.lexists(raw))):
                self._patterns.add(raw)
        self._note_skipped(problems)

    def _note_skipped(self, problems: list[str]) -> None:
        """A FIFO or device found in a directory or glob is not read, a walk stopped at its bound:
        the dashboard's source notes say so (on a file read from that PATH), as they say a file
        is unreadable."""
        skipped: dict[str, list[str]] = {}  # reader -> the entries skipped under its PATH
        for problem in problems:
            path = problem.removesuffix(f": {NOT_REGULAR}")
            if path == problem:
                continue
            for name, reader in self.readers.items():
                pattern = reader.spec.pattern
                if pattern is not None and _under(path, pattern):
                    skipped.setdefault(name, []).append(path)
                    break
        for name, paths in skipped.items():
            state = self.readers[name].state
            if not state.note:
                state.note = printable(f"not read: {', '.join(paths)} (FIFOs and devices are not read)")
        # A directory walk that met its depth or count bound: on a file from it that has no note yet.
        for problem in problems:
            if problem.endswith(STOPPED):
                quiet = [
                    r.state
                    for r in self.readers.values()
                    if r.spec.pattern and f" under {r.spec.pattern}: " in problem and not r.state.note
                ]
                if quiet:
                    quiet[0].note = printable(problem)

    # -------------------------------------------------------------- plumbing
    def add_sink(self, sink: BatchSink) -> None:
        """Another consumer of every batch (after the store)."""
        self._sinks.append(sink)

    def _sink(self, batch: list[Record]) -> None:
        self.store.add_many(batch)
        for sink in self._sinks:
            sink(batch)

    def _add(self, spec: SourceSpec) -> SourceReader | None:
        if spec.name in self.readers:
            return None
        with self.store.lock:
            state = self.store.source(self._label(spec.name))
        reader = SourceReader(spec, self._sink, state, self._wake.set, bulk_ok=lambda: not self._sinks)
        self.readers[spec.name] = reader
        if self._following:
            self._set_mode(reader)
        return reader

    def _label(self, name: str) -> str:
        """The name a source is shown and recorded under (store, records, every view): the path
        made `printable` once here, so no view can show its raw bytes. Two names that show
        alike (`a<ESC>.log`, `a␛.log`) are told apart by the second one's escaped form."""
        label = printable(name)
        if any(reader.state.source == label for reader in self.readers.values()):
            label = ascii(name)
        return label

    def _drop(self, name: str) -> None:
        reader = self.readers.pop(name)
        reader.close()
        with self.store.lock:
            self.store.sources.pop(reader.state.source, None)
            self.store.version += 1

    def _known_copy(self, path: str) -> bool:
        """A file that is one we already follow under another name (rename rotation) or its
        rotated copy (copytruncate `out.log.1`): reading it again would duplicate steps."""
        try:
            st = os.stat(path)
        except OSError:
            return True
        ident = (st.st_dev, st.st_ino)
        base, _dot, suffix = path.rpartition(".")
        for reader in self.readers.values():
            tail = reader.tail
            if tail is None:
                continue
            if ident in tail.idents:
                return True
            if suffix.isdigit() and os.path.normpath(base) == os.path.normpath(tail.path):
                heads = tail.known_heads()
                if heads:
                    try:
                        with open(path, "rb") as f:
                            first = f.read(HEAD_BYTES)
                    except OSError:
                        return True
                    if any(h and first.startswith(h) for h in heads):
                        return True
        return False

    def _rediscover(self) -> None:
        # A PATH that did not exist yet and turned out to be a directory: follow it as one.
        for raw in self.paths:
            reader = self.readers.get(raw)
            if (
                reader is not None
                and reader.tail is not None
                and not reader.tail.opened_once
                and reader.spec.pattern is None
                and os.path.isdir(raw)
            ):
                self._drop(raw)
                self._patterns.add(raw)
        added = False
        for pattern in sorted(self._patterns):
            for path in rediscover(pattern):
                if path not in self.readers and not self._known_copy(path):
                    added = self._add(SourceSpec(path, path, pattern=pattern)) is not None or added
        if added or self._watcher is not None:
            self._update_watch()

    # ----------------------------------------------------------- wake-ups
    def _set_mode(self, reader: SourceReader) -> None:
        if reader.spec.path is None:
            reader.state.follow_mode = "stdin"
            reader.event_driven = True
            return
        fstype = fstype_of(reader.spec.path)
        if self.force_poll:
            mode = "polling"
        elif is_network_fs(fstype):
            mode = f"polling ({fstype})"
        elif self._watcher is None or self._watcher.error:
            mode = "polling (inotify unavailable)"
        else:
            mode = "inotify"
        reader.state.follow_mode = mode
        reader.event_driven = mode == "inotify"

    def _watch_dirs(self) -> tuple[set[str], set[str]]:
        flat: set[str] = set()
        recursive: set[str] = set()
        for reader in self.readers.values():
            if reader.event_driven and reader.spec.path is not None:
                flat.add(os.path.dirname(os.path.abspath(reader.spec.path)))
        if self.force_poll:
            return flat, recursive
        for pattern in self._patterns:
            if os.path.isdir(pattern):
                root, deep = pattern, True
            else:
                root, deep = _glob_root(pattern)
            if not is_network_fs(fstype_of(root)):
                (recursive if deep else flat).add(os.path.abspath(root))
        return flat, recursive

    def _update_watch(self) -> None:
        if self._watcher is not None:
            flat, recursive = self._watch_dirs()
            if self._watcher.set_dirs(flat, recursive) and self._patterns:
                self._rediscover_now = True  # what appeared while the new watch was starting

    def _safety_poll_s(self) -> float:
        """How often an inotify-watched file is stat-checked anyway: 1 s, or spread so that 256
        per-rank files cost at most SAFETY_POLLS_PER_S stats a second (2.6 s apart)."""
        return max(SAFETY_POLL_S, len(self.readers) / SAFETY_POLLS_PER_S)

    def _safety_due(self, now: float) -> float:
        """The next safety poll, on a grid of SAFETY_TICK_S: hundreds of files come due together
        in a few wake-ups a second, not one wake-up (and a pass over every reader) each."""
        return math.ceil((now + self._safety_poll_s()) / SAFETY_TICK_S) * SAFETY_TICK_S

    def _on_change(self, paths: set[str]) -> None:
        if any(p not in self.readers for p in paths):  # a new file, or a directory a PATH waits for
            self._rediscover_now = True
        self._wake.set()

    # ------------------------------------------------------------------ runs
    def read_to_end(self) -> None:
        """Read every source to its current end, then finish them (summary, export)."""
        for reader in list(self.readers.values()):
            if reader.spec.path is None:
                # stdin: read until it closes
                while not reader.finished:
                    if not reader.pump():
                        self._wake.wait(0.05)
                        self._wake.clear()
                continue
            while reader.pump():
                pass
            # A last line without newline is a finished log's last line if the file has been
            # quiet a while, else possibly a torn write (`lm loss 2.1|49121`): shown, not parsed.
            mtime = reader.state.mtime
            quiet = mtime is None or time.time() - mtime >= TORN_LINE_QUIET_S
            reader.finish(final=quiet)
        self.store.touch()

    def pump_once(self, budget: int = ROUND_BUDGET) -> bool:
        """One round over all sources, at most `budget` bytes each. True if any has more waiting."""
        more = False
        for reader in list(self.readers.values()):
            if reader.pump(budget):
                more = True
        return more

    def finish_all(self, final: bool = False) -> None:
        """Stop reading every source. final=True only when the inputs really ended; after
        following, a last line without newline may be torn and is not parsed."""
        for reader in self.readers.values():
            reader.finish(final=final)

    def _start_watching(self) -> None:
        self._following = True
        if not self.force_poll:
            self._watcher = DirWatcher(self._on_change)
            self._update_watch()
            self._watcher.start()
        for reader in self.readers.values():
            self._set_mode(reader)

    def _stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()

    def follow(self, stop: threading.Event | None = None, until_inputs_end: bool = False) -> None:
        """Follow until stopped: the loop the background thread runs.

        until_inputs_end: also return once every source is stdin and it has closed
        (`cmd | trainwatch export --follow -` ends with its input)."""
        stop = stop or self._stop
        self._start_watching()
        try:
            self._follow_loop(stop, until_inputs_end)
        finally:
            self._stop_watching()

    def _follow_loop(self, stop: threading.Event, until_inputs_end: bool) -> None:
        longest = MAX_SLEEP_S if stop is self._stop else EXTERNAL_STOP_SLEEP_S
        last_discovery = time.monotonic()
        watcher_failed = False
        woken = True
        while not stop.is_set():
            if (
                until_inputs_end
                and self.readers
                and all(r.finished and r.spec.path is None for r in self.readers.values())
            ):
                return
            now = time.monotonic()
            more = active = False
            for reader in list(self.readers.values()):
                if reader.finished or not (reader.next_due <= now or (woken and reader.event_driven)):
                    continue
                if reader.event_driven and not woken and reader.quiet():
                    # inotify's safety poll of an unchanged file (a change would have woken us)
                    reader.next_due = self._safety_due(now)
                    continue
                clock = None if reader.event_driven else self._poll_clock(reader)
                if clock is not None and clock.stat_is_enough(now) and reader.quiet():
                    reader.next_due = clock.next_look(now)  # polled, recently active, unchanged
                    continue
                seen = reader.state.last_data_monotonic
                if reader.pump(ROUND_BUDGET):
                    more = True
                    reader.next_due = now
                elif clock is not None:
                    reader.next_due = clock.after_read(now, reader.state.last_data_monotonic != seen)
                else:
                    reader.next_due = self._safety_due(now)
                active = active or reader.state.last_data_monotonic != seen
            if self._watcher is not None and self._watcher.error and not watcher_failed:
                watcher_failed = True
                for reader in self.readers.values():
                    self._set_mode(reader)
            now = time.monotonic()
            if self._patterns or any(r.tail is not None and not r.tail.opened_once for r in self.readers.values()):
                due = now - last_discovery >= REDISCOVER_EVERY_S
                asked = self._rediscover_now and now - last_discovery >= REDISCOVER_MIN_GAP_S
                if due or asked:
                    self._rediscover_now = False
                    self._rediscover()
                    last_discovery = now
                    more = True  # read new sources at once
            if active and self.on_activity is not None:
                self.on_activity()
            if more:
                woken = self._wake.is_set()
                self._wake.clear()
                continue
            pending = [r.next_due for r in self.readers.values() if not r.finished]
            timeout = min(pending, default=now + self._safety_poll_s()) - now
            if self._rediscover_now:
                timeout = min(timeout, REDISCOVER_MIN_GAP_S)
            woken = self._wake.wait(min(max(timeout, 0.005), longest))
            self._wake.clear()

    def _poll_clock(self, reader: SourceReader) -> PollClock:
        clock = self._poll_clocks.get(reader.spec.name)
        if clock is None:
            clock = self._poll_clocks[reader.spec.name] = PollClock(self.poll_interval)
        return clock

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(target=self.follow, name="trainwatch-ingest", daemon=True)
        self._thread.start()
        return self._thread

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        for reader in self.readers.values():
            reader.close()


def _under(path: str, pattern: str) -> bool:
    """Found by this directory or glob PATH."""
    if os.path.isdir(pattern):
        return os.path.normpath(path).startswith(os.path.normpath(pattern) + os.sep)
    return fnmatch.fnmatch(path, pattern) or path.startswith(_glob_root(pattern)[0])


def _glob_root(pattern: str) -> tuple[str, bool]:
    """The directory a glob's matches appear under, and whether they may be deeper."""
    parts = pattern.split(os.sep)
    fixed: list[str] = []
    for part in parts:
        if has_magic(part):
            break
        fixed.append(part)
    root = os.sep.join(fixed) or ("." if not pattern.startswith(os.sep) else os.sep)
    magic_dirs = len(fixed) < len(parts) - 1
    return root, magic_dirs or "**" in pattern
