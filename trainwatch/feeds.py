"""What reads one source: a text log's `SourceFeed` (its reader feeding its parser, its raw-log ring
and the sinks), a record file's `RecordFeed`, and the `Backfill` that reads big files' history
while the store shows their tail windows; `RunJoins` puts a run's record files together with its
text log. The pipeline owns them and runs the loop.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable
from operator import itemgetter

from trainwatch.lines.assembler import Kind, Line
from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import SourceParser
from trainwatch.records import Record
from trainwatch.sources.discover import SourceSpec, run_log
from trainwatch.sources.reader import SourceReader
from trainwatch.sources.records import RecordReader
from trainwatch.sources.records.join import Joined, RunJoin
from trainwatch.sources.tail import CHUNK, FileTail
from trainwatch.store.store import SourceState, Store
from trainwatch.store.worker import StoreWorker

BatchSink = Callable[[list[Record]], None]


class SourceFeed:
    """One source: its reader feeding its parser and raw-log ring, its state, its batch for the sinks."""

    def __init__(
        self,
        spec: SourceSpec,
        sink: BatchSink,
        state: SourceState,
        wake: Callable[[], None],
        bulk_ok: Callable[[], bool] = lambda: False,
        start: int = 0,
    ) -> None:
        """start: read the file from this byte (a tail window, `sources/window.py`) instead of 0."""
        self.spec = spec
        self.state = state
        self._sink = sink
        self._batch: list[Record] = []
        # A stream's path (`/dev/fd/63`) says nothing of ranks or hosts, and cannot be read again.
        path = None if spec.stream else spec.path
        self.parser = SourceParser(state.source, new_parsers(), self._batch.append, path=path)
        self.reader = SourceReader(spec, self, wake, bulk_ok, start=start)
        state.line_index = self.reader.line_index
        if start:
            state.add_lines(
                [
                    (
                        0,
                        f"── the last {(os.path.getsize(spec.path or '') - start) / 2**20:.1f} MB first; "
                        "line numbers count from here until the history is read ──",
                    )
                ]
            )
        self._synced = -1  # parser.changes at the last _sync_stats
        state.set_path(path)
        if self.is_stream:
            state.set_follow_mode("stdin" if spec.path is None else "stream")

    @property
    def is_stream(self) -> bool:
        """Read as a pipe (stdin, a FIFO): it ends when its writer closes it."""
        return self.reader.stream is not None

    @property
    def finished(self) -> bool:
        return self.reader.finished

    @property
    def last_data(self) -> float | None:
        return self.state.last_data_monotonic

    def quiet(self) -> bool:
        return self.reader.quiet()

    @property
    def tail(self) -> FileTail | None:
        return self.reader.tail

    # ------------------------------------------------- the reader's LineSink
    def lines(self, lines: list[Line]) -> None:
        """Parse lines, and keep the complete ones in the bounded ring the dashboard's raw log shows."""
        cap = self.state.recent.maxlen
        if cap is not None and len(lines) > cap:
            # Catch-up batches hold millions of lines: only the last `cap` can stay in the ring.
            tail: list[tuple[int, str]] = []
            for line in reversed(lines):
                if line.kind is Kind.LINE:
                    tail.append((line.no, line.text))
                    if len(tail) >= cap:
                        break
            tail.reverse()
            self.state.add_lines(tail)
        else:
            self.state.add_lines((line.no, line.text) for line in lines if line.kind is Kind.LINE)
        self.parser.feed_lines(lines)

    def bulk_worth_trying(self) -> bool:
        return self.parser.bulk_worth_trying()

    def block(self, first: int, count: int, text: str) -> None:
        cap = self.state.recent.maxlen or count
        tail = text[:-1].rsplit("\n", cap)  # only the last `cap` lines can stay in the ring
        if len(tail) > cap:
            tail = tail[1:]
        self.state.add_lines(zip(range(first + count - len(tail), first + count), tail, strict=True))
        self.parser.feed_block(first, text)

    def at_eof(self) -> None:
        self.parser.at_eof()

    def restarted(self, note: str) -> None:
        """A marker in the raw lines (their numbers restart), and the parsers judge whether it is a relaunch."""
        note = note or "file started again"
        self.state.add_lines([(0, f"── {note}: following from the start ──")])
        self.parser.content_restarted(note)

    # ------------------------------------------------------------------ runs
    def pump(self, limit: int = CHUNK, *, live: bool = True) -> bool:
        """Read what is available (up to about `limit` bytes). True if more is waiting right now.
        `live=False`: a stream read to its close as a whole (`summary`, `check`): what it has not
        sent yet is not news arriving live, whatever the pace of the pipe."""
        if self.reader.finished:
            return False
        read = self.reader.pump(limit)
        self.state.read_progress(
            size=read.size,
            offset=read.offset,
            mtime=read.mtime,
            catching_up=read.more,
            got_data=read.got_data,
            note=read.note,
        )
        if read.ended:
            self.finish(final=True)
            return False
        if not read.more:
            self.parser.at_eof()
        self._sync_stats()
        self._emit()
        if not read.more and live:
            self.state.caught_up()  # after this batch reached the store: steps stored later arrived live
        return read.more

    def finish(self, final: bool = True) -> None:
        """No more input will be read from this source (see `SourceReader.finish`)."""
        if self.reader.finished:
            return
        self.reader.finish(final)
        self.parser.finish()
        self.state.end()
        self._sync_stats()
        self._emit()

    def close(self) -> None:
        self.reader.close()

    def _emit(self) -> None:
        if self._batch:
            batch = self._batch[:]
            self._batch.clear()
            self._sink(batch)

    def _sync_stats(self) -> None:
        if self.parser.changes == self._synced:
            return  # an idle poll: nothing parsed since the last copy
        self._synced = self.parser.changes
        stats = self.parser.stats
        self.state.parse_counts(
            formats=stats.formats,
            lines=stats.lines,
            not_understood=stats.not_understood,
            duplicate_steps=stats.duplicate_steps,
            parser_errors=stats.parser_errors,
            ranks_seen=stats.ranks_seen,
        )


class RecordFeed:
    """One record file (`sources/records`): its reader's `Step`s go straight to the sinks, no line
    path and no parser; the same `SourceState` a text log keeps, so every view shows it alike."""

    is_stream = False
    tail: FileTail | None = None  # not a tailed text file: no rotation copies to recognise

    def __init__(
        self, spec: SourceSpec, reader: RecordReader, sink: BatchSink, state: SourceState, joined: bool = False
    ) -> None:
        self.spec = spec
        self.joined = joined  # its steps join a text log's (`RunJoin`)
        self.state = state
        self.reader = reader
        self._sink = sink
        self.finished = False
        self._steps = 0
        state.set_path(spec.path)

    @property
    def last_data(self) -> float | None:
        return self.state.last_data_monotonic

    def quiet(self) -> bool:
        return self.reader.quiet()

    def pump(self, limit: int = CHUNK, *, live: bool = True) -> bool:
        if self.finished:
            return False
        got = self.reader.read(limit)
        size = offset = 0
        mtime = None
        if self.spec.path is not None and os.path.isfile(self.spec.path):
            st = os.stat(self.spec.path)
            size, mtime = st.st_size, st.st_mtime
            offset = size if not got.more else 0
        self.state.read_progress(
            size=size, offset=offset, mtime=mtime, catching_up=got.more, got_data=got.got_data, note=got.note
        )
        if got.records:
            self._steps += len(got.records)
            self.state.parse_counts(
                formats=[self.reader.kind],
                lines=self._steps,
                not_understood=0,
                duplicate_steps=0,
                parser_errors=0,
                ranks_seen=(),
            )
            self._sink(list(got.records))
        if not got.more and live:
            self.state.caught_up()
        return got.more

    def finish(self, final: bool = True) -> None:
        if not self.finished:
            self.finished = True
            self.state.end()

    def close(self) -> None:
        self.reader.close()


Feed = SourceFeed | RecordFeed


class Backfill:
    """The history of big files, read from byte 0 into a staging store while the pipeline's own
    store holds their tail windows (read first: the dashboard shows the present at once).

    Exact by construction: the staging store is a plain read of every source — the window's
    bytes too, a few MB parsed twice, so no parser state (format, rank prefixes, attempts) has to
    be carried across a splice — and it replaces the window store in one `Store.adopt` once every
    source reached its end; its feeds then go on following in place of the windows'."""

    def __init__(self, capacity: int) -> None:
        self.store = Store(capacity)
        self.feeds: dict[str, Feed] = {}
        self.starts: dict[str, int] = {}  # source name -> its window's first byte (0: read whole)
        self.redrawn = 0.0
        # The staging store's records kept in a spawned process from the history's first column
        # block on, when much is left to read (`Pipeline._backfill_sink`); taken back at the end.
        self.worker: StoreWorker | None = None
        self.may_spawn = True

    def pump(self, limit: int) -> bool:
        """Read the next `limit` bytes of history; True while some source has not reached its end."""
        pending = False
        for feed in list(self.feeds.values()):
            if feed.pump(limit):
                pending = True
        return pending

    def fraction(self, name: str) -> float | None:
        """The share of the history before `name`'s window read so far (None: no window)."""
        start = self.starts.get(name, 0)
        feed = self.feeds.get(name)
        if not start or feed is None or feed.tail is None:
            return None
        return min(0.99, feed.tail.offset / start)  # 100 % only once the store holds it all

    def close(self) -> None:
        for feed in self.feeds.values():
            feed.close()
        if self.worker is not None:
            self.worker.close(wait_s=0)  # (its records are not wanted any more: killed at once)


class RunJoins:
    """A run's record files joined to its text log (`sources/records/join.py`): the log each record
    file belongs to (`discover.run_log`), and the sinks that put their steps together — new steps
    delivered as any record, parts of steps already delivered into the store (`Store.add_parts`)
    and then to the other sinks."""

    def __init__(self, store: Store, deliver: BatchSink, sinks: list[BatchSink]) -> None:
        self.store = store
        self._deliver = deliver
        self._sinks = sinks  # the pipeline's own list: sinks added later are served too
        self._by_log: dict[str, RunJoin] = {}  # text log name -> the join of its run's record files

    def __bool__(self) -> bool:
        return bool(self._by_log)

    def __contains__(self, name: object) -> bool:
        return name in self._by_log

    def _joined(self, joined: list[Joined]) -> None:
        """A run's records after its join, in order, each run of one kind in one batch."""
        for is_part, run in itertools.groupby(joined, key=itemgetter(1)):
            batch = [record for record, _ in run]
            if not is_part:
                self._deliver(batch)
                continue
            self.store.add_parts(batch)  # type: ignore[arg-type]  # (parts are steps)
            for sink in self._sinks:
                sink(batch)

    def log_sink(self, name: str) -> BatchSink:
        """The sink of text log `name`: straight through until a record file joins it."""

        def sink(batch: list[Record]) -> None:
            join = self._by_log.get(name)
            if join is None:
                self._deliver(batch)
            else:
                self._joined(join.from_log(batch))

        return sink

    def for_record_file(self, spec: SourceSpec, feeds: Iterable[Feed]) -> RunJoin | None:
        """The join of the text log (among `feeds`) this record file belongs to, if any."""
        if spec.path is None:
            return None
        logs = {
            feed.spec.path: feed
            for feed in feeds
            if isinstance(feed, SourceFeed) and feed.spec.path is not None and not feed.is_stream
        }
        log = run_log(spec.path, list(logs), spec.pattern)
        if log is None:
            return None
        feed = logs[log]
        join = self._by_log.get(feed.spec.name)
        if join is None:
            # Steps the log gave before now went by unseen (in column blocks too): `RunJoin.late`.
            late = any(key.source == feed.state.source for key in self.store.step_records)
            join = self._by_log[feed.spec.name] = RunJoin(feed.state.source, late=late)
        return join

    def file_sink(self, join: RunJoin, state: SourceState) -> BatchSink:
        """The sink of a joined record file."""

        def sink(batch: list[Record]) -> None:
            if join.late and state.caught_up_monotonic is None:
                return  # what the file held when it appeared: the log showed those steps already
            self._joined(join.from_file(batch))

        return sink
