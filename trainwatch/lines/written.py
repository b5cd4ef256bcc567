"""Terminal escape sequences written out as text, as logs pasted from a viewer or a repr show them.

`ESC[32m` (an editor's name for the byte), `^[[4A` (`cat -v`, less, vim), `\\x1b[0m` / `\\033[J` /
`\\u001b[K` (a Python repr or a JSON string) are a colour or a cursor move a terminal never printed:
the parsers read the line without them, as they read a real escape's line (`sanitize`). The raw
log shows them as written. rsyslog's `#033[` is `parsers/formats/_escaped.py`'s.
"""

from __future__ import annotations

import re

# A CSI sequence (parameters, then its final letter) after one of the written forms of ESC; `ESC`
# not inside a word (`DESC[2]`), but a run of them is one match (`ESC[4AESC[J`).
_WRITTEN_CSI = re.compile(
    r"(?<![A-Za-z])(?:ESC\[[0-9;?]*[A-Za-z])+|(?:\^\[|\\x1[bB]|\\033|\\u001[bB]|\\e)\[[0-9;?]*[A-Za-z]"
)
# The literals one of them starts with: a line holding none is returned as it is, unsearched.
_HINTS = ("ESC[", "^[[", "\\x1", "\\033[", "\\u001", "\\e[")


def strip_written_escapes(text: str) -> str:
    """`text` without the escape sequences written in it as text (the same object when there are none)."""
    if "[" not in text or not any(h in text for h in _HINTS):
        return text
    return _WRITTEN_CSI.sub("", text)


# Markdown bold a reporter put around a figure in an issue (`loss: nan**`, `**4.7581**`):
# the number is read as it is; a banner's `***** Running training *****` touches no digit and stays.
# (not a power: `loss_scale: 2**16`, digits on both sides)
_BOLD_BY_NUMBER = re.compile(
    r"(?<![\w*])\*\*(?=[-+.]?\d|nan\b|inf\b)|(?<=[\d.])\*\*(?![\w*])|(?<=nan)\*\*(?![\w*])|(?<=inf)\*\*(?![\w*])"
)


def strip_bold_numbers(text: str) -> str:
    """`text` without the markdown bold marks beside its numbers (the same object when there are none)."""
    if "**" not in text:
        return text
    return _BOLD_BY_NUMBER.sub("", text)
