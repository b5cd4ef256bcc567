"""Make untrusted log text inert, once, at ingest.

Terminals act on escape sequences (OSC 52 clipboard writes, title changes, cursor moves);
Rich/Textual pass most of them through. Everything downstream of this module may assume
text holds printable characters and tabs only.
"""

from __future__ import annotations

import re

# ESC-introduced sequences (7-bit) and their 8-bit C1 equivalents. Unterminated string
# sequences (OSC/DCS/...) are stripped to the end of the text: better to lose a line tail
# than to let half a sequence through.
_SEQUENCES = re.compile(
    r"""
      \x1b\[[0-?]*[ -/]*[@-~]?          # CSI (possibly unterminated)
    | \x9b[0-?]*[ -/]*[@-~]?            # 8-bit CSI
    | \x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?   # OSC, DCS, SOS, PM, APC
    | [\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?  # 8-bit string sequences
    | \x1b[ -/]*[0-~]?                  # other ESC sequences (charset selection, RIS, ...)
    """,
    re.X,
)
# Remaining C0/C1 controls (tab kept), DEL, and bidi overrides that reorder what is shown.
_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_NEEDS_WORK = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _overstrike(text: str) -> str:
    """Apply backspaces the way a terminal would (Keras erases and rewrites with `\\b`)."""
    out: list[str] = []
    cursor = 0
    for ch in text:
        if ch == "\b":
            cursor = max(0, cursor - 1)
        elif cursor < len(out):
            out[cursor] = ch
            cursor += 1
        else:
            out.append(ch)
            cursor += 1
    return "".join(out)


def sanitize(text: str) -> str:
    """Printable text only: escape sequences removed, backspaces applied, controls dropped."""
    if not _NEEDS_WORK.search(text):
        return text
    text = _SEQUENCES.sub("", text)
    if "\b" in text:
        text = _overstrike(text)
    return _CONTROLS.sub("", text)


def needs_sanitizing(text: str) -> bool:
    return _NEEDS_WORK.search(text) is not None
