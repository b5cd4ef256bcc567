"""The one way a panel is brought up to date: `redraw(view)`, called by the dashboard screen at
the panel's `pace` (the redraw scheduler says when). A panel redraws only what changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from trainwatch.diagnosis.findings import Finding
from trainwatch.diagnosis.judge import Judgement
from trainwatch.store.store import Store
from trainwatch.ui.widgets.chart import ChartOptions


@dataclass(frozen=True)
class View:
    """What every panel draws from, as of one redraw."""

    store: Store
    version: int  # the store's version now
    changed: bool  # the store changed since this pace's last redraw
    now_wall: float  # the dashboard's clock
    options: ChartOptions
    verdict: Judgement
    findings: tuple[Finding, ...]
    tab: str  # the tab on screen: hidden panels wait until shown


@runtime_checkable
class Panel(Protocol):
    """A widget the screen redraws; `pace` is `numbers` (quick) or `charts` (paced)."""

    pace: ClassVar[str]

    def redraw(self, view: View) -> bool:
        """Bring the panel up to date with `view`; True if something was drawn."""
        ...
