"""Bulk shapes: the catch-up path that reads a log's hot lines without a Python object per line.

A multi-GB log is millions of lines of a handful of shapes (DeepSpeed `rank=0 time (ms) | ...`,
Megatron ` iteration N/ M | ...` and `time (ms) | ...`). After a parser has understood such a
line the normal way, it may describe the line's exact shape as a `BulkTemplate`: the printed
text as literals and variable parts (numbers, padding), which values are the rank, the step
and the metrics, and how the parser's own state moves on such a line. `SourceParser` compiles
a source's templates into one regex, scans whole chunks of history with it, and turns the
matches into columns (`trainwatch.columns.ColumnBlock`) the store appends in one call per series. Any line that
is not of a template's shape, or that meets unusual state (a step going back, a NaN, a rank
that is not certain, a merge with the previous line's step), takes the per-line path, in order.

What keeps this exact is checked when a template is admitted (`admit`), not trusted: which
parsers' triggers a line of the shape contains must not depend on its values (no trigger can
straddle a variable part), the strings the runner reacts to (launcher banners, rank mentions)
can never occur, and every parser offered such a line before its owner declares it declines
it without side effects. tests/perf/test_bulk_catchup.py compares both paths on every log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from trainwatch.numbers import SECONDS_OF_MS, SECONDS_OF_MS_SIZE, ms_to_s, seconds_of_ms
from trainwatch.parsers.rank import MEMBERSHIP_HINTS, mentioned_rank
from trainwatch.parsers.timestamps import line_time

if TYPE_CHECKING:
    from trainwatch.parsers.base import Parser

MAX_TEMPLATES = 24  # per source: real logs have a handful of hot shapes


@dataclass(frozen=True)
class Var:
    """A variable part of a line shape: `pattern` (no groups); `inner` matches every substring
    of what `pattern` matches (a superset is fine: it only makes `can_straddle` stricter)."""

    pattern: str
    inner: str
    sample: str  # a representative value: lines of the shape are built from it to examine them
    may_be_empty: bool = False


# The variable parts the formats print (the same classes their per-line regexes use).
INT = Var(r"\d{1,18}", r"\d*", "1")
DECIMAL = Var(r"\d+\.\d+", r"\d*\.?\d*", "1.0")
NUMBER = Var(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", r"[-+]?\d*(?:\.\d*)?(?:[eE][-+]?\d*)?", "1.0")
# Padding: plain spaces only (a shape may be narrower than the parser's regex, never wider;
# lines padded otherwise take the per-line path).
PAD = Var(r" *", r" *", "", may_be_empty=True)
# An integer with the plain spaces around it (Megatron's `iteration     1170/ 1000000 |`): one group
# where PAD, INT, PAD would be three (`int()` ignores the spaces). Every group is a slot of every
# row the chunk scan returns, whichever shape matched: fewer groups, a faster scan.
PADDED_INT = Var(r" *\d{1,18} *", r"[ \d]*", "1")
# A number right-aligned in a field (Megatron-LM's `consumed samples:        51200 |`, `{:12d}`):
# its padding in its group, which `float()` and `int()` ignore; the width a number takes
# changes the padding, never the shape.
PADDED_NUMBER = Var(r" *[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", r" *[-+]?\d*(?:\.\d*)?(?:[eE][-+]?\d*)?", "1.0")
# A rank as the runner's rank mentions read it (`[Rank 3]`: at most nine digits).
RANK = Var(r"\d{1,9}", r"\d*", "1")
# A line-start timestamp (`2020-12-12 00:01:20,672`, inside the line's `[...]`): the forms
# `timestamps.line_time` reads; a timed template's rows take their time from `line_time` itself.
STAMP = Var(
    r"\d{4}[-/]\d{2}[-/]\d{2}[ T,]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?",
    r"[-/ T,:.]?\d*(?:[-/ T,:.]\d+)*[-/ T,:.]?",  # (no two separators in a row)
    "2020-01-01 00:00:00,000",
)

Part = str | Var


@dataclass(eq=False)
class BulkTemplate:
    """One exact line shape of one parser.

    parts: literals and `Var`s in printed order; every `Var` is one regex group, numbered from 0.
    kind: "phases" (an `out.phases()` per line) or "step" (an `out.step()` per line).
    rank_group / step_group: the groups holding an explicit rank / the step (step templates).
    values: (group, name, in_ms) per metric or phase, in the order the parser builds its dict.
    extras: (name, group) metrics set after the values from an integer group (`total_steps`).
    on_line: the parser's state change for one such line; returns the line's step (phases).
    on_lines: the same for n such lines in a row, when it does not depend on their values
        (one call for a run, not one per line); returns their steps.
    ready: whether the parser's state lets it treat the next such line as usual (else per line).
    absent: substrings the parser's dispatch tests that must never occur in such a line.
    step_of: (phases) such a line changes no state and its step is this, the step of its owner's
        last step line (Megatron's timers after `iteration N`): a run then takes the steps of
        its rows from the owner's step rows before them, with no call per line.
    last_counts: (step) n such lines in a row leave the parser as the last one alone does (its
        `on_line` only records the step): a run calls it for its last row only.
    timed: the line starts with a timestamp (DeepSpeed's `[2020-12-12 00:01:20,672] ... step=N`):
        its record carries that time (`time`), so its rows are never template rows of a column
        group: in a column run they are records (merged with the rows of the same step next to
        them, as the per-line path merges its pending step), row by row the pending step itself.
        The chunk scanner tries them on the lines its other shapes did not take.
    step_now: (step, no step group) the step the parser gives such a line in its present state
        (DeepSpeed's timer.py line reports the engine's step, not the one it prints).
    mentions_rank: the runner's rank mention of such a line (`[Rank 0]`) is its rank group.
    """

    owner: Parser
    kind: Literal["phases", "step"]
    parts: tuple[Part, ...]
    values: tuple[tuple[int, str, bool], ...]
    on_line: Callable[[tuple[str, ...]], int | None]
    rank_group: int | None = None
    step_group: int | None = None
    extras: tuple[tuple[str, int], ...] = ()
    ready: Callable[[], bool] | None = None
    absent: tuple[str, ...] = ()
    on_lines: Callable[[int], list[int | None]] | None = None
    step_of: Callable[[], int | None] | None = None
    last_counts: bool = False
    timed: bool = False
    step_now: Callable[[tuple[str, ...]], int | None] | None = None
    mentions_rank: bool = False
    # (timed) the log time from the text of group 0, the stamp, without the line rebuilt and
    # searched (`line_time`): checked against `line_time` on the exemplar and a sample line
    time_of: Callable[[str], str] | None = None
    # Filled in by admit():
    ngroups: int = 0
    regex: str = ""
    names: tuple[str, ...] = ()
    nan_groups: tuple[int, ...] = ()
    needed: tuple[int, ...] = ()  # the groups whose text the store converts (values, then extras)
    # (group, name, its conversion: `float`, or printed milliseconds -> seconds), for `metrics`
    converted: tuple[tuple[int, str, Callable[[str], float]], ...] = ()
    shape: BulkColumns = field(init=False)  # its columns (`columns`, `portable`)

    def __post_init__(self) -> None:
        merged: list[Part] = []
        for p in self.parts:  # adjacent literals as one: what lies beside a variable part
            if isinstance(p, str) and merged and isinstance(merged[-1], str):
                merged[-1] += p
            elif not (isinstance(p, str) and not p):
                merged.append(p)
        self.parts = tuple(merged)
        self.ngroups = sum(isinstance(p, Var) for p in self.parts)
        self.regex = "".join(f"({p.pattern})" if isinstance(p, Var) else re.escape(p) for p in self.parts)
        self.names = tuple(name for _g, name, _ms in self.values) + tuple(name for name, _g in self.extras)
        self.needed = tuple(g for g, _name, _ms in self.values) + tuple(g for _name, g in self.extras)
        self.converted = tuple((g, name, seconds_of_ms if in_ms else float) for g, name, in_ms in self.values)
        self.shape = BulkColumns(self.kind, self.names, self.needed, self.values, self.extras)

    @property
    def probe(self) -> int:
        """A group that is never empty in a match (tells which alternative matched)."""
        i = 0
        for p in self.parts:
            if isinstance(p, Var):
                if not p.may_be_empty:
                    return i
                i += 1
        return -1

    def sample(self) -> str:
        """A line of this shape (representative values)."""
        return self.text([p.sample for p in self.parts if isinstance(p, Var)])

    def text(self, groups: Sequence[str]) -> str:
        """The line a match came from (every variable part is a group)."""
        out: list[str] = []
        i = 0
        for p in self.parts:
            if isinstance(p, Var):
                out.append(groups[i])
                i += 1
            else:
                out.append(p)
        return "".join(out)

    def time(self, groups: Sequence[str]) -> str | None:
        """The log time of the line a match came from (None unless `timed`), as the per-line path reads it."""
        if not self.timed:
            return None
        if self.time_of is not None:
            return self.time_of(groups[0])
        return line_time(self.text(groups).lstrip())

    def metrics(self, groups: Sequence[str]) -> dict[str, float]:
        """The dict the parser passes for such a line (the per-line path's form)."""
        found = {name: convert(groups[g]) for g, name, convert in self.converted}
        for name, g in self.extras:
            found[name] = float(int(groups[g]))
        return found

    def columns(self, raw: Mapping[int, Sequence[str]]) -> list[list[float]]:
        return self.shape.columns(raw)

    def portable(self) -> BulkColumns:
        return self.shape


@dataclass(frozen=True, eq=False)
class BulkColumns:
    """A template's columns (`columns.RowShape`) without the template, which holds its parser:
    what a column block's texts cross to the store's process with (`store/worker.py`). Compared
    by identity, as its template is (a block's groups are keyed by rank and shape)."""

    kind: str
    names: tuple[str, ...]
    needed: tuple[int, ...]
    values: tuple[tuple[int, str, bool], ...]
    extras: tuple[tuple[str, int], ...]

    def columns(self, raw: Mapping[int, Sequence[str]]) -> list[list[float]]:
        """Per name (values, then extras), the floats of the texts of its group: C-level conversions."""
        out: list[list[float]] = []
        for g, _name, in_ms in self.values:
            out.append(_seconds(raw[g]) if in_ms else list(map(float, raw[g])))
        for _name, g in self.extras:
            out.append(list(map(float, map(int, raw[g]))))
        return out

    def portable(self) -> BulkColumns:
        return self


# Printed milliseconds -> seconds, looked up in the cache the per-line parsers share
# (`numbers.SECONDS_OF_MS`): a C-level pass over a column, the misses computed once.
_SECONDS = SECONDS_OF_MS
SECONDS_CACHE = SECONDS_OF_MS_SIZE


def _seconds(texts: Sequence[str]) -> list[float]:
    try:  # every text seen before (the usual case): one C-level pass, no test per value
        return list(map(_SECONDS.__getitem__, texts))
    except KeyError:
        pass
    if len(_SECONDS) >= SECONDS_CACHE:
        _SECONDS.clear()
    # Only the texts not seen yet are computed (a set difference, C level: a slice of a few
    # thousand timings holds a handful of new ones), then the pass again, with them at hand
    # (another thread's parser may clear the shared cache meanwhile).
    new = {text: ms_to_s(float(text)) for text in set(texts).difference(_SECONDS)}
    _SECONDS.update(new)
    try:
        return list(map(_SECONDS.__getitem__, texts))
    except KeyError:  # (cleared meanwhile by another thread's parser)
        return [ms_to_s(float(text)) for text in texts]


def _runs(parts: Sequence[Part]) -> list[tuple[str, bool, str, bool, re.Pattern[str], bool]]:
    """Each run of adjacent variable parts: (literal left of it, whether more lies beyond that
    literal, literal right, same, a regex of its substrings, whether it may be empty)."""
    out = []
    k = 0
    while k < len(parts):
        if isinstance(parts[k], str):
            k += 1
            continue
        j = k
        while j < len(parts) and isinstance(parts[j], Var):
            j += 1
        run: list[Var] = parts[k:j]  # type: ignore[assignment]
        left = parts[k - 1] if k > 0 else ""
        right = parts[j] if j < len(parts) else ""
        inner = re.compile("".join(f"(?:{v.inner})" for v in run))
        out.append((left, k - 1 > 0, right, j + 1 < len(parts), inner, all(v.may_be_empty for v in run)))
        k = j
    return out  # type: ignore[return-value]


def can_straddle(parts: Sequence[Part], s: str) -> bool:
    """Whether `s` may occur in some line of the shape overlapping a variable part (so that its
    presence depends on the values). Conservative: True when unsure."""
    n = len(s)
    for left, left_open, right, right_open, inner, may_be_empty in _runs(parts):
        for i in range(n + 1):
            a = s[:i]  # the part of `s` left of the variable text
            if len(a) <= len(left):
                if not left.endswith(a):
                    continue
            elif not (left_open and a.endswith(left)):
                continue
            for j in range(i, n + 1):
                b = s[j:]
                if len(b) <= len(right):
                    if not right.startswith(b):
                        continue
                elif not (right_open and b.startswith(right)):
                    continue
                m = s[i:j]
                if not m and (not may_be_empty or not a or not b):
                    continue  # an empty part between: inside one literal, or impossible
                if inner.fullmatch(m):
                    return True
    return False


@lru_cache(maxsize=512)
def _straddling(parts: tuple[Part, ...], strings: tuple[str, ...]) -> bool:
    return any(can_straddle(parts, s) for s in strings)


def admit(
    template: BulkTemplate,
    exemplar: str,
    offered: Sequence[tuple[Parser, tuple[str, ...]]],
    never: Iterable[str],
) -> bool:
    """May lines of this shape skip the per-line path? (See the module docstring.)

    offered: the source's triggered parsers in dispatch order; never: strings the runner
    reacts to on any line (segment markers, rank mentions)."""
    if re.fullmatch(template.regex, exemplar) is None or template.probe < 0:
        return False
    head = template.parts[0].lstrip() if isinstance(template.parts[0], str) else ""
    if template.timed:
        # its time is what `line_time` reads, on every line of the shape
        if (
            template.kind != "step"
            or line_time(exemplar.lstrip()) is None
            or line_time(template.sample().lstrip()) is None
        ):
            return False
        for line in (exemplar, template.sample()):
            m = re.fullmatch(template.regex, line)
            if m is None or template.time(m.groups()) != line_time(line.lstrip()):
                return False
    elif not head or head[0] == "[" or head[0].isdigit():
        return False  # a line-start timestamp would be stamped on the record
    if len(set(template.names)) != len(template.names) or not template.names:
        return False
    if template.kind == "step" and (template.step_group is None) == (template.step_now is None):
        return False
    if template.mentions_rank and not _mentions_its_rank(template, exemplar):
        return False
    absent = (*template.absent, *never)
    if any(s in exemplar for s in absent) or _straddling(template.parts, absent):
        return False
    before: list[Parser] = []
    for parser, triggers in offered:
        if _straddling(template.parts, triggers):
            return False
        if parser is template.owner:
            break
        if any(t in exemplar for t in triggers):
            before.append(parser)
    else:
        return False
    if not all(p.bulk_declines(template) for p in before):
        return False
    template.nan_groups = tuple(g for g, name, _ms in template.values if name in NAN_WATCHED)
    return True


def _mentions_its_rank(template: BulkTemplate, exemplar: str) -> bool:
    """The runner's rank mention of every line of the shape is its rank group: no mention hint
    overlaps a variable part, and the exemplar and a sample line (another rank) say so."""
    g = template.rank_group
    if g is None or _straddling(template.parts, MEMBERSHIP_HINTS):
        return False
    sample = template.sample()
    for line in (exemplar, sample):
        groups = re.fullmatch(template.regex, line)
        if groups is None or mentioned_rank(line) != int(groups.group(g + 1)):
            return False
    return True


NAN_WATCHED = ("loss", "grad_norm", "eval_loss")
