"""Control characters a log collector wrote as text: rsyslog and SageMaker's log capture write each one as
`#` and its three octal digits (`#015` carriage return, `#010` backspace, `#033` escape).

A helper, not a parser: it has no Parser subclass, so the registry registers nothing from it.
A progress bar redrawn with `\\r` arrives as one line of `#015`-separated frames, its erasures as
`#010` and its cursor moves as `#033[A`; `frames` gives the frames as the terminal showed them.
"""

from __future__ import annotations

import re

CR = "#015"
_NOISE = re.compile(r"#010|#033\[[0-9;?]*[A-Za-z]")


def frames(text: str) -> list[str]:
    """The frames of a line whose carriage returns are written `#015`, erasures and cursor moves removed."""
    return [f for f in (_NOISE.sub("", part) for part in text.split(CR)) if f.strip()]
