"""The dashboard screen: the header, the tabs (`ui/tabs.py`) and their redraws.

The UI thread never reads files or parses. A store change (`StoreChanged`, or a version seen
on the clock) asks the redraw scheduler what to redraw: the numbers (header, ranks, events,
log) at once or within `fast_interval`, the charts (charts, phase views, the verdict) within
`slow_interval`, each spaced out by what it costs. Every panel is redrawn through one
interface, `Panel.redraw(view)`, and redraws only what changed. A 1 s clock keeps ages and the
run status current (a stall is the absence of news), redrawing only text that changed.
"""

from __future__ import annotations

import threading
import time
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Container
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static, TabbedContent, TabPane

from trainwatch.diagnosis.findings import Finding
from trainwatch.diagnosis.judge import NOT_JUDGED, Judgement
from trainwatch.diagnosis.progress import NO_PROGRESS, Progress, progress
from trainwatch.store.store import Store
from trainwatch.ui import data
from trainwatch.ui.judging import Judging
from trainwatch.ui.messages import Judged
from trainwatch.ui.redraw import CHARTS, NUMBERS, RedrawScheduler
from trainwatch.ui.tabs import TABS, tab_label
from trainwatch.ui.terminal import hung_up, leave
from trainwatch.ui.widgets.chart import Chart, warm_up_charts
from trainwatch.ui.widgets.events import EventsTable
from trainwatch.ui.widgets.findings import FindingsList
from trainwatch.ui.widgets.header import (
    WRITE_AGE,
    RunHeader,
    SourcesShown,
    ages_shown,
    findings_text,
    progress_line,
    sources_shown,
    sources_text,
)
from trainwatch.ui.widgets.panel import Panel, View
from trainwatch.ui.widgets.ranks import RanksTable

if TYPE_CHECKING:
    from trainwatch.ui.app import TrainwatchApp

MAX_CHARTS = 6
NARROW_WIDTH = 110
# Charts that took longer than this to draw last time are drawn one per event-loop turn, so
# keys and the header's numbers never wait behind them.
INLINE_S = 0.03
# Charts do not draw within this long of a numbers redraw: the screen paints the numbers first
# (Textual paints on its next idle, at most 60 times a second; a chart redraw takes tens to
# hundreds of ms, and the first imports plotext, while the header's new step would wait).
PAINT_S = 0.05
PLOTEXT_WAIT_S = 3.0  # (a warm-up worker that has not imported plotext by then: the redraw imports it)
LOCK_WAIT_S = 0.005  # a redraw waits this long for the store, else it is retried...
RETRY_S = 0.05  # ...this much later

Shown = tuple[Judgement, tuple[Finding, ...]]  # the verdict on screen, and its findings


class DashboardScreen(Screen[None]):
    """The run at a glance; narrow terminals (class `narrow`) fold the side panel away."""

    HORIZONTAL_BREAKPOINTS = [(0, "narrow"), (NARROW_WIDTH, "wide")]  # noqa: RUF012
    judgement: var[Shown] = var((NOT_JUDGED, ()), init=False)

    def __init__(self, store: Store, fast_interval: float, slow_interval: float) -> None:
        super().__init__()
        self.store = store
        self.slow_interval = slow_interval
        self.scheduler = RedrawScheduler(fast_interval, slow_interval)
        self.judging = Judging()
        self._pending: set[str] = set()  # kinds with a redraw timer set
        self._charted: list[str] | None = None  # the metrics _ensure_charts last laid out
        self._draw_cost = self._drawn = 0.0  # the charts' share of a charts redraw, the last time
        self._ready = False
        self._numbers_at = -1.0  # monotonic time of the last numbers redraw (charts wait for its paint)
        self._charts_deferred = False  # a charts redraw is waiting for that paint (or for plotext)
        self._plotext: threading.Event | None = None  # set once the warm-up worker imported plotext
        self._plotext_asked = 0.0
        self._header_key: tuple[int, int, int] | None = None  # what the header's record-derived parts were taken at
        self._header_data: tuple[list[int], dict[str, list[int]], Progress] = ([], {}, NO_PROGRESS)
        self._sources_shown: SourcesShown | None = None  # the sources line as of the last news
        self._aged_key: tuple[Shown, SourcesShown | None, tuple[str, ...]] | None = None  # the header's, as drawn

    @property
    def twapp(self) -> TrainwatchApp:
        return self.app  # type: ignore[return-value]

    @property
    def verdict(self) -> Judgement:
        return self.judgement[0]

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.judgement[1]

    # ------------------------------------------------------------- layout
    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        yield Static(id="ingest-failed", classes="-error")
        with TabbedContent(id="tabs", initial=TABS[0].id):
            for tab in TABS:
                with TabPane(tab_label(tab), id=tab.id):
                    yield from tab.content(self.store)
        yield Footer()

    def on_mount(self) -> None:
        self.call_after_refresh(self._first_draw)
        self.set_interval(self.slow_interval, self.clock_tick)

    def _first_draw(self) -> None:
        """Once the panels' own children are mounted."""
        self._ready = True
        self._show_charts(self.app.size)
        self.fast_tick()
        self.slow_tick()  # (after the numbers are painted, and plotext imported by a worker: `_redraw`)

    def on_resize(self, event: events.Resize) -> None:
        self._show_charts(event.size)
        self.call_after_refresh(self.slow_tick)

    def _alive(self) -> bool:
        if not self.is_attached or self.twapp.closing:
            return False
        if not self._ready:  # before the first draw: the tabs' contents may not be mounted yet
            return False
        try:
            self.query_one("#charts")
        except NoMatches:  # shutting down: widgets already removed, a last timer fired
            return False
        return True

    def tab(self) -> str:
        return self.query_one(TabbedContent).active

    def view(self, changed: bool = True) -> View:
        """What the panels draw from now."""
        app = self.twapp
        verdict, findings = self.judgement
        return View(
            self.store, self.store.version, changed, app.clock.wall(), app.options, verdict, findings, self.tab()
        )

    def panels(self, pace: str) -> list[Panel]:
        # A plain walk and an attribute test first: a CSS query of "*" matches a selector on
        # every widget, and `isinstance` of a runtime Protocol checks each member (256 ranks:
        # a quarter of the numbers' redraw, several times a second).
        return [w for w in self.walk_children() if getattr(w, "pace", None) == pace and isinstance(w, Panel)]

    # ------------------------------------------------------------- scheduling
    def request_redraw(self) -> None:
        """The store changed: numbers now or within fast_interval, charts within slow_interval."""
        for kind, delay in self.scheduler.changed(time.monotonic()).items():
            if delay <= 0:
                self._redraw(kind)
            else:
                self._later(kind, delay)

    def _later(self, kind: str, delay: float) -> None:
        self._pending.add(kind)
        self.set_timer(delay, partial(self._fired, kind))

    def _fired(self, kind: str) -> None:
        self._pending.discard(kind)
        delay = self.scheduler.fired(kind, time.monotonic())
        if delay > 0:
            self._later(kind, delay)
        else:
            self._redraw(kind)

    def _redraw(self, kind: str) -> None:
        """Redraw `kind` if the store is free within LOCK_WAIT_S, else retry RETRY_S later: the
        ingest or judging thread may hold it for tens of ms at 256 ranks, and the event loop
        does not wait for them (keys stay responsive). The numbers hold the lock for the whole
        redraw (a few ms: one consistent look); charts take it only to copy their series."""
        if not self._alive():
            return
        if not self.store.lock.acquire(timeout=LOCK_WAIT_S):
            if kind not in self._pending:
                self.scheduler.paces[kind].waiting = True
                self._later(kind, RETRY_S)
            return
        if kind == CHARTS:
            # The numbers are what a user watches: news they do not show yet (their timer is
            # later) goes first, and the charts (tens to hundreds of ms; the first draw imports
            # plotext) wait until the screen has painted them.
            try:
                if self.store.version != self.scheduler.numbers_version:
                    self._numbers()
            finally:
                self.store.lock.release()
            wait = self._numbers_at + PAINT_S - time.monotonic()
            if wait > 0 or not self._plotext_ready():
                self._defer_charts(max(wait, PAINT_S / 5))
            else:
                self._charts()
            return
        try:
            self._numbers()
        finally:
            self.store.lock.release()

    def fast_tick(self) -> None:
        """Numbers: header, ranks, events, log — what changed since the last time."""
        self._redraw(NUMBERS)

    def slow_tick(self) -> None:
        """Charts, phase views and the verdict (~1/s while the log grows)."""
        self._redraw(CHARTS)

    def _numbers(self) -> None:
        start = time.thread_time()
        version = self.store.version
        changed = self.scheduler.numbers_changed(version)
        with self.app.batch_update():
            if changed:
                if self.judging.version < 0:  # the first verdict at once; then with the charts
                    self._judge(version)
                self.ensure_charts()
            view = self.view(changed)
            for panel in self.panels(NUMBERS):
                panel.redraw(view)
            self._update_header()
        pipeline = self.twapp.pipeline
        if pipeline is not None and pipeline.history_waits(version):
            if self.judging.version != version:
                # The first verdict came with the first numbers, maybe from the windows' first
                # part ("log ends at step 133,123" under a header at step 140,005): the whole
                # windows are judged before the history is read (whose pace holds the next one).
                self._judge(version)
            self.call_after_refresh(pipeline.release_history)  # the windows are on screen: now the history
        self._numbers_at = time.monotonic()
        self.scheduler.ran(NUMBERS, time.monotonic(), time.thread_time() - start)

    def _defer_charts(self, delay: float) -> None:
        """A charts redraw later (the numbers' paint, plotext's import): the charts' pace counts it as
        a timer set, so store changes meanwhile do not ask again."""
        if not self._charts_deferred:
            self._charts_deferred = True
            self.scheduler.paces[CHARTS].waiting = True
            self.set_timer(delay, self._deferred_charts)

    def _deferred_charts(self) -> None:
        self._charts_deferred = False
        self.scheduler.paces[CHARTS].waiting = False
        if not self._alive():
            return
        if not self._plotext_ready():
            self._defer_charts(PAINT_S)
            return
        self._charts()

    def _plotext_ready(self) -> bool:
        """Whether plotext is imported (by the warm-up worker, started here the first time), so that
        a chart redraw does not spend ~0.3 s importing it on the UI thread; after PLOTEXT_WAIT_S a
        redraw goes ahead anyway (it imports plotext itself)."""
        if self._plotext is None:
            self._plotext = warm_up_charts(self)
            self._plotext_asked = time.monotonic()
        return self._plotext.is_set() or time.monotonic() - self._plotext_asked > PLOTEXT_WAIT_S

    def _charts(self) -> None:
        now = time.monotonic()
        start = time.thread_time()
        # (the screen's rendering of the charts drawn the last time is part of what they cost)
        painted = sum(panel.take_paint_cost() for panel in self.panels(CHARTS) if isinstance(panel, Chart))
        version = self.scheduler.charts_version = self.store.version
        with self.app.batch_update():
            # The verdict and findings (a few ms on a long run) follow the log at this pace too,
            # or slower when judging takes long (hundreds of ranks).
            if self.judging.due():
                self._judge(version)
            view = self.view()
            later = self._draw_cost > INLINE_S  # (what the charts took the last time they redrew)
            self._drawn = 0.0
            for panel in self.panels(CHARTS):
                if isinstance(panel, Chart):
                    if later:
                        self.call_later(self._draw_chart, panel, True)
                    else:
                        self._draw_chart(panel)
                else:
                    panel.redraw(view)
        self.scheduler.ran(CHARTS, now, time.thread_time() - start + painted)

    def _draw_chart(self, chart: Chart, later: bool = False) -> None:
        start = time.thread_time()
        if later:
            if not (self._alive() and chart.is_attached):
                return
            if not self.store.lock.acquire(timeout=LOCK_WAIT_S):
                self.set_timer(RETRY_S, lambda: self._draw_chart(chart, True))
                return
            self.store.lock.release()  # (free now: the chart takes it to copy its series)
        if chart.redraw(self.view()):
            cost = time.thread_time() - start
            self._drawn += cost
            self._draw_cost = self._drawn
            if later:
                self.scheduler.add_cost(CHARTS, cost)  # the redraw's cost, for its pacing

    def clock_tick(self) -> None:
        """Every slow_interval: what moves with time alone — ages, and the status of an idle run."""
        if not self._alive():
            return
        pipeline = self.twapp.pipeline
        if hung_up(self.twapp.terminal):  # the terminal is gone (`ui/terminal.py`)
            leave(pipeline.stop if pipeline is not None else lambda: None)
        if self.scheduler.unannounced(self.store.version):
            self.request_redraw()  # a change no StoreChanged announced (store filled directly)
        if pipeline is not None and pipeline.history_waits(self.scheduler.numbers_version):
            # the numbers drawn show the windows, but the redraw that drew them ran before the
            # history's hold began (seen once in a test: the hold then lasted its whole maximum)
            pipeline.release_history()
        now = self.twapp.clock.wall()
        if self.judging.idle_due(now):
            self._judge(self.store.version, force=True)
        if not self.store.lock.acquire(timeout=LOCK_WAIT_S):
            return  # the ages move on at the next tick
        try:
            with self.app.batch_update():
                self._update_header(aged=True)  # redraws only if its text changed ("last write 5s" -> "6s")
                if self.tab() == "ranks":  # the "updated" ages; refreshed on showing the tab otherwise
                    self.query_one(RanksTable).redraw(self.view(False))
        finally:
            self.store.lock.release()

    @on(TabbedContent.TabActivated)
    def _tab_shown(self) -> None:
        if self._alive() and self.tab() == "ranks":
            self.query_one(RanksTable).redraw(self.view(False))

    # ------------------------------------------------------------- judging
    def _judge(self, version: int, force: bool = False) -> None:
        """Judge the run again if the store changed (or force): here if it was cheap last time,
        else in a thread worker whose `Judged` arrives later."""
        now = self.twapp.clock.wall()
        where = self.judging.plan(version, now, force)
        if where == "thread":
            self.run_worker(partial(self._judge_in_thread, now), thread=True, group="judge", exit_on_error=False)
        elif where == "inline":
            verdict, found, cost, recomputed = self.judging.judge(self.store, now)
            self.judging.took(recomputed, cost)
            self.judgement = (verdict, tuple(found))

    def _judge_in_thread(self, now: float) -> None:
        self.post_message(Judged(*self.judging.judge(self.store, now)))

    @on(Judged)
    def _judged(self, message: Judged) -> None:
        self.judging.judged(message)
        self.judgement = (message.verdict, tuple(message.findings))

    def watch_judgement(self) -> None:
        """A new verdict or findings: the header and the ranks' states show it (and --notify
        may tell it)."""
        self.twapp.status_judged(self.verdict)
        if self._alive():
            with self.app.batch_update():
                self._update_header(aged=True)  # (a new verdict: the sources line as of the last news)
                self.query_one(RanksTable).redraw(self.view(False))
                self.query_one(FindingsList).redraw(self.view(False))

    def _update_header(self, aged: bool = False) -> None:
        """Each second (the ages move) and on news: what depends on the records alone (ranks,
        nodes, progress) is taken again only when the store or the ranks seen changed, so an
        idle dashboard on 256 files does not go over every rank each second. `aged`: the clock's
        tick, which only ages the sources line taken at the last news (the sources' states also
        move without a new record: history read, a note; news redraws take them again)."""
        with self.store.lock:
            sources = list(self.store.sources.values())
            key = (self.store.version, len(sources), sum(len(st.ranks_seen) for st in sources))
            changed = self._header_key != key
            if changed:
                # ranks with records, and ranks the log names as members (torchrun barrier lines...)
                ranks = sorted(self.store.ranks.union(*(st.ranks_seen for st in sources)))
                self._header_data = (ranks, data.ranks_by_host(self.store), progress(self.store))
                self._header_key = key
            ranks, hosts, prog = self._header_data
            if changed or not aged or self._sources_shown is None:
                pipeline = self.twapp.pipeline
                waiting = [p.message for p in list(pipeline.problems)] if pipeline is not None and not sources else []
                self._sources_shown = sources_shown(sources, ranks, hosts, waiting)
        now = self.twapp.clock.wall()
        # The clock's tick on an idle run: most seconds no age it prints moves ("2m ago").
        aged_key = (self.judgement, self._sources_shown, ages_shown(self.verdict, self._sources_shown, now))
        if aged and not changed and aged_key == self._aged_key:
            return
        self._aged_key = aged_key
        progress_text = progress_line(self.verdict, prog, now)
        self.query_one(RunHeader).show(
            sources_text(self._sources_shown, now, newest_elsewhere=WRITE_AGE in progress_text.plain),
            progress_text,
            findings_text(list(self.findings)),
        )

    @on(EventsTable.Added)
    def _events_added(self, message: EventsTable.Added) -> None:
        self.query_one("#events-empty", Static).display = False
        events_tab = self.query_one(TabbedContent).get_tab("events")
        label = tab_label(next(t for t in TABS if t.id == "events"))
        events_tab.label = Text.assemble(f"{label} ", (f"{message.total}", "bold red" if message.errors else "bold"))

    def ingest_failed(self, reason: str) -> None:
        """The ingest worker died: say so for good, above the tabs (what was read stays)."""
        notice = self.query_one("#ingest-failed", Static)
        notice.update(Text(f"✖ reading stopped: {reason} — showing what was read until then", no_wrap=True))
        notice.display = True

    # ------------------------------------------------------------- charts
    def metrics_to_chart(self) -> list[str]:
        present = self.store.metric_names()
        chosen = self.twapp.chosen_metrics
        if chosen is not None:
            return [m for m in chosen if m in present][:MAX_CHARTS]
        return data.default_charts(present)[:MAX_CHARTS]

    def ensure_charts(self) -> None:
        """One chart per metric to chart, reusing the charts already mounted."""
        wanted = self.metrics_to_chart()
        if wanted == self._charted:  # the usual case, without querying the DOM (~1 ms)
            return
        self._charted = wanted
        charts = list(self.query(Chart))
        if [c.metric for c in charts] == wanted:
            return
        box = self.query_one("#charts", Container)
        for chart, metric in zip(charts, wanted, strict=False):
            chart.set_metric(metric)
        for chart in charts[len(wanted) :]:
            chart.remove()
        if len(wanted) > len(charts):
            box.mount_all(Chart(m) for m in wanted[len(charts) :])
        self.call_after_refresh(self._show_charts)
        self.call_after_refresh(self.slow_tick)

    def _show_charts(self, size: Size | None = None) -> None:
        """Fit the chart grid to the terminal: fewer charts when it is small."""
        if not self._alive():  # a resize before the tabs are composed, or while closing
            return
        w, h = size or self.app.size
        cols = 1 if w < NARROW_WIDTH else 2
        rows = max(1, (h - 8) // 11)
        limit = cols * rows
        charts = list(self.query(Chart))
        if len(charts) < cols:
            cols = max(1, len(charts))
        self.query_one("#charts", Container).styles.grid_size_columns = cols
        for i, chart in enumerate(charts):
            chart.display = i < limit

    # ------------------------------------------------------------- tabs
    def show_tab(self, tab_id: str) -> None:
        """Show a tab and give its keys to the widget that holds them."""
        self.query_one(TabbedContent).active = tab_id
        tab = next(t for t in TABS if t.id == tab_id)
        if tab.focus is None:
            self.set_focus(None)
            return
        targets = self.query(tab.focus)
        if targets:  # (none before the tab's contents are mounted)
            target: Widget = targets.first()
            getattr(target, "focus_first", target.focus)()
