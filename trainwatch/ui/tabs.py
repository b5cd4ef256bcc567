"""The dashboard's tabs, in key order: a new tab is one row here plus its widget (its key,
help line and palette entry come from `actions.with_tabs`, its redraws from the `Panel` interface)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rich.text import Text
from textual.containers import Container, Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Log, Static

from trainwatch.store.store import Store
from trainwatch.ui.widgets.events import EventsTable, RecentEvents
from trainwatch.ui.widgets.findings import FindingsList
from trainwatch.ui.widgets.phase_bars import PhaseBars
from trainwatch.ui.widgets.phase_trend import PhaseTrend
from trainwatch.ui.widgets.profiler import ProfilerPane
from trainwatch.ui.widgets.ranks import RanksTable
from trainwatch.ui.widgets.rawlog import LogPane

NO_EVENTS = "no events yet: overflows, NaNs, OOMs, NCCL timeouts, tracebacks, signals and checkpoints appear here"


@dataclass(frozen=True)
class Tab:
    id: str  # the TabPane's id, and the action `tab('<id>')`
    title: str
    content: Callable[[Store], Iterable[Widget]]
    focus: type[Widget] | None = None  # what takes the keys when the tab is shown (its `focus_first`, if any)


def _overview(_store: Store) -> Iterable[Widget]:
    recent = RecentEvents(id="recent-events")
    recent.border_title = "recent events (key 3: the full list)"
    yield Horizontal(Container(id="charts"), Vertical(PhaseBars(id="phase-bars"), recent, id="side"), id="overview-row")


def _events(_store: Store) -> Iterable[Widget]:
    yield FindingsList(id="findings")
    yield Static(Text(NO_EVENTS, style="dim"), id="events-empty")
    yield EventsTable(id="events-table")


TABS: tuple[Tab, ...] = (
    Tab("overview", "Overview", _overview),
    Tab("ranks", "Ranks", lambda _s: [RanksTable(id="ranks-table")], RanksTable),
    Tab("events", "Events", _events, EventsTable),
    Tab("log", "Log", lambda store: [LogPane(store, id="log-pane")], Log),
    Tab("profiler", "Profiler", lambda store: [ProfilerPane(store, id="profiler-pane")], ProfilerPane),
    Tab("phases", "Phases", lambda store: [PhaseTrend(store, id="phase-trend")], PhaseTrend),
)
TAB_IDS = tuple(t.id for t in TABS)


def tab_label(tab: Tab) -> str:
    """`3 Events`: the key that shows it, then its title."""
    return f"{TABS.index(tab) + 1} {tab.title}"
