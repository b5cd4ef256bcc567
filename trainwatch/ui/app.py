"""The trainwatch dashboard.

The UI thread never reads files or parses: the Pipeline's thread fills the store and, after
a round that read something, posts one `StoreChanged` (at most one in flight). The UI then
redraws the numbers at once — at most every `fast_interval` (0.15 s) while the log grows — and
the charts at most every `slow_interval` (1 s). A 1 s clock keeps ages and the run status
current (a stall is the absence of news); it redraws only text that changed, and only in the
visible tab. On an idle file nothing else runs.
All log-derived text is shown as rich `Text` (never markup): a file may be named `[bold]x.log`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container, Horizontal, Vertical
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Log, Static, TabbedContent, TabPane

from trainwatch.diagnosis.findings import Finding
from trainwatch.diagnosis.judge import NOT_JUDGED, Judge, Judgement, not_judged
from trainwatch.diagnosis.progress import progress
from trainwatch.pipeline import Pipeline
from trainwatch.stderr import warn
from trainwatch.store.store import Store
from trainwatch.ui import data
from trainwatch.ui.clock import Clock
from trainwatch.ui.screens.help import HelpScreen
from trainwatch.ui.screens.metrics import MetricPicker
from trainwatch.ui.widgets.chart import Chart, ChartOptions, overflow_steps
from trainwatch.ui.widgets.events import EventsTable, recent_events_text
from trainwatch.ui.widgets.findings import FindingsList
from trainwatch.ui.widgets.header import RunHeader, findings_text, progress_line, source_line
from trainwatch.ui.widgets.phase_bars import PhaseBars
from trainwatch.ui.widgets.phase_trend import PhaseTrend
from trainwatch.ui.widgets.profiler import ProfilerPane
from trainwatch.ui.widgets.ranks import RanksTable
from trainwatch.ui.widgets.rawlog import LogPane

SMOOTHING_STEPS = (0.0, 0.6, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995)
ZOOMS: tuple[int | None, ...] = (None, 200, 1000, 10_000)
MAX_CHARTS = 6
NARROW_WIDTH = 110
TABS = ("overview", "ranks", "events", "log", "profiler", "phases")


DIAGNOSE_IDLE_EVERY_S = 5.0
# A redraw that takes long (hundreds of ranks) is spaced out so that redrawing takes at most
# about this share of a core, whatever the intervals say: numbers and charts get later, the
# dashboard stays responsive and off the training job's CPU.
REDRAW_SHARE = 0.05  # (costs are the redrawing thread's CPU time: waiting for the GIL is not cost)
# Work that took longer than this last time is done off the event loop's turn, so keys and the
# header's numbers are never held up behind it: judging runs in a thread, charts are drawn one
# per turn.
INLINE_S = 0.03
PACE_MAX_S = 5.0  # ...but nothing shown lags the log by more than this
JUDGE_LOST_S = 30.0  # a judging thread that has not answered by then is taken as lost


NUMBERS_SHARE = 0.10  # the header's numbers are what a user watches: they may take more
LOCK_WAIT_S = 0.005  # a redraw waits this long for the store, else it is retried...
RETRY_S = 0.05  # ...this much later


def paced(cost: float, share: float = REDRAW_SHARE) -> float:
    """The least time between two redraws of a kind that took `cost` seconds."""
    return min(PACE_MAX_S, cost / share)


def smoothed(previous: float, cost: float) -> float:
    """A redraw's usual cost: one slow redraw (a burst of events) does not hold the next one back long."""
    return 0.7 * previous + 0.3 * cost


NO_EVENTS = "no events yet: overflows, NaNs, OOMs, NCCL timeouts, tracebacks, signals and checkpoints appear here"


class StoreChanged(Message):
    """Posted from the pipeline thread: sources were read (records, raw lines or notes)."""


class Judged(Message):
    """Posted from the judging thread: the verdict and findings of the store as it was."""

    def __init__(self, verdict: Judgement, findings: list[Finding], cost: float, recomputed: bool) -> None:
        super().__init__()
        self.verdict, self.findings, self.cost, self.recomputed = verdict, findings, cost, recomputed


class TrainwatchApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "trainwatch"
    BINDINGS = [  # noqa: RUF012
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("1", "tab('overview')", "Overview", show=False),
        Binding("2", "tab('ranks')", "Ranks", show=False),
        Binding("3", "tab('events')", "Events", show=False),
        Binding("4", "tab('log')", "Log", show=False),
        Binding("5", "tab('profiler')", "Profiler", show=False),
        Binding("6", "tab('phases')", "Phases", show=False),
        Binding("plus,equals_sign", "smoothing(1)", "Smooth+"),
        Binding("minus", "smoothing(-1)", "Smooth-"),
        Binding("l", "log_scale", "Log y"),
        Binding("x", "x_axis", "Step/time"),
        Binding("z", "zoom", "Zoom"),
        Binding("m", "pick_metrics", "Metrics"),
    ]

    def __init__(
        self,
        paths: list[str] | None = None,
        *,
        store: Store | None = None,
        pipeline: Pipeline | None = None,
        clock: Clock | None = None,
        poll: bool = False,
        poll_interval: float | None = None,
        fast_interval: float = 0.15,
        slow_interval: float = 1.0,
    ) -> None:
        super().__init__()
        self.store = store if store is not None else (pipeline.store if pipeline is not None else Store())
        if pipeline is None and paths:
            pipeline = Pipeline(paths, store=self.store, poll_interval=poll_interval, force_poll=poll)
        self.pipeline = pipeline
        self.poll = poll
        self.clock = clock or Clock()
        self.fast_interval, self.slow_interval = fast_interval, slow_interval
        self.options = ChartOptions()
        self.smoothing_index = SMOOTHING_STEPS.index(self.options.smoothing)
        self.zoom_index = 0
        self.chosen_metrics: list[str] | None = None  # None: the defaults present in the log
        self.verdict: Judgement = NOT_JUDGED
        self.findings: list[Finding] = []
        self._judge = Judge()
        self._seen_version = -1
        self._diag_version = -1
        self._events_seen = 0
        self._recent_events: list = []
        self._closing = False
        self._wake_pending = False  # a StoreChanged is in flight (set by the pipeline thread)
        self._numbers_at = self._charts_at = -1e9  # monotonic time of the last redraw of each
        self._numbers_cost = self._charts_cost = 0.0  # seconds the last redraw of each took
        self._draw_cost = self._drawn = 0.0  # the charts' share of it, the last time they redrew
        self._numbers_timer: Timer | None = None
        self._charts_timer: Timer | None = None
        self._charts_version = self._phases_version = -1
        self._diag_forced_at = -1e9
        # what the last judgement cost, after a change of the store (the findings that depend on
        # the records are computed again) and without one (only the time-dependent status)
        self._diag_costs = {True: 0.0, False: 0.0}
        self._judging = False  # a judgement is running in its thread
        self._diag_mono = -1e9  # monotonic time of the last judgement
        self._charted: list[str] | None = None  # the metrics _ensure_charts last laid out

    # ------------------------------------------------------------- layout
    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        with TabbedContent(id="tabs", initial="overview"):
            with TabPane("1 Overview", id="overview"):
                with Horizontal(id="overview-row"):
                    yield Container(id="charts")
                    with Vertical(id="side"):
                        yield PhaseBars(id="phases")
                        yield Static(id="recent-events")
            with TabPane("2 Ranks", id="ranks"):
                yield RanksTable(id="ranks-table")
            with TabPane("3 Events", id="events"):
                yield FindingsList(id="findings")
                yield Static(Text(NO_EVENTS, style="dim"), id="events-empty")
                yield EventsTable(id="events-table")
            with TabPane("4 Log", id="log"):
                yield LogPane(self.store, id="log-pane")
            with TabPane("5 Profiler", id="profiler"):
                yield ProfilerPane(self.store, id="profiler-pane")
            with TabPane("6 Phases", id="phases"):
                yield PhaseTrend(self.store, interval=self.slow_interval, id="phase-trend")
        yield Footer()

    def on_mount(self) -> None:
        recent = self.main.query_one("#recent-events", Static)
        recent.border_title = "recent events (key 3: the full list)"
        recent.update(recent_events_text([], 1))
        if self.pipeline is not None:
            self.pipeline.on_activity = self._on_pipeline_activity
            self.pipeline.start()
        else:  # a store filled by someone else: nobody posts StoreChanged, look at its version
            self.set_interval(self.fast_interval, self._poll_store)
        self._apply_width(self.size)
        self.fast_tick()
        self.slow_tick()
        self.set_interval(self.slow_interval, self.clock_tick)

    def on_unmount(self) -> None:
        self._closing = True
        if self.pipeline is not None:
            self.pipeline.stop()

    def on_resize(self, event: events.Resize) -> None:
        # This handler runs before App._on_resize records the new size: self.size is still the old one.
        self._apply_width(event.size)
        self.call_after_refresh(self.slow_tick)

    def _apply_width(self, size: Size) -> None:
        """Narrow terminals: the side panel folds away and the charts take the whole width."""
        self.main.set_class(size.width < NARROW_WIDTH, "narrow")
        self._show_charts(size)

    @property
    def main(self) -> Screen:
        """The dashboard screen (queries must not go to a modal on top of it)."""
        return self.screen_stack[0]

    def _alive(self) -> bool:
        if self._closing or not self.screen_stack:
            return False
        try:
            self.main.query_one(RunHeader)
        except NoMatches:  # shutting down: widgets already removed, a last timer fired
            return False
        return True

    # ------------------------------------------------------------- ticks
    def _on_pipeline_activity(self) -> None:
        """Pipeline thread, after a round that read data: wake the UI, once per burst."""
        if self._wake_pending or self._closing:
            return
        self._wake_pending = True
        self.post_message(StoreChanged())

    def _poll_store(self) -> None:
        if self.store.version != self._seen_version:
            self._request_redraw()

    @on(StoreChanged)
    def _store_changed(self) -> None:
        self._request_redraw()

    def _request_redraw(self) -> None:
        """Numbers now (or when fast_interval has passed since the last time), charts within slow_interval."""
        now = time.monotonic()
        wait = self._numbers_at + max(self.fast_interval, paced(self._numbers_cost, NUMBERS_SHARE)) - now
        if wait <= 0:
            self.fast_tick()
        elif self._numbers_timer is None:
            self._numbers_timer = self.set_timer(wait, self._deferred_numbers)
        wait = self._charts_at + max(self.slow_interval, paced(self._charts_cost)) - now
        if wait <= 0:
            self.slow_tick()
        elif self._charts_timer is None:
            self._charts_timer = self.set_timer(wait, self._deferred_charts)

    def _deferred_numbers(self) -> None:
        self._numbers_timer = None
        self.fast_tick()

    def _deferred_charts(self) -> None:
        self._charts_timer = None
        # charts drawn one per turn added their cost after this timer was set: pace by it
        wait = self._charts_at + max(self.slow_interval, paced(self._charts_cost)) - time.monotonic()
        if wait > 0.01:
            self._charts_timer = self.set_timer(wait, self._deferred_charts)
            return
        self.slow_tick()

    def _tab(self) -> str:
        return self.main.query_one(TabbedContent).active

    def _store_free(self) -> bool:
        """Take the store's lock for a redraw if it comes within LOCK_WAIT_S. The ingest thread
        (adding a batch) or the judging thread may hold it for tens of ms at 256 ranks: the
        event loop does not wait for them (keys stay responsive), it redraws a moment later."""
        return self.store.lock.acquire(timeout=LOCK_WAIT_S)

    def _with_store(self, tick: Callable[[], None], timer: str, retry: Callable[[], None], hold: bool) -> None:
        """Run a redraw when the store is free, or retry it RETRY_S later (timer: the attribute
        holding that redraw's pending timer) when another thread has it. hold: keep the lock for
        the whole redraw (a few ms: one consistent look); else only look that it is free (charts
        take it just to copy their series: plotting must not hold up the ingest thread)."""
        if not self._alive():
            return
        if not self._store_free():
            if getattr(self, timer) is None:
                setattr(self, timer, self.set_timer(RETRY_S, retry))
            return
        if not hold:
            self.store.lock.release()
            tick()
            return
        try:
            tick()
        finally:
            self.store.lock.release()

    def fast_tick(self) -> None:
        """Numbers: header, ranks, events, log — what changed since the last time."""
        self._wake_pending = False  # before reading the store: a later change wakes us again
        self._with_store(self._fast_tick, "_numbers_timer", self._deferred_numbers, hold=True)

    def _fast_tick(self) -> None:
        self._numbers_at = time.monotonic()
        start = time.thread_time()
        version = self.store.version
        changed = version != self._seen_version
        self._seen_version = version
        with self.batch_update():
            if changed:
                if self._diag_version < 0:  # the first verdict at once; then with the charts (~1 s)
                    self._diagnose(version)
                self._update_events()
                self._update_ranks()
                self._ensure_charts()
            self._update_header()
            self.main.query_one(LogPane).update_from_store()
            if changed:
                self.main.query_one(ProfilerPane).update_from_store()
        self._numbers_cost = smoothed(self._numbers_cost, time.thread_time() - start)

    def slow_tick(self) -> None:
        """Charts, phase bars and the verdict (~1/s while the log grows). A chart redraws only
        if its metric got points or its size/options changed."""
        self._with_store(self._slow_tick, "_charts_timer", self._deferred_charts, hold=False)

    def _slow_tick(self) -> None:
        self._charts_at = time.monotonic()
        start = time.thread_time()
        self._charts_version = version = self.store.version
        marks = None
        with self.batch_update():
            # The verdict and findings (a few ms on a long run) follow the log at this pace too,
            # or slower when judging takes long (hundreds of ranks).
            if self._diag_due() and self._diagnose(version):
                self._update_header()
                self._update_ranks()
            if version != self._phases_version:  # medians of the last steps: paced like a chart
                self._phases_version = version
                self.main.query_one(PhaseBars).update_from(self.store, version)
            later = self._draw_cost > INLINE_S  # (what the charts took the last time they redrew)
            self._drawn = 0.0
            for chart in self.main.query(Chart):
                if chart.metric == "loss_scale":
                    marks = marks if marks is not None else overflow_steps(self.store)
                if later:
                    self.call_later(self._draw_chart, chart, marks, True)
                else:
                    self._draw_chart(chart, marks)
        self._charts_cost = time.thread_time() - start

    def _draw_chart(self, chart: Chart, marks: list[float] | None, later: bool = False) -> None:
        start = time.thread_time()
        if later and not (self._alive() and chart.is_attached):
            return
        if later:
            if not self._store_free():
                self.set_timer(RETRY_S, lambda: self._draw_chart(chart, marks, True))
                return
            self.store.lock.release()  # (free now: the chart takes it to copy its series)
        redrawn = chart.update_from(self.store, self.options, marks if chart.metric == "loss_scale" else None)
        if redrawn:
            cost = time.thread_time() - start
            self._drawn += cost
            self._draw_cost = self._drawn
            if later:
                self._charts_cost += cost  # the tick's cost, for its pacing

    def clock_tick(self) -> None:
        """Every slow_interval: what moves with time alone — ages, and the status of an idle run."""
        if not self._alive():
            return
        if self.store.version != self._charts_version and self._charts_timer is None:
            self._request_redraw()  # a change no StoreChanged announced (store filled directly)
        # Status depends on time too (a stall is the absence of news): re-judge an idle
        # store every few seconds, not every tick.
        now = self.clock.wall()
        if now - self._diag_forced_at >= max(DIAGNOSE_IDLE_EVERY_S, paced(self._diag_costs[False])):
            self._diagnose(self.store.version, force=True)
        if not self._store_free():
            return  # the ages move on at the next tick
        try:
            with self.batch_update():
                self._update_header()  # redraws only if its text changed ("last write 5s" -> "6s")
                if self._tab() == "ranks":  # the "updated" ages; refreshed on showing the tab otherwise
                    self._update_ranks()
        finally:
            self.store.lock.release()

    @on(TabbedContent.TabActivated)
    def _tab_shown(self) -> None:
        if self._alive() and self._tab() == "ranks":
            self._update_ranks()

    def _diagnose(self, version: int, force: bool = False) -> bool:
        """Judge the run again if the store changed (or force). True if it was judged now; a
        judgement that took long last time runs in a thread and arrives as `Judged`."""
        if (version == self._diag_version and not force) or (
            self._judging and time.monotonic() - self._diag_mono < JUDGE_LOST_S
        ):
            return False
        changed = version != self._diag_version
        self._diag_version = version
        now = self._diag_forced_at = self.clock.wall()
        self._diag_mono = time.monotonic()
        if self._diag_costs[changed] > INLINE_S:
            self._judging = True
            self.run_worker(
                lambda: self.post_message(Judged(*self._judge_now(now))),
                thread=True,
                group="judge",
                exit_on_error=False,
            )
            return False
        self.verdict, self.findings, cost, recomputed = self._judge_now(now)
        self._diag_costs[recomputed] = cost
        return True

    def _diag_due(self) -> bool:
        return time.monotonic() - self._diag_mono >= paced(self._diag_costs[True])

    def _judge_now(self, now: float) -> tuple[Judgement, list[Finding], float, bool]:
        """Verdict, findings, the CPU seconds it took, whether the record findings were computed again."""
        start = time.thread_time()
        try:
            verdict = self._judge(self.store, now)
        except Exception as exc:
            verdict = not_judged(f"diagnosis failed: {exc.__class__.__name__}")
        return verdict, list(verdict.findings), time.thread_time() - start, self._judge.recomputed

    @on(Judged)
    def _judged(self, message: Judged) -> None:
        self._judging = False
        self.verdict, self.findings = message.verdict, message.findings
        self._diag_costs[message.recomputed] = message.cost
        if self._alive():
            with self.batch_update():
                self._update_header()
                self._update_ranks()

    def _update_header(self) -> None:
        with self.store.lock:
            sources = list(self.store.sources.values())
            # ranks with records, and ranks the log names as members (torchrun barrier lines...)
            ranks = sorted(self.store.ranks.union(*(st.ranks_seen for st in sources)))
            hosts = data.ranks_by_host(self.store)
        header = self.main.query_one(RunHeader)
        header.show(
            source_line(sources, self.clock.wall(), ranks, hosts),
            progress_line(self.verdict, progress(self.store), self.clock.wall()),
            findings_text(self.findings),
        )
        self.main.query_one(FindingsList).show(self.findings)

    def _update_ranks(self) -> None:
        if self._tab() != "ranks" and self.main.query_one(RanksTable).row_count:
            return  # hidden: brought up to date when the tab is shown
        stragglers = {
            (f.hosts[i] if i < len(f.hosts) else None, r)
            for f in self.findings
            if f.kind == "straggler"
            for i, r in enumerate(f.ranks)
        }
        self.main.query_one(RanksTable).show(
            data.rank_rows(self.store), self.clock.wall(), stragglers, self.verdict.rank_states()
        )

    def _update_events(self) -> None:
        new, self._events_seen = data.events_copy(self.store, self._events_seen)
        if not new:
            return
        self.main.query_one("#events-empty", Static).display = False
        self.main.query_one(EventsTable).add_events(new)
        self._recent_events = (self._recent_events + new)[-50:]
        box = self.main.query_one("#recent-events", Static)
        box.update(recent_events_text(self._recent_events, max(3, box.content_size.height or 8)))
        counts = self.store.event_counts
        tab = self.main.query_one(TabbedContent).get_tab("events")
        errors = sum(1 for e in self._recent_events if e.severity == "error")
        tab.label = Text.assemble("3 Events ", (f"{sum(counts.values())}", "bold red" if errors else "bold"))

    # ------------------------------------------------------------- charts
    def metrics_to_chart(self) -> list[str]:
        present = self.store.metric_names()
        if self.chosen_metrics is not None:
            return [m for m in self.chosen_metrics if m in present][:MAX_CHARTS]
        return data.default_charts(present)[:MAX_CHARTS]

    def _ensure_charts(self) -> None:
        wanted = self.metrics_to_chart()
        if wanted == self._charted:  # the usual case, without querying the DOM (~1 ms)
            return
        self._charted = wanted
        charts = list(self.main.query(Chart))
        if [c.metric for c in charts] == wanted:
            return
        box = self.main.query_one("#charts", Container)
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
        w, h = size or self.size
        cols = 1 if w < NARROW_WIDTH else 2
        rows = max(1, (h - 8) // 11)
        limit = cols * rows
        charts = list(self.main.query(Chart))
        if len(charts) < cols:
            cols = max(1, len(charts))
        box = self.main.query_one("#charts", Container)
        box.styles.grid_size_columns = cols
        for i, chart in enumerate(charts):
            chart.display = i < limit

    # ------------------------------------------------------------- actions
    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def _in_log(self, action: Callable[..., None], *args: object) -> None:
        """Palette entries for the log pane: show the log tab, then act."""
        self.action_tab("log")
        action(*args)

    def action_tab(self, tab: str) -> None:
        self.main.query_one(TabbedContent).active = tab
        targets: dict[str, type[Widget]] = {"ranks": RanksTable, "events": EventsTable, "log": Log}
        target = targets.get(tab)
        if target is not None:
            self.main.query_one(target).focus()
        elif tab == "profiler":  # its tables hold the keys (`o` sorts): the first one, if any
            self.main.query_one(ProfilerPane).focus_table()
        elif tab == "phases":
            self.main.query_one(PhaseTrend).focus()
        else:
            self.set_focus(None)

    def _set_options(self, **changes: object) -> None:
        self.options = ChartOptions(**{**self.options.__dict__, **changes})  # type: ignore[arg-type]
        self.slow_tick()

    def action_smoothing(self, delta: int) -> None:
        self.smoothing_index = max(0, min(len(SMOOTHING_STEPS) - 1, self.smoothing_index + delta))
        self._set_options(smoothing=SMOOTHING_STEPS[self.smoothing_index])
        self.notify(f"loss smoothing: EMA {SMOOTHING_STEPS[self.smoothing_index]:g}", timeout=2)

    def action_log_scale(self) -> None:
        self._set_options(log_y=not self.options.log_y)
        self.notify("y axis: " + ("log" if self.options.log_y else "linear"), timeout=2)

    def action_x_axis(self) -> None:
        self._set_options(wall_time=not self.options.wall_time)
        self.notify("x axis: " + ("wall time" if self.options.wall_time else "step"), timeout=2)

    def action_zoom(self) -> None:
        self.zoom_index = (self.zoom_index + 1) % len(ZOOMS)
        n = ZOOMS[self.zoom_index]
        self._set_options(last_n=n)
        self.notify("zoom: " + ("all points" if n is None else f"last {n} points"), timeout=2)

    def action_pick_metrics(self) -> None:
        def done(result: list[str] | None) -> None:
            if result is not None:
                self.chosen_metrics = result
                self._ensure_charts()

        self.push_screen(MetricPicker(self.store.metric_names(), self.metrics_to_chart()), done)

    def on_events_table_jump(self, message: EventsTable.Jump) -> None:
        self.action_tab("log")
        self.main.query_one(LogPane).jump(message.source, message.line)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own "Keys" entry duplicates our "Help: keys" (which lists every binding).
        yield from (c for c in super().get_system_commands(screen) if c.title != "Keys")
        yield SystemCommand("Help: keys", "Every key binding", self.action_help)
        for i, tab in enumerate(TABS, start=1):
            yield SystemCommand(f"Show {tab}", f"Switch to the {tab} tab (key {i})", lambda t=tab: self.action_tab(t))
        yield SystemCommand("More smoothing", "Raise the loss EMA weight (+)", lambda: self.action_smoothing(1))
        yield SystemCommand("Less smoothing", "Lower the loss EMA weight (-)", lambda: self.action_smoothing(-1))
        yield SystemCommand("Toggle log scale", "Log / linear y axis (l)", self.action_log_scale)
        yield SystemCommand("Toggle x axis", "Step / wall time (x)", self.action_x_axis)
        yield SystemCommand("Zoom", "Last 200 / 1000 / 10000 points / all (z)", self.action_zoom)
        yield SystemCommand("Pick metrics", "Choose the charted metrics (m)", self.action_pick_metrics)
        log = self.main.query_one(LogPane)
        yield SystemCommand("Log: search", "Search the raw log (/)", lambda: self._in_log(log.action_search))
        yield SystemCommand("Log: filter", "Filter the raw log (f)", lambda: self._in_log(log.action_filter))
        yield SystemCommand("Log: follow", "Follow the end of the log (End)", lambda: self._in_log(log.action_follow))
        yield SystemCommand("Log: next source", "Show the next source (])", lambda: self._in_log(log.action_source, 1))


def run_dashboard(paths: list[str], poll: bool = False, poll_interval: float | None = None) -> None:
    """Open the dashboard on paths (the `watch` command)."""
    app = TrainwatchApp(paths, poll=poll, poll_interval=poll_interval)
    if app.pipeline is not None and not app.pipeline.readers:
        for problem in app.pipeline.problems:
            warn(problem.message)
    app.run()


if __name__ == "__main__":  # `python -m trainwatch.ui.app PATH...` (used by `serve`)
    run_dashboard(sys.argv[1:])
