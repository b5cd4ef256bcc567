"""What a parser is, and the Emitter it reports through.

A parser is one small class per log family. The pipeline creates one instance per source,
offers it each line whose text contains one of its `triggers`, and the parser calls the
Emitter to produce contract records. The Emitter fills in source, line number, rank and
timestamp, so a parser only says what the line means.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from trainwatch.lines.assembler import Line
from trainwatch.records import Severity

if TYPE_CHECKING:
    from trainwatch.parsers.bulk import BulkTemplate


class Emitter(Protocol):
    """The pipeline side of a parser: everything a parser may report."""

    def step(
        self,
        step: int | None,
        metrics: Mapping[str, float],
        *,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None:
        """Metrics of one step. Several lines reporting the same step of the same rank
        (DeepSpeed `step=N` + Megatron `iteration N`) are merged into one record."""

    def phases(
        self,
        step: int | None,
        phases_s: Mapping[str, float],
        *,
        rank: int | None = None,
        time: str | None = None,
        line: int | None = None,
    ) -> None: ...

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
    ) -> None: ...

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
    ) -> None: ...

    def note_rank(self, rank: int) -> None:
        """A rank the log mentions (world membership), even without metrics."""

    def last_step(self, rank: int | None = None) -> int | None:
        """The latest step number reported for this rank in this source, if any."""

    def lines_read(self) -> int:
        """The lines of this source read so far (whichever format took them): whether any came after one."""


@dataclass(frozen=True)
class Sample:
    """Lines a format prints and what a reader must get from them (as lnav checks its format samples).

    One test (`tests/parsers/test_format_samples.py`) reads every sample of every format through the
    whole pipeline: the format must be the one that understands them, and each expected step must
    come out with at least these metrics (other fields the line holds may come out too); likewise
    the phase timings of a step and the rows of a profiler report."""

    text: str  # the lines as printed, `\n`-separated
    steps: tuple[tuple[int | None, Mapping[str, float]], ...] = ()  # (step, metrics it must carry)
    events: tuple[str, ...] = ()  # event kinds it must raise
    ranks: tuple[int, ...] = field(default=())  # ranks its steps must name, in order, when given
    phases: tuple[tuple[int | None, Mapping[str, float]], ...] = ()  # (step, phase seconds it must carry)
    profiles: tuple[tuple[str, Mapping[str, Any]], ...] = ()  # (row name, cells it must carry) of a report


class Parser(ABC):
    """One log family. Subclass, set the class attributes, implement `feed`."""

    name: ClassVar[str]  # stable id shown in `formats` and summary: "deepspeed"
    title: ClassVar[str]  # human name: "DeepSpeed"
    # Substrings one of which must be in a line for it to be offered to this parser.
    # Empty: every line is offered (keep such parsers cheap).
    triggers: ClassVar[tuple[str, ...]] = ()
    # Example of what the family prints, for `trainwatch formats`.
    example: ClassVar[str] = ""
    # Real lines of the family and the records they give, checked by one test for every format.
    samples: ClassVar[tuple[Sample, ...]] = ()
    # The first parser that understands a line wins. A line is offered first to the parsers with
    # a trigger it holds, in ascending priority; only if none understood it, to the parsers
    # without triggers, again in ascending priority (`runner.SourceParser`). Specific formats
    # ~100, cross-format events ~500, generic fallback ~900.
    priority: ClassVar[int] = 100
    # The parser reads what is glued after its tqdm bar itself (Lightning's stop message, the
    # Trainer's loss dict): such a line goes to it whole; other glued lines are split at the bar.
    reads_after_bar: ClassVar[bool] = False

    @abstractmethod
    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        """Parse one line (rank prefix already stripped, sanitized). True if understood."""

    def at_eof(self, out: Emitter) -> None:  # noqa: B027 - optional hook
        """No more data for now (live follow): release a held block that is complete unless
        more lines follow it (a traceback that may still be chained, a table without a closing rule)."""

    def finish(self, out: Emitter) -> None:  # noqa: B027 - optional hook
        """End of input: release anything held for a multi-line block."""

    def after_finish(self, out: Emitter) -> None:  # noqa: B027 - optional hook
        """End of input, after every parser's `finish` and the steps it released went out: what
        depends on what all of them read (the generic layer's lone report)."""

    def segment_ends(self, out: Emitter) -> None:  # noqa: B027 - optional hook
        """A new attempt of the run begins (relaunch, restart): release what belongs to the old
        one — a finished traceback held in case a chained one follows — so it keeps its attempt,
        its step and its place before the `restart` event."""

    def held_step(self) -> int | None:
        """The step of a report this parser holds until it knows it is progress (the generic reader
        holds a new shape's first line until the shape repeats): an event after it happened there."""
        return None

    def bulk_template(self, text: str) -> BulkTemplate | None:
        """Called right after this parser understood `text` (catch-up only): the exact shape of
        such lines, so history can be read in bulk (see `parsers/bulk.py`). None: per line."""
        return None

    def bulk_declines(self, template: BulkTemplate) -> bool:
        """True if every line of another parser's `template` is one this parser is offered but
        rejects without any side effect (so the bulk path may skip offering it)."""
        return False
