"""A run's record files joined to its text log: one run, not two sources showing the same steps.

HF Trainer prints `{'loss': ..., 'learning_rate': ...}` to `nohup.out` and writes the same dict to
`trainer_state.json` and its event file; Lightning's `metrics.csv` holds what its progress bar
shows. The record file's steps go under the text log's source and rank (the file's own rank if it
has one). The rule, per (step, metric name): the first value to arrive is kept and a later one is
dropped. Both come from the same dict the framework logged (an event file holds it as float32), so
they agree; which arrives first only decides which rounding is shown. Reading once, record files are
read first, so a text log's step-less dicts (buffered HF output prints no step) get their step from
the record file entry that holds the same values.

A step's metrics that arrive after the step was delivered (an event file flushed after the log
printed the dict, a metric only the record file has) are a `part`: a `Step` with only the new names,
which the store joins to the step already stored (`Store.add_parts`), not counted as a new step.
"""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping
from dataclasses import replace

from trainwatch.records import Record, Step

STEPS_KEPT = 65_536  # steps whose delivered metric names are remembered
UNMATCHED_KEPT = 4_096  # step-less text-log steps, and record-file steps, waiting for their other half
Joined = tuple[Record, bool]  # a record, and whether it is a part of a step already delivered
AGREE_REL = 1e-3  # printed dicts round (`'loss': '0.2608'`), event files hold float32


def agree(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    """The same logged dict: they share a metric and every shared metric has the same value."""
    shared = a.keys() & b.keys()
    if not shared:
        return False
    for name in shared:
        x, y = a[name], b[name]
        if math.isnan(x) and math.isnan(y):
            continue
        if not math.isclose(x, y, rel_tol=AGREE_REL, abs_tol=1e-12):
            return False
    return True


class RunJoin:
    """The join of one text log (`source`) and the record files beside it. Used by the ingest
    thread only: `from_log` and `from_file` each return what to deliver, in order, each record
    with whether it is a part of a step already delivered."""

    def __init__(self, source: str, late: bool = False) -> None:
        self.source = source
        # Made after the log had given steps (a record file that appeared later, HF's first
        # `checkpoint-N/trainer_state.json`): those steps went by unseen, so what a record file
        # holds when it joins is not delivered (it would give them again); what it gains is.
        self.late = late
        self.rank: int | None = None  # the rank of the text log's steps (the first it gave)
        self._rank_known = False
        self._given: OrderedDict[int, set[str]] = OrderedDict()  # step -> names delivered
        self._stepless: deque[Step] = deque(maxlen=UNMATCHED_KEPT)  # the log's step-less steps
        self._unclaimed: OrderedDict[int, dict[str, float]] = OrderedDict()  # record-file steps the log has not shown

    # ----------------------------------------------------------------- text log
    def from_log(self, batch: Iterable[Record]) -> list[Joined]:
        out: list[Joined] = []
        for record in batch:
            if type(record) is not Step:
                out.append((record, False))
                continue
            if not self._rank_known:
                self.rank, self._rank_known = record.rank, True
            if record.rank != self.rank:
                out.append((record, False))
            elif record.step is None:
                self._log_stepless(record, out)
            else:
                self._deliver(record, record.step, record.metrics, out)
        return out

    def _names(self, step: int) -> set[str]:
        """The names given at `step` (a new, empty set for a step not seen)."""
        given = self._given.get(step)
        if given is None:
            given = self._given[step] = set()
            while len(self._given) > STEPS_KEPT:
                self._given.popitem(last=False)
        return given

    def _log_stepless(self, record: Step, out: list[Joined]) -> None:
        for step, metrics in self._unclaimed.items():
            if agree(record.metrics, metrics):
                del self._unclaimed[step]
                self._deliver(record, step, record.metrics, out)  # a part: the file gave the step
                return
        self._stepless.append(record)
        out.append((record, False))

    # -------------------------------------------------------------- record file
    def from_file(self, batch: Iterable[Record]) -> list[Joined]:
        """The file's steps, those of one step in this batch taken together (an event file
        writes one event per scalar)."""
        out: list[Joined] = []
        grouped: OrderedDict[tuple[int | None, int | None], tuple[Step, dict[str, float]]] = OrderedDict()
        for record in batch:
            if type(record) is not Step:
                out.append((record, False))
                continue
            rank = record.rank if record.rank is not None else self.rank
            if record.step is None:
                out.append((replace(record, source=self.source, rank=rank), False))
                continue
            first, metrics = grouped.setdefault((rank, record.step), (replace(record, rank=rank), {}))
            metrics.update(record.metrics)
        for (rank, step), (first, metrics) in grouped.items():
            assert step is not None
            record = replace(first, source=self.source)
            if rank != self.rank:
                out.append((replace(record, metrics=metrics), False))
                continue
            new = step not in self._given
            matched = next((s for s in self._stepless if agree(s.metrics, metrics)), None)
            if matched is not None:
                # The log showed these values without a step: only what it did not print is new.
                self._stepless.remove(matched)
                self._names(step).update(matched.metrics)
                self._deliver(record, step, metrics, out, new=new)
                continue
            if new:
                self._unclaimed[step] = metrics
                while len(self._unclaimed) > UNMATCHED_KEPT:
                    self._unclaimed.popitem(last=False)
            self._deliver(record, step, metrics, out)
        return out

    # ------------------------------------------------------------------ common
    def _deliver(
        self,
        record: Step,
        step: int,
        metrics: Mapping[str, float],
        out: list[Joined],
        new: bool = False,
    ) -> None:
        """The metrics of `step` not delivered yet: a new step, or a part of one already delivered."""
        new = new or step not in self._given
        given = self._names(step)
        fresh = {name: value for name, value in metrics.items() if name not in given}
        if not fresh:
            return
        given.update(fresh)
        out.append((replace(record, step=step, metrics=fresh), not new))
