"""How durations and values read in every report and on every screen.

One duration format for a step time, a stall, an ETA and an age (`clock.fmt_age` is this one plus
"ago"), so the header, the Ranks tab, `summary` and `check` cannot print the same time two ways.
The precision is the one a person reads at a glance: two digits under ten seconds, then whole
seconds, minutes, hours to a tenth, days, years.
"""

from __future__ import annotations

import math

__all__ = ["fmt_duration", "fmt_value"]


def fmt_duration(seconds: float | None) -> str:
    """92µs, 1.2ms, 38ms, 0.91s, 45s, 14m, 3.2h, 6d, 4.8 years; "?" when unknown."""
    if seconds is None or math.isnan(seconds) or math.isinf(seconds):
        return "?"
    s = max(0.0, seconds)
    if s == 0:
        return "0s"
    if s < 0.001:
        return f"{_two_digits(s * 1e6)}µs"
    if s < 0.1:
        return f"{_two_digits(s * 1000)}ms"
    if s < 10:
        return f"{s:.2g}s"
    if s < 60:
        return f"{s:.0f}s"
    if s < 3600:
        return f"{s // 60:.0f}m"
    if s < 48 * 3600:
        return f"{s / 3600:.1f}h"
    if s < 365 * 86400:
        return f"{s / 86400:.0f}d"
    return f"{s / (365.25 * 86400):.1f} years"


def _two_digits(x: float) -> str:
    """1.2, 38, 450: a tenth below ten, else whole (never an exponent)."""
    return f"{x:.1f}" if x < 9.95 else f"{x:.0f}"


def fmt_value(v: float) -> str:
    """A metric value in a sentence: 2.134, 6.5e-05, 65536, nan."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e6):
        return f"{v:.3g}"
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.4g}"
