"""plotext's output (text and SGR colour codes only) as Rich `Text`, without Rich's general decoder.

`Text.from_ansi` tokenises every line with a regex that looks for OSC links and cursor codes
too, and parses each SGR code afresh: a 120x30 chart took 1.7 ms of its ~20 ms redraw there.
plotext writes nothing but `ESC [ ... m`, so one split of the whole plot and a cache of style
transitions (computed by Rich's own decoder, so the styles are the same) is enough.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rich.ansi import AnsiDecoder
from rich.style import Style
from rich.text import Span, Text

_SGR = re.compile(r"\x1b\[([0-9;]*)m")


@lru_cache(maxsize=1024)  # a plot uses a handful of colours: their transitions repeat
def _after(style: Style, params: str) -> Style:
    """The style after the SGR code with these parameters, as Rich's decoder moves it."""
    decoder = AnsiDecoder()
    decoder.style = style
    decoder.decode_line(f"\x1b[{params}m")
    return decoder.style


def sgr_text(ansi: str) -> Text:
    """`Text.from_ansi(ansi, no_wrap=True, end="")`, equal to it (plain text and spans) for text
    whose only escape codes are SGR ones and which has no carriage return; anything else goes
    to Rich's decoder."""
    parts = _SGR.split(ansi)
    if "\r" in ansi or ansi.count("\x1b") != len(parts) // 2:
        return Text.from_ansi(ansi, no_wrap=True, end="")
    plain: list[str] = []
    spans: list[Span] = []
    at = 0
    style = Style.null()
    for i, part in enumerate(parts):
        if i % 2:
            style = _after(style, part)
        elif part:
            plain.append(part)
            end = at + len(part)
            if style:
                # Rich styles each line's run on its own: a style across a line break is two spans
                start = at
                for line in part.split("\n"):
                    stop = start + len(line)
                    if stop > start:
                        spans.append(Span(start, stop, style))
                    start = stop + 1
            at = end
    return Text("".join(plain), spans=spans, no_wrap=True, end="")
