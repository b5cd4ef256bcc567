"""Turn a byte stream, arriving in arbitrary chunks, into numbered, sanitized lines.

- Lines are split on `\\n` and numbered from 1 (the contract's `line`); `\\r\\n` is a plain
  line end (Windows-written logs), even when the chunk boundary falls between the two.
- `\\r` progress frames: every non-empty `\\r`-terminated segment is emitted as a FRAME
  (bars such as Lightning's carry metrics), the text after the last `\\r` is the LINE
  (records are glued after the last frame: `...it/s]{'loss': ...}`). Only the latest
  frame is kept in memory, so a `\\r` storm costs nothing.
- A partial line is held until its `\\n` arrives. `finish()` releases it at a real end;
  `abandon()` releases it for display only (a writer still running, or a file that was
  truncated under us, left a torn line: `loss 2.3|45` must never be parsed as 2.3).
- Absurdly long lines keep their head and tail only: memory stays bounded whatever the
  line length.
- Invalid UTF-8 is decoded with replacement characters, never an exception; NUL bytes
  (sparse holes left by copytruncate) are dropped before they can form a giant line.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from trainwatch.lines.sanitize import sanitize

MAX_LINE_BYTES = 256 * 1024
_KEEP = 32 * 1024
# Anything sanitize() would touch, other than the line separators themselves.
_DIRTY = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


_CLEAN_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n"


def _lines_short(data: bytes, end: int, limit: int) -> bool:
    """No line of data[:end] is longer than `limit` bytes (so characters): a longer line would
    contain a whole window of limit/2 bytes without a newline. False: look closer."""
    window = limit // 2
    for start in range(0, end, window):
        if data.find(b"\n", start, min(end, start + window)) == -1:
            return False
    return True


@lru_cache(maxsize=4)
def _long_line(limit: int) -> re.Pattern[str]:
    """A line longer than `limit` characters (`^` fails fast off line starts: one linear scan)."""
    return re.compile(rf"(?m)^[^\n]{{{limit + 1}}}")


class Kind(Enum):
    LINE = "line"
    FRAME = "frame"


@dataclass(frozen=True, slots=True)
class Line:
    no: int
    text: str
    kind: Kind = Kind.LINE
    # Shown in the raw log, never parsed: a LINE whose text is only its last progress
    # frame (already delivered as a FRAME), or a torn line left at a truncation/stop.
    display_only: bool = False


class LineAssembler:
    """Incremental: `feed()` any chunking of the same bytes yields the same lines."""

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._max = max(max_line_bytes, 2 * _KEEP + 1)
        self._segment: list[str] = []  # text since the last \r or \n
        self._segment_len = 0
        self._tail = ""  # kept tail of an over-long segment
        self._capped = False
        self._elided = 0
        self._last_frame = ""
        self._pending_cr = False  # the text so far ended with \r: a frame end, or half of \r\n
        self._next_no = 1
        self.lines_capped = 0

    @property
    def next_line_no(self) -> int:
        return self._next_no

    @property
    def has_partial(self) -> bool:
        """Bytes of a line whose newline has not arrived yet are held."""
        return bool(self._segment_len or self._capped or self._pending_cr or self._last_frame)

    def reset(self) -> None:
        """The source was truncated or replaced: start over at line 1."""
        self.__init__(self._max)  # type: ignore[misc]

    def feed(self, data: bytes) -> list[Line]:
        text = self._decoder.decode(data)
        if "\x00" in text:
            text = text.replace("\x00", "")
        return self._feed_text(text)

    def feed_clean_block(self, data: bytes) -> tuple[int, str] | None:
        """Catch-up fast path: the whole lines of `data` as one text, without a `Line` per line.

        Only when they are exactly the lines `feed()` would give: nothing is held (no partial
        line, no half-decoded character), and the bytes up to the last newline are valid UTF-8
        without `\r`, NUL, characters `sanitize` would touch or over-long lines. Then those
        bytes are consumed and `(number of the first line, text ending with "\n")` returned;
        the caller feeds the rest of `data` (a partial line) with `feed()`. Otherwise nothing
        is consumed and None is returned."""
        if self.has_partial or self._decoder.getstate()[0]:
            return None
        end = data.rfind(b"\n") + 1
        if not end:
            return None
        # (An 8 MB chunk is neither sliced nor copied: each pass over it is a few ms, 128 a GB.)
        try:
            text = str(memoryview(data)[:end], "utf-8")
        except UnicodeDecodeError:
            return None
        # Plain ASCII without \r: nothing to check. (The partial line after `end` is looked at
        # too: a byte there that is not plain only sends the text to the closer look.)
        if data.translate(None, _CLEAN_ASCII):
            if "\r" in text or _DIRTY.search(text):
                return None
        if end > self._max and not _lines_short(data, end, self._max) and _long_line(self._max).search(text):
            return None
        first = self._next_no
        self._next_no += data.count(b"\n", 0, end)  # (a newline byte is a newline character in UTF-8)
        return first, text

    def finish(self) -> list[Line]:
        """Real end of input (read to the end, stdin closed): release a final line without newline."""
        out = self._feed_text(self._decoder.decode(b"", final=True).replace("\x00", ""))
        self._settle_cr(out)
        if self._segment_len or self._last_frame or self._capped:
            out.extend(self._end_line())
        return out

    def abandon(self) -> list[Line]:
        """The stream stops here but its writer did not finish the line: show it, never parse it."""
        out = self._feed_text(self._decoder.decode(b"", final=True).replace("\x00", ""))
        self._settle_cr(out)
        if self._segment_len or self._capped:
            text = sanitize(self._take_segment())
            if text.strip():
                out.append(Line(self._next_no, text, display_only=True))
                self._next_no += 1
        self._last_frame = ""
        return out

    # ------------------------------------------------------------- internals
    def _settle_cr(self, out: list[Line]) -> None:
        if self._pending_cr:
            self._pending_cr = False
            self._end_frame(out)

    def _feed_text(self, text: str) -> list[Line]:
        out: list[Line] = []
        if not text:
            return out
        if self._pending_cr:
            self._pending_cr = False
            if text[0] == "\n":
                out.extend(self._end_line())
                text = text[1:]
            else:
                self._end_frame(out)
        if "\r" in text:
            self._feed_general(text, out)
            return out
        # No \r: finish a held partial line, then take whole lines at once.
        start = 0
        if self.has_partial:
            nl = text.find("\n")
            if nl == -1:
                self._append(text)
                return out
            self._append(text[:nl])
            out.extend(self._end_line())
            start = nl + 1
        parts = text[start:].split("\n")
        rest = parts.pop()
        no = self._next_no
        clean = not _DIRTY.search(text, start)
        for part in parts:
            if len(part) > self._max:
                part = self._cap(part)
            out.append(Line(no, part if clean else sanitize(part)))
            no += 1
        self._next_no = no
        if rest:
            self._append(rest)
        return out

    def _feed_general(self, text: str, out: list[Line]) -> None:
        n = len(text)
        start = 0
        nl = cr = -1  # next \n / \r at or after start, n if none: each found once (a storm stays linear)
        while start < n:
            if nl < start:
                nl = text.find("\n", start)
                nl = n if nl == -1 else nl
            if cr < start:
                cr = text.find("\r", start)
                cr = n if cr == -1 else cr
            if nl == n and cr == n:
                self._append(text[start:])
                return
            if cr < nl:
                self._append(text[start:cr])
                if cr + 1 == n:
                    self._pending_cr = True  # \r\n may be split across chunks
                    return
                if text[cr + 1] == "\n":
                    out.extend(self._end_line())
                    start = cr + 2
                else:
                    self._end_frame(out)
                    start = cr + 1
            else:
                self._append(text[start:nl])
                out.extend(self._end_line())
                start = nl + 1

    def _append(self, piece: str) -> None:
        if not piece:
            return
        if not self._capped and self._segment_len + len(piece) <= self._max:
            self._segment.append(piece)
            self._segment_len += len(piece)
            return
        # Over-long: keep the head (first _KEEP characters) and a rolling tail.
        if not self._capped:
            # First overflow: the head is the first _KEEP characters of segment + piece.
            self._segment.append(piece)
            full = "".join(self._segment)
            self._segment = [full[:_KEEP]]
            self._segment_len = _KEEP
            self._capped = True
            self._tail = ""
            piece = full[_KEEP:]
        if len(piece) >= _KEEP:
            self._elided += len(self._tail) + len(piece) - _KEEP
            self._tail = piece[-_KEEP:]
            return
        self._tail += piece
        if len(self._tail) > _KEEP:
            self._elided += len(self._tail) - _KEEP
            self._tail = self._tail[-_KEEP:]

    def _take_segment(self) -> str:
        text = "".join(self._segment)
        if self._capped:
            text = f"{text} …[{self._elided} characters not kept]… {self._tail}"
            self.lines_capped += 1
        self._segment = []
        self._segment_len = 0
        self._tail = ""
        self._capped = False
        self._elided = 0
        return text

    def _cap(self, text: str) -> str:
        self.lines_capped += 1
        return f"{text[:_KEEP]} …[{len(text) - 2 * _KEEP} characters not kept]… {text[-_KEEP:]}"

    def _end_frame(self, out: list[Line]) -> None:
        text = sanitize(self._take_segment())
        if text.strip():
            self._last_frame = text
            out.append(Line(self._next_no, text, Kind.FRAME))

    def _end_line(self) -> list[Line]:
        text = sanitize(self._take_segment())
        no = self._next_no
        self._next_no += 1
        frame = self._last_frame
        self._last_frame = ""
        if text.strip() or not frame:
            return [Line(no, text)]
        return [Line(no, frame, display_only=True)]
