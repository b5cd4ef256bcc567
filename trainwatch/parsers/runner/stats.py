"""What one source's parsing counted: the figures `summary` reports."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


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
        if len(self.records) == 1:  # (copied after every read: most sources have one format)
            return [name for name, n in self.records.items() if n]
        return [name for name, n in self.records.most_common() if n]

    @property
    def not_understood(self) -> int:
        return self.lines - self.understood
