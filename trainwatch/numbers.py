"""Numbers as training logs print them.

`1.825991E+00`, `3.2e+4`, `10,050`, `1.258B`, `'3.41'`, `nan`, `inf`, `66.91GiB(37.51%)`,
`3961M`, `781us/step`, `65536.`, ETAs like `1 day, 16:21:05`. Every function returns None
for text that is not such a number: a half-match must never become a wrong value.
"""

from __future__ import annotations

import math
import re

_NUM = re.compile(
    r"""^[+-]?(?:
        (?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][+-]?\d+)?   # 10,050  1.5  65536.  1e-3
      | \.\d+(?:[eE][+-]?\d+)?                               # .5
    )$""",
    re.X,
)
# A printed number as a pattern's text (for formats' own line patterns; parse it with `parse_number`).
# (the integer part and the fraction one way only: `\d+\.?\d*` split a run of 20,000 digits every way
# before a pattern around it failed, seconds a line)
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf)"
_PLAIN = re.compile(r"[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?").fullmatch
_SPECIAL = {
    "nan": math.nan,
    "+nan": math.nan,
    "-nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "-inf": -math.inf,
    "infinity": math.inf,
    "-infinity": -math.inf,
}
# Count suffixes (1.258B parameters, 12.3K tokens/s).
_SCALE = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}

_BYTES_GIB = {
    "b": 1 / 1024**3,
    "kb": 1e3 / 1024**3,
    "kib": 1 / 1024**2,
    "mb": 1e6 / 1024**3,
    "mib": 1 / 1024,
    "gb": 1e9 / 1024**3,
    "gib": 1.0,
    "tb": 1e12 / 1024**3,
    "tib": 1024.0,
}
_MEM = re.compile(r"^([0-9.,eE+-]+)\s*([KMGT]?i?B|[KMGT])?(?:\(.*\))?$", re.I)

_DURATION_S = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "m": 60.0,
    "min": 60.0,
    "h": 3600.0,
}
_DURATION = re.compile(r"^([0-9.,eE+-]+)\s*(ns|us|µs|ms|sec|s|min|m|h)$")
_ETA = re.compile(r"^(?:(\d{1,18}) days?, )?(\d{1,18}):(\d{2}):(\d{2})(?:\.\d+)?$")


def parse_number(text: str) -> float | None:
    """A plain number, tolerant of quotes, thousands commas and a trailing dot."""
    t = text.strip().strip("'\"")
    if not t:
        return None
    if _PLAIN(t):  # the common case, at C speed; `float()` alone would accept `1_0` and `infinity`
        return float(t)
    special = _SPECIAL.get(t.lower())
    if special is not None:
        return special
    if _NUM.match(t):
        return float(t.replace(",", ""))
    return None


def parse_scaled(text: str) -> float | None:
    """A count with an SI-ish suffix: `1.258B`, `12.5K`, `3M`."""
    t = text.strip().strip("'\"")
    if t and t[-1] in _SCALE:
        base = parse_number(t[:-1])
        return None if base is None else base * _SCALE[t[-1]]
    return parse_number(t)


def parse_mem_gib(text: str, default_unit: str = "gib") -> float | None:
    """Device memory in GiB: `30.2GiB`, `66.91GiB(37.51%)`, `5.29GB`, `3961M`, `3961` (MB when default)."""
    m = _MEM.match(text.strip())
    if not m:
        return None
    value = parse_number(m.group(1))
    if value is None:
        return None
    unit = (m.group(2) or default_unit).lower()
    if len(unit) == 1:  # 3961M
        unit += "b"
    factor = _BYTES_GIB.get(unit)
    return None if factor is None else value * factor


def parse_duration_s(text: str) -> float | None:
    """`781us/step`, `120.5ms`, `0.52s`, `1.2 s` -> seconds."""
    t = text.strip()
    for suffix in ("/step", "/it", "/iter"):
        if t.endswith(suffix):
            t = t[: -len(suffix)]
    m = _DURATION.match(t)
    if not m:
        return None
    value = parse_number(m.group(1))
    # rounded as `ms_to_s` rounds: `317.25ms` is 0.31725 s, not 0.31725000000000003
    return None if value is None else round(value * _DURATION_S[m.group(2)], 12)


def parse_rate(text: str) -> tuple[str, float] | None:
    """tqdm rates: `1.52it/s` -> ("it_per_s", 1.52); `3.4s/it` -> ("s_per_it", 3.4)."""
    t = text.strip()
    for suffix, name in (("it/s", "it_per_s"), ("s/it", "s_per_it")):
        if t.endswith(suffix):
            value = parse_number(t[: -len(suffix)])
            return None if value is None else (name, value)
    return None


def parse_eta_s(text: str) -> float | None:
    """`1 day, 16:21:05` or `0:24:11` -> seconds."""
    m = _ETA.match(text.strip())
    if not m:
        return None
    days = int(m.group(1) or 0)
    return days * 86400 + int(m.group(2)) * 3600 + int(m.group(3)) * 60 + int(m.group(4))


def ms_to_s(value: float) -> float:
    """Milliseconds as printed (`907.6`) -> seconds without binary float noise (0.9076, not 0.9076000000000001)."""
    return round(value / 1000.0, 12)


# Printed milliseconds -> `ms_to_s(float(text))`, remembered. That is slow (round(x, 12) goes
# through decimal digits) and the few thousand distinct timings a log prints repeat: a plain
# dict's `get`. Shared by the per-line parsers and the bulk path's columns (`bulk._seconds`).
SECONDS_OF_MS: dict[str, float] = {}
SECONDS_OF_MS_SIZE = 1 << 16


def seconds_of_ms(text: str) -> float:
    """`ms_to_s(float(text))` for a printed number of milliseconds (ValueError as `float` raises it)."""
    seconds = SECONDS_OF_MS.get(text)
    if seconds is None:
        seconds = ms_to_s(float(text))
        if len(SECONDS_OF_MS) >= SECONDS_OF_MS_SIZE:
            SECONDS_OF_MS.clear()
        SECONDS_OF_MS[text] = seconds
    return seconds
