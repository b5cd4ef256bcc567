"""Untrusted log text reaches the terminal inert: no ESC, no C0 (but tab), no C1, no bidi overrides."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from trainwatch.lines.sanitize import sanitize

FORBIDDEN = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

# Fragments of real terminal traffic: CSI colours/cursor moves, OSC 52 (clipboard write), OSC title,
# DCS, 8-bit CSI/OSC, Keras `\b` overstrike.
FRAGMENTS = [
    "\x1b[31m", "\x1b[0m", "\x1b[2K", "\x1b[A", "\x1b]52;c;aGVsbG8=\x07", "\x1b]0;title\x1b\\", "\x1bP1$r\x1b\\",
    "\x9b1m", "\x9d0;t\x9c", "\x1b", "\x1b[", "\x1b]", "\b", "\b\b\b", "\t", "\x00", "\x7f", "\x85", "\u202e",
    "loss 2.5", " ", "é", "😀",
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_arbitrary_text_comes_out_inert(text: str) -> None:
    assert FORBIDDEN.search(sanitize(text)) is None


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30))
def test_escape_sequence_soup_comes_out_inert(parts: list[str]) -> None:
    out = sanitize("".join(parts))
    assert FORBIDDEN.search(out) is None
    assert "\x1b" not in out


def test_visible_text_survives() -> None:
    assert sanitize("\x1b[32mloss\x1b[0m 2.5\tok") == "loss 2.5\tok"
    assert sanitize("abc\b\bXY") == "aXY"  # overstrike as a terminal shows it
    assert sanitize("x\x1b]52;c;aGk=\x07y") == "xy"  # OSC 52 clipboard write removed
