"""Per rank, the median seconds of each phase that splits its step (the phase bars)."""

from __future__ import annotations

from dataclasses import dataclass

from trainwatch.diagnosis.phases import partition_phases, phase_order
from trainwatch.diagnosis.window import finite, median
from trainwatch.store.store import Store, key_order
from trainwatch.ui.data.labels import many_hosts, needs_source, rank_label


@dataclass
class PhaseRow:
    label: str
    phases: dict[str, float]  # median seconds over the window
    step_time_s: float | None
    steps: int


def phase_rows(store: Store, window: int = 20) -> list[PhaseRow]:
    """Per rank: median seconds per phase of the step's partition over its last `window` records."""
    with store.lock:
        keys = sorted(store.owners("phase"), key=key_order)
        hosts = many_hosts(keys)
        many = needs_source(keys, hosts)
        rows = []
        for key in keys:
            source, rank = key.source, key.rank
            names = store.series_names(key, "phase")
            means: dict[str, float] = {}
            steps = 0
            for name in partition_phases(sorted(names, key=phase_order)):
                s = store.get_series(source, rank, name, "phase", key.host)
                if s is None:
                    continue
                vals = finite(s.values[-window:])
                if vals:
                    means[name] = median(vals)
                    steps = max(steps, len(vals))
            st = store.get_series(source, rank, "step_time_s", host=key.host)
            step_time = None
            if st is not None:
                good = finite(st.values[-window:])
                step_time = median(good) if good else None
            if means:
                rows.append(PhaseRow(rank_label(key, many, hosts), means, step_time, steps))
    return rows
