"""Literal hints in front of a slow alternation.

A regex of many alternatives (`signal|Killed|out of memory|...`) is tried by `re` at every
position of a line: on a custom loop's progress lines, which hold none of them, two such
prefilters cost a tenth of the per-line path. Every alternative holds some literal text in any
match; a line that holds none of those literals cannot match, and `str.__contains__` rules that
out at C speed. The hints are written beside the pattern and checked against it
(tests/parsers/test_hints.py parses each alternative and finds a hint in its mandatory text).
"""

from __future__ import annotations

import re


class Hinted:
    """`pattern`, searched only in text that holds one of `hints`."""

    __slots__ = ("ascii_hints", "hints", "regex")

    def __init__(self, pattern: str, hints: tuple[str, ...]) -> None:
        self.regex = re.compile(pattern)
        self.hints = hints
        # (most lines are ASCII, which `isascii` knows without a scan: the other hints are not looked for there)
        self.ascii_hints = tuple(h for h in hints if h.isascii())

    def search(self, text: str) -> re.Match[str] | None:
        if not any(map(text.__contains__, self.ascii_hints if text.isascii() else self.hints)):
            return None
        return self.regex.search(text)
