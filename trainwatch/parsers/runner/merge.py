"""Step merging: the several lines that report one step become one `Step`.

DeepSpeed's `step=N` line and Megatron's `iteration N` line of the same rank and step are one
record; the same step line printed by several unprefixed ranks (identical values) is one
record, the repeats are counted as duplicates. A step is held (`pending`) until a line that
does not belong to it comes, then it goes out with a `nan` event per watched NaN/inf value.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from trainwatch.records import Event, Record, Step

# A NaN/inf in these is a `nan` event (other metrics, e.g. a ratio, may legitimately be inf).
NAN_WATCHED = ("loss", "grad_norm", "eval_loss")
_INFINITE = (math.inf, -math.inf)
# (`best_recon_loss: inf`, `min_g_loss: inf`: a best-so-far started at inf; the scaler's `loss_scale`)
_NOT_TERM = re.compile(r"(?:^|_)(?:best|min|max|lowest|prev|previous|init|initial)_|loss_scale")
_LOSS_TERM = re.compile(r"(?:^|_)(?:loss|smooth_?l1|l1|l2|mse|mae|kl|nll|bce|xent|cross_?entropy)(?:_|$)")
# Unranked step reports remembered per segment to recognise the same line from other ranks (the
# oldest forgotten first).
SEEN_UNRANKED_MAX = 4096
# Unranked steps without a step number are only compared with this many recent ones.
RECENT_STEPLESS = 16

Merged = Literal["apart", "merged", "repeat"]
_Items = tuple[tuple[str, float], ...]
_StepKey = tuple[str | None, int | None, _Items]
# A report the catch-up took in columns: its metrics are made only if a report of its step comes
# again (rarely: the bulk path takes only steps beyond every step seen).
LaterItems = Callable[[], Mapping[str, float]]


@dataclass
class PendingStep:
    rank: int | None
    step: int | None
    time: str | None
    line: int
    metrics: dict[str, float]
    host: str | None = None


class StepMerger:
    """The step being assembled, and the unranked step lines seen in this segment."""

    def __init__(self) -> None:
        self.pending: PendingStep | None = None
        # (host, step) -> the metrics of each unranked report of it seen (the first seen first)
        self._seen_unranked: dict[tuple[str | None, int], list[_Items | LaterItems]] = {}
        self._seen_order: deque[tuple[str | None, int]] = deque()  # the step of each report, oldest first
        self._recent_stepless: deque[_StepKey] = deque(maxlen=RECENT_STEPLESS)

    def merge(
        self, rank: int | None, step: int | None, host: str | None, metrics: Mapping[str, float], time: str | None
    ) -> Merged:
        """Does this report belong to the pending step? "merged" (its metrics were added),
        "repeat" (the very same report again: another unprefixed rank printing it) or "apart"
        (a report of its own: lines without a step number always are)."""
        pending = self.pending
        if pending is None or step is None or pending.rank != rank or pending.step != step or pending.host != host:
            return "apart"
        same = [k for k in metrics if k in pending.metrics]
        if any(_differs(pending.metrics[k], metrics[k]) for k in same):
            return "apart"  # same step, other values: another rank's report of that step
        if rank is None and len(same) == len(metrics):
            return "repeat"
        for key, value in metrics.items():
            pending.metrics.setdefault(key, value)
        if pending.time is None:
            pending.time = time
        return "merged"

    def continues(self, rank: int | None, step: int) -> bool:
        """Would a report of (rank, step) from an unlabelled line merge into the pending step?"""
        pending = self.pending
        return pending is not None and pending.rank == rank and pending.step == step and pending.host is None

    def hold(self, pending: PendingStep) -> None:
        self.pending = pending

    def take(self) -> PendingStep | None:
        """The pending step, which is no longer pending."""
        pending, self.pending = self.pending, None
        return pending

    def is_repeat(self, pending: PendingStep) -> bool:
        """The same unranked step line again: another rank printing identical values."""
        items = tuple(sorted(pending.metrics.items()))
        if pending.step is None:
            key: _StepKey = (pending.host, None, items)
            if key in self._recent_stepless:
                return True
            self._recent_stepless.append(key)
            return False
        at = (pending.host, pending.step)
        seen = self._seen_unranked.get(at)
        if seen is None:
            self._seen_unranked[at] = [items]
        else:
            for k, known in enumerate(seen):
                if callable(known):
                    known = seen[k] = tuple(sorted(known().items()))
                if known == items:
                    return True
            seen.append(items)
        self._seen_order.append(at)
        self._forget_oldest()
        return False

    def saw_unranked(self, reports: Iterable[tuple[int, LaterItems]]) -> None:
        """Unranked steps the catch-up took in columns (no host), in order: as `is_repeat` of
        each would have remembered them. Each is new there: the catch-up takes only steps
        beyond the stream's last (`Segments.goes_on`), and every step `is_repeat` remembers
        went out of that stream (both are cleared together at a new segment)."""
        for step, later in reports:
            at = (None, step)
            seen = self._seen_unranked.get(at)
            if seen is None:
                self._seen_unranked[at] = [later]
            else:
                seen.append(later)
            self._seen_order.append(at)
        self._forget_oldest()

    def _forget_oldest(self) -> None:
        """The oldest reports go when more than SEEN_UNRANKED_MAX are remembered."""
        order, seen_of = self._seen_order, self._seen_unranked
        while len(order) > SEEN_UNRANKED_MAX:
            at = order.popleft()
            seen = seen_of[at]
            del seen[0]
            if not seen:
                del seen_of[at]

    def forget_seen(self) -> None:
        """A new segment: re-run steps with the same values (same seed) are not repeats."""
        self._seen_unranked.clear()
        self._seen_order.clear()
        self._recent_stepless.clear()


def step_records(pending: PendingStep, source: str, attempt: int) -> list[Record]:
    """The `Step` of a merged step, then a `nan` event per watched metric that is NaN/inf."""
    out: list[Record] = [
        Step(
            source,
            pending.rank,
            pending.step,
            pending.time,
            pending.line,
            pending.metrics,
            host=pending.host,
            attempt=attempt,
        )
    ]
    metrics = pending.metrics
    watched = [n for n in NAN_WATCHED if n in metrics]
    if not watched:
        # No total printed (HRDA's `src.loss_imnet_feat_dist: nan` among its terms): a term of the loss that
        # is NaN makes the loss NaN. (Beside a finite total it may be a figure of no tokens: InternLM's
        # `loss/cn=nan` with `tokens/cn=0`.)
        watched = [
            n
            for n, v in metrics.items()
            if (v != v or v in _INFINITE) and _LOSS_TERM.search(n) and not _NOT_TERM.search(n)
        ][:1]
    for name in watched:
        value = metrics[name]
        if value != value or value in _INFINITE:
            out.append(
                Event(
                    source,
                    pending.rank,
                    pending.step,
                    pending.time,
                    pending.line,
                    "nan",
                    "error",
                    f"{name} is {value} at step {pending.step}",
                    {"metric": name},
                    host=pending.host,
                    attempt=attempt,
                )
            )
    return out


def _differs(a: float, b: float) -> bool:
    return a != b and not (math.isnan(a) and math.isnan(b))
