"""What the widgets show, read out of the store cheaply (pure: no Textual, no I/O), one module
per view: `charts` (series copies, the current attempt), `reduce` (to the terminal's width),
`phases` (the phase bars), `ranks` (the Ranks tab), `events`, and `labels` (what things are called).
Copies are taken under `store.lock`; everything after that works on the copies."""

from __future__ import annotations

from trainwatch.ui.data.charts import (
    MAX_RANK_LINES,
    OVERLAID,
    Trace,
    chart_traces,
    chart_version,
    restart_index,
    series_restart,
)
from trainwatch.ui.data.events import events_copy
from trainwatch.ui.data.labels import (
    DEFAULT_CHARTS,
    THROUGHPUT,
    TITLES,
    default_charts,
    many_hosts,
    needs_source,
    rank_label,
    short_source,
    title_for,
)
from trainwatch.ui.data.phases import PhaseRow, phase_rows
from trainwatch.ui.data.ranks import RankRow, rank_rows, ranks_by_host
from trainwatch.ui.data.reduce import (
    Band,
    Buckets,
    band_outliers,
    downsample,
    drawn_envelope,
    ema,
    rank_band,
)

__all__ = [
    "DEFAULT_CHARTS",
    "MAX_RANK_LINES",
    "OVERLAID",
    "THROUGHPUT",
    "TITLES",
    "Band",
    "Buckets",
    "PhaseRow",
    "RankRow",
    "Trace",
    "band_outliers",
    "chart_traces",
    "chart_version",
    "default_charts",
    "downsample",
    "drawn_envelope",
    "ema",
    "events_copy",
    "many_hosts",
    "needs_source",
    "phase_rows",
    "rank_band",
    "rank_label",
    "rank_rows",
    "ranks_by_host",
    "restart_index",
    "series_restart",
    "short_source",
    "title_for",
]
