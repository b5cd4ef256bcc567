"""sources -> lines -> parsers -> sink. Runs once (summary, export) or follows (TUI, --follow).

The pipeline never touches the UI: it hands batches of records to a sink (the store, or an
exporter) and keeps each source's `SourceState` up to date in the store when it has one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence

from trainwatch.lines.assembler import LineAssembler
from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import SourceParser
from trainwatch.records import Record
from trainwatch.sources.discover import SourceSpec, expand, has_magic, rediscover
from trainwatch.sources.stdin import StdinSource
from trainwatch.sources.tail import CHUNK, FileTail
from trainwatch.store.store import SourceState, Store

BatchSink = Callable[[list[Record]], None]
REDISCOVER_EVERY_S = 2.0


class SourceReader:
    """One source: its byte reader, line assembler, parsers and state."""

    def __init__(self, spec: SourceSpec, sink: BatchSink, state: SourceState, wake: Callable[[], None]) -> None:
        self.spec = spec
        self.state = state
        self._sink = sink
        self._batch: list[Record] = []
        self.assembler = LineAssembler()
        self.parser = SourceParser(spec.name, new_parsers(), self._batch.append, path=spec.path)
        self.tail = FileTail(spec.path) if spec.path is not None else None
        self.stdin = StdinSource(wake=wake) if spec.path is None else None
        self.finished = False
        state.path = spec.path
        if self.stdin is not None:
            state.follow_mode = "stdin"

    def _emit(self) -> None:
        if self._batch:
            batch = self._batch[:]
            self._batch.clear()
            self._sink(batch)

    def pump(self, limit: int = CHUNK) -> bool:
        """Read what is available (up to limit). True if more is waiting right now."""
        if self.finished:
            return False
        more = False
        if self.tail is not None:
            got = self.tail.read(limit)
            if got.old_data:
                self.parser.feed_lines(self.assembler.feed(got.old_data))
            if got.reset:
                self.parser.feed_lines(self.assembler.finish())
                self.parser.at_eof()
                self.assembler.reset()
            if got.data:
                self.parser.feed_lines(self.assembler.feed(got.data))
                now = time.time()
                self.state.last_data_wall = now
                self.state.last_data_monotonic = time.monotonic()
            if got.notes:
                self.state.note = got.notes[-1]
            elif got.data and self.state.note.startswith("waiting"):
                self.state.note = ""
            self.state.size = self.tail.size
            self.state.offset = self.tail.offset
            self.state.mtime = self.tail.mtime
            self.state.catching_up = not got.at_eof
            more = not got.at_eof
        elif self.stdin is not None:
            data, ended = self.stdin.read(limit)
            if data:
                self.parser.feed_lines(self.assembler.feed(data))
                self.state.last_data_wall = time.time()
                self.state.last_data_monotonic = time.monotonic()
                self.state.offset += len(data)
                self.state.size = self.state.offset
            if ended:
                self.finish()
                return False
            more = len(data) >= limit
        if not more:
            self.parser.at_eof()
        self._sync_stats()
        self._emit()
        return more

    def finish(self) -> None:
        """End of input for this source: release the last partial line and held blocks."""
        if self.finished:
            return
        self.finished = True
        self.parser.feed_lines(self.assembler.finish())
        self.parser.finish()
        self.state.ended = True
        self.state.catching_up = False
        self._sync_stats()
        self._emit()
        if self.tail is not None:
            self.tail.close()

    def _sync_stats(self) -> None:
        stats = self.parser.stats
        self.state.formats = stats.formats
        self.state.lines = stats.lines
        self.state.not_understood = stats.not_understood
        self.state.duplicate_steps = stats.duplicate_steps
        self.state.parser_errors = stats.parser_errors


class Pipeline:
    def __init__(
        self,
        paths: Sequence[str],
        *,
        store: Store | None = None,
        sink: BatchSink | None = None,
        poll_interval: float = 0.1,
    ) -> None:
        self.paths = list(paths)
        self.store = store if store is not None else Store()
        self._extra_sink = sink
        self.poll_interval = poll_interval
        self.readers: dict[str, SourceReader] = {}
        self.problems: list[str] = []
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._patterns: set[str] = set()
        specs, problems = expand(self.paths)
        self.problems = problems
        for spec in specs:
            self._add(spec)
            if spec.pattern:
                self._patterns.add(spec.pattern)
        for raw in self.paths:
            if raw != "-" and (os.path.isdir(raw) or has_magic(raw)):
                self._patterns.add(raw)

    # -------------------------------------------------------------- plumbing
    def add_sink(self, sink: BatchSink) -> None:
        self._extra_sink = sink

    def _sink(self, batch: list[Record]) -> None:
        self.store.add_many(batch)
        if self._extra_sink is not None:
            self._extra_sink(batch)

    def _add(self, spec: SourceSpec) -> None:
        if spec.name in self.readers:
            return
        with self.store.lock:
            state = self.store.source(spec.name)
        self.readers[spec.name] = SourceReader(spec, self._sink, state, self._wake.set)

    def _rediscover(self) -> None:
        for pattern in self._patterns:
            for path in rediscover(pattern):
                if path not in self.readers:
                    self._add(SourceSpec(path, path, pattern=pattern))

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
            reader.finish()
        self.store.touch()

    def pump_once(self) -> bool:
        """One round over all sources. True if any source has more data waiting."""
        more = False
        for reader in list(self.readers.values()):
            if reader.pump():
                more = True
        return more

    def finish_all(self) -> None:
        for reader in self.readers.values():
            reader.finish()

    def follow(self, stop: threading.Event | None = None, until_inputs_end: bool = False) -> None:
        """Follow until stopped: the loop the background thread runs.

        until_inputs_end: also return once every source is stdin and it has closed
        (`cmd | trainwatch export --follow -` ends with its input)."""
        stop = stop or self._stop
        last_discovery = time.monotonic()
        while not stop.is_set():
            if until_inputs_end and self.readers and all(
                r.finished and r.spec.path is None for r in self.readers.values()
            ):
                return
            more = self.pump_once()
            now = time.monotonic()
            if self._patterns and now - last_discovery >= REDISCOVER_EVERY_S:
                self._rediscover()
                last_discovery = now
            if not more:
                self._wake.wait(self.poll_interval)
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
        for reader in self.readers.values():
            if reader.tail is not None:
                reader.tail.close()
