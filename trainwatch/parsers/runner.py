"""Run the parsers over one source's lines and turn what they report into records.

One `SourceParser` per source. It strips launcher rank prefixes, offers each line to the
parsers whose triggers it contains, resolves rank (prefix > text > path > the source's
reporting rank), stamps time, merges the several lines that report one step into one
`Step`, drops identical step lines printed by several unprefixed ranks, and keeps the
counts `summary` reports (formats matched, lines not understood).

Rank attribution and run segments (see `rank.py` for the forms):
- `srun -l` task labels (`3: `) and pdsh host labels (`worker-0: `) are only honoured when
  the source consistently uses them: the first `PROBE_LINES` lines are held back, and the
  label mode is decided on them before any line is parsed.
- A run restarted into the same file (torchrun worker-group failure then progress again,
  a second launcher banner, a rank's step going back) starts a new segment: a `restart`
  event is emitted and duplicate detection starts afresh, so re-run steps with the same
  values (same seed) are kept. Files under torchrun's `attempt_<k>/` are segment k; local
  rank 0's file of an attempt k >= 1 emits that attempt's `restart` event.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, islice
from math import isfinite
from operator import itemgetter, lt
from typing import Any

from trainwatch.columns import ColumnBlock
from trainwatch.lines.assembler import Kind, Line
from trainwatch.parsers.base import Parser
from trainwatch.parsers.bulk import MAX_TEMPLATES, BulkTemplate, admit
from trainwatch.parsers.rank import (
    MEMBERSHIP_HINTS,
    TEXT_HINTS,
    host_label,
    is_launch_banner,
    is_worker_failure,
    looks_srun_labelled,
    mentioned_rank,
    path_attempt,
    path_host,
    path_rank,
    split_host,
    split_prefix,
    split_srun_label,
    text_rank,
)
from trainwatch.parsers.timestamps import line_time
from trainwatch.records import Event, Phases, Profile, Record, Severity, Step

Sink = Callable[[Record], None]
# Catch-up in bulk (`feed_block`); tests/perf compare both paths.
BULK = True
# Lines the bulk path scans per regex call: a shape learned in one is used from the next.
BULK_SLICE = 256 * 1024
# Parser templates refused before a source stops trying (shapes that cannot be bulk-read).
MAX_REFUSED = 64
# What the runner itself reacts to on any line (segments, rank mentions): never in a bulk line.
SEGMENT_MARKERS = ("exitcode", "attempts left", "OMP_NUM_THREADS", "WORLD INFO DICT")
# A NaN/inf in these is a `nan` event (other metrics, e.g. a ratio, may legitimately be inf).
NAN_WATCHED = ("loss", "grad_norm", "eval_loss")
# Lines held back at the start of a source to decide whether it uses `srun -l` / pdsh labels,
# and how many labelled lines that takes (one `0: ` at the start of a line is not enough).
PROBE_LINES = 16
PROBE_MIN_LABELLED = 4
PROBE_MAX_HELD = 512  # bounds the hold (and its memory) when a log starts with progress frames
# Unranked step keys remembered per segment to recognise the same line from other ranks.
SEEN_UNRANKED_MAX = 4096
# Unranked steps without a step number are only compared with this many recent ones.
RECENT_STEPLESS = 16
# Launcher prefix of recent lines, for blocks a parser releases on a later line (`line=`).
RECENT_ORIGINS = 1024


@dataclass
class SourceStats:
    lines: int = 0
    frames: int = 0
    understood: int = 0
    records: Counter[str] = field(default_factory=Counter)  # parser name -> records
    duplicate_steps: int = 0
    parser_errors: int = 0
    ranks_seen: set[int] = field(default_factory=set)

    @property
    def formats(self) -> list[str]:
        return [name for name, n in self.records.most_common() if n]

    @property
    def not_understood(self) -> int:
        return self.lines - self.understood


@dataclass
class _PendingStep:
    rank: int | None
    step: int | None
    time: str | None
    line: int
    metrics: dict[str, float]
    host: str | None = None


_StepKey = tuple[str | None, int | None, tuple[tuple[str, float], ...]]


class SourceParser:
    """Parses one source. Not thread-safe: one reader thread feeds it."""

    def __init__(self, source: str, parsers: Sequence[Parser], sink: Sink, path: str | None = None) -> None:
        self.source = source
        self.parsers = list(parsers)
        self._sink = sink
        self._path_rank = path_rank(path or source) if source != "-" else None
        # Substring tests in plain loops: cheaper than one big alternation regex (sre tries
        # every alternative at every position) or a generator per parser.
        self._triggered = [(p, tuple(p.triggers)) for p in self.parsers if p.triggers]
        self._always = [p for p in self.parsers if not p.triggers]
        self.stats = SourceStats()
        self._pending: _PendingStep | None = None
        self._seen_unranked: OrderedDict[_StepKey, None] = OrderedDict()
        self._recent_stepless: deque[_StepKey] = deque(maxlen=RECENT_STEPLESS)
        self._last_step: dict[int | None, int] = {}
        self._reporting_ranks: set[int] = set()
        # Label detection: lines held until the source's labelling is known.
        self._probe: list[Line] | None = []
        self._probe_lines = 0  # non-empty LINEs held (frames do not count)
        self._label_mode = ""  # "", "srun" (task id labels) or "host" (pdsh host labels)
        # Run segments: the attempt this source is in, and what may start the next one.
        where = path or source
        self._path_host = path_host(where) if source != "-" else None
        self._attempt = (path_attempt(where) or 0) if source != "-" else 0
        self._attempt_event_due = self._attempt > 0 and self._path_rank == 0
        self._restart_armed = False
        # The file was truncated, rewritten or replaced (why): its next step tells a relaunch
        # (the steps go back) from rotation under a run that goes on.
        self._content_restarted = ""
        self._banners: Counter[str | None] = Counter()
        self._launches = 0
        self._last_by_stream: dict[tuple[str | None, int | None], int] = {}
        # Per-line state read by the Emitter methods.
        self._line: Line | None = None
        self._text = ""
        self._prefix_rank: int | None = None
        self._host: str | None = None
        self._origins: OrderedDict[int, tuple[int | None, str | None]] = OrderedDict()
        self._text_rank_cache: int | bool | None = False
        self._current_parser = ""
        # Bumped by every line fed and every release: a reader's idle poll compares it to skip
        # work (256 followed files poll once a second each).
        self.changes = 0
        self._eof_done = False  # at_eof ran and no line came since: running it again is a no-op
        # Bulk catch-up (feed_block): the source's learned line shapes and the open column block.
        self._raw_sink = sink
        self._sink = self._emit_record
        self._templates: list[BulkTemplate] = []
        self._known_shapes: set[tuple[str, int]] = set()
        self._refused = 0
        self._scanner: re.Pattern[str] | None = None
        self._dispatch: list[tuple[int, int, BulkTemplate]] = []
        self._catch_all = 0
        self._bulk_counts: Counter[str] = Counter()
        self._learning = False
        self._block: ColumnBlock | None = None
        self._bulk_pending: tuple[BulkTemplate, int, int, tuple[str, ...], int] | None = None

    # ----------------------------------------------------------------- feeding
    def feed_lines(self, lines: Iterable[Line]) -> None:
        for line in lines:
            self.feed_line(line)

    def feed_line(self, line: Line) -> None:
        self.changes += 1
        self._eof_done = False
        if line.kind is Kind.FRAME:
            self.stats.frames += 1
        else:
            self.stats.lines += 1
        if line.display_only:
            return
        if self._probe is not None:
            self._probe.append(line)
            if line.kind is Kind.LINE and line.text.strip():
                self._probe_lines += 1
            # Decide after PROBE_LINES real lines, or early when a frame storm fills the hold.
            if self._probe_lines >= PROBE_LINES or len(self._probe) >= PROBE_MAX_HELD:
                self._end_probe()
            return
        self._process_safely(line)

    def _end_probe(self) -> None:
        """Decide the source's label mode on the held lines, then parse them."""
        held, self._probe = self._probe or [], None
        texts = [p.text for p in held if p.kind is Kind.LINE and p.text.strip()]
        if _consistently(texts, looks_srun_labelled):
            self._label_mode = "srun"
        elif _consistently(texts, _has_host_label):
            self._label_mode = "host"
        for line in held:
            self._process_safely(line)

    def _process_safely(self, line: Line) -> None:
        """A line the rank/label logic cannot handle is counted, never fatal to the source."""
        try:
            self._process(line)
        except Exception:
            self.stats.parser_errors += 1

    def _process(self, line: Line) -> None:
        text = line.text
        host: str | None = self._path_host
        label_rank: int | None = None
        if self._label_mode == "host":
            found_host, text = split_host(text)
            host = found_host or host
        elif self._label_mode == "srun":
            label_rank, text = split_srun_label(text)
        prefix_rank, text = split_prefix(text)
        if label_rank is not None:
            if prefix_rank is not None:
                # `srun -l torchrun --tee 3`: one task per node, so the label is the node
                # and `[default3]:` the local rank on it.
                host = f"task{label_rank}"
            else:
                prefix_rank = label_rank
        if prefix_rank is not None:
            self._note_rank(prefix_rank)
        self._line = line
        self._text = text
        self._prefix_rank = prefix_rank
        self._host = host
        self._text_rank_cache = False
        if prefix_rank is not None or host is not None:
            self._origins[line.no] = (prefix_rank, host)
            if len(self._origins) > RECENT_ORIGINS:
                self._origins.popitem(last=False)
        # `srun -l -n 2 torchrun ...`: each task is its own launcher and prints its own banner.
        self._watch_segments(text, host if label_rank is None else f"task{label_rank}")
        mentioned = mentioned_rank(text)
        if mentioned is not None:
            self._note_rank(mentioned)
        understood = False
        for parser, triggers in self._triggered:
            for trigger in triggers:
                if trigger in text:
                    break
            else:
                continue
            self._current_parser = parser.name
            if self._safe_feed(parser, text, line):
                understood = True
                break
        if not understood:
            for parser in self._always:
                self._current_parser = parser.name
                if self._safe_feed(parser, text, line):
                    understood = True
                    break
        if understood and line.kind is Kind.LINE:
            self.stats.understood += 1
            if self._learning and prefix_rank is None and host is None and not self._label_mode:
                self._learn(parser, text)

    def _safe_feed(self, parser: Parser, text: str, line: Line) -> bool:
        try:
            return bool(parser.feed(text, line, self))
        except Exception:
            self.stats.parser_errors += 1
            return False

    def content_restarted(self, why: str) -> None:
        """The source's text starts again from its first line (`file truncated at 2821 bytes`).

        A job relaunched with `>` into the same file, or a new file at the path, prints its
        steps from the start again: the first step that does not go on from the last one
        starts a new segment, as a relaunch into the file does. copytruncate / logrotate under
        a run that keeps going lead to the next step: nothing changes."""
        self._flush_pending()
        self._content_restarted = why

    def at_eof(self) -> None:
        """The reader has consumed everything written so far: release merged steps and held blocks."""
        if self._eof_done:
            return  # every parser's at_eof releases what it holds: nothing was fed since
        self._eof_done = True
        self.changes += 1
        if self._probe is not None:
            self._end_probe()
        self._flush_pending()
        self._line = None
        self._prefix_rank = None  # what parsers release now is not the last line's rank
        for parser in self.parsers:
            self._current_parser = parser.name
            try:
                parser.at_eof(self)
            except Exception:
                self.stats.parser_errors += 1
        self._flush_pending()

    def finish(self) -> None:
        """End of input: parsers release held blocks, then everything is flushed."""
        self.changes += 1
        if self._probe is not None:
            self._end_probe()
        self._line = None
        self._prefix_rank = None
        for parser in self.parsers:
            self._current_parser = parser.name
            try:
                parser.finish(self)
            except Exception:
                self.stats.parser_errors += 1
        self._flush_pending()

    # --------------------------------------------------------------- bulk path
    def feed_block(self, first_no: int, text: str) -> None:
        """Whole lines (`text` ends with a newline), numbered from `first_no`: a catch-up chunk.

        The same records and state as `feed_lines` of those lines, but lines of a shape some
        parser described (`Parser.bulk_template`) become columns (`ColumnBlock`), not objects.
        The sink then receives `ColumnBlock`s among the records: only for the store."""
        pos, no = 0, first_no
        while self._probe is not None and pos < len(text):  # the label probe holds lines one by one
            end = text.index("\n", pos)
            self.feed_line(Line(no, text[pos:end]))
            pos, no = end + 1, no + 1
        if not BULK or self._label_mode or self._path_host is not None:
            if pos < len(text):
                self.feed_lines(Line(n, t) for n, t in enumerate(text[pos:-1].split("\n"), no))
            return
        self._learning = True
        try:
            while pos < len(text):
                end = text.find("\n", pos + BULK_SLICE) + 1 or len(text)
                no = self._bulk_slice(text, pos, end, no)
                pos = end
        finally:
            self._learning = False
            self._materialize()
            self._close_block()

    def _bulk_slice(self, text: str, pos: int, end: int, no: int) -> int:
        if not self._templates:
            for line_text in text[pos : end - 1].split("\n"):
                self.feed_line(Line(no, line_text))
                no += 1
            return no
        scanner = self._scanner
        if scanner is None:
            scanner = self._compile()
        lines = self.stats.lines
        rows = scanner.findall(text, pos, end)
        if not rows:
            return no
        # Which rows each template took, and the runs of template rows between the rows no
        # template took (C-level passes, one group per row each).
        every = range(len(rows))
        where = [list(compress(every, map(itemgetter(probe), rows))) for probe, _off, _t in self._dispatch]
        a = 0
        for b in (*compress(every, map(itemgetter(self._catch_all), rows)), len(rows)):
            if a < b:
                self._bulk_run(rows, where, a, b, no)
            if b < len(rows):
                self._bulk_fallback(no + b, rows[b][-1][:-1], learn=True)
            a = b + 1
        self._settle_counts(lines)
        return no + len(rows)

    def _bulk_row(self, row: tuple[str, ...], no: int) -> None:
        """One template row, as its own step."""
        for probe, off, template in self._dispatch:
            if row[probe]:
                groups = row[off : off + template.ngroups]
                if template.kind == "phases":
                    done = self._bulk_phases(template, groups)
                else:
                    done = self._bulk_step(template, groups, no)
                if done:
                    self._bulk_counts[template.owner.name] += 1
                else:
                    self._bulk_fallback(no, template.text(groups), learn=False)
                return

    def _bulk_run(
        self,
        rows: list[tuple[str, ...]],
        where: list[list[int]],
        a: int,
        b: int,
        no: int,
    ) -> None:
        """Rows a..b-1 of a slice, all template rows: in columns when nothing in them is
        unusual (`_bulk_columns`), else row by row."""
        while a < b and (
            self._pending is not None
            or self._bulk_pending is not None
            or self._attempt_event_due
            or self._content_restarted
        ):
            self._bulk_row(rows[a], no + a)
            a += 1
        if a < b and not self._bulk_columns(rows, where, a, b, no):
            for i in range(a, b):
                self._bulk_row(rows[i], no + i)

    def _bulk_columns(
        self,
        rows: list[tuple[str, ...]],
        where: list[list[int]],
        a: int,
        b: int,
        no: int,
    ) -> bool:
        """Rows a..b-1 in one go: the state and block the row-by-row path leaves, when every row
        would take the common way there (one rank already known, ready templates, steps going
        up, finite watched values, no series fed by two shapes). False (nothing done) otherwise."""
        present: list[tuple[int, BulkTemplate, list[int]]] = []
        for (_probe, off, template), at in zip(self._dispatch, where, strict=True):
            lo, hi = bisect_left(at, a), bisect_left(at, b)
            if lo < hi:
                if template.ready is not None and not template.ready():
                    return False
                present.append((off, template, at[lo:hi]))
        present.sort(key=lambda p: p[2][0])
        rank: int | None = None
        for off, template, at in present:
            if template.rank_group is not None:
                found = {int(r) for r in set(_column(rows, at, off + template.rank_group))}
                if len(found) != 1 or not found <= self._reporting_ranks:
                    return False
                this = found.pop()
            elif self._path_rank is not None:
                this = self._path_rank
            elif len(self._reporting_ranks) == 1:
                this = next(iter(self._reporting_ranks))
            else:
                return False
            if rank is not None and this != rank:
                return False
            rank = this
        assert rank is not None
        # Step rows: going up from the last one (no restart, no merge), watched values finite.
        step_rows: list[tuple[int, int]] = []
        for off, template, at in present:
            if template.kind == "step":
                step_rows += zip(at, map(int, _column(rows, at, off + template.step_group)), strict=True)  # type: ignore[operator]
                for g in template.nan_groups:
                    if not all(map(isfinite, map(float, _column(rows, at, off + g)))):
                        return False
        step_rows.sort()
        steps = [s for _i, s in step_rows]
        prev = self._last_by_stream.get((None, rank))
        if steps and ((prev is not None and steps[0] <= prev) or not all(map(lt, steps, islice(steps, 1, None)))):
            return False
        # Groups: a new one must not feed a series another shape of the block feeds.
        block = self._block
        if block is None:
            block = ColumnBlock(self.source, self._attempt)
        taken: dict[tuple[str, str], BulkTemplate] = {}
        for _off, template, _at in present:
            kind = "phase" if template.kind == "phases" else "metric"
            for name in template.names:
                other = taken.get((kind, name)) or block.owner_of(rank, kind, name)
                if other is not None and other is not template:
                    return False
                taken[(kind, name)] = template
        # Nothing unusual: each parser's state moves line by line (its `on_line` in line order),
        # the rows go in as columns.
        held = b - 1 if step_rows and step_rows[-1][0] == b - 1 else -1  # a last step row stays pending
        line_steps = self._line_steps(rows, present)
        self._block = block
        base = block.rows - a
        counts = self._bulk_counts
        for (off, template, at), got in zip(present, line_steps, strict=True):
            counts[template.owner.name] += len(at)
            if template.kind == "step":
                got = list(map(int, _column(rows, at, off + template.step_group)))  # type: ignore[operator]
            if at[-1] == held:
                at, got = at[:-1], got[:-1]
                if not at:
                    continue
            group = block.groups.get((rank, template))
            if group is None:
                group = block.group(rank, template)
                assert group is not None  # (checked above)
                group.first = base + at[0]
            needed = template.needed
            picked = map(itemgetter(*(off + g for g in needed)), map(rows.__getitem__, at))
            group.add_texts(
                dict(zip(needed, zip(*picked, strict=True) if len(needed) > 1 else (list(picked),), strict=True))
            )
            group.steps.extend(got)
            group.last = base + at[-1]
            if template.kind == "step":
                group.rows_at.extend(map(base.__add__, at))
        block.rows += b - a
        if held >= 0:
            block.rows -= 1
            step_rows.pop()
            off, template = next((p[0], p[1]) for p in present if p[2][-1] == held)
            self._bulk_pending = (template, rank, steps[-1], rows[held][off : off + template.ngroups], no + held)
        if step_rows:
            last = step_rows[-1][1]
            block.step_order.setdefault(rank, []).extend(s for _i, s in step_rows)
            self._last_by_stream[(None, rank)] = last
            self._last_step[rank] = last
            self._last_step[None] = last
        return True

    @staticmethod
    def _line_steps(
        rows: list[tuple[str, ...]], present: list[tuple[int, BulkTemplate, list[int]]]
    ) -> list[list[int | None]]:
        """Each template's `on_line` results, called in line order per parser (a parser's
        state moves with its own lines only)."""
        out: list[list[int | None]] = [[] for _ in present]
        owners: dict[int, list[int]] = {}
        for k, (_off, template, _at) in enumerate(present):
            owners.setdefault(id(template.owner), []).append(k)
        for ks in owners.values():
            if len(ks) == 1:
                off, template, at = present[ks[0]]
                cut = itemgetter(slice(off, off + template.ngroups))
                out[ks[0]] = list(map(template.on_line, map(cut, map(rows.__getitem__, at))))
                continue
            for i, k in sorted((i, j) for j in ks for i in present[j][2]):
                off, template, _at = present[k]
                out[k].append(template.on_line(rows[i][off : off + template.ngroups]))
        return out

    def _settle_counts(self, lines_before: int) -> None:
        """Per-line counters of the lines taken in bulk (the fallbacks counted their own)."""
        counts = self._bulk_counts
        n = sum(counts.values())
        if n:
            self.stats.lines += n
            self.stats.understood += n
            self.stats.records.update(counts)
            self.changes += n
            self._eof_done = False
            counts.clear()

    def _compile(self) -> re.Pattern[str]:
        dispatch: list[tuple[int, int, BulkTemplate]] = []
        off = 0
        for template in self._templates:
            dispatch.append((off + template.probe, off, template))
            off += template.ngroups
        self._dispatch = dispatch
        self._catch_all = off
        alternatives = "".join(f"{t.regex}\n|" for t in self._templates)
        # The catch-all group keeps its newline: never empty, so its rows are found by `compress`.
        self._scanner = re.compile(f"(?:{alternatives}(.*\n))")
        return self._scanner

    def _learn(self, parser: Parser, text: str) -> None:
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
        never = (*SEGMENT_MARKERS, *MEMBERSHIP_HINTS, *(TEXT_HINTS if template.rank_group is None else ()))
        if admit(template, text, self._triggered, never):
            self._templates.append(template)
            self._scanner = None
        else:
            self._refused += 1

    def _bulk_rank(self, template: BulkTemplate, groups: tuple[str, ...]) -> int | None:
        """The rank `_rank` would give such a line, when certain; else None (per line)."""
        if template.rank_group is not None:
            rank = int(groups[template.rank_group])
            if rank not in self._reporting_ranks:
                self._reporting_ranks.add(rank)
                self._note_rank(rank)
            return rank
        if self._path_rank is not None:
            return self._path_rank
        if len(self._reporting_ranks) == 1:
            return next(iter(self._reporting_ranks))
        return None

    def _bulk_phases(self, template: BulkTemplate, groups: tuple[str, ...]) -> bool:
        if template.ready is not None and not template.ready():
            return False
        rank = self._bulk_rank(template, groups)
        if rank is None:
            return False
        if self._pending is not None:
            self._flush_pending()
        elif self._bulk_pending is not None:
            self._flush_bulk_pending()
        step = template.on_line(groups)
        self._add_row(rank, template, step, groups)
        return True

    def _bulk_step(self, template: BulkTemplate, groups: tuple[str, ...], no: int) -> bool:
        if template.ready is not None and not template.ready():
            return False
        step = int(groups[template.step_group])  # type: ignore[index]
        rank = self._bulk_rank(template, groups)
        if rank is None:
            return False
        pending = self._pending
        if pending is not None:
            if pending.rank == rank and pending.step == step and pending.host is None:
                return False  # merged with the previous line's step: per line
            self._flush_pending()
        elif self._bulk_pending is not None:
            held = self._bulk_pending
            if held[1] == rank and held[2] == step:
                return False
            self._flush_bulk_pending()
        template.on_line(groups)
        self._bulk_pending = (template, rank, step, groups, no)
        return True

    def _flush_bulk_pending(self) -> None:
        """`_flush_pending` of a step held by the bulk path: a column row when nothing is unusual."""
        template, rank, step, groups, _no = self._bulk_pending  # type: ignore[misc]
        prev = self._last_by_stream.get((None, rank))
        if (
            self._attempt_event_due
            or self._content_restarted
            or (prev is not None and step <= prev)
            or _bad(template, groups)
        ):
            self._materialize()
            self._flush_pending()
            return
        self._bulk_pending = None
        self._last_by_stream[(None, rank)] = step
        self._last_step[rank] = step
        self._last_step[None] = step
        self._add_row(rank, template, step, groups)

    def _add_row(self, rank: int, template: BulkTemplate, step: int | None, groups: tuple[str, ...]) -> None:
        block = self._block
        if block is None:
            block = self._block = ColumnBlock(self.source, self._attempt)
        group = block.groups.get((rank, template))
        if group is None:
            group = block.group(rank, template)
            if group is None:  # another shape feeds the same series: keep their order
                self._close_block()
                block = self._block = ColumnBlock(self.source, self._attempt)
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
        """A step the bulk path holds becomes the per-line path's pending step."""
        held = self._bulk_pending
        if held is None:
            return
        self._bulk_pending = None
        template, rank, step, groups, no = held
        self._pending = _PendingStep(rank, step, None, no, template.metrics(groups), None)

    def _bulk_fallback(self, no: int, text: str, *, learn: bool) -> None:
        self._materialize()
        self._learning = learn
        try:
            self.feed_line(Line(no, text))
        finally:
            self._learning = True

    def _close_block(self) -> None:
        block = self._block
        if block is not None:
            self._block = None
            if block.rows:
                self._raw_sink(block)  # type: ignore[arg-type]

    def _emit_record(self, record: Record) -> None:
        """Steps and phases go out after the rows of the lines before them. Events and
        profiles touch nothing the rows touch in the store: they need not close the block."""
        if self._block is not None and type(record) in (Step, Phases):
            self._close_block()
        self._raw_sink(record)

    # ------------------------------------------------------------ Emitter API
    def step(
        self,
        step: int | None,
        metrics: Mapping[str, float],
        *,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        if not metrics:
            return
        rank = self._rank(rank, is_progress=True, line=line)
        time = time if time is not None else self._time()
        line_no = line if line is not None else self._line_no()
        self.stats.records[self._current_parser] += 1
        pending = self._pending
        host = self._origin(line)[1]
        # Lines without a step number are separate reports: never merge them.
        if (
            pending is not None
            and step is not None
            and pending.rank == rank
            and pending.step == step
            and pending.host == host
        ):
            same = [k for k in metrics if k in pending.metrics]
            if not any(_differs(pending.metrics[k], metrics[k]) for k in same):
                if rank is None and len(same) == len(metrics):
                    # The very same report again: another unprefixed rank printing it.
                    self.stats.duplicate_steps += 1
                    return
                for key, value in metrics.items():
                    pending.metrics.setdefault(key, value)
                if pending.time is None:
                    pending.time = time
                return
            # Same step, other values: another rank's report of that step, kept apart.
        self._flush_pending()
        self._pending = _PendingStep(rank, step, time, line_no, dict(metrics), host)

    def phases(
        self,
        step: int | None,
        phases_s: Mapping[str, float],
        *,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        if not phases_s:
            return
        self._flush_pending()
        self.stats.records[self._current_parser] += 1
        self._sink(
            Phases(
                self.source,
                self._rank(rank, is_progress=True, line=line),
                step,
                time if time is not None else self._time(),
                line if line is not None else self._line_no(),
                dict(phases_s),
                host=self._origin(line)[1],
                attempt=self._attempt,
            )
        )

    def event(
        self,
        kind: str,
        severity: Severity,
        message: str,
        data: Mapping[str, Any] | None = None,
        *,
        step: int | None = None,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        self._flush_pending()
        self.stats.records[self._current_parser] += 1
        resolved = self._rank(rank, is_progress=False, line=line)
        if step is None:
            step = self._last_step.get(resolved, self._last_step.get(None))
        self._sink(
            Event(
                self.source,
                resolved,
                step,
                time if time is not None else self._time(),
                line if line is not None else self._line_no(),
                kind,
                severity,
                message,
                dict(data or {}),
                host=self._origin(line)[1],
                attempt=self._attempt,
            )
        )

    def profile(
        self,
        title: str,
        kind: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        rank: int | None = None,
        step: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        self._flush_pending()
        self.stats.records[self._current_parser] += 1
        self._sink(
            Profile(
                self.source,
                self._rank(rank, is_progress=False, line=line),
                step,
                time,
                line if line is not None else self._line_no(),
                title,
                kind,
                tuple(dict(r) for r in rows),
                host=self._origin(line)[1],
                attempt=self._attempt,
            )
        )

    def note_rank(self, rank: int) -> None:
        self._note_rank(rank)

    def last_step(self, rank: int | None = None) -> int | None:
        return self._last_step.get(rank)

    # -------------------------------------------------------------- internals
    def _note_rank(self, rank: int) -> None:
        if 0 <= rank < 1_000_000:
            self.stats.ranks_seen.add(rank)

    def _line_no(self) -> int:
        return self._line.no if self._line is not None else 0

    def _time(self) -> str | None:
        # lstrip: Megatron's iteration line starts " [2024-05-01 10:00:00] iteration ..."
        return line_time(self._text.lstrip()) if self._line is not None else None

    def _origin(self, line: int | None) -> tuple[int | None, str | None]:
        """Launcher prefix rank and host of the line a record comes from.

        A parser that holds a block (Megatron's timers, a traceback) releases it while a
        later line, maybe another rank's, is current; it passes the block's `line=`."""
        if self._line is None:
            return None, None
        if line is not None and line != self._line.no:
            return self._origins.get(line, (None, self._path_host))
        return self._prefix_rank, self._host

    def _rank(self, explicit: int | None, *, is_progress: bool, line: int | None = None) -> int | None:
        """prefix > text (parser-given, else generic) > path > the source's reporting rank."""
        prefix_rank = self._origin(line)[0]
        if prefix_rank is not None:
            return prefix_rank
        if explicit is not None and explicit >= 0:
            if is_progress:
                self._reporting_ranks.add(explicit)
            self._note_rank(explicit)
            return explicit
        if self._line is not None:
            if self._text_rank_cache is False:
                self._text_rank_cache = text_rank(self._text)
            found = self._text_rank_cache
            if isinstance(found, int) and not isinstance(found, bool):
                if is_progress:
                    self._reporting_ranks.add(found)
                self._note_rank(found)
                return found
        if self._path_rank is not None:
            return self._path_rank
        # Progress lines without a rank in a log where exactly one rank reports progress
        # (DeepSpeed's `[Rank 0]` log_dist lines): they come from that reporting rank.
        if is_progress and len(self._reporting_ranks) == 1:
            return next(iter(self._reporting_ranks))
        return None

    # ---------------------------------------------------------------- segments
    def _watch_segments(self, text: str, host: str | None) -> None:
        """Launcher lines that end or start an attempt (checked on every line, cheap)."""
        if "exitcode" in text or "attempts left" in text:
            if is_worker_failure(text):
                self._flush_pending()
                self._restart_armed = True
        elif "OMP_NUM_THREADS" in text or "WORLD INFO DICT" in text:
            if is_launch_banner(text):
                # Multi-node launchers print the banner once per node (host label): the
                # n-th banner of any host is the n-th launch.
                self._banners[host] += 1
                if self._banners[host] > self._launches:
                    if self._launches:
                        self._flush_pending()
                        self._new_segment(None, "the launcher started again in the same log", "info")
                    self._launches = self._banners[host]

    def _new_segment(self, step: int | None, why: str, severity: Severity, at: _PendingStep | None = None) -> None:
        current = self._current_parser
        for parser in self.parsers:  # what the old attempt still holds is released in it
            self._current_parser = parser.name
            try:
                parser.segment_ends(self)
            except Exception:
                self.stats.parser_errors += 1
        self._current_parser = current
        self._attempt += 1
        self._restart_armed = False
        self._seen_unranked.clear()
        self._recent_stepless.clear()
        self._last_by_stream.clear()
        self._last_step.clear()
        self._emit_restart(step, f"restart (attempt {self._attempt}): {why}", severity, at)

    def _emit_restart(self, step: int | None, message: str, severity: Severity, at: _PendingStep | None) -> None:
        """`at`: the step record that shows the restart (its line, not the current one)."""
        self._sink(
            Event(
                self.source,
                None,
                step,
                at.time if at is not None else self._time(),
                at.line if at is not None else self._line_no(),
                "restart",
                severity,
                message,
                {"attempt": self._attempt},
                host=at.host if at is not None else self._host,
                attempt=self._attempt,
            )
        )

    def _segment_check(self, pending: _PendingStep) -> None:
        """Does this step begin a new attempt of the run?"""
        if self._attempt_event_due:
            self._attempt_event_due = False
            self._emit_restart(
                pending.step,
                f"torchrun attempt {self._attempt} (files under attempt_{self._attempt}/)",
                "warning",
                pending,
            )
            return
        if pending.step is None:
            return
        prev = self._last_by_stream.get((pending.host, pending.rank))
        if self._content_restarted:
            why, self._content_restarted = self._content_restarted, ""
            if prev is None and self._last_by_stream:  # the new text labels its steps otherwise
                prev = max(self._last_by_stream.values())
            if prev is not None and pending.step <= prev:
                why = f"{why}, then step {pending.step} followed step {prev}"
                self._new_segment(pending.step, why, "warning", pending)
            return
        if prev is None or pending.step > prev:
            return
        if self._restart_armed:
            why = f"a worker failed, then step {pending.step} followed step {prev}"
            self._new_segment(pending.step, why, "warning", pending)
        elif pending.rank is not None and pending.step < prev:
            why = f"rank {pending.rank} went back from step {prev} to {pending.step}"
            self._new_segment(pending.step, why, "warning", pending)

    def _is_duplicate(self, pending: _PendingStep) -> bool:
        """The same unranked step line again: another rank printing identical values."""
        key: _StepKey = (pending.host, pending.step, tuple(sorted(pending.metrics.items())))
        if pending.step is None:
            if key in self._recent_stepless:
                return True
            self._recent_stepless.append(key)
            return False
        if key in self._seen_unranked:
            return True
        self._seen_unranked[key] = None
        if len(self._seen_unranked) > SEEN_UNRANKED_MAX:
            self._seen_unranked.popitem(last=False)
        return False

    def _flush_pending(self) -> None:
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        self._segment_check(pending)
        if pending.rank is None and self._is_duplicate(pending):
            self.stats.duplicate_steps += 1
            return
        if pending.step is not None:
            stream = (pending.host, pending.rank)
            self._last_by_stream[stream] = max(pending.step, self._last_by_stream.get(stream, pending.step))
            self._last_step[pending.rank] = pending.step
            self._last_step[None] = pending.step
        self._sink(
            Step(
                self.source,
                pending.rank,
                pending.step,
                pending.time,
                pending.line,
                pending.metrics,
                host=pending.host,
                attempt=self._attempt,
            )
        )
        for name in NAN_WATCHED:
            value = pending.metrics.get(name)
            if value is not None and (math.isnan(value) or math.isinf(value)):
                self._sink(
                    Event(
                        self.source,
                        pending.rank,
                        pending.step,
                        pending.time,
                        pending.line,
                        "nan",
                        "error",
                        f"{name} is {value} at step {pending.step}",
                        {"metric": name},
                        host=pending.host,
                        attempt=self._attempt,
                    )
                )


def _column(rows: Sequence[tuple[str, ...]], at: Iterable[int], group: int) -> Iterable[str]:
    """The texts of one group in the rows `at` (C level)."""
    return map(itemgetter(group), map(rows.__getitem__, at))


def _has_host_label(text: str) -> bool:
    # Host names carry a digit (worker-0, node12, gpu-dev006); "INFO: ..." / "Epoch: 3" don't.
    label = host_label(text)
    return label is not None and any(c.isdigit() for c in label)


def _consistently(texts: Sequence[str], labelled: Callable[[str], bool]) -> bool:
    """From the first labelled line on (launcher preamble lines come before), >= 3/4 are."""
    flags = [labelled(t) for t in texts]
    if True not in flags:
        return False
    rest = flags[flags.index(True) :]
    n = sum(rest)
    return n >= PROBE_MIN_LABELLED and n * 4 >= len(rest) * 3


def _bad(template: BulkTemplate, groups: tuple[str, ...]) -> bool:
    """A NaN/inf in a watched metric: its `nan` event comes from the per-line path."""
    for g in template.nan_groups:
        value = float(groups[g])
        if value != value or value in (math.inf, -math.inf):
            return True
    return False


def _differs(a: float, b: float) -> bool:
    return a != b and not (math.isnan(a) and math.isnan(b))
