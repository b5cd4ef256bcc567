"""One clock for every age on every screen: the time since the source was last written.

A file's mtime says when it was written, stdin's last arrival when bytes came; neither is when
trainwatch read them (a log from 2020 opened now was not "updated 13s ago"), nor the log's own
timestamps (a copied file's lines may be in another year or time zone). The header, the Ranks tab
and `summary` all print ages with `fmt_age`, from `written_at`.
"""

from __future__ import annotations

import math

from trainwatch.store.store import SourceState, Store


def written_at(st: SourceState | None) -> float | None:
    """Wall time the source was last written: its mtime, else when stdin's bytes last arrived."""
    if st is None:
        return None
    return st.mtime if st.mtime is not None else st.last_data_wall


def write_age(store: Store, now: float, sources: list[str] | None = None) -> float:
    """Seconds since the freshest of `sources` (default: all) was written; nan when unknown."""
    names = list(store.sources) if sources is None else sources
    times = [t for t in (written_at(store.sources.get(n)) for n in names) if t is not None]
    return max(0.0, now - max(times)) if times else math.nan


def fmt_age(seconds: float | None) -> str:
    """How long ago: 'now', '12s ago', '3m ago', '2.5h ago', '6d ago', '4.8 years ago'."""
    if seconds is None or math.isnan(seconds):
        return "never"
    if seconds < 1:
        return "now"
    if seconds < 60:
        return f"{seconds:.0f}s ago"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m ago"
    if seconds < 86400 * 2:
        return f"{seconds / 3600:.1f}h ago"
    if seconds < 365 * 86400:
        return f"{seconds / 86400:.0f}d ago"
    return f"{seconds / (365.25 * 86400):.1f} years ago"
