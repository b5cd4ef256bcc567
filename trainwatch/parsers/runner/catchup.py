"""The bulk catch-up path: a chunk of history read through the source's learned line shapes.

The same records and state as feeding those lines one by one (tests/perf/test_bulk_catchup.py
compares both), but lines of a shape some parser described (`Parser.bulk_template`) become
columns (`trainwatch.columns.ColumnBlock`), not objects. Any line that is not of a learned
shape, or that meets unusual state (a step going back, a NaN, a rank that is not certain, a
merge with the previous line's step), takes the per-line path, in order. A followed file's
appended lines of a learned step shape go through the same row logic one by one (`live`;
tests/perf/test_live_shapes.py). This part asks the others only named questions: the ranks
(`RankResolver`), the pending step (`StepMerger`), the segments (`Segments`); it reaches the
per-line path through the callables it is given.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from itertools import compress
from operator import itemgetter

from trainwatch.columns import ColumnBlock
from trainwatch.gcpause import gc_paused
from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Parser
from trainwatch.parsers.bulk import MAX_TEMPLATES, BulkTemplate, admit
from trainwatch.parsers.rank import MEMBERSHIP_HINTS, TEXT_HINTS
from trainwatch.parsers.runner.merge import PendingStep, StepMerger
from trainwatch.parsers.runner.ranks import RankResolver
from trainwatch.parsers.runner.runs import UNSURE, Run
from trainwatch.parsers.runner.segments import Segments
from trainwatch.records import Phases, Record, Step

Sink = Callable[[Record], None]
# Catch-up in bulk (`SourceParser.feed_block`); tests/perf compare both paths.
BULK = True
# Lines the bulk path scans per regex call: a shape learned in one is used from the next.
BULK_SLICE = 256 * 1024
# While lines teach new shapes (none known yet, or one learned in the last slice), slices are
# short, so that the shapes take over early: a 4 MB tail window was read 256 KB per line first.
LEARN_SLICE = 16 * 1024
# Parser templates refused before a source stops trying (shapes that cannot be bulk-read).
MAX_REFUSED = 64
# What the runner itself reacts to on any line (segments, rank mentions): never in a bulk line.
SEGMENT_MARKERS = ("exitcode", "attempts left", "OMP_NUM_THREADS", "WORLD INFO DICT")

_Held = tuple[BulkTemplate, int | None, int, tuple[str, ...], int]  # template, rank, step, groups, line


RETRY_EVERY = 16  # small reads between two tries of the bulk path when it did not pay (`worth_trying`)
# A timed template joins the chunk scanner when it took more than a 1/SCAN_TIMED_SHARE of the rows
# of a slice of at least SCAN_TIMED_ROWS rows (`_side_rows`).
SCAN_TIMED_SHARE = 4
SCAN_TIMED_ROWS = 64


class CatchUp:
    """A source's learned line shapes, the column block being filled, and the step it holds.

    `emit` is the source's sink: a `Step`/`Phases` record goes out after the rows of the lines
    before it (the block is closed first)."""

    def __init__(
        self,
        source: str,
        sink: Sink,
        offered: Sequence[tuple[Parser, tuple[str, ...]]],
        ranks: RankResolver,
        merger: StepMerger,
        segments: Segments,
        *,
        feed_line: Callable[[Line], None],
        flush_pending: Callable[[], None],
        settle: Callable[[Counter[str]], None],
        at_line: Callable[[int, str], None],
    ) -> None:
        self._source = source
        self._sink = sink
        self._offered = offered  # the triggered parsers, in dispatch order
        self._ranks = ranks
        self._merger = merger
        self._segments = segments
        self._feed_line = feed_line
        self._flush_pending = flush_pending
        self._settle = settle  # records of the lines taken in bulk, per parser (counted by the source)
        self._at_line = at_line  # the source's current line is a template row's (number, text)
        self._last_row: tuple[int, str] | None = None  # a slice's last line, when a template row
        self._templates: list[BulkTemplate] = []
        self._known_shapes: set[tuple[str, int]] = set()
        self._refused = 0
        self._scanner: re.Pattern[str] | None = None
        self._dispatch: list[tuple[int, int, BulkTemplate]] = []
        self._side: list[tuple[re.Pattern[str], BulkTemplate, int]] = []  # timed templates, their offsets
        self._scanned_timed: set[int] = set()  # timed templates whose lines are many: in the scanner (ids)
        self._catch_all = 0
        self._counts: Counter[str] = Counter()
        self._block: ColumnBlock | None = None
        # The blocks' texts are converted by the store (`SourceParser.texts_to_store`): packed
        # after each slice (`ColumnGroup.pack`), not converted.
        self.keep_texts = False
        self._held: _Held | None = None
        # Lines the per-line path understands now may teach a shape (`learn`).
        self.learning = False
        self.reading = False  # a chunk is being read (`read`): its lines never take `live`
        # Whether the last read that had template rows took at least half of them in bulk: rows a
        # template cannot take (an unranked log's, `_rank`) go line by line at a cost of their own,
        # and a small read then pays less line by line (`SourceReader._feed_bytes`).
        self._pays = True
        self._taken = self._fell = 0
        self._passed = 0  # small reads sent line by line since the bulk path last did not pay

    # ------------------------------------------------------------------ reading
    def worth_trying(self) -> bool:
        """A small read in bulk: while it pays, and every RETRY_EVERY reads when it did not (what
        made rows fall back, a rank not yet reporting, may have passed)."""
        if self._pays:
            return True
        self._passed += 1
        if self._passed >= RETRY_EVERY:
            self._passed = 0
            return True
        return False

    def read(self, text: str, pos: int, no: int) -> None:
        """The whole lines of `text` from `pos` (it ends with a newline), numbered from `no`.

        The cyclic garbage collector is paused meanwhile (`gc_paused`: a twentieth of a
        catch-up's time)."""
        self.learning = self.reading = True
        self._taken = self._fell = 0
        try:
            with gc_paused():
                learned = -1  # the shapes known before the last slice (-1: none read yet)
                while pos < len(text):
                    known = len(self._templates)
                    span = BULK_SLICE if known and known == learned else min(LEARN_SLICE, BULK_SLICE)
                    end = text.find("\n", pos + span) + 1 or len(text)
                    no = self._slice(text, pos, end, no)
                    learned = known
                    pos = end
        finally:
            self.learning = self.reading = False
            if self._last_row is not None:  # (the per-line path's current line, at the read's end)
                self._at_line(*self._last_row)
                self._last_row = None
            self._materialize()
            self._close_block()
            if self._taken or self._fell:
                self._pays = self._taken >= self._fell

    def live(self, line: Line) -> Parser | None:
        """One line read live (a followed file's append), through the learned step shapes as
        the catch-up reads such a line (`_step_row`), its step then the per-line path's pending
        step: the parser whose step it was, or None — nothing taken, the per-line path reads
        the line. A shape's one `fullmatch` instead of the per-line path's runner and parser
        (256 followed files: a thousand such lines a second)."""
        if not self._templates:
            return None
        text = line.text
        scanner = self._scanner if self._scanner is not None else self._compile()
        m = scanner.fullmatch(text + "\n")
        if m is None:  # (a line holding a newline: never from the assembler)
            return None
        row = m.groups("")  # the row `findall` gives
        template: BulkTemplate | None = None
        groups: tuple[str, ...] = ()
        if not row[self._catch_all]:
            template, groups = self._template_of(row)
        else:
            for pattern, t, _off in self._side:
                side = pattern.fullmatch(text)
                if side is not None:
                    template, groups = t, side.groups()
                    break
        if template is None or template.kind != "step":
            return None  # (phases go out per line: their record is the per-line path's own)
        self._at_line(line.no, text)  # (a step it releases is judged here)
        taken = self._step_row(template, groups, line.no)
        self._materialize()  # (what `_step_row` holds is the per-line path's pending step)
        return template.owner if taken else None

    def emit(self, record: Record) -> None:
        """Steps and phases go out after the rows of the lines before them: a step the block
        can hold becomes its next row (the block stays open), anything else closes it first.
        Events and profiles touch nothing the rows touch in the store: they need not close it."""
        block = self._block
        if block is not None and type(record) in (Step, Phases):
            if type(record) is Step and block.take_step(record):  # type: ignore[arg-type]
                return
            self._close_block()
        self._sink(record)

    def learn(self, parser: Parser, text: str) -> None:
        """`parser` understood `text` (an unlabelled line): maybe a shape to read in bulk from now on."""
        if len(self._templates) >= MAX_TEMPLATES or self._refused >= MAX_REFUSED:
            return
        try:
            template = parser.bulk_template(text)
        except Exception:
            template = None
        if template is None:
            return
        key = (template.regex, id(parser))
        if key in self._known_shapes:
            return
        self._known_shapes.add(key)
        # (a shape whose rank mention is its rank group, `[Rank 0]`, is checked for it by `admit`)
        membership = () if template.mentions_rank else MEMBERSHIP_HINTS
        never = (*SEGMENT_MARKERS, *membership, *(TEXT_HINTS if template.rank_group is None else ()))
        if admit(template, text, self._offered, never):
            self._templates.append(template)
            self._scanner = None
        else:
            self._refused += 1

    def _slice(self, text: str, pos: int, end: int, no: int) -> int:
        self._last_row = None
        if not self._templates:
            for line_text in text[pos : end - 1].split("\n"):
                self._feed_line(Line(no, line_text))
                no += 1
            return no
        scanner = self._scanner
        if scanner is None:
            scanner = self._compile()
        no = self._scan(scanner, text, pos, end, no)
        if self._counts:
            self._taken += sum(self._counts.values())
            self._settle(self._counts)
            self._counts.clear()
        if self._block is not None:
            if self.keep_texts:
                self._block.pack()
            else:
                self._block.convert()
        return no

    def _scan(self, scanner: re.Pattern[str], text: str, pos: int, end: int, no: int) -> int:
        rows = scanner.findall(text, pos, end)
        # Which rows each template took, and the runs of template rows between the rows no
        # template took (C-level passes, one group per row each).
        every = range(len(rows))
        scanned = self._dispatch[: len(self._dispatch) - len(self._side)]
        where = [list(compress(every, map(itemgetter(probe), rows))) for probe, _off, _t in scanned]
        where += [[] for _ in self._side]
        others = list(compress(every, map(itemgetter(self._catch_all), rows)))
        cuts = self._side_rows(rows, others, where) if self._side else others
        a = 0
        for b in (*cuts, len(rows)):
            if a < b:
                self._run(rows, where, a, b, no)
            if b < len(rows):
                self._fallback(no + b, rows[b][-1][:-1], learn=True)
            a = b + 1
        last = len(rows) - 1
        if rows and (not cuts or cuts[-1] != last):
            template, groups = self._template_of(rows[last])
            if template is not None:
                self._last_row = (no + last, template.text(groups))
        return no + len(rows)

    def _template_of(self, row: tuple[str, ...]) -> tuple[BulkTemplate | None, tuple[str, ...]]:
        """The template a scanner row is of, and its groups (None: a catch-all row)."""
        for probe, off, template in self._dispatch:
            if probe < len(row) and row[probe]:
                return template, row[off : off + template.ngroups]
        return None, ()

    def _side_rows(self, rows: list[tuple[str, ...]], others: list[int], where: list[list[int]]) -> list[int]:
        """The catch-all rows a timed template matches become its rows (its groups after the
        scanner's, `_compile`); the others, returned, are read per line."""
        width = self._catch_all + 1
        total = self._side[-1][2] + self._side[-1][1].ngroups - width
        cuts: list[int] = []
        first = len(self._dispatch) - len(self._side)
        for i in others:
            line = rows[i][-1][:-1]
            for k, (pattern, template, off) in enumerate(self._side):
                m = pattern.fullmatch(line)
                if m is not None:
                    before = off - width
                    after = total - before - template.ngroups
                    rows[i] = (*rows[i], *("",) * before, *m.groups(), *("",) * after)
                    where[first + k].append(i)
                    break
            else:
                cuts.append(i)
        # A timed shape that is a good part of the lines (recent Megatron-LM's stamped iteration
        # line, one in two lines) costs less in the scanner: from the next slice on.
        for k, (_pattern, template, _off) in enumerate(self._side):
            if len(where[first + k]) * SCAN_TIMED_SHARE > len(rows) >= SCAN_TIMED_ROWS:
                self._scanned_timed.add(id(template))
                self._scanner = None
        return cuts

    def _compile(self) -> re.Pattern[str]:
        """The chunk scanner: one alternative per untimed template, then a catch-all. Every
        group of every alternative is a slot of every row it returns (a wider row costs every
        line), so the timed templates, whose lines are usually few, are tried on the catch-all
        rows only; their groups follow the scanner's in the rows they match (`_side_rows`). A
        timed template whose lines were a good part of a slice's is in the scanner."""
        dispatch: list[tuple[int, int, BulkTemplate]] = []
        off = 0
        scanned = [t for t in self._templates if not self._tried_aside(t)]
        for template in scanned:
            dispatch.append((off + template.probe, off, template))
            off += template.ngroups
        # No untimed template: a group that never matches, since `findall` of a pattern of one
        # group returns strings, not rows.
        never = "" if scanned else "(?!)()|"
        off += not scanned
        self._catch_all = off
        off += 1
        self._side = []
        for template in self._templates:
            if self._tried_aside(template):
                self._side.append((re.compile(template.regex), template, off))
                dispatch.append((off + template.probe, off, template))
                off += template.ngroups
        self._dispatch = dispatch
        alternatives = never + "".join(f"{t.regex}\n|" for t in scanned)
        # The catch-all group keeps its newline: never empty, so its rows are found by `compress`.
        self._scanner = re.compile(f"(?:{alternatives}(.*\n))")
        return self._scanner

    def _tried_aside(self, template: BulkTemplate) -> bool:
        """A timed template not (yet) in the scanner: tried on its catch-all rows (`_side_rows`)."""
        return template.timed and id(template) not in self._scanned_timed

    # --------------------------------------------------------------------- runs
    def _run(self, rows: list[tuple[str, ...]], where: list[list[int]], a: int, b: int, no: int) -> None:
        """Rows a..b-1 of a slice, all template rows: in columns when nothing in them is
        unusual (`_columns`), else row by row."""
        while a < b and (self._merger.pending is not None or self._held is not None or not self._segments.steady):
            self._row(rows[a], no + a)
            a += 1
        if a < b:
            a = self._columns(rows, where, a, b, no)
        for i in range(a, b):
            self._row(rows[i], no + i)

    def _columns(self, rows: list[tuple[str, ...]], where: list[list[int]], a: int, b: int, no: int) -> int:
        """Rows a..b-1 in one go: the state and block the row-by-row path leaves, when every row
        would take the common way there. Returns the row it stopped at: b, or a (nothing done),
        or the first row of a step the run ends in that the next lines may still report (a
        timed row, a merge: the row-by-row path leaves it pending)."""
        run = Run.of(rows, self._dispatch, where, a, b)
        if run is None:
            return a
        rank = run.rank(self._ranks)
        if rank == UNSURE or not run.steps_go_on(rank, self._segments):
            return a
        if run.open_from is not None:  # (rare: a slice ending in DeepSpeed's step=N lines)
            stop = run.open_from
            run = Run.of(rows, self._dispatch, where, a, stop) if a < stop else None
            if run is None or run.rank(self._ranks) != rank or not run.steps_go_on(rank, self._segments):
                return a
            if run.open_from is not None:
                return a
            b = stop
        block = self._open_block()
        if not run.fit_into(block, rank, self._segments):
            return a
        self._block = block
        held, last = run.write(block, rank, self._counts)
        if held is not None:
            template, step, groups, at = held
            self._held = (template, rank, step, groups, no + at)
        if last is not None:
            self._segments.record(None, rank, last)
            if rank is None:
                self._merger.saw_unranked(run.reports(held[3] if held is not None else None))
        return b

    # ------------------------------------------------------------- row by row
    def _row(self, row: tuple[str, ...], no: int) -> None:
        """One template row, as its own step."""
        template, groups = self._template_of(row)
        if template is None:
            return
        self._at_line(no, template.text(groups))  # (a step it releases is judged here)
        if template.kind == "phases":
            done = self._phases_row(template, groups)
        else:
            done = self._step_row(template, groups, no)
        if done:
            self._counts[template.owner.name] += 1
        else:
            self._fallback(no, template.text(groups), learn=False)

    def _rank(self, template: BulkTemplate, groups: tuple[str, ...]) -> int | None:
        """The rank the per-line path gives such a line (None: a log where no rank reports
        progress; `admit` keeps rank mentions out of a rank-less shape's lines)."""
        if template.rank_group is not None:
            return self._ranks.report(int(groups[template.rank_group]))
        return self._ranks.implicit()

    def _phases_row(self, template: BulkTemplate, groups: tuple[str, ...]) -> bool:
        if template.ready is not None and not template.ready():
            return False
        rank = self._rank(template, groups)
        if self._merger.pending is not None:
            self._flush_pending()
        elif self._held is not None:
            self._flush_held()
        step = template.on_line(groups)
        self._add_row(rank, template, step, groups)
        return True

    def _step_row(self, template: BulkTemplate, groups: tuple[str, ...], no: int) -> bool:
        if template.ready is not None and not template.ready():
            return False
        if template.step_now is not None:
            now = template.step_now(groups)
            if now is None:
                return False
            step = now
        else:
            step = int(groups[template.step_group])  # type: ignore[index]
        rank = self._rank(template, groups)
        time = template.time(groups)
        held = self._held
        same_as_held = held is not None and held[1] == rank and held[2] == step
        if rank is None and (same_as_held or self._merger.continues(rank, step)):
            return False  # another unranked report of one step: a repeat or a merge, per line
        if same_as_held:  # another report of the held step
            self._materialize()
        if self._merger.pending is not None:
            if self._merger.continues(rank, step) and self._merged(template, rank, step, groups, time):
                return True
            self._flush_pending()
        elif held is not None:
            self._flush_held()
        template.on_line(groups)
        if template.timed:  # its time goes with the step: the per-line path's pending step
            self._merger.hold(PendingStep(rank, step, time, no, template.metrics(groups), None))
        else:
            self._held = (template, rank, step, groups, no)
        return True

    def _merged(
        self, template: BulkTemplate, rank: int | None, step: int, groups: tuple[str, ...], time: str | None
    ) -> bool:
        """A step row reporting the pending step (Megatron's `iteration N` after DeepSpeed's
        `step=N` and timer lines), as the per-line path's `step()` takes it: merged into the
        pending step (True), or, when a value differs ("apart": another report of that step),
        nothing done (False: the caller flushes the pending step and holds this row, as
        `step()` does)."""
        if self._merger.merge(rank, step, None, template.metrics(groups), time) != "merged":
            return False
        template.on_line(groups)
        return True

    def _flush_held(self) -> None:
        """The source's `flush_pending` of the step this path holds: a column row when nothing is unusual."""
        template, rank, step, groups, _no = self._held  # type: ignore[misc]
        if not self._segments.steady or not self._segments.goes_on(rank, step) or _bad(template, groups):
            self._materialize()
            self._flush_pending()
            return
        self._held = None
        self._segments.record(None, rank, step)
        if rank is None:
            self._merger.saw_unranked([(step, partial(template.metrics, groups))])
        self._add_row(rank, template, step, groups)

    def _add_row(self, rank: int | None, template: BulkTemplate, step: int | None, groups: tuple[str, ...]) -> None:
        block = self._block = self._open_block()
        group = block.groups.get((rank, template))
        if group is None:
            group = block.group(rank, template)
            if group is None:  # another shape feeds the same series: keep their order
                self._close_block()
                block = self._block = ColumnBlock(self._source, self._segments.attempt)
                group = block.group(rank, template)
                assert group is not None
        group.rows.append(groups)
        group.steps.append(step)
        group.last = block.rows
        if template.kind == "step":
            group.rows_at.append(block.rows)
            order = block.step_order.get(rank)
            if order is None:
                order = block.step_order[rank] = []
            order.append(step)  # type: ignore[arg-type]
        block.rows += 1

    def _materialize(self) -> None:
        """A step this path holds becomes the per-line path's pending step."""
        held = self._held
        if held is None:
            return
        self._held = None
        template, rank, step, groups, no = held
        self._merger.hold(PendingStep(rank, step, None, no, template.metrics(groups), None))

    def _fallback(self, no: int, text: str, *, learn: bool) -> None:
        self._fell += 1
        self._materialize()
        self.learning = learn
        try:
            self._feed_line(Line(no, text))
        finally:
            self.learning = True

    def _open_block(self) -> ColumnBlock:
        """The block rows go to: the open one, unless a relaunch began another attempt since it
        was opened (its rows are that attempt's: the block goes out first); else a new one,
        not yet the open one (a run that cannot be taken in columns leaves none)."""
        block = self._block
        if block is not None and block.attempt != self._segments.attempt:
            self._close_block()
            block = None
        return block if block is not None else ColumnBlock(self._source, self._segments.attempt)

    def _close_block(self) -> None:
        block = self._block
        if block is not None:
            self._block = None
            if self.keep_texts:
                block.pack()
            else:
                block.convert()  # (in the parser's thread)
            if block.rows:
                self._sink(block)  # type: ignore[arg-type]


def _bad(template: BulkTemplate, groups: tuple[str, ...]) -> bool:
    """A NaN/inf in a watched metric: its `nan` event comes from the per-line path."""
    for g in template.nan_groups:
        value = float(groups[g])
        if value != value or value in (math.inf, -math.inf):
            return True
    return False
