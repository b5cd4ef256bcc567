"""Rank resolution: which rank (and host) a record is from.

Prefix > text (parser-given, else the line's own `[Rank 0]`/`rank=0`) > path > the source's
reporting rank: progress lines without a rank, in a log where exactly one rank reports
progress (DeepSpeed's `[Rank 0]` log_dist lines), come from that rank.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from trainwatch.parsers.rank import text_rank

# Launcher prefix of recent lines, for blocks a parser releases on a later line (`line=`).
RECENT_ORIGINS = 1024
# Rank numbers beyond this are noise (an id, a crafted line), not a world member.
MAX_RANK = 1_000_000


@dataclass(slots=True)
class CurrentLine:
    """The line being parsed, without its launcher labels, and where it comes from."""

    no: int
    text: str
    prefix_rank: int | None
    host: str | None
    _text_rank: int | None = None
    _scanned: bool = False

    def text_rank(self) -> int | None:
        """The rank the line's text states (`[Rank 0]`, `rank=0`), looked for once."""
        if not self._scanned:
            self._text_rank = text_rank(self.text)
            self._scanned = True
        return self._text_rank


class RecentOrigins:
    """Launcher prefix rank and host of recent lines: a parser that holds a block (Megatron's
    timers, a traceback) releases it while a later line, maybe another rank's, is current."""

    def __init__(self, path_host: str | None) -> None:
        self._path_host = path_host
        self._by_line: OrderedDict[int, tuple[int | None, str | None]] = OrderedDict()

    def remember(self, line: CurrentLine) -> None:
        if line.prefix_rank is not None or line.host is not None:
            self._by_line[line.no] = (line.prefix_rank, line.host)
            if len(self._by_line) > RECENT_ORIGINS:
                self._by_line.popitem(last=False)

    def of(self, line: int | None, current: CurrentLine | None) -> tuple[int | None, str | None]:
        """(prefix rank, host) of the line `line` (None: the current one) while `current` is parsed."""
        if current is None:
            return None, None
        if line is not None and line != current.no:
            return self._by_line.get(line, (None, self._path_host))
        return current.prefix_rank, current.host


class RankResolver:
    """The source's ranks: those seen (for `summary`), those reporting progress, the path's."""

    def __init__(self, path_rank: int | None, seen: set[int]) -> None:
        self.path_rank = path_rank
        self._seen = seen  # shared with SourceStats.ranks_seen
        self._reporting: set[int] = set()

    def note(self, rank: int) -> None:
        """A rank the log mentions (world membership)."""
        if 0 <= rank < MAX_RANK:
            self._seen.add(rank)

    def resolve(
        self, explicit: int | None, *, is_progress: bool, prefix_rank: int | None, current: CurrentLine | None
    ) -> int | None:
        """The rank of a record: prefix > explicit (parser-given) > the current line's text >
        path > the one reporting rank (progress only)."""
        if prefix_rank is not None:
            return prefix_rank
        if explicit is None or explicit < 0:
            explicit = current.text_rank() if current is not None else None
        if explicit is not None:
            if is_progress:
                self._reporting.add(explicit)
            self.note(explicit)
            return explicit
        return self.implicit() if is_progress else self.path_rank

    def report(self, rank: int) -> int:
        """A progress line's explicit rank (a hot line's `rank=0`): that rank reports progress."""
        if rank not in self._reporting:
            self._reporting.add(rank)
            self.note(rank)
        return rank

    def implicit(self) -> int | None:
        """The rank of a progress line that names none, when certain: the path's, else the one
        rank reporting progress; None when several do (or none yet)."""
        if self.path_rank is not None:
            return self.path_rank
        if len(self._reporting) == 1:
            return next(iter(self._reporting))
        return None

    def all_reporting(self, ranks: set[int]) -> bool:
        """Every one of these ranks already reports progress (nothing new to note)."""
        return ranks <= self._reporting
