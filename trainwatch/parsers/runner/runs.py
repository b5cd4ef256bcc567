"""A run of hot rows taken in columns: whether it may be, and writing it into a column block.

A run (rows a..b-1 of a bulk slice, every row of a learned shape) goes into the block in one go
when every row would take the common way on the row-by-row path: ready templates, one rank
already known (or none: a log no rank reports in, each step reported once), steps going up from
the last one (no restart, no merge), finite watched values, and no series fed by two shapes.
Then each parser's state moves line by line (its `on_line` in line order) and the rows go in as
columns; a timed row that reports a step of its own goes in with its log time.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import partial
from itertools import islice
from math import isfinite
from operator import itemgetter, lt

from trainwatch.columns import ColumnBlock
from trainwatch.parsers.bulk import BulkTemplate
from trainwatch.parsers.runner.merge import LaterItems, _differs
from trainwatch.parsers.runner.ranks import RankResolver
from trainwatch.parsers.runner.segments import Segments

Rows = list[tuple[str, ...]]
# (offset of the template's groups in a row, template, the run's rows it took)
Present = list[tuple[int, BulkTemplate, list[int]]]
# The last step row, left pending: (template, step, its groups, row index)
HeldRow = tuple[BulkTemplate, int, tuple[str, ...], int]
# `Run.rank`'s answer when the rows' rank is not certain (a rank is never negative; None is the
# rank of a log where no rank reports progress).
UNSURE = -1


class Run:
    """Rows a..b-1 of a slice and the templates that took them (in order of their first row)."""

    def __init__(self, rows: Rows, present: Present, a: int, b: int) -> None:
        self.rows = rows
        self.present = present
        self.a = a
        self.b = b
        self._step_rows: list[tuple[int, int]] = []  # (row, step) of the step rows, in row order
        self._steps: dict[int, list[int]] = {}  # the steps of each step template's rows (by offset)
        # Step rows reporting one step together (adjacent, the same step: DeepSpeed's `step=N`,
        # its timer.py line, Megatron's `iteration N`) or timed: one record each, with its time.
        self._records: list[tuple[int, int, str | None, dict[str, float]]] = []  # (first row, step, time, metrics)
        self._recorded: set[int] = set()  # the rows those records took
        # Timed rows each reporting a step of its own (recent Megatron-LM's stamped iteration
        # lines): template rows with their log time, not records.
        self._timed_rows = False
        self._of_row: dict[int, BulkTemplate] = {}  # the template of each step row (timed rows' records)
        self._repeats: set[int] = set()  # the rows after the first of each record
        # The first row of such a record at the end of the run: the next lines may still report
        # its step, so the run must stop before it (`CatchUp._columns`).
        self.open_from: int | None = None

    @classmethod
    def of(
        cls, rows: Rows, dispatch: Sequence[tuple[int, int, BulkTemplate]], where: Sequence[list[int]], a: int, b: int
    ) -> Run | None:
        """The run, if every template in it is ready for its next line as usual."""
        present: Present = []
        for (_probe, off, template), at in zip(dispatch, where, strict=True):
            lo, hi = bisect_left(at, a), bisect_left(at, b)
            if lo < hi:
                if template.ready is not None and not template.ready():
                    return None
                present.append((off, template, at[lo:hi]))
        present.sort(key=lambda p: p[2][0])
        return cls(rows, present, a, b)

    def rank(self, ranks: RankResolver) -> int | None:
        """The one rank of every row, when certain and already reporting (None: no rank
        reports, the per-line path's rank of such rows); else UNSURE."""
        rank: int | None = UNSURE
        for off, template, at in self.present:
            if template.rank_group is not None:
                found = {int(r) for r in set(_column(self.rows, at, off + template.rank_group))}
                if len(found) != 1 or not ranks.all_reporting(found):
                    return UNSURE
                this: int | None = found.pop()
            else:
                this = ranks.implicit()
            if rank != UNSURE and this != rank:
                return UNSURE
            rank = this
        return rank

    def steps_go_on(self, rank: int | None, segments: Segments) -> bool:
        """The step rows go up from the stream's last step, their watched values finite; rows
        reporting the same step merge as the per-line path merges them (no value differs).
        Unranked rows (`rank` None) each report a step of their own: two unranked reports of
        one step merge or are repeats on the per-line path (`StepMerger.merge`)."""
        rows = self.rows
        step_rows: list[tuple[int, int]] = []
        of_row: dict[int, BulkTemplate] = {}
        stateful: list[tuple[int, BulkTemplate, list[int]]] = []
        for off, template, at in self.present:
            if template.kind != "step":
                continue
            for g in template.nan_groups:
                if not all(map(isfinite, map(float, _column(rows, at, off + g)))):
                    return False
            if template.step_group is None:
                stateful.append((off, template, at))
                continue
            steps = self._steps[off] = list(map(int, _column(rows, at, off + template.step_group)))
            step_rows += zip(at, steps, strict=True)
            of_row.update(dict.fromkeys(at, template))
        by_row = dict(step_rows) if stateful else {}
        for off, template, at in stateful:
            # DeepSpeed's timer.py line reports the engine's step: the step of the step line of its
            # parser right before it (which set it); anywhere else, row by row
            steps = []
            for i in at:
                before = of_row.get(i - 1)
                if before is None or before.owner is not template.owner or before.step_group is None:
                    return False
                steps.append(by_row[i - 1])
            self._steps[off] = steps
            step_rows += zip(at, steps, strict=True)
            of_row.update(dict.fromkeys(at, template))
        step_rows.sort()
        if not step_rows:
            return True
        repeated = len(set(map(itemgetter(1), step_rows))) < len(step_rows)
        if rank is None and repeated:
            return False
        if repeated:
            merged = self._merge(step_rows, of_row, segments)
            if merged is None:
                return False
            steps = merged
        else:
            steps = [s for _i, s in step_rows]
            if any(t.timed for _o, t, _a in self.present):
                # Each timed row is a step of its own, with its time: a template row (unless a
                # series it feeds has another feeder in the block: then a record, `fit_into`). One
                # at the run's end stays open (the next lines may report its step, as they may
                # after the per-line path's pending step): the run stops before it.
                self._timed_rows = True
                self._of_row = of_row
                last = step_rows[-1][0]
                if last == self.b - 1 and of_row[last].timed:
                    self.open_from = last
        if not segments.goes_on(rank, steps[0]) or not all(map(lt, steps, islice(steps, 1, None))):
            return False
        self._step_rows = step_rows
        return True

    def _merge(
        self, step_rows: list[tuple[int, int]], of_row: dict[int, BulkTemplate], segments: Segments
    ) -> list[int] | None:
        """The records of adjacent step rows of one step, and of timed rows, as the per-line
        path's pending step makes them: metrics merged in line order (a name keeps its first
        value), the first time; a row with a value that differs starts a record of its own (of
        the same step). Returns one step per run of adjacent rows of a step (None: per line)."""
        offsets = {id(t): off for off, t, _at in self.present}
        steps: list[int] = []
        k = 0
        while k < len(step_rows):
            first, step = step_rows[k]
            e = k + 1
            while e < len(step_rows) and step_rows[e] == (first + e - k, step):
                e += 1
            steps.append(step)
            chain = [i for i, _s in step_rows[k:e]]
            k = e
            if len(chain) == 1 and not of_row[first].timed:
                continue
            start, time = first, None
            metrics: dict[str, float] = {}
            for i in chain:
                template = of_row[i]
                off = offsets[id(template)]
                groups = self.rows[i][off : off + template.ngroups]
                found = template.metrics(groups)
                if any(name in metrics and _differs(metrics[name], v) for name, v in found.items()):
                    if segments.armed:
                        return None  # (the same step again would tell a restart)
                    self._records.append((start, step, time, metrics))
                    start, time = i, None
                    metrics = {}
                for name, v in found.items():
                    metrics.setdefault(name, v)
                if time is None:
                    time = template.time(groups)
                if i != start:
                    self._repeats.add(i)
            self._records.append((start, step, time, metrics))
            self._recorded.update(chain)
            if chain[-1] == self.b - 1:
                self.open_from = chain[0]
        return steps

    def fit_into(self, block: ColumnBlock, rank: int | None, segments: Segments) -> bool:
        """Whether the run can go into `block`: no shape of it feeds a series another shape of
        the run or the block feeds. Its timed rows become records when they cannot be template
        rows so (DeepSpeed's `step=N` beside Megatron's iteration rows: both feed `lr`): records
        may share a series."""
        if self._timed_rows and not self._fits(block, rank, timed=True):
            self._timed_rows = False
            self._merge(self._step_rows, self._of_row, segments)  # (single rows: never None)
        return self._fits(block, rank, timed=self._timed_rows)

    def _fits(self, block: ColumnBlock, rank: int | None, *, timed: bool) -> bool:
        groups = block.groups
        present = [p for p in self.present if timed or not p[1].timed]
        if all((rank, template) in groups for _off, template, _at in present):
            return True  # each already feeds its own series in this block (`ColumnBlock.group`)
        taken: dict[tuple[str, str], BulkTemplate] = {}
        for _off, template, _at in present:
            kind = "phase" if template.kind == "phases" else "metric"
            for name in template.names:
                other = taken.get((kind, name)) or block.owner_of(rank, kind, name)
                if other is not None and other is not template:
                    return False
                taken[(kind, name)] = template
        return True

    def write(self, block: ColumnBlock, rank: int | None, counts: Counter[str]) -> tuple[HeldRow | None, int | None]:
        """Move each parser's state and add the rows to `block` (`counts`: rows per parser).

        After `steps_go_on` (its steps are used). Returns the last row when it is a step row
        (it stays pending: the next line may report the same step) and the last step written,
        if any."""
        rows, a, b, present, step_rows = self.rows, self.a, self.b, self.present, self._step_rows
        held = b - 1 if step_rows and step_rows[-1][0] == b - 1 else -1
        line_steps = _line_steps(rows, present)
        base = block.rows - a
        recorded = self._recorded
        for (off, template, at), got in zip(present, line_steps, strict=True):
            counts[template.owner.name] += len(at)
            if template.kind == "step":
                got = self._steps[off]  # type: ignore[assignment]
                if recorded and not recorded.isdisjoint(at):
                    own = [j for j, i in enumerate(at) if i not in recorded]
                    if not own:
                        continue
                    at, got = [at[j] for j in own], [got[j] for j in own]
            if at[-1] == held:
                at, got = at[:-1], got[:-1]
                if not at:
                    continue
            group = block.groups.get((rank, template))
            if group is None:
                group = block.group(rank, template)
                assert group is not None  # (checked by `fit_into`)
                group.first = base + at[0]
            # One C-level pass per needed group over the run's rows (3x faster than transposing
            # the rows with `zip(*...)`).
            taken = list(map(rows.__getitem__, at))
            group.add_texts({g: list(map(itemgetter(off + g), taken)) for g in template.needed})
            if template.timed:
                cut = itemgetter(slice(off, off + template.ngroups))
                if group.times is None:
                    group.times = []
                group.times += map(template.time, map(cut, taken))
            group.steps.extend(got)
            group.last = base + at[-1]
            if template.kind == "step":
                group.rows_at.extend(map(base.__add__, at))
        for first, step, time, metrics in self._records:
            block.add_record(rank, step, time, metrics, base + first)
        block.rows += b - a
        kept: HeldRow | None = None
        if held >= 0:
            block.rows -= 1
            step = step_rows.pop()[1]
            off, template = next((p[0], p[1]) for p in present if p[2][-1] == held)
            kept = (template, step, rows[held][off : off + template.ngroups], held)
        if not step_rows:
            return kept, None
        repeats = self._repeats
        block.step_order.setdefault(rank, []).extend(s for i, s in step_rows if i not in repeats)
        return kept, step_rows[-1][1]

    def reports(self, held: int | None) -> list[tuple[int, LaterItems]]:
        """The step rows written (not the `held` row), in row order: each one's step and its
        metrics when asked (`StepMerger.saw_unranked`)."""
        out: list[tuple[int, int, LaterItems]] = []
        for off, template, at in self.present:
            if template.kind == "step":
                rows = self.rows
                out += (
                    (i, step, partial(_metrics_of, template, rows[i], off))
                    for i, step in zip(at, self._steps[off], strict=True)
                    if i != held
                )
        out.sort(key=itemgetter(0))
        return [(step, later) for _i, step, later in out]


def _metrics_of(template: BulkTemplate, row: tuple[str, ...], off: int) -> dict[str, float]:
    return template.metrics(row[off : off + template.ngroups])


def _line_steps(rows: Rows, present: Present) -> list[list[int | None]]:
    """Each template's `on_line` results, called in line order per parser (a parser's
    state moves with its own lines only)."""
    out: list[list[int | None]] = [[] for _ in present]
    owners: dict[int, list[int]] = {}
    for k, (_off, template, _at) in enumerate(present):
        owners.setdefault(id(template.owner), []).append(k)
    for ks in owners.values():
        if len(ks) == 1:
            off, template, at = present[ks[0]]
            if template.on_lines is not None:
                out[ks[0]] = template.on_lines(len(at))
                continue
            cut = itemgetter(slice(off, off + template.ngroups))
            out[ks[0]] = list(map(template.on_line, map(cut, map(rows.__getitem__, at))))
            continue
        if _follow_steps(rows, present, ks, out):
            continue
        _in_line_order(rows, present, ks, out)
    return out


def _in_line_order(rows: Rows, present: Present, ks: list[int], out: list[list[int | None]]) -> None:
    """One parser's templates' calls in line order: its most frequent shape's rows, when it has
    `on_lines`, a stretch at a time between the other shapes' rows (DeepSpeed's timers between
    its step=N lines), the others a call per row."""
    bulk = max(ks, key=lambda k: len(present[k][2]))
    if present[bulk][1].on_lines is None:
        bulk = -1
    others = sorted((i, k) for k in ks if k != bulk for i in present[k][2])
    at = present[bulk][2] if bulk >= 0 else []
    pos = 0
    for i, k in (*others, (len(rows), -1)):
        if bulk >= 0:
            stop = bisect_left(at, i, pos)
            if stop > pos:
                out[bulk] += present[bulk][1].on_lines(stop - pos)  # type: ignore[misc]
                pos = stop
        if k >= 0:
            off, template, _at = present[k]
            out[k].append(template.on_line(rows[i][off : off + template.ngroups]))


def _follow_steps(rows: Rows, present: Present, ks: list[int], out: list[list[int | None]]) -> bool:
    """One parser's step template (`last_counts`) and phases templates that take its last step
    (`step_of`), as their calls in line order would leave them, without a call per line. False
    (nothing done) for other combinations."""
    steps_k = [k for k in ks if present[k][1].kind == "step"]
    if len(steps_k) != 1 or not present[steps_k[0]][1].last_counts:
        return False
    followers = [k for k in ks if k != steps_k[0]]
    if any(present[k][1].step_of is None for k in followers):
        return False
    off, template, at = present[steps_k[0]]
    steps: list[int | None] = list(map(int, _column(rows, at, off + template.step_group)))  # type: ignore[operator]
    for k in followers:
        before = present[k][1].step_of()  # type: ignore[misc]
        # a row's step: the last step row before it in the run, else the parser's step before the run
        out[k] = [steps[j - 1] if j else before for j in (bisect_left(at, i) for i in present[k][2])]
    last = rows[at[-1]]
    template.on_line(last[off : off + template.ngroups])
    out[steps_k[0]] = steps
    return True


def _column(rows: Sequence[tuple[str, ...]], at: Iterable[int], group: int) -> Iterable[str]:
    """The texts of one group in the rows `at` (C level)."""
    return map(itemgetter(group), map(rows.__getitem__, at))
