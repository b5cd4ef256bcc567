"""Which parsers a line is offered to: the ones whose triggers it holds, remembered by its shape.

Every line is offered, in order, to the parsers whose trigger substrings it holds (56 parsers,
~150 triggers): testing each is 5-9 us a line, a tenth of a followed file's one-line read and of
a custom loop's per-line parse. A log repeats a handful of shapes whose lines differ only in
their digits, and a trigger without a digit occurs in a line exactly where it occurs in the line
with every digit made `0` (only digits change, and the trigger holds none): that line is the
key of the parsers found. A parser with a digit in a trigger (`E2E latency=`) is tested on each
line (`live`). Lines that repeat no shape (free text) would only pay for the key: when fewer
than a quarter of the lookups hit, the index stays off for a while.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainwatch.parsers.base import Parser

_ZERO_DIGITS = str.maketrans("123456789", "000000000")
# (An ASCII line's key is its bytes, translated by a 256-byte table: a tenth of `str.translate`'s
# per-character lookups, 2 us a Megatron line. A bytes key never equals a str key.)
_ZERO_BYTES = bytes.maketrans(b"123456789", b"000000000")
MEMO_SIZE = 256  # shapes remembered (cleared when full: a log has a handful)
# Longer lines are looked at one by one, not kept: the memo of each of 256 followed files stays
# within 256 keys of 512 characters (a key is the whole line).
KEY_MAX = 512
CHECK_EVERY = 1024  # lookups between two looks at the share of hits
OFF_FOR = 8 * CHECK_EVERY  # lines read without the index after too few hits

Row = tuple["Parser", tuple[str, ...], bool]  # (parser, its triggers, live: a trigger holds a digit)


class TriggerIndex:
    def __init__(self, triggered: Sequence[tuple[Parser, tuple[str, ...]]]) -> None:
        self.rows: tuple[Row, ...] = tuple(
            (parser, triggers, any(c.isdigit() for t in triggers for c in t)) for parser, triggers in triggered
        )
        self._memo: dict[str | bytes, tuple[Row, ...]] = {}
        self._lookups = self._hits = 0
        self._off = 0

    def candidates(self, text: str) -> tuple[Row, ...]:
        """The rows, in dispatch order, of the parsers whose digit-free triggers `text` holds, and
        of every live parser (whose triggers the caller tests on the line itself)."""
        if self._off:
            self._off -= 1
            return self._scan(text)
        if len(text) > KEY_MAX:
            return self._scan(text)
        key = text.encode("ascii").translate(_ZERO_BYTES) if text.isascii() else text.translate(_ZERO_DIGITS)
        rows = self._memo.get(key)
        self._lookups += 1
        if rows is None:
            rows = self._scan(text)
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = rows
        else:
            self._hits += 1
        if self._lookups >= CHECK_EVERY:
            if 4 * self._hits < self._lookups:
                self._off = OFF_FOR
                self._memo.clear()
            self._lookups = self._hits = 0
        return rows

    def _scan(self, text: str) -> tuple[Row, ...]:
        found: list[Row] = []
        for row in self.rows:  # (plain loops: a generator per parser cost twice as much)
            if row[2]:
                found.append(row)
                continue
            for trigger in row[1]:
                if trigger in text:
                    found.append(row)
                    break
        return tuple(found)
