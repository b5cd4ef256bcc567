"""One source's bytes made lines: its file tail (or its stream: stdin, a FIFO), a line assembler per
stream, and what truncation, replacement and rotation mean for the lines already started.

It knows nothing of parsers or the store: lines go to a `LineSink` (the pipeline hands them to
the source's parser and raw-log ring), and each `pump` says what it found in a `Read`.

Catch-up: a large read of whole clean lines goes to the sink as one block of text (the parser
turns the lines of known hot shapes into column blocks), when the pipeline says it can take one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NamedTuple, Protocol

from trainwatch.lines.assembler import Line, LineAssembler
from trainwatch.sources.discover import SourceSpec
from trainwatch.sources.line_index import LineIndex
from trainwatch.sources.stream import StreamSource
from trainwatch.sources.tail import CHUNK, Ev, FileTail, TailEvent

# Reads at least this large go through the bulk path (the same records: tests/perf/test_bulk_catchup.py runs
# every corpus log through it at any read size): the catch-up's, and a followed file growing fast (1000
# Megatron lines/s arrive ~7 KB a read: the follow loop's CPU 13 % -> 6 %), while the bulk path pays
# (`LineSink.bulk_worth_trying`: an unranked log's rows go line by line anyway, at a cost of their own). A run
# writing a line now and then is read line by line, as its reads are smaller.
BULK_MIN_BYTES = 4 * 1024
CATCHUP_BYTES = 256 * 1024  # reads this large go in bulk in any case: a catch-up learns its shapes first


class LineSink(Protocol):
    """Where one source's lines go, in order."""

    def lines(self, lines: list[Line]) -> None: ...

    def block(self, first: int, count: int, text: str) -> None:
        """`count` whole clean lines numbered from `first`, as one text ending in a newline."""

    def at_eof(self) -> None:
        """The lines so far are all there is for now (a line held back for its continuation is complete)."""

    def restarted(self, note: str) -> None:
        """The path's content starts again from line 1 (truncated, rewritten, replaced)."""

    def bulk_worth_trying(self) -> bool:
        """A small read is worth the bulk path (the last bulk read took most of its rows in bulk, or a retry is due)."""


class Read(NamedTuple):
    """What one `pump` found, for the source's state. (A named tuple: a frozen dataclass's
    `__init__` takes 0.8 us, a tenth of a small read's own cost at 1,024 reads a second.)"""

    more: bool  # more is waiting right now: still catching up
    got_data: bool
    note: str | None  # the newest thing to say about the file (unreadable, rotated...), if any
    size: int
    offset: int
    mtime: float | None
    ended: bool = False  # the stream closed: `finish(final=True)` is due


class SourceReader:
    """Reads one source into lines for its sink."""

    def __init__(
        self,
        spec: SourceSpec,
        sink: LineSink,
        wake: Callable[[], None],
        bulk_ok: Callable[[], bool],
        start: int = 0,
    ) -> None:
        """start: read the file from this byte (a tail window's line start) instead of 0."""
        self.spec = spec
        self._sink = sink
        self._bulk_ok = bulk_ok
        self.assemblers: dict[int, LineAssembler] = {}
        self.tail = FileTail(spec.path, start=start) if spec.path is not None and not spec.stream else None
        self.stream: StreamSource | None = None
        if spec.path is None:
            self.stream = StreamSource(stream=sys.stdin.buffer, wake=wake)
        elif spec.stream:
            self.stream = StreamSource(path=spec.path, wake=wake)
        self.finished = False
        self.catching_up = False
        self._stream_bytes = 0
        # The file the path names now, indexed as it is read (streams cannot be read again: none).
        # A tail window has no index either: its line numbers count from the window's start, not
        # the file's, until the history is read (then the plain reader's index replaces it).
        self.line_index: LineIndex | None = LineIndex() if self.tail is not None and not start else None
        self._index_gen = -1  # the stream (generation) the index describes

    @property
    def assembler(self) -> LineAssembler:
        """The assembler of the newest stream (the file the path names now)."""
        if not self.assemblers:
            self.assemblers[0] = LineAssembler()
        return self.assemblers[max(self.assemblers)]

    def pump(self, limit: int = CHUNK) -> Read:
        """Read what is available (up to about `limit` bytes) and hand its lines to the sink."""
        if self.tail is not None:
            tail = self.tail
            got = tail.read(limit)
            for event in got.events:
                self._apply(event)
            self.catching_up = not got.at_eof
            note = got.notes[-1] if got.notes else None
            return Read(not got.at_eof, got.got_data, note, max(tail.size, tail.offset), tail.offset, tail.mtime)
        assert self.stream is not None
        data, ended = self.stream.read(limit)
        if data:
            self._feed_bytes(self.assembler, data)
            self._stream_bytes += len(data)
        self.catching_up = not ended and len(data) >= limit
        n = self._stream_bytes
        note = (self.stream.error or None) if ended else None
        return Read(self.catching_up, bool(data), note, n, n, None, ended=ended)

    def _feed_bytes(self, asm: LineAssembler, data: bytes) -> None:
        """Bytes of one stream: a large read of whole clean lines in bulk, else line by line."""
        if (
            len(data) >= BULK_MIN_BYTES
            and self._bulk_ok()
            and (len(data) >= CATCHUP_BYTES or self._sink.bulk_worth_trying())
        ):
            if asm.has_partial:  # the previous read's last line: complete it line by line
                cut = data.find(b"\n") + 1
                self._sink.lines(asm.feed(data[:cut]))
                data = data[cut:]
            block = asm.feed_clean_block(data)
            if block is not None:
                first, text = block
                self._sink.block(first, asm.next_line_no - first, text)
                data = data[data.rfind(b"\n") + 1 :]
        self._sink.lines(asm.feed(data))

    def _index(self, event: TailEvent) -> None:
        """Keep the line index on the newest stream: its bytes extend it; its restart (or a
        new file at the path) starts it again. A rotated-away stream's bytes are not indexed."""
        index = self.line_index
        if index is None or event.gen < self._index_gen:
            return
        if event.gen > self._index_gen:
            self._index_gen = event.gen
            if index.size:
                index.reset()
        if event.kind is Ev.DATA:
            index.feed(event.data)
        elif event.kind is Ev.RESET:
            index.reset()

    def _apply(self, event: TailEvent) -> None:
        self._index(event)
        if event.kind is Ev.REPLACED:
            self.assemblers.setdefault(event.gen, LineAssembler())
            self._sink.at_eof()
            self._sink.restarted(event.note)
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
        self._sink.lines(asm.abandon())
        self._sink.at_eof()
        if event.kind is Ev.RESET:
            asm.reset()
            self._sink.restarted(event.note)
        else:
            del self.assemblers[event.gen]

    def quiet(self) -> bool:
        """A safety poll may skip this source: the path still names the file read to its end,
        unchanged since (same inode, size, mtime). Far cheaper than a read: one stat."""
        tail = self.tail
        if tail is None or tail.current is None or tail.draining or self.catching_up:
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
        """No more input will be read: the unfinished lines of every stream go to the sink.

        final: the input really ended (read to its end, stdin closed), so a last line
        without newline is complete. Otherwise (following stopped) it may be torn by a
        writer still running: it is shown, not parsed."""
        if self.finished:
            return
        self.finished = True
        self.catching_up = False
        if self.tail is not None:
            for event in self.tail.finish_events():
                asm = self.assemblers.pop(event.gen, None)
                if asm is not None:
                    self._sink.lines(asm.finish() if final else asm.abandon())
        for asm in self.assemblers.values():
            self._sink.lines(asm.finish() if final else asm.abandon())
        self.assemblers.clear()

    def close(self) -> None:
        if self.tail is not None:
            self.tail.close()
