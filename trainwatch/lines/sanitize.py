"""What may reach a terminal: untrusted text made inert, in one place.

Terminals act on escape sequences (OSC 52 clipboard writes, title changes, cursor moves) and
on 8-bit C1 controls; bidi overrides reorder what a reader sees. Rich and Textual pass most of
them through. Two entry points share one definition of what is unsafe (`UNSAFE`):

- `sanitize`: a log line at ingest. It becomes what a terminal would have shown (colour codes
  and other sequences dropped whole, backspaces applied), so parsers read clean text.
- `printable`: any other untrusted string on its way out (file and directory names, glob
  matches, host labels, messages quoting them). Nothing is dropped: each unsafe character is
  shown as a visible stand-in (ESC as `␛`, 0x9b as `\x9b`), so two names stay distinguishable.

Everything downstream of either may assume text holds printable characters and tabs only.
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
# C0 controls (tab kept), DEL, C1 controls, the bidi embeddings/overrides/isolates that reorder
# what is shown, and lone surrogates (the undecodable bytes of a file name, which would be
# written back as raw bytes: 0x9b alone is a CSI).
UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


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
    """A log line as a terminal would show it: escape sequences removed, backspaces applied,
    controls dropped."""
    if not UNSAFE.search(text):
        return text
    text = _SEQUENCES.sub("", text)
    if "\b" in text:
        text = _overstrike(text)
    return UNSAFE.sub("", text)


def needs_sanitizing(text: str) -> bool:
    return UNSAFE.search(text) is not None


def _stand_in(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␛ ␇ ␊ ...
    if code == 0x7F:
        return "\u2421"  # ␡
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # an undecodable byte of a file name, as that byte
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` safe to write to a terminal, with every unsafe character shown, never dropped:
    the one gate for untrusted strings other than log lines (those get `sanitize` at ingest)."""
    if not UNSAFE.search(text):
        return text
    return UNSAFE.sub(_stand_in, text)


def printable_lines(text: str) -> str:
    """`printable` for a message of several lines (a usage error): the line breaks are kept."""
    return "\n".join(printable(line) for line in text.split("\n"))


def json_safe(encoded: str) -> str:
    """JSON text (from `json.dumps(..., ensure_ascii=False)`) with the unsafe characters JSON
    leaves raw (DEL, C1, bidi, surrogates) written as `\\uXXXX` escapes: the same data, inert."""
    if not UNSAFE.search(encoded):
        return encoded
    return UNSAFE.sub(_json_escape, encoded)


def _json_escape(match: re.Match[str]) -> str:
    # JSON writes a newline inside a string as `\n`: a raw one is the layout of indented JSON.
    ch = match.group()
    return ch if ch == "\n" else f"\\u{ord(ch):04x}"
