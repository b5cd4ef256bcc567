"""Every rank's series of one metric, copied for a chart: its current attempt only.

Copies are taken under `store.lock`; everything after that works on the copies, so the ingest
thread is never held up by drawing.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from operator import gt

from trainwatch.diagnosis.window import clock_rises
from trainwatch.store.blocks import Blocks
from trainwatch.store.series import Series
from trainwatch.store.store import RankKey, Store, key_order
from trainwatch.ui.data.labels import many_hosts, needs_source, rank_label, title_for


@dataclass
class Trace:
    label: str
    xs: array
    ys: array
    # The step this rank's current attempt started at, when its series went back (a relaunch
    # into the same file): the chart shows that attempt only, as the header and ranks do.
    restart_step: float | None = None
    # The summaries of `ys` by blocks (`Series.blocks`), when `ys` is a whole series' copy: the
    # chart reduces it from them (`downsample`). Whoever replaces `ys` sets this to None.
    blocks: Blocks | None = None


# Charts draw each rank as its own line up to this many ranks; beyond it (a 32-node job's 256
# per-rank files) one line per rank is an unreadable smear that costs plotext seconds: the
# chart shows the ranks as a band instead (`rank_band`) plus the ranks furthest out.
MAX_RANK_LINES = 8


RESTART_CHUNK = 4096


def relaunched(store: Store, key: RankKey) -> bool:
    """Whether this rank stream lived through an earlier attempt too: the records say so (their
    `attempt`, kept per stream in `Store.attempt_span`), as they do for the header, `summary`'s
    attempts and the verdict. A step counter that goes back on its own (per-epoch steps) is not
    a relaunch."""
    if store.current_attempt == 0:  # (no stream was relaunched: no key looked up per series drawn)
        return False
    current = store.key_attempt.get(key, 0)
    return any((n, key) in store.attempt_span for n in range(current))


def restart_index(steps: Sequence[float]) -> int:
    """Where the current attempt begins in a relaunched stream's series (whose points do not
    carry their attempt): after the last step that went back by more than one; 0 when none did.

    Searched from the end in chunks, each checked at C level (`map(gt, ...)`), so a series
    that only goes up costs one C pass and no Python loop per point."""
    end = len(steps)
    while end > 1:
        start = max(0, end - RESTART_CHUNK)
        chunk = steps[start:end]
        if any(map(gt, chunk, chunk[1:])):
            for i in range(len(chunk) - 1, 0, -1):
                if chunk[i] < chunk[i - 1] - 1:
                    return start + i
        end = start + 1  # the next chunk ends with this one's first point: no pair is skipped
    return 0


# Series -> (the series, count, compactions, restart index) when last looked at: new points
# are then all that is searched (a series only grows; compaction moves indices: search again).
_restarts: dict[int, tuple[Series, int, int, int]] = {}


def series_restart(s: Series) -> int:
    """`restart_index(s.steps)`, searching only the points added since the last call."""
    seen = _restarts.get(id(s))
    n = len(s.steps)
    if seen is not None and seen[0] is s and seen[2] == s.compactions and seen[1] <= s.count:
        new = s.count - seen[1]
        if new == 0:
            return seen[3]
        start = max(0, n - new - 1)  # with the last point seen: a step back at the seam counts
        found = restart_index(s.steps[start:])
        index = start + found if found else seen[3]
    else:
        index = restart_index(s.steps)
    if len(_restarts) > 4096:  # series of stores gone (tests, reloads): forget them all
        _restarts.clear()
    _restarts[id(s)] = (s, s.count, s.compactions, index)
    return index


def clock_pace_series(clock: Series, capacity: int) -> Series:
    """The step time a printed clock says (`elapsed_s`, seconds since the run began): its rise per step
    between two prints, charted where a step time would be. The generic reader takes a clock's first prints
    for step times until it knows (`parsers/formats/generic._clock_time`): those are not charted."""
    pace = Series(capacity)
    for i, rate in clock_rises(clock.steps, clock.values):
        pace.append(clock.steps[i], rate, clock.times[i])
    return pace


def chart_traces(
    store: Store, name: str, *, last_n: int | None, wall_time: bool, overlaid: bool = True
) -> tuple[list[Trace], bool]:
    """Copies of every rank's series for one metric, its current attempt only (`relaunched`);
    `overlaid`: with the series drawn on its chart too (the eval loss on the loss chart).
    Returns (traces, wall_time_used)."""
    with store.lock:
        copies = []
        drawn_names = (name, *(OVERLAID.get(name, ()) if overlaid else ()))
        # Block summaries only for a chart drawing each rank as a line (a band of many ranks reads none)
        lines = sum(len(store.series_for(drawn)) for drawn in drawn_names) <= MAX_RANK_LINES
        for drawn in drawn_names:
            found = store.series_for(drawn)
            hosts = many_hosts(found)
            many = needs_source(found, hosts)
            for key in sorted(found, key=key_order):
                s = found[key]
                if drawn == "step_time_s":
                    clock = store.series.get(key.series_key("metric", "elapsed_s"))
                    if clock is not None and len(clock) >= 2 and s.steps[-1] <= clock.steps[0]:
                        s = clock_pace_series(clock, store.capacity)  # (`clock_pace_series`)
                cut = series_restart(s) if relaunched(store, key) else 0
                restart = s.steps[cut] if cut else None
                first = max(cut, len(s.steps) - last_n) if last_n else cut
                sl = slice(first, None)
                label = rank_label(key, many, hosts)
                if drawn != name:  # the evaluation loss on the loss chart
                    label = f"{title_for(drawn)} {label}".strip()
                # (a slice's blocks would not line up; the summary is brought up to date from the
                # copy, after the lock: summarizing a new series is ms the ingest thread must not wait)
                summary = s.block_summary() if first == 0 and lines else None
                copies.append((label, s.steps[sl], s.values[sl], s.times[sl], restart, summary))
    use_time = wall_time and any(_finite_count(t) >= 2 for _, _, _, t, _, _ in copies)
    traces: list[Trace] = []
    for label, steps, values, times, restart, summary in copies:
        blocks = None
        if use_time:
            keep = [i for i, t in enumerate(times) if not math.isnan(t)]
            xs = array("d", (times[i] for i in keep))
            ys = array("d", (values[i] for i in keep))
        else:
            xs, ys = steps, values
            blocks = summary.update(values) if summary is not None else None
        traces.append(Trace(label, xs, ys, restart, blocks))
    return traces, use_time


def _finite_count(values: Sequence[float]) -> int:
    return sum(1 for v in values[:64] if not math.isnan(v)) + sum(1 for v in values[-64:] if not math.isnan(v))


# Series drawn on another metric's chart as well as on their own: the evaluation loss beside the training loss.
OVERLAID = {"loss": ("eval_loss",)}


def chart_version(store: Store, name: str) -> int:
    """Changes whenever a point is added to any series drawn on this metric's chart."""
    names = (name, *OVERLAID.get(name, ()))
    with store.lock:
        return sum(s.count for n in names for _k, s in store.series_named(n))
