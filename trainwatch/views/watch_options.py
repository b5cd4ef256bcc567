"""`trainwatch watch`'s settings and their defaults, apart from the code that uses them so the CLI
can show the defaults without importing the diagnosis."""

from __future__ import annotations

from dataclasses import dataclass

from trainwatch.settling import FLAP_FACTOR, SETTLE_S  # a finding holds as long as a status
from trainwatch.views.hooks import TIMEOUT_S

EVERY_S = 5.0  # between two looks at the run


@dataclass(frozen=True)
class WatchOptions:
    on_change: str | None = None  # the shell command run for each notice
    every_s: float = EVERY_S
    settle_s: float = SETTLE_S
    timeout_s: float = TIMEOUT_S  # for one run of on_change
    stall_after: float | None = None  # as `check --stall-after`: None judges by the log's own cadence
    forever: bool = False  # keep watching after the run finished or crashed

    @property
    def flap_s(self) -> float:
        """The flap window: twenty settle times (10 minutes for the default 30 s)."""
        return FLAP_FACTOR * self.settle_s
