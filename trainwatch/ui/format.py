"""Number formatting and sparklines for the widgets (pure, no Textual). Durations and ages are
printed with `diagnosis.units.fmt_duration` and `diagnosis.clock.fmt_age`, as `summary` does."""

from __future__ import annotations

import math

__all__ = ["fmt_num", "sparkline"]


def fmt_num(value: float | None, digits: int = 4) -> str:
    """Compact number: 2.134, 1.5e-04, 65,536, nan."""
    if value is None:
        return "-"
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    a = abs(value)
    if a == 0:
        return "0"
    if float(value).is_integer() and a < 1e12:
        return f"{int(value):,}"
    if a >= 1e6 or a < 1e-3:
        return f"{value:.{max(1, digits - 2)}e}"
    if a >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float], width: int) -> str:
    """A unicode block sparkline of the last `width` finite values."""
    vals = [v for v in values if not math.isnan(v) and not math.isinf(v)][-width:]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    if hi - lo <= 1e-12 * max(1.0, abs(hi)):
        return SPARK[3] * len(vals)
    scale = (len(SPARK) - 1) / (hi - lo)
    return "".join(SPARK[int((v - lo) * scale)] for v in vals)
