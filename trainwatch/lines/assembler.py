"""Turn a byte stream, arriving in arbitrary chunks, into numbered, sanitized lines.

- Lines are split on `\\n` and numbered from 1 (the contract's `line`).
- `\\r` progress frames: every non-empty `\\r`-terminated segment is emitted as a FRAME
  (bars such as Lightning's carry metrics), the text after the last `\\r` is the LINE
  (records are glued after the last frame: `...it/s]{'loss': ...}`). Only the latest
  frame is kept in memory, so a `\\r` storm costs nothing.
- A partial line is held until its `\\n` arrives; `finish()` releases it at a real end.
- Absurdly long lines keep their head and tail only: memory stays bounded.
- Invalid UTF-8 is decoded with replacement characters, never an exception.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from enum import Enum

from trainwatch.lines.sanitize import sanitize

MAX_LINE_BYTES = 256 * 1024
_KEEP = 32 * 1024


class Kind(Enum):
    LINE = "line"
    FRAME = "frame"


@dataclass(frozen=True, slots=True)
class Line:
    no: int
    text: str
    kind: Kind = Kind.LINE
    # A LINE whose text is only its last progress frame (already delivered as a FRAME):
    # shown in the raw log, not parsed twice.
    display_only: bool = False


class LineAssembler:
    """Incremental: `feed()` any chunking of the same bytes yields the same lines."""

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._max = max_line_bytes
        self._segment: list[str] = []  # text since the last \r or \n
        self._segment_len = 0
        self._tail = ""  # kept tail of an over-long segment
        self._capped = False
        self._elided = 0
        self._last_frame = ""
        self._next_no = 1
        self.lines_capped = 0

    @property
    def next_line_no(self) -> int:
        return self._next_no

    def reset(self) -> None:
        """The source was truncated or replaced: start over at line 1."""
        self.__init__(self._max)  # type: ignore[misc]

    def feed(self, data: bytes) -> list[Line]:
        text = self._decoder.decode(data)
        return self._feed_text(text)

    def finish(self) -> list[Line]:
        """End of input: release a final line that has no newline."""
        out = self._feed_text(self._decoder.decode(b"", final=True))
        if self._segment_len or self._last_frame or self._capped:
            out.extend(self._end_line())
        return out

    def _feed_text(self, text: str) -> list[Line]:
        out: list[Line] = []
        if "\r" not in text and self._segment_len == 0 and not self._last_frame:
            # Fast path: whole lines, no frames pending.
            parts = text.split("\n")
            rest = parts.pop()
            no = self._next_no
            for part in parts:
                if len(part) > self._max:
                    part = self._cap(part)
                out.append(Line(no, sanitize(part)))
                no += 1
            self._next_no = no
            if rest:
                self._append(rest)
            return out
        start = 0
        n = len(text)
        while start < n:
            nl = text.find("\n", start)
            cr = text.find("\r", start)
            if nl == -1 and cr == -1:
                self._append(text[start:])
                break
            if cr != -1 and (nl == -1 or cr < nl):
                self._append(text[start:cr])
                self._end_frame(out)
                start = cr + 1
            else:
                self._append(text[start:nl])
                out.extend(self._end_line())
                start = nl + 1
        return out

    def _append(self, piece: str) -> None:
        if not piece:
            return
        if not self._capped and self._segment_len + len(piece) <= self._max:
            self._segment.append(piece)
            self._segment_len += len(piece)
            return
        # Over-long: keep the head (first _KEEP characters) and a rolling tail.
        if not self._capped:
            head = "".join(self._segment)
            self._segment = [head[:_KEEP]]
            self._tail = head[_KEEP:]
            self._segment_len = _KEEP
            self._capped = True
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
