"""Number, duration and age formatting shared by the widgets (pure, no Textual)."""

from __future__ import annotations

import math

from trainwatch.diagnosis.clock import fmt_age  # the one age format, shared with summary

__all__ = ["fmt_age", "fmt_duration", "fmt_num", "sparkline"]


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


def fmt_duration(seconds: float | None) -> str:
    """Human duration: 0.91s, 4m 05s, 3h 12m, 10d 4h."""
    if seconds is None or math.isnan(seconds) or seconds < 0:
        return "-"
    if seconds < 0.1:
        return f"{seconds * 1000:.3g}ms"
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    m, s = divmod(int(seconds), 60)
    if m < 60:
        return f"{m}m {s:02d}s"
    h, m = divmod(m, 60)
    if h < 48:
        return f"{h}h {m:02d}m"
    d, h = divmod(h, 24)
    return f"{d}d {h}h"


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
