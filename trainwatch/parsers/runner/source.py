"""Run the parsers over one source's lines and turn what they report into records.

One `SourceParser` per source. It strips launcher labels and rank prefixes (`probe`), offers
each line to the parsers whose triggers it contains, and is the Emitter they report through:
it resolves rank (`ranks`: prefix > text > path > the source's reporting rank), stamps time,
merges the several lines that report one step into one `Step` and drops identical step lines
printed by several unprefixed ranks (`merge`), starts a new segment when the run restarts in
the same source (`segments`), reads catch-up chunks in columns (`catchup`), and keeps the
counts `summary` reports (`stats`). The parts ask each other named questions; the line being
parsed (`CurrentLine`) is passed to them, not read from here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from trainwatch.lines.assembler import Kind, Line
from trainwatch.lines.written import strip_bold_numbers, strip_written_escapes
from trainwatch.parsers.base import Parser
from trainwatch.parsers.formats._tqdm import glued_after_bar
from trainwatch.parsers.rank import mentioned_rank, path_attempt, path_host, path_rank
from trainwatch.parsers.runner import catchup
from trainwatch.parsers.runner.catchup import CatchUp, Sink
from trainwatch.parsers.runner.merge import PendingStep, StepMerger, step_records
from trainwatch.parsers.runner.probe import LabelProbe
from trainwatch.parsers.runner.ranks import CurrentLine, RankResolver, RecentOrigins
from trainwatch.parsers.runner.segments import Segments
from trainwatch.parsers.runner.stats import SourceStats
from trainwatch.parsers.runner.triggers import TriggerIndex
from trainwatch.parsers.timestamps import line_time
from trainwatch.records import Event, Phases, Profile, Severity

# Events that end a run: placed at a held report's step when no step went out before them
_ENDS = frozenset(("crash", "oom", "traceback", "signal", "nccl_timeout", "nan", "finished"))


class SourceParser:
    """Parses one source. Not thread-safe: one reader thread feeds it."""

    def __init__(self, source: str, parsers: Sequence[Parser], sink: Sink, path: str | None = None) -> None:
        self.source = source
        self.parsers = list(parsers)
        # Substring tests in plain loops: cheaper than one big alternation regex (sre tries
        # every alternative at every position) or a generator per parser.
        self._triggered = [(p, tuple(p.triggers)) for p in self.parsers if p.triggers]
        self._triggers = TriggerIndex(self._triggered)
        self._always = [p for p in self.parsers if not p.triggers]
        # The parsers with an end-of-data hook of their own: `at_eof` runs after every read of a
        # followed file (256 files written 4 times a second: a thousand times a second), and
        # calling the base class's empty hook of forty parsers each time was a tenth of it.
        self._eof_parsers = [p for p in self.parsers if type(p).at_eof is not Parser.at_eof]
        # ...and of those, only the ones offered a line since the last `at_eof` (every hook
        # releases what its parser's lines left held: run again unfed, it finds nothing). None:
        # all of them (lines taken in bulk, a segment's end: state moved outside `feed`).
        self._offered: set[Parser] | None = None
        self.stats = SourceStats()
        where = path or source
        named = source != "-"
        self._path_host = path_host(where) if named else None
        rank_of_path = path_rank(where) if named else None
        attempt = (path_attempt(where) or 0) if named else 0
        self._probe = LabelProbe()
        self._ranks = RankResolver(rank_of_path, self.stats.ranks_seen)
        self._origins = RecentOrigins(self._path_host)
        self._merger = StepMerger()
        self._segments = Segments(attempt, announce=attempt > 0 and rank_of_path == 0)
        self._current: CurrentLine | None = None  # the line being parsed (None: a release at eof)
        self._current_parser = ""
        # Bumped by every line fed and every release: a reader's idle poll compares it to skip
        # work (256 followed files poll once a second each).
        self.changes = 0
        self._eof_done = False  # at_eof ran and no line came since: running it again is a no-op
        self._catchup = CatchUp(
            source,
            sink,
            self._triggered,
            self._ranks,
            self._merger,
            self._segments,
            feed_line=self.feed_line,
            flush_pending=self._flush_pending,
            settle=self._settle,
            at_line=self._at_line,
        )
        self._sink = self._catchup.emit

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
        if self._probe.holding:
            if self._probe.hold(line):
                self._end_probe()
            return
        if self._live_ok and line.kind is Kind.LINE and not self._catchup.reading:
            try:
                parser = self._catchup.live(line)
            except Exception:
                parser = None
                self.stats.parser_errors += 1
            if parser is not None:
                self.stats.understood += 1
                self.stats.records[parser.name] += 1
                if self._offered is not None:  # (its at_eof releases what its lines hold)
                    self._offered.add(parser)
                return
        self._process_safely(line)

    def _at_line(self, no: int, text: str) -> None:
        """The line being read is a row of a learned shape (no prefix, no host): what the per-line
        path's `_process` would make the current line — what a step flushed now is judged at
        (a restart found then releases a held traceback with this line's rank and time)."""
        self._current = CurrentLine(no, text, None, None)

    @property
    def _live_ok(self) -> bool:
        """Lines read live may take the learned shapes (`CatchUp.live`) where a chunk may."""
        return catchup.BULK and not self._probe.mode and self._path_host is None

    def texts_to_store(self, on: bool = True) -> None:
        """The column blocks go out with their texts: the store converts them (in its own
        process while this one reads on, `store/worker.py`); off: converted here again."""
        self._catchup.keep_texts = on

    def bulk_worth_trying(self) -> bool:
        """A small read is worth the bulk path (`CatchUp.worth_trying`)."""
        return self._catchup.worth_trying()

    def feed_block(self, first_no: int, text: str) -> None:
        """Whole lines (`text` ends with a newline), numbered from `first_no`: a catch-up chunk.

        The same records and state as `feed_lines` of those lines; lines of learned hot shapes
        become columns (see `catchup`). The sink then receives `ColumnBlock`s among the
        records: only for the store."""
        pos, no = 0, first_no
        while self._probe.holding and pos < len(text):  # the label probe holds lines one by one
            end = text.index("\n", pos)
            self.feed_line(Line(no, text[pos:end]))
            pos, no = end + 1, no + 1
        if pos >= len(text):
            return
        self._offered = None
        if not catchup.BULK or self._probe.mode or self._path_host is not None:
            self.feed_lines(Line(n, t) for n, t in enumerate(text[pos:-1].split("\n"), no))
            return
        self._catchup.read(text, pos, no)

    def content_restarted(self, why: str) -> None:
        """The source's text starts again from its first line (`file truncated at 2821 bytes`).

        A job relaunched with `>` into the same file, or a new file at the path, prints its
        steps from the start again: the first step that does not go on from the last one
        starts a new segment, as a relaunch into the file does. copytruncate / logrotate under
        a run that keeps going lead to the next step: nothing changes."""
        self._flush_pending()
        self._offered = None
        self._segments.rewritten(why)

    def at_eof(self) -> None:
        """The reader has consumed everything written so far: release merged steps and held blocks."""
        if self._eof_done:
            return  # every parser's at_eof releases what it holds: nothing was fed since
        self._eof_done = True
        self.changes += 1
        if self._probe.holding:
            self._end_probe()
        self._flush_pending()
        self._current = None  # what parsers release now is not the last line's
        offered, self._offered = self._offered, set()
        self._each(self._eof_parsers if offered is None else [p for p in self._eof_parsers if p in offered], "at_eof")
        self._flush_pending()

    def finish(self) -> None:
        """End of input: parsers release held blocks, then everything is flushed."""
        self.changes += 1
        if self._probe.holding:
            self._end_probe()
        self._current = None
        self._each(self.parsers, "finish")
        self._flush_pending()
        self._each(self.parsers, "after_finish")
        self._flush_pending()

    def _each(self, parsers: Sequence[Parser], hook: str) -> None:
        """One end-of-data hook (`at_eof`, `finish`, `after_finish`) of every parser, each its own
        override; a parser that fails in it is counted, never fatal."""
        for parser in parsers:
            self._current_parser = parser.name
            try:
                getattr(parser, hook)(self)
            except Exception:
                self.stats.parser_errors += 1

    # -------------------------------------------------------------- dispatch
    def _end_probe(self) -> None:
        """The label mode is decided: parse the held lines."""
        for line in self._probe.decide():
            self._process_safely(line)

    def _process_safely(self, line: Line) -> None:
        """A line the rank/label logic cannot handle is counted, never fatal to the source."""
        try:
            self._process(line)
        except Exception:
            self.stats.parser_errors += 1

    def _process(self, line: Line) -> None:
        text = strip_written_escapes(line.text)
        if "**" in text:
            text = strip_bold_numbers(text)
        text, prefix_rank, host, launcher = self._probe.split(text, self._path_host)
        if prefix_rank is not None:
            self._ranks.note(prefix_rank)
        current = self._current = CurrentLine(line.no, text, prefix_rank, host)
        self._origins.remember(current)
        marker = self._segments.marker(text, launcher)
        if marker == "failure":
            self._flush_pending()
            self._segments.arm()
        elif marker == "relaunch":
            self._flush_pending()
            self._new_segment(None, "the launcher started again in the same log", "info")
        mentioned = mentioned_rank(text)
        if mentioned is not None:
            self._ranks.note(mentioned)
        glued = glued_after_bar(text) if line.kind is Kind.LINE else None
        if glued is not None:
            # `...132.28s/it][2023-06-07 22:18:11] [INFO] OVERFLOW!`: the bar and the message
            # printed over it are two lines; each goes to the parser that knows it, unless the
            # bar's own parser reads what follows its bar.
            understood = self._dispatch(text, line, after_bar=True) is not None
            if not understood:
                understood = self._dispatch(text[:glued], line) is not None
                understood = self._dispatch(text[glued:], line) is not None or understood
            if understood:
                self.stats.understood += 1
            return
        parser = self._dispatch(text, line)
        if parser is not None and line.kind is Kind.LINE:
            self.stats.understood += 1
            if self._catchup.learning and prefix_rank is None and host is None and not self._probe.mode:
                self._catchup.learn(parser, text)

    def _dispatch(self, text: str, line: Line, *, after_bar: bool = False) -> Parser | None:
        """The first parser that understands the text (its triggers first, then the ones always asked);
        `after_bar`: only the parsers that read what is glued after their bar."""
        for parser, triggers, live in self._triggers.candidates(text):
            if after_bar and not parser.reads_after_bar:
                continue
            if live:
                for trigger in triggers:
                    if trigger in text:
                        break
                else:
                    continue
            self._current_parser = parser.name
            if self._safe_feed(parser, text, line):
                return parser
        for parser in self._always:
            if after_bar and not parser.reads_after_bar:
                continue
            self._current_parser = parser.name
            if self._safe_feed(parser, text, line):
                return parser
        return None

    def _safe_feed(self, parser: Parser, text: str, line: Line) -> bool:
        if self._offered is not None:
            self._offered.add(parser)
        try:
            return bool(parser.feed(text, line, self))
        except Exception:
            self.stats.parser_errors += 1
            return False

    def _settle(self, counts: Counter[str]) -> None:
        """Records per parser of lines the catch-up took in bulk (its fallbacks counted their own)."""
        n = sum(counts.values())
        self.stats.lines += n
        self.stats.understood += n
        self.stats.records.update(counts)
        self.changes += n
        self._eof_done = False

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
        rank, host = self._origin(rank, line, is_progress=True)
        time = time if time is not None else self._time()
        line_no = line if line is not None else self._line_no()
        self.stats.records[self._current_parser] += 1
        merged = self._merger.merge(rank, step, host, metrics, time)
        if merged == "repeat":
            self.stats.duplicate_steps += 1
        elif merged == "apart":
            self._flush_pending()
            self._merger.hold(PendingStep(rank, step, time, line_no, dict(metrics), host))

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
        rank, host = self._origin(rank, line, is_progress=True)
        self._sink(
            Phases(
                self.source,
                rank,
                step,
                time if time is not None else self._time(),
                line if line is not None else self._line_no(),
                dict(phases_s),
                host=host,
                attempt=self._segments.attempt,
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
        rank, host = self._origin(rank, line, is_progress=False)
        if step is None:
            step = self._segments.step_of_event(rank)
        if step is None and kind in _ENDS:
            # (`epoch 1 step 10 loss 2.31`, then a traceback: the first report is held until its shape
            # repeats, and the crash came after it. Not for a save mid-run: a shape that repeats may be
            # read otherwise then, its step counter counting within each epoch)
            held = [s for s in (p.held_step() for p in self.parsers) if s is not None]
            step = max(held) if held else None
        self._sink(
            Event(
                self.source,
                rank,
                step,
                time if time is not None else self._time(),
                line if line is not None else self._line_no(),
                kind,
                severity,
                message,
                dict(data or {}),
                host=host,
                attempt=self._segments.attempt,
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
        rank, host = self._origin(rank, line, is_progress=False)
        self._sink(
            Profile(
                self.source,
                rank,
                step,
                time,
                line if line is not None else self._line_no(),
                title,
                kind,
                tuple(dict(r) for r in rows),
                host=host,
                attempt=self._segments.attempt,
            )
        )

    def note_rank(self, rank: int) -> None:
        self._ranks.note(rank)

    def last_step(self, rank: int | None = None) -> int | None:
        return self._segments.last_step(rank)

    def lines_read(self) -> int:
        return self.stats.lines

    # -------------------------------------------------------------- internals
    def _origin(self, explicit: int | None, line: int | None, *, is_progress: bool) -> tuple[int | None, str | None]:
        """Rank and host of a record from the line `line` (None: the current line)."""
        current = self._current
        prefix_rank, host = self._origins.of(line, current)
        return self._ranks.resolve(explicit, is_progress=is_progress, prefix_rank=prefix_rank, current=current), host

    def _line_no(self) -> int:
        return self._current.no if self._current is not None else 0

    def _time(self) -> str | None:
        # lstrip: Megatron's iteration line starts " [2024-05-01 10:00:00] iteration ..."
        return line_time(self._current.text.lstrip()) if self._current is not None else None

    def _flush_pending(self) -> None:
        """The pending step goes out (after a `restart` event when it shows one)."""
        pending = self._merger.take()
        if pending is None:
            return
        restart = self._segments.judge(pending.step, pending.rank, pending.host)
        if restart is not None:
            if restart.begins_segment:
                self._new_segment(pending.step, restart.message, "warning", pending)
            else:
                self._emit_restart(pending.step, restart.message, "warning", pending)
        if pending.rank is None and self._merger.is_repeat(pending):
            self.stats.duplicate_steps += 1
            return
        if pending.step is not None:
            self._segments.record(pending.host, pending.rank, pending.step)
        for record in step_records(pending, self.source, self._segments.attempt):
            self._sink(record)

    def _new_segment(self, step: int | None, why: str, severity: Severity, at: PendingStep | None = None) -> None:
        current = self._current_parser
        self._offered = None
        for parser in self.parsers:  # what the old attempt still holds is released in it
            self._current_parser = parser.name
            try:
                parser.segment_ends(self)
            except Exception:
                self.stats.parser_errors += 1
        self._current_parser = current
        attempt = self._segments.begin_next()
        self._merger.forget_seen()
        self._emit_restart(step, f"restart (attempt {attempt}): {why}", severity, at)

    def _emit_restart(self, step: int | None, message: str, severity: Severity, at: PendingStep | None) -> None:
        """`at`: the step record that shows the restart (its line, not the current one)."""
        current = self._current
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
                {"attempt": self._segments.attempt},
                host=at.host if at is not None else (current.host if current is not None else None),
                attempt=self._segments.attempt,
            )
        )
