"""One clock for every age on every screen: the time since the source was last written.

A file's mtime says when it was written, stdin's last arrival when bytes came; neither is when
trainwatch read them (a log from 2020 opened now was not "updated 13s ago"), nor the log's own
timestamps (a copied file's lines may be in another year or time zone). The header, the Ranks tab
and `summary` all print ages with `fmt_age`, from `written_at`.
"""

from __future__ import annotations

import math

from trainwatch.diagnosis.units import fmt_duration
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


AGE_STEP_FROM_S, AGE_STEP_S = 10, 5  # from 10 s to a minute an age moves in steps of 5 s


def fmt_age(seconds: float | None) -> str:
    """How long ago, in the one duration format: 'now', '7s ago', '15s ago', '3m ago', '2.5h ago',
    '6d ago', '4.8 years ago'. Floored, as minutes and hours are: below 10 s to the second, then
    to 5 s until a minute (an age at least that old). A screen redraws an age when its text
    moves: each second, the idle dashboard's header repaint was half of its CPU."""
    if seconds is None or math.isnan(seconds):
        return "never"
    if seconds < 1:
        return "now"
    whole = math.floor(seconds)
    if AGE_STEP_FROM_S <= whole < 60:
        whole -= whole % AGE_STEP_S
    return f"{fmt_duration(whole)} ago"
