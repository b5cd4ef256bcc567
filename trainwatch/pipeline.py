"""sources -> lines -> parsers -> sinks. Runs once (summary, export) or follows (TUI, --follow).

The pipeline never touches the UI: it hands batches of records to its sinks (the store, an
exporter) and keeps each source's `SourceState` in the store up to date, through the state's
own methods (they hold the store's lock the dashboard reads under).

Each source is a `SourceFeed` (`feeds.py`): its reader (`sources/reader.py`: bytes to lines,
streams, truncation and rotation) feeding its parser, its raw-log ring and the sinks; a record
file is a `RecordFeed`; a big file's history is read by the `Backfill`. Following, the
`Schedule` (`sources/schedule.py`) says which sources are due in each round; this module finds
new sources (directories, globs, files that appear) and runs the loop.

Catch-up: a large read of whole clean lines goes to `SourceParser.feed_block`, which turns the
lines of known hot shapes into column blocks the store appends in one call per series
(`parsers/bulk.py`, `columns.py`). Only the store understands those blocks: a pipeline with other sinks
(`export`, which streams every `Record`) keeps the per-line path, with identical records.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from trainwatch.columns import ColumnBlock
from trainwatch.feeds import Backfill, BatchSink, Feed, RecordFeed, RunJoins, SourceFeed
from trainwatch.lines.sanitize import printable
from trainwatch.records import Record
from trainwatch.sources.discover import SourceSpec, expand, found_under, has_magic, rediscover
from trainwatch.sources.problems import Problem, ProblemKind
from trainwatch.sources.records import is_mlflow_metrics, is_record_file, reader_for
from trainwatch.sources.records.tfevents import MISSING as TENSORBOARD_MISSING
from trainwatch.sources.records.tfevents import EventFile
from trainwatch.sources.records.tfevents import available as tensorboard_available
from trainwatch.sources.schedule import POLL_INTERVAL_S, Schedule, follow_mode, patterns_watched, watch_dirs
from trainwatch.sources.tail import CHUNK, HEAD_BYTES
from trainwatch.sources.watch import DirWatcher
from trainwatch.sources.window import WINDOW_BYTES, window_start
from trainwatch.store.store import SourceState, Store
from trainwatch.store.worker import StoreWorker, StoreWorkerError

TORN_LINE_QUIET_S = 2.0
# Bytes still to read from which `read_to_end` builds the store's records in a second process
# (`Pipeline._start_worker`): below, the read takes well under a second, not worth a fork.
WORKER_MIN_BYTES = 16 * 1024 * 1024
REDISCOVER_EVERY_S = 2.0
# ...when inotify watches every directory and glob PATH: it reports a new file at once
# (`_on_change`), the periodic look is only a safety net (at 256 files it was a third of
# an idle pipeline's CPU every 2 s).
REDISCOVER_WATCHED_S = 10.0
REDISCOVER_MIN_GAP_S = 0.1
BACKFILL_BUDGET = CHUNK  # history bytes read per loop round, once the windows are read
BACKFILL_REDRAW_S = 0.5  # the dashboard is told of history progress at most this often
MAX_SLEEP_S = 1.0  # longest sleep of the follow loop; `stop()` wakes it at once...
# A dashboard holds the history back until it has drawn the tail windows (`hold_history`): read
# at once, the history's catch-up takes the GIL from the UI thread's start, which then took 5-7 s
# instead of 1.5 s to show the present, one start in two. Never held longer than this.
HISTORY_HOLD_MAX_S = 3.0
EXTERNAL_STOP_SLEEP_S = 0.25  # ...a stop event set by a signal handler (which must not touch locks) within this


def _is_record_spec(spec: SourceSpec) -> bool:
    return spec.path is not None and not spec.stream and (is_record_file(spec.path) or is_mlflow_metrics(spec.path))


class Pipeline:
    """Sources found from PATHs, read once (`read_to_end`) or followed (`follow`, `start`)."""

    def __init__(
        self,
        paths: Sequence[str],
        *,
        store: Store | None = None,
        sink: BatchSink | None = None,
        poll_interval: float | None = None,
        force_poll: bool = False,
        labels: Sequence[str] = (),
        window_bytes: int | None = None,
    ) -> None:
        """labels: the names of the stream PATHs, in order (ValueError if they do not fit them).
        window_bytes: following, a file larger than this is read from its last `window_bytes`
        first and its history behind them (`Backfill`); 0 reads every file from the start
        (default: `WINDOW_BYTES`)."""
        self.paths = list(paths)
        self.window_bytes = WINDOW_BYTES if window_bytes is None else window_bytes
        self._backfill: Backfill | None = None
        self.store = store if store is not None else Store()
        self._worker: StoreWorker | None = None  # the store's records built in another process (`read_to_end`)
        self._may_fork = False  # (`read_to_end`: a worker may start at the first column block)
        self._sinks: list[BatchSink] = [sink] if sink is not None else []
        self.force_poll = force_poll
        self.schedule = Schedule(poll_interval if poll_interval and poll_interval > 0 else POLL_INTERVAL_S)
        self.readers: dict[str, Feed] = {}
        self._said_tensorboard = False
        self._joins = RunJoins(self.store, self._sink, self._sinks)  # a run's record files joined to its log
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._patterns: set[str] = set()
        self._watcher: DirWatcher | None = None
        self._following = False
        # Set by the watcher's thread, read and cleared by the follow thread: a plain flag is
        # enough (a missed set is caught by the next periodic rediscovery).
        self._rediscover_now = False
        self._patterns_watched = False  # every directory/glob PATH under an inotify watch
        self._all_opened: tuple[Feed, ...] = ()  # the readers last found all opened (`_unopened`)
        self._history_gate = threading.Event()  # set: the history may be read (`hold_history`)
        self._history_gate.set()
        self._windows_version: int | None = None  # the store version once the windows were read
        self._windows_at = 0.0
        # The paths the watcher reported since the last round (its thread adds, the follow
        # thread takes): a wake-up reads those files, not every file (256 per-rank files each
        # written 4 times a second: a read attempt of all 256 at each of ~30 wake-ups a second
        # was most of the CPU). `_read_all`: a wake-up from elsewhere (a stream's reader, stop).
        self._changed: set[str] = set()
        self._path_events: set[str] = set()  # created, moved or deleted: maybe a new file at the path
        self._changed_lock = threading.Lock()
        self._read_all = True
        self._by_path: dict[str, str] = {}  # absolute path -> source name, of the files followed
        self._by_path_of = -1  # (built for this many readers)
        self._streams: set[str] = set()  # the sources read as streams (every wake-up reads them)
        # Called from the follow thread after a round that read data or added sources (the
        # dashboard redraws on it instead of polling the store); must not block.
        self.on_activity: Callable[[], None] | None = None
        # Called from the follow thread when every source has been read to its end, no file named
        # is still to appear and no history is waiting (the dashboard settles its heap then:
        # `gcpause.settle_heap`): once, and again once the sources have doubled since (a path that
        # did not exist yet, new files in a directory): each settling keeps the cycles alive then
        # for good, so it comes O(log n) times.
        self.on_caught_up: Callable[[], None] | None = None
        self._caught_up_told = False
        self._told_sources = 0  # the sources there were when it was last told
        self.problems: list[Problem] = []
        specs, problems = expand(self.paths, list(labels))
        self.problems += problems
        # Text logs first: a record file joins the text log of its run (`_add`).
        for spec in sorted(specs, key=_is_record_spec):
            self._add(spec)
            if spec.pattern:
                self._patterns.add(spec.pattern)
        for raw in self.paths:
            if raw != "-" and (os.path.isdir(raw) or (has_magic(raw) and not os.path.lexists(raw))):
                self._patterns.add(raw)
        self._note_skipped(self.problems)

    def _note_skipped(self, problems: Iterable[Problem]) -> None:
        """A FIFO or device found in a directory or glob is not read, a walk stopped at its bound:
        the dashboard's source notes say so (on a file read from that PATH), as they say a file
        is unreadable."""
        skipped: dict[str, list[str]] = {}  # reader -> the entries skipped under its PATH
        for problem in problems:
            if problem.kind is not ProblemKind.NOT_REGULAR:
                continue
            for name, feed in self.readers.items():
                pattern = feed.spec.pattern
                if pattern is not None and found_under(problem.path, pattern):
                    skipped.setdefault(name, []).append(problem.path)
                    break
        for name, paths in skipped.items():
            self.readers[name].state.note_if_none(
                printable(f"not read: {', '.join(paths)} (FIFOs and devices are not read)")
            )
        # A directory walk that met its depth or count bound: on a file from it that has no note yet.
        for problem in problems:
            if problem.kind is ProblemKind.WALK_STOPPED:
                for feed in self.readers.values():
                    if feed.spec.pattern == problem.path and feed.state.note_if_none(printable(problem.message)):
                        break

    # -------------------------------------------------------------- plumbing
    def add_sink(self, sink: BatchSink) -> None:
        """Another consumer of every batch (after the store)."""
        self._sinks.append(sink)

    def _sink(self, batch: list[Record]) -> None:
        if self._may_fork and _worth_a_worker(batch):
            self._start_worker()
        (self.store if self._worker is None else self._worker).add_many(batch)
        for sink in self._sinks:
            sink(batch)

    def _add(self, spec: SourceSpec) -> Feed | None:
        if spec.name in self.readers:
            return None
        label = self._label(spec.name)
        records = None if spec.path is None or spec.stream else reader_for(label, spec.path)
        feed: Feed
        if isinstance(records, EventFile) and not tensorboard_available():
            if not self._said_tensorboard:  # said once, however many event files there are
                self._said_tensorboard = True
                self.problems.append(Problem(ProblemKind.NOT_READ, spec.name, TENSORBOARD_MISSING))
            return None
        state = self.store.source(label)
        if records is not None:
            join = self._joins.for_record_file(spec, self.readers.values())
            sink = self._sink if join is None else self._joins.file_sink(join, state)
            feed = RecordFeed(spec, records, sink, state, joined=join is not None)
        else:
            name = spec.name  # a joined log's steps go one by one through its join, not in column blocks
            bulk_ok = lambda: not self._sinks and name not in self._joins  # noqa: E731
            feed = SourceFeed(spec, self._joins.log_sink(name), state, self._poke, bulk_ok=bulk_ok)
        self.readers[spec.name] = feed
        if len(self.readers) >= 2 * self._told_sources:
            self._caught_up_told = False  # (their history read, the heap is settled again)
        if self._backfill is not None:  # a source found while the history is read: read it in both stores
            self._split(spec.name, feed, self._backfill)
            feed = self.readers[spec.name]
        if self._following:
            self._set_mode(feed)
        return feed

    def _label(self, name: str) -> str:
        """The name a source is shown and recorded under (store, records, every view): the path
        made `printable` once here, so no view can show its raw bytes. Two names that show
        alike (`a<ESC>.log`, `a␛.log`) are told apart by the second one's escaped form."""
        label = printable(name)
        if any(feed.state.source == label for feed in self.readers.values()):
            label = ascii(name)
        return label

    def _drop(self, name: str) -> None:
        feed = self.readers.pop(name)
        feed.close()
        if self._backfill is not None:
            staged = self._backfill.feeds.pop(name, None)
            if staged is not None:
                staged.close()
                self._backfill.store.drop_source(staged.state.source)
        self.schedule.forget(name)
        self.store.drop_source(feed.state.source)

    def _known_copy(self, path: str) -> bool:
        """A file that is one we already follow under another name (rename rotation) or its
        rotated copy (copytruncate `out.log.1`): reading it again would duplicate steps."""
        try:
            st = os.stat(path)
        except OSError:
            return True
        ident = (st.st_dev, st.st_ino)
        base, _dot, suffix = path.rpartition(".")
        feeds = list(self.readers.values())
        if self._backfill is not None:  # a window's tail never read the file's head: the history's did
            feeds += self._backfill.feeds.values()
        for feed in feeds:
            tail = feed.tail
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

    def _waiting_for_paths(self) -> bool:
        """Some source may appear: a directory or glob PATH, or a file not opened yet."""
        return bool(self._patterns) or self._unopened()

    def _unopened(self) -> bool:
        """A file not opened yet. Asked at each wake-up: while the same readers are all opened
        (a file opened stays opened) the answer is kept, not found again by a pass over every
        reader (256 per-rank files: half of an idle follow loop's CPU)."""
        feeds = tuple(self.readers.values())
        if feeds == self._all_opened:
            return False
        if any(feed.tail is not None and not feed.tail.opened_once for feed in feeds):
            return True
        self._all_opened = feeds
        return False

    def _rediscover_every(self) -> float:
        """How often to look for new files: seldom when inotify reports them (every PATH local
        and watched, no file waited for)."""
        watcher = self._watcher
        if watcher is None or not watcher.active or watcher.error or not self._patterns_watched or self._unopened():
            return REDISCOVER_EVERY_S
        return REDISCOVER_WATCHED_S

    def _rediscover(self) -> None:
        # A PATH that did not exist yet and turned out to be a directory: follow it as one.
        for raw in self.paths:
            feed = self.readers.get(raw)
            if (
                feed is not None
                and feed.tail is not None
                and not feed.tail.opened_once
                and feed.spec.pattern is None
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
    def _set_mode(self, feed: Feed) -> None:
        inotify_ok = self._watcher is not None and not self._watcher.error
        mode = feed.state.follow_mode if feed.is_stream else follow_mode(feed.spec.path, self.force_poll, inotify_ok)
        feed.state.set_follow_mode(mode)
        self.schedule.set_mode(feed.spec.name, mode)
        if feed.tail is not None:  # the watcher tells of a new file at the path: no stat at each append
            feed.tail.path_events = mode == "inotify"

    def _update_watch(self) -> None:
        if self._watcher is not None:
            event_driven = [
                feed.spec.path
                for name, feed in self.readers.items()
                if feed.spec.path is not None and not feed.is_stream and self.schedule.event_driven(name)
            ]
            flat, recursive = watch_dirs(event_driven, self._patterns, self.force_poll)
            self._patterns_watched = patterns_watched(self._patterns, self.force_poll)
            if self._watcher.set_dirs(flat, recursive) and self._patterns:
                self._rediscover_now = True  # what appeared while the new watch was starting

    def _on_path_event(self, paths: set[str]) -> None:
        with self._changed_lock:
            self._path_events |= paths

    def _on_change(self, paths: set[str]) -> None:
        by_path = self._by_path
        if any(p not in by_path and p not in self.readers for p in paths):
            self._rediscover_now = True  # a new file, or a directory a PATH waits for
        with self._changed_lock:
            self._changed |= paths
        self._wake.set()

    def _poke(self) -> None:
        """A wake-up that is not the watcher's (a stream's reader thread): read every source."""
        self._read_all = True
        self._wake.set()

    def _woken_sources(self) -> set[str] | None:
        """The sources a wake-up is for: those of the paths the watcher reported and every
        stream, or None (all of them) when a path is not one of ours or another thread woke us."""
        with self._changed_lock:
            changed, self._changed = self._changed, set()
            path_events, self._path_events = self._path_events, set()
        read_all, self._read_all = self._read_all, False
        if self._by_path_of != len(self.readers):
            self._by_path = {
                os.path.abspath(feed.spec.path): name
                for name, feed in self.readers.items()
                if feed.spec.path is not None and not feed.is_stream
            }
            self._streams = {name for name, feed in self.readers.items() if feed.is_stream}
            self._by_path_of = len(self.readers)
        for path in path_events:  # (this thread's: the tails are read here)
            tail = self.readers[self._by_path[path]].tail if path in self._by_path else None
            if tail is not None:
                tail.path_changed()
        if read_all:
            return None
        names: set[str] = set()
        for path in changed:
            name = self._by_path.get(path)
            if name is None:
                return None
            names.add(name)
        names.update(self._streams)
        return names

    # ------------------------------------------------------------ tail first
    def hold_history(self) -> None:
        """Before following: read the tail windows, then wait for `release_history` (at most
        HISTORY_HOLD_MAX_S) before reading the history."""
        self._history_gate = threading.Event()

    def release_history(self) -> None:
        self._history_gate.set()
        self._wake.set()

    def history_waits(self, version: int) -> bool:
        """The history is held, and the windows were all in the store at `version` or before."""
        return (
            self._backfill is not None
            and not self._history_gate.is_set()
            and self._windows_version is not None
            and version >= self._windows_version
        )

    def _history_held(self, now: float) -> float:
        """Seconds the history is still held for (0: read it now)."""
        if self._history_gate.is_set():
            return 0.0
        if self._windows_version is None:
            self._windows_version = self.store.version
            self._windows_at = now
        return max(0.0, HISTORY_HOLD_MAX_S - (now - self._windows_at))

    @property
    def backfilling(self) -> bool:
        """The store holds big files' tail windows; their history is still being read."""
        return self._backfill is not None

    def _begin_tail_first(self) -> None:
        """Before following: if a file is larger than the window, read every source's window
        first into the store and its history into a `Backfill`. Not with other sinks (`export`
        streams each record once, in order), nor with streams (they cannot be read twice)."""
        if self.window_bytes <= 0 or self._sinks or self._backfill is not None or not self.readers:
            return
        if self._joins:  # a run's record files join its log's steps one by one: read it from the start
            return
        feeds = list(self.readers.values())
        if any(feed.is_stream or feed.spec.path is None or feed.state.lines for feed in feeds):
            return
        if not any(
            isinstance(feed, SourceFeed) and window_start(feed.spec.path or "", self.window_bytes) for feed in feeds
        ):
            return
        backfill = Backfill(self.store.capacity)
        for name, feed in list(self.readers.items()):
            self._split(name, feed, backfill)
        self._backfill = backfill

    def _split(self, name: str, feed: Feed, backfill: Backfill) -> None:
        """`feed` (not read yet) becomes two: a plain read into the backfill's store, and in
        `readers` the window's read into this store (the whole file if it is small)."""
        history = self._history_feed(feed, backfill.store.source(feed.state.source))
        assert history is not None  # (a record file: the same path gave a reader a moment ago)
        backfill.feeds[name] = history
        if isinstance(feed, RecordFeed):
            return  # record files are small: the feed in `readers` reads the whole file
        start = window_start(feed.spec.path or "", self.window_bytes)
        backfill.starts[name] = start
        if start:
            feed.close()
            self.readers[name] = SourceFeed(
                feed.spec, self._sink, feed.state, self._poke, bulk_ok=lambda: not self._sinks, start=start
            )
            feed.state.history_read(0.0)

    def _history_feed(self, feed: Feed, staging: SourceState) -> Feed | None:
        """A plain read of `feed`'s file from byte 0 into the backfill's staging store (None: a
        record file no longer read as one)."""
        if isinstance(feed, RecordFeed):
            records = reader_for(feed.state.source, feed.spec.path or "")
            return None if records is None else RecordFeed(feed.spec, records, self._backfill_sink, staging)
        return SourceFeed(feed.spec, self._backfill_sink, staging, self._poke, lambda: True)

    def _backfill_sink(self, batch: list[Record]) -> None:
        """The history's records: into the staging store, then (once adopted) into the store."""
        backfill = self._backfill
        if backfill is None:
            self._sink(batch)
            return
        if backfill.may_spawn and _worth_a_worker(batch):
            self._spawn_backfill_worker(backfill)
        (backfill.store if backfill.worker is None else backfill.worker).add_many(batch)

    def _history_again(self, failed: Backfill) -> Backfill:
        """The history read again from byte 0, in this process: its worker failed (killed, or
        could not start its interpreter), and what it held is lost with it."""
        failed.close()
        fresh = Backfill(self.store.capacity)
        fresh.may_spawn = False
        fresh.starts = dict(failed.starts)
        for name, feed in failed.feeds.items():
            history = self._history_feed(feed, fresh.store.source(feed.state.source))
            if history is not None:
                fresh.feeds[name] = history
        return fresh

    def _spawn_backfill_worker(self, backfill: Backfill) -> None:
        """At the history's first column block, if much is left to read: the staging store's
        records in a spawned process (`store/worker.py`; this process runs threads: no fork),
        which appends to the series and compacts them off this process's GIL while the
        dashboard draws. Taken back when the history is read (`_pump_backfill`)."""
        backfill.may_spawn = False
        unread = _unread(backfill.feeds.values())
        if unread is None or unread < WORKER_MIN_BYTES:
            return  # (a record file or a stream among them: records one by one, not worth it)
        try:
            backfill.worker = StoreWorker(backfill.store, fork=False)
        except Exception:
            return  # (no process, or no way to start one here: the store stays in this process)
        _texts_to_store(backfill.feeds.values(), True)

    def _pump_backfill(self, now: float) -> tuple[bool, bool]:
        """One round of history; the store adopts it once every source reached its end.
        Returns (more: history is still waiting, redraw: the dashboard should show progress)."""
        backfill = self._backfill
        assert backfill is not None
        try:
            pending = backfill.pump(BACKFILL_BUDGET)
            if not pending and backfill.worker is not None:
                backfill.store.take_records(backfill.worker.finish())
                backfill.worker = None
        except StoreWorkerError:
            if self._stop.is_set():  # (stopping: `stop` closed it)
                return False, False
            self._backfill = self._history_again(backfill)
            return True, False
        if pending:
            for name, feed in self.readers.items():
                fraction = backfill.fraction(name)
                if fraction is not None:
                    feed.state.history_read(fraction)
            redraw = now - backfill.redrawn >= BACKFILL_REDRAW_S
            if redraw:
                backfill.redrawn = now
                self.store.touch()
            return True, redraw
        self._backfill = None
        _texts_to_store(backfill.feeds.values(), False)  # (they follow on, in this process)
        for name, feed in backfill.feeds.items():
            window = self.readers.get(name)
            if window is not None and window is not feed:
                window.close()
            self.readers[name] = feed
        self.store.adopt(backfill.store)
        if self._following:
            for feed in self.readers.values():
                self._set_mode(feed)
            self._update_watch()
        return False, True

    def read_windows(self) -> bool:
        """Read only each file's tail window (a small file whole), then finish: `check`'s quick
        look at the present. False, nothing read, when a source is a stream or a record file
        (read once, or not text) or no file is larger than the window."""
        feeds = self.readers
        if (
            self.window_bytes <= 0
            or not feeds
            or any(not isinstance(f, SourceFeed) or f.is_stream for f in feeds.values())
        ):
            return False
        starts = {name: window_start(feed.spec.path or "", self.window_bytes) for name, feed in feeds.items()}
        if not any(starts.values()):
            return False
        for name, start in starts.items():
            feed = feeds[name]
            if start:
                feed.close()
                feeds[name] = SourceFeed(
                    feed.spec, self._sink, feed.state, self._poke, bulk_ok=lambda: not self._sinks, start=start
                )
        self.read_to_end()
        return True

    # ------------------------------------------------------------------ runs
    def read_to_end(self) -> None:
        """Read every source to its current end, then finish them (summary, export)."""
        streams = [feed for feed in self.readers.values() if feed.is_stream]
        while any(not feed.finished for feed in streams):
            # stdin, FIFOs: read side by side until each closes (their threads buffer meanwhile);
            # judged as a whole, as a file is: a pipe that drains faster than its writer fills it
            # is not a live run (`cat log | trainwatch check -` said "running" one time in many)
            if not any([feed.pump(live=False) for feed in streams]):
                self._wake.wait(0.05)
                self._wake.clear()
        self._may_fork = self._worker_allowed(streams)
        try:
            # Record files first: a text log's step-less dicts then find their step (`RunJoin`).
            for feed in sorted(self.readers.values(), key=lambda f: not isinstance(f, RecordFeed)):
                if feed.is_stream:
                    continue
                while feed.pump():
                    pass
                # A last line without newline is a finished log's last line if the file has been
                # quiet a while, else possibly a torn write (`lm loss 2.1|49121`): shown, not parsed.
                mtime = feed.state.mtime
                quiet = mtime is None or time.time() - mtime >= TORN_LINE_QUIET_S
                feed.finish(final=quiet)
            if self._worker is not None:
                self.store.take_records(self._worker.finish())
        finally:
            self._may_fork = False
            if self._worker is not None:
                self._worker.close()
                self._worker = None
        self.store.touch()

    def _worker_allowed(self, streams: list[Feed]) -> bool:
        """Whether this read to the end may move the store's records to a second process
        (`store/worker.py`): text log files only (`_unread`), for no other sink."""
        return not (streams or self._sinks or self._joins or self._backfill is not None)

    def _start_worker(self) -> None:
        """At the first column block of a read to the end: a second process for the store's
        records, if what is left to read keeps both busy. The bulk shapes are where it pays
        (their records cross as a few arrays and strings a block); a log read line by line
        would cost more to send record by record than it saves. The child starts with this
        store as it is (a fork), the records so far in it, and gives them all back at the end."""
        self._may_fork = False
        unread = _unread(self.readers.values())
        if unread is None or unread < WORKER_MIN_BYTES or not StoreWorker.available():
            return
        try:
            self._worker = StoreWorker(self.store)
        except OSError:
            return  # (no fork: a process limit, no memory) the store stays in this process
        _texts_to_store(self.readers.values(), True)

    def finish_all(self, final: bool = False) -> None:
        """Stop reading every source. final=True only when the inputs really ended; after
        following, a last line without newline may be torn and is not parsed."""
        for feed in self.readers.values():
            feed.finish(final=final)

    def _start_watching(self) -> None:
        self._following = True
        if not self.force_poll:
            self._watcher = DirWatcher(self._on_change, on_path_event=self._on_path_event)
            self._update_watch()
            self._watcher.start()
        for feed in self.readers.values():
            self._set_mode(feed)

    def _stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()

    def follow(self, stop: threading.Event | None = None, until_inputs_end: bool = False) -> None:
        """Follow until stopped: the loop the background thread runs.

        until_inputs_end: also return once every source is a stream (stdin, a FIFO) and each has
        closed (`cmd | trainwatch export --follow -` ends with its input)."""
        stop = stop or self._stop
        self._begin_tail_first()
        self._start_watching()
        try:
            self._joined_files_first()
            self._follow_loop(stop, until_inputs_end)
        finally:
            self._stop_watching()

    def _joined_files_first(self) -> None:
        """The record files joined to a text log, read to their end before the loop reads the
        logs: a printed dict without its step then finds it (`RunJoin`), as `read_to_end` does."""
        for feed in list(self.readers.values()):
            if isinstance(feed, RecordFeed) and feed.joined:
                while feed.pump() and not self._stop.is_set():
                    pass

    def _follow_loop(self, stop: threading.Event, until_inputs_end: bool) -> None:
        longest = MAX_SLEEP_S if stop is self._stop else EXTERNAL_STOP_SLEEP_S
        last_discovery = time.monotonic()
        watcher_failed = False
        woken = True
        while not stop.is_set():
            if until_inputs_end and self.readers and all(f.finished and f.is_stream for f in self.readers.values()):
                return
            only = self._woken_sources() if woken else None
            more, active = self.schedule.round(self.readers, time.monotonic(), woken, only)
            held = 0.0
            if self._backfill is not None and not more:  # the windows first, then the history
                first = self._windows_version is None
                held = self._history_held(time.monotonic())
                active = active or (bool(held) and first)  # (the dashboard draws them, then releases it)
                if not held:
                    more, redraw = self._pump_backfill(time.monotonic())
                    active = active or redraw
            if self._watcher is not None and self._watcher.error and not watcher_failed:
                watcher_failed = True
                for feed in self.readers.values():
                    self._set_mode(feed)
            now = time.monotonic()
            if self._waiting_for_paths():
                due = now - last_discovery >= REDISCOVER_EVERY_S and now - last_discovery >= self._rediscover_every()
                asked = self._rediscover_now and now - last_discovery >= REDISCOVER_MIN_GAP_S
                if due or asked:
                    self._rediscover_now = False
                    self._rediscover()
                    last_discovery = now
                    more = True  # read new sources at once
            if active and self.on_activity is not None:
                self.on_activity()
            if not more and self._backfill is None and not self._caught_up_told and not self._unopened():
                self._caught_up_told = True
                self._told_sources = len(self.readers)
                if self.on_caught_up is not None:
                    self.on_caught_up()
            if more:
                woken = self._wake.is_set()
                self._wake.clear()
                continue
            timeout = self.schedule.wait_s(self.readers, now)
            if held:
                timeout = min(timeout, held)
            if self._rediscover_now:
                timeout = min(timeout, REDISCOVER_MIN_GAP_S)
            woken = self._wake.wait(min(max(timeout, 0.005), longest))
            self._wake.clear()

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(target=self.follow, name="trainwatch-ingest", daemon=True)
        self._thread.start()
        return self._thread

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        for feed in self.readers.values():
            feed.close()
        if self._backfill is not None:
            self._backfill.close()


def _worth_a_worker(batch: list[Record]) -> bool:
    """A batch that holds a column block (`Pipeline._start_worker`)."""
    return any(type(record) is ColumnBlock for record in batch)


def _unread(feeds: Iterable[Feed]) -> int | None:
    """The bytes left to read of text log files (None: a record file or a stream among them)."""
    unread = 0
    for feed in feeds:
        tail = feed.tail if isinstance(feed, SourceFeed) else None
        if tail is None:
            return None
        try:
            unread += max(0, os.path.getsize(tail.path) - max(tail.offset, tail.start))
        except OSError:
            continue  # (its reader says what became of it)
    return unread


def _texts_to_store(feeds: Iterable[Feed], on: bool) -> None:
    """The text logs' column blocks go out with their texts (a worker converts them), or not."""
    for feed in feeds:
        if isinstance(feed, SourceFeed):
            feed.parser.texts_to_store(on)
