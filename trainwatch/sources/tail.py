"""Follow one path like `tail -F`, with its own descriptors and saved offsets.

- waits for a path that does not exist yet (or cannot be opened yet), saying where it looked
  and which existing names are nearest (a mistyped path is not waited for in silence);
- reads with `pread` from the saved offset (never mmap: a truncated mmap raises SIGBUS),
  never trusting `st_size` alone (network filesystems cache it);
- truncated (size below the offset, confirmed by reading at the offset) or overwritten
  (the first bytes, or the bytes just before the offset, changed: copytruncate followed
  by fast regrowth, a job relaunched with `>`): the part the rotated copy `PATH.1` holds
  beyond the offset is read first, then the file is read again from 0;
- another inode at the path (rename rotation, delete + recreate): the old descriptor is
  kept and drained — a job writing to a renamed log keeps writing there — and the new
  file is read as a new stream; the old one is closed once the new file gets data and
  the old has been quiet for a moment;
- a deleted path keeps being read through the open descriptor until a file appears there.

Each stream (generation) has its own number so the reader gives each its own line
assembler: the events of one `read()` are applied in order. A RESET (same file, content
started again) and a REPLACED (another file at the path) carry a note saying what happened:
the reader marks the spot in its raw lines and lets the parsers decide whether a new run
segment began (a relaunch) or the same run goes on (copytruncate, logrotate).
"""

from __future__ import annotations

import math
import os
import stat
import time
from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from trainwatch.sources.problems import missing_hint

CHUNK = 8 * 1024 * 1024
HEAD_BYTES = 1024  # identity of a file's content: its first bytes (lnav hashes its first line)
READ_SLACK = 64 * 1024  # a read asks for the size `fstat` gave plus this
ANCHOR_BYTES = 256  # the bytes just before the offset: must not change in an append-only log
ANCHOR = "anchor"  # `content_changed`: the anchor is compared by the read that follows
DRAIN_QUIET_S = 1.0  # an old stream is closed after this long without growth (once the new one has data)
# With `path_events` (the directory watcher reports each file created, moved or deleted at the
# path: `path_changed`), a file that grew is not asked at each append whether its path now names
# another file (a `stat` by path: 10 us of a 25 us read on overlayfs, 256 files x 4 appends a
# second), only this often; a read that found nothing, or one after such an event, asks at once.
# (The watcher's events say it first; this only covers events it lost, a queue overflow: 0.5 s
# was 512 stats a second on 256 growing files, half a percent of a core.)
PATH_CHECK_S = 2.0
MAX_DRAINING = 4
MAX_COPIES = 9  # PATH.1 ... PATH.9 looked at after a copytruncate
MAX_RECOVER_BYTES = 64 * 1024 * 1024
WAITING = "waiting for the file to appear"
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class Ev(Enum):
    DATA = "data"  # bytes of stream `gen`
    RESET = "reset"  # stream `gen` restarts from byte 0: drop its torn partial line, number from 1
    REPLACED = "replaced"  # stream `gen` is a new file at the path (rotated, recreated): number from 1
    CLOSED = "closed"  # stream `gen` has ended for good (an old, rotated file)


class TailEvent(NamedTuple):  # (not a frozen dataclass: a thousand of these a second, see `reader.Read`)
    kind: Ev
    gen: int
    data: bytes = b""
    note: str = ""  # RESET / REPLACED: what happened, e.g. "file truncated at 2821 bytes"


@dataclass
class TailRead:
    events: list[TailEvent] = field(default_factory=list)
    at_eof: bool = True  # nothing more is readable right now
    got_data: bool = False
    notes: list[str] = field(default_factory=list)


class _Handle:
    """One open file: descriptor, identity, offset, and what identifies its content."""

    def __init__(self, fd: int, st: os.stat_result, gen: int) -> None:
        self.fd = fd
        self.ident = (st.st_dev, st.st_ino)
        self.gen = gen
        self.offset = 0
        self.size = st.st_size
        self.mtime = st.st_mtime
        self.seen: tuple[int, int] = (-1, -1)  # (mtime_ns, size) at the last content check
        self.head = b""
        self.anchor = b""
        self.last_growth = time.monotonic()
        self.path_checked = self.last_growth  # when the path was last asked (it was just opened by it)

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass

    def pread(self, n: int, at: int) -> bytes:
        try:
            return os.pread(self.fd, n, at)
        except OSError:
            return b""

    def read(self, limit: int, chunk: int, first: bytes | None = None) -> bytes:
        """Up to `limit` bytes from the offset. A short read of a regular file is its end as of
        now: no second call to hear so (a followed file's append is one read, not two: 256
        files growing 4 lines/s each is a thousand reads a second). The first read asks for
        what the last `fstat` says is there (plus slack), not for `limit`: CPython allocates
        the size asked (15 us for 1 MB, 0.7 us for 64 KB, per append). One piece is returned
        as it came, without a copy (a catch-up's 8 MB chunks). `first`: the first piece,
        already read (`read_anchored`)."""
        pieces: list[bytes] = []
        got = 0
        while got < limit:
            # (a full first piece goes on with whole chunks: the file grew meanwhile)
            want = min(chunk, limit - got) if pieces else self._first_want(limit, chunk)
            if first is not None:
                piece, first = first, None
            else:
                piece = self.pread(want, self.offset)
            if not piece:
                break
            if self.offset < HEAD_BYTES:
                self.head = (self.head + piece[: HEAD_BYTES - self.offset])[:HEAD_BYTES]
            pieces.append(piece)
            got += len(piece)
            self.offset += len(piece)
            if len(piece) < want:
                break
        if not pieces:
            return b""
        out = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        self.anchor = (self.anchor + out[-ANCHOR_BYTES:])[-ANCHOR_BYTES:]
        self.last_growth = time.monotonic()
        return out

    def _first_want(self, limit: int, chunk: int) -> int:
        """What a read's first `pread` asks for: what the last `fstat` saw beyond the offset, plus slack."""
        return min(chunk, limit, max(self.size - self.offset, 0) + READ_SLACK)

    def read_anchored(self, limit: int, chunk: int) -> bytes | None:
        """`read`, its first `pread` starting at the anchor to compare it: the overwrite check's
        own `pread` saved on each small append (256 files written 4 times a second). None,
        nothing read, if the anchor changed."""
        n = len(self.anchor)
        piece = self.pread(self._first_want(limit, chunk) + n, self.offset - n)
        if piece[:n] != self.anchor:
            return None
        return self.read(limit, chunk, first=piece[n:])

    def content_changed(self, st: os.stat_result) -> str:
        """Returns "truncated", "overwritten", ANCHOR (the first bytes are the same; the bytes
        just before the offset are still to be compared, by the read that follows on a small
        append) or "" (looked at only when size or mtime moved)."""
        if st.st_size < self.offset and not self.pread(1, self.offset - 1):
            return "truncated"
        key = (st.st_mtime_ns, st.st_size)
        if key == self.seen or self.offset == 0:
            self.seen = key
            return ""
        self.seen = key
        if self.head and self.pread(len(self.head), 0) != self.head:
            return "overwritten"
        if not self.anchor:
            return ""
        if st.st_size - self.offset <= READ_SLACK:
            return ANCHOR
        # (a large read compares on its own: the read then need not copy its data off the anchor)
        return "" if self.pread(len(self.anchor), self.offset - len(self.anchor)) == self.anchor else "overwritten"


def _open(path: str) -> tuple[int, os.stat_result] | str:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return WAITING
    except OSError as exc:
        return f"cannot stat: {exc.strerror}"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file; not read"
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return f"cannot open: {exc.strerror}"
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # replaced between stat and open
        os.close(fd)
        return "not a regular file; not read"
    return fd, st


class FileTail:
    def __init__(self, path: str, chunk: int = CHUNK, start: int = 0) -> None:
        """start: the byte the first file opened is read from (a tail window at a line start;
        `sources/window.py`); a file replaced later is read from 0."""
        self.path = path
        self.chunk = chunk
        self.start = start
        self.current: _Handle | None = None
        self.draining: list[_Handle] = []
        self.idents: set[tuple[int, int]] = set()  # every inode this tail has read
        self.rotations = 0
        self.past_heads: deque[bytes] = deque(maxlen=8)  # content identity of streams we have left
        self.missing_note = ""
        self._next_gen = 0
        self._deleted_noted = False
        # Set while the directory watcher reports the path's events (`PATH_CHECK_S`); without
        # it (polling, a network filesystem) the path is asked at the end of every read.
        self.path_events = False

    def path_changed(self) -> None:
        """A file was created, moved or deleted at the path: the next read asks the path again."""
        if self.current is not None:
            self.current.path_checked = -math.inf

    # ---------------------------------------------------------------- views
    @property
    def offset(self) -> int:
        return self.current.offset if self.current else 0

    @property
    def size(self) -> int:
        return self.current.size if self.current else 0

    @property
    def mtime(self) -> float | None:
        return self.current.mtime if self.current else None

    @property
    def head(self) -> bytes:
        return self.current.head if self.current else b""

    @property
    def opened_once(self) -> bool:
        return self._next_gen > 0

    def known_heads(self) -> list[bytes]:
        """First bytes of every stream this tail has read (to recognise their rotated copies)."""
        heads = [*self.past_heads, *(h.head for h in self.draining)]
        if self.current is not None:
            heads.append(self.current.head)
        return [h for h in heads if h]

    def close(self) -> None:
        for handle in self.draining:
            handle.close()
        self.draining.clear()
        if self.current is not None:
            self.current.close()
            self.current = None

    # ---------------------------------------------------------------- reading
    def _open_current(self, result: TailRead) -> bool:
        opened = _open(self.path)
        if opened == WAITING:  # said with where we looked and what is near, worked out once
            opened = (
                self.missing_note if self.missing_note.startswith(WAITING) else f"{WAITING}: {missing_hint(self.path)}"
            )
        if isinstance(opened, str):
            if opened != self.missing_note:
                result.notes.append(opened)
            self.missing_note = opened
            return False
        self.missing_note = ""
        fd, st = opened
        self.current = _Handle(fd, st, self._next_gen)
        if self._next_gen == 0 and 0 < self.start <= st.st_size:
            self.current.offset = self.start
        self._next_gen += 1
        self.idents.add(self.current.ident)
        self._deleted_noted = False
        return True

    def read(self, limit: int = CHUNK) -> TailRead:
        """Everything readable now, at most about `limit` bytes, as ordered events."""
        result = TailRead()
        budget = limit - self._drain_old(result, limit)
        if budget <= 0:
            return result
        if self.current is None and not self._open_current(result):
            return result
        handle = self.current
        assert handle is not None
        try:
            st = os.fstat(handle.fd)
        except OSError:
            self.current = None
            handle.close()
            return result
        handle.mtime = st.st_mtime
        handle.size = st.st_size
        change = handle.content_changed(st)
        if change and change != ANCHOR:
            self._restart(handle, change, result)
        data = (
            handle.read_anchored(max(budget, 1), self.chunk)
            if change == ANCHOR
            else handle.read(max(budget, 1), self.chunk)
        )
        if data is None:  # the bytes just before the offset changed
            self._restart(handle, "overwritten", result)
            data = handle.read(max(budget, 1), self.chunk)
        if data:
            result.events.append(TailEvent(Ev.DATA, handle.gen, data))
            result.got_data = True
            handle.size = max(handle.size, handle.offset)
        if len(data) >= budget:
            result.at_eof = False
            return result
        if data and self.path_events and handle.last_growth - handle.path_checked < PATH_CHECK_S:
            return result
        handle.path_checked = handle.last_growth if data else time.monotonic()
        self._check_replaced(handle, result, budget - len(data))
        return result

    def _restart(self, handle: _Handle, change: str, result: TailRead) -> None:
        """Truncated or overwritten in place: first recover what the rotated copies hold that we never read."""
        how = "truncated" if change == "truncated" else "rewritten from the start"
        what = f"file {'truncated' if change == 'truncated' else 'rewritten'} at {handle.offset} bytes"
        recovered = self._recover_from_copies(handle)
        for blob in recovered:
            if blob:
                result.events.append(TailEvent(Ev.DATA, handle.gen, blob))
                result.got_data = True
            result.events.append(TailEvent(Ev.RESET, handle.gen, note=what))
        if not recovered:
            result.events.append(TailEvent(Ev.RESET, handle.gen, note=what))
        total = sum(len(b) for b in recovered)
        extra = f" ({total} unread bytes taken from its rotated copies)" if total else ""
        result.notes.append(f"file was {how} at {handle.offset} bytes; reading it again from the start{extra}")
        self.past_heads.append(handle.head)
        handle.offset = 0
        handle.head = b""
        handle.anchor = b""
        handle.seen = (-1, -1)
        self.rotations += 1

    def _recover_from_copies(self, handle: _Handle) -> list[bytes]:
        """copytruncate: lines written after our last read are only in PATH.1 — or, if several
        rotations went by unseen, in PATH.k (the copy of what we were reading) and the newer
        copies PATH.k-1 ... PATH.1. Returns the bytes to read, oldest first, one blob per copy."""
        if not handle.head:
            return []
        for k in range(1, MAX_COPIES + 1):
            blob = self._read_copy(f"{self.path}.{k}", handle)
            if blob is None:
                continue
            newer = [self._read_copy(f"{self.path}.{j}", None) or b"" for j in range(k - 1, 0, -1)]
            return [blob, *newer]
        return []

    def _read_copy(self, copy: str, handle: _Handle | None) -> bytes | None:
        """The copy's bytes beyond our offset if it is a copy of `handle`'s content (all of it if
        handle is None); None if it is not that copy."""
        opened = _open(copy)
        if isinstance(opened, str):
            return None
        fd, _st = opened
        try:
            at = 0
            if handle is not None:
                if os.pread(fd, len(handle.head), 0) != handle.head:
                    return None
                anchor_at = handle.offset - len(handle.anchor)
                if handle.anchor and os.pread(fd, len(handle.anchor), anchor_at) != handle.anchor:
                    return None
                at = handle.offset
            out = bytearray()
            while len(out) < MAX_RECOVER_BYTES:
                piece = os.pread(fd, self.chunk, at)
                if not piece:
                    break
                out += piece
                at += len(piece)
            return bytes(out)
        except OSError:
            return None
        finally:
            os.close(fd)

    def _check_replaced(self, handle: _Handle, result: TailRead, budget: int) -> None:
        """At the end of the current file: has the path moved on to another file?"""
        try:
            pst = os.stat(self.path)
        except FileNotFoundError:
            if not self._deleted_noted:
                result.notes.append("file was deleted; still reading the open file until a new one appears")
                self._deleted_noted = True
            return
        except OSError:
            return
        if not stat.S_ISREG(pst.st_mode) or (pst.st_dev, pst.st_ino) == handle.ident:
            return
        old = self.current
        self.current = None
        if not self._open_current(result):
            self.current = old
            return
        assert old is not None and self.current is not None
        old.last_growth = time.monotonic()
        self.draining.append(old)
        while len(self.draining) > MAX_DRAINING:
            oldest = self.draining.pop(0)
            self.past_heads.append(oldest.head)
            result.events.append(TailEvent(Ev.CLOSED, oldest.gen))
            oldest.close()
        self.rotations += 1
        result.notes.append("file was replaced (rotated or recreated); following the new file")
        new = self.current
        result.events.append(TailEvent(Ev.REPLACED, new.gen, note="file replaced (rotated or recreated)"))
        data = new.read(max(budget, 1), self.chunk)
        if data:
            result.events.append(TailEvent(Ev.DATA, new.gen, data))
            result.got_data = True
            new.size = max(new.size, new.offset)
            if len(data) >= budget:
                result.at_eof = False

    def _drain_old(self, result: TailRead, budget: int) -> int:
        """Read rotated-away files the writer may still append to; close them once it moved on."""
        used = 0
        now = time.monotonic()
        new_has_data = self.current is not None and self.current.offset > 0
        for handle in list(self.draining):
            data = handle.read(max(budget - used, 1), self.chunk)
            if data:
                used += len(data)
                result.events.append(TailEvent(Ev.DATA, handle.gen, data))
                result.got_data = True
                if used >= budget:
                    result.at_eof = False
                    return used
                continue
            if new_has_data and now - handle.last_growth >= DRAIN_QUIET_S:
                self.draining.remove(handle)
                self.past_heads.append(handle.head)
                handle.close()
                result.events.append(TailEvent(Ev.CLOSED, handle.gen))
        return used

    def finish_events(self) -> list[TailEvent]:
        """Close everything; one CLOSED per stream still open (for the reader's assemblers)."""
        events = [TailEvent(Ev.CLOSED, h.gen) for h in self.draining]
        if self.current is not None:
            events.append(TailEvent(Ev.CLOSED, self.current.gen))
        self.close()
        return events
