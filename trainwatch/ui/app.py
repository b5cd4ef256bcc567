"""The trainwatch dashboard: the app shell around the dashboard screen.

It owns what lives as long as the app: the store and the ingest worker that fills it, the
keys (`actions.py`, remapped by `[keymap]` in trainwatch.toml), the command palette, and the
chart options and metric choice the keys change (reactives: setting one redraws the charts).
The ingest loop runs as a Textual thread worker with its own stop event; each round that read
something posts a `StoreChanged` (coalesced in the queue). If the worker dies the dashboard
says so, keeps what it has read, and the process exits non-zero when the user quits.
All log-derived text is shown as rich `Text` (never markup): a file may be named `[bold]x.log`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path

from textual import on
from textual._files import generate_datetime_filename
from textual.app import App, SystemCommand
from textual.reactive import var
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from trainwatch.diagnosis.judge import Judgement
from trainwatch.gcpause import settle_heap, unsettle_heap
from trainwatch.lines.sanitize import printable
from trainwatch.pipeline import Pipeline
from trainwatch.settling import SETTLE_S
from trainwatch.stderr import warn
from trainwatch.store.store import Store
from trainwatch.ui.actions import Action, bindings, palette_entries, with_tabs
from trainwatch.ui.clock import Clock
from trainwatch.ui.commands import ActionCommands
from trainwatch.ui.keymap import clashes, load_keymap
from trainwatch.ui.messages import StoreChanged
from trainwatch.ui.notify import Notification, StatusNotifier
from trainwatch.ui.redraw import PACE_MAX_S, REDRAW_SHARE
from trainwatch.ui.screens.dashboard import DashboardScreen
from trainwatch.ui.screens.help import HelpScreen
from trainwatch.ui.screens.metrics import MetricPicker
from trainwatch.ui.tabs import TAB_IDS
from trainwatch.ui.terminal import terminal_fd
from trainwatch.ui.widgets.chart import ChartOptions
from trainwatch.ui.widgets.events import EventsTable
from trainwatch.ui.widgets.phase_trend import PhaseTrend
from trainwatch.ui.widgets.rawlog import LogPane

__all__ = ["PACE_MAX_S", "REDRAW_SHARE", "TrainwatchApp", "run_dashboard"]

SMOOTHING_STEPS = (0.0, 0.6, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995)
ZOOMS: tuple[int | None, ...] = (None, 200, 1000, 10_000)
KEYS = with_tabs(TAB_IDS)  # every action of the dashboard, tabs included
INGEST_STOP_WAIT_S = 2.0  # on quit, how long the ingest worker may take to notice its stop event
# The widget that runs an action of each owner, and the tab it is on (palette entries show it first).
OWNER_TAB = {"log": (LogPane, "log"), "phases": (PhaseTrend, "phases")}


class TrainwatchApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "trainwatch"
    BINDINGS = bindings("app", KEYS)
    COMMANDS = {ActionCommands}  # noqa: RUF012  (the palette: Textual's own commands and the action table's)

    options: var[ChartOptions] = var(ChartOptions, init=False)
    chosen_metrics: var[list[str] | None] = var(None, init=False)  # None: the defaults present in the log

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
        keymap: Mapping[str, str] | None = None,
        notify: bool = False,
        notify_settle: float = SETTLE_S,
        notify_send: Callable[[Notification], None] | None = None,
    ) -> None:
        """notify: ring and post a desktop notification when the run turns crashed or stalled
        (held `notify_settle` seconds); notify_send: where it goes instead of the terminal."""
        super().__init__()
        self.store = store if store is not None else (pipeline.store if pipeline is not None else Store())
        if pipeline is None and paths:
            pipeline = Pipeline(paths, store=self.store, poll_interval=poll_interval, force_poll=poll)
        self.pipeline = pipeline
        self.poll = poll
        self.clock = clock or Clock()
        self.fast_interval, self.slow_interval = fast_interval, slow_interval
        self.smoothing_index = SMOOTHING_STEPS.index(ChartOptions().smoothing)
        self.zoom_index = 0
        self.closing = False
        self.terminal: int | None = None  # the terminal's fd, checked on the clock (`ui/terminal.py`)
        self.ingest_error: str | None = None  # why the ingest worker died, if it did
        self._ingest_stop = threading.Event()  # the ingest worker's cancel event
        self._ingest_done = threading.Event()
        ids = [a.id for a in KEYS]
        self.keymap, self.keymap_problems = (dict(keymap), []) if keymap is not None else load_keymap(ids)
        self.keymap_problems += clashes(KEYS, self.keymap)
        self.notifier = StatusNotifier(notify_send or self._ring, notify_settle) if notify else None

    def get_default_screen(self) -> Screen:
        return DashboardScreen(self.store, self.fast_interval, self.slow_interval)

    @property
    def dashboard(self) -> DashboardScreen:
        """The dashboard screen (a modal may be on top of it)."""
        screen = self.screen_stack[0]
        assert isinstance(screen, DashboardScreen)
        return screen

    def on_mount(self) -> None:
        self.terminal = terminal_fd(self._driver)  # (None under a test's headless driver)
        self.set_keymap(self.keymap)
        for problem in self.keymap_problems:
            self.notify(printable(problem), title="keymap", severity="warning", timeout=10, markup=False)
        if self.pipeline is not None:
            self.pipeline.on_activity = self._on_pipeline_activity
            self.pipeline.on_caught_up = self._settle_heap
            self.pipeline.hold_history()  # the present on screen first (`DashboardScreen._numbers`)
            self.run_worker(self._ingest, name="ingest", group="ingest", thread=True, exit_on_error=False)
        else:  # a store filled by someone else: nobody posts StoreChanged, look at its version
            self.set_interval(self.fast_interval, self._poll_store)

    def on_unmount(self) -> None:
        self.closing = True
        self._ingest_stop.set()
        if self.pipeline is not None:
            # The worker's thread must be out of the readers before they are closed.
            self._ingest_done.wait(INGEST_STOP_WAIT_S)
            self.pipeline.stop()
            unsettle_heap()

    # ------------------------------------------------------------- ingest
    def _ingest(self) -> None:
        """Thread worker: tail and parse into the store until the stop event is set."""
        assert self.pipeline is not None
        try:
            self.pipeline.follow(stop=self._ingest_stop)
        finally:
            self._ingest_done.set()

    def _on_pipeline_activity(self) -> None:
        """Ingest thread, after a round that read data: wake the UI (messages waiting coalesce)."""
        if not self.closing:
            self.post_message(StoreChanged(self.store.version))

    def _settle_heap(self) -> None:
        """Ingest thread, once the logs are read. Not once closing: a last long round that ends
        after `on_unmount` gave up waiting must not freeze a heap it has already released."""
        if not self.closing:
            settle_heap()

    def _poll_store(self) -> None:
        if not self.screen_stack:  # quitting: the screens are gone before the timers stop
            return
        if self.store.version != self.dashboard.scheduler.numbers_version:
            self.dashboard.request_redraw()

    @on(StoreChanged)
    def _store_changed(self) -> None:
        if self.screen_stack:  # (a message that arrives while quitting)
            self.dashboard.request_redraw()

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.name != "ingest" or event.state != WorkerState.ERROR or self.closing:
            return
        error = worker.error
        self.ingest_error = printable(f"{error.__class__.__name__}: {error}") if error else "unknown error"
        self.dashboard.ingest_failed(self.ingest_error)
        self.notify(
            f"reading stopped ({self.ingest_error}); the dashboard shows what was read until then",
            title="trainwatch",
            severity="error",
            timeout=30,
            markup=False,
        )

    # ------------------------------------------------------------- --notify
    def status_judged(self, verdict: Judgement) -> None:
        """Each verdict shown (dashboard's `watch_judgement`): --notify tells a new crash or stall."""
        if self.notifier is None or self.closing:
            return
        status = verdict.status
        source = status.failure.source if status.failure is not None else ""
        self.notifier.look(status.state, status.reason, source, self.clock.wall(), self._caught_up())

    def _caught_up(self) -> bool:
        """Every source has been read to the end of what was written (or has ended)."""
        with self.store.lock:
            sources = list(self.store.sources.values())
        return bool(sources) and all(st.caught_up_monotonic is not None or st.ended for st in sources)

    def _ring(self, note: Notification) -> None:
        """The bell, then the notification's OSC sequences, through Textual's driver (not stdout:
        the driver owns the terminal and orders what it writes). Headless: nothing to ring."""
        self.bell()
        if self._driver is not None and not self.is_headless:
            self._driver.write(note.sequences())

    # ------------------------------------------------------------- keys
    def metrics_to_chart(self) -> list[str]:
        return self.dashboard.metrics_to_chart()

    def watch_options(self) -> None:
        self.dashboard.slow_tick()

    def watch_chosen_metrics(self) -> None:
        self.dashboard.ensure_charts()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(KEYS, self.keymap))

    def action_tab(self, tab: str) -> None:
        self.dashboard.show_tab(tab)

    def _set_options(self, **changes: object) -> None:
        self.options = ChartOptions(**{**self.options.__dict__, **changes})  # type: ignore[arg-type]

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

        self.push_screen(MetricPicker(self.store.metric_names(), self.metrics_to_chart()), done)

    def on_events_table_jump(self, message: EventsTable.Jump) -> None:
        self.action_tab("log")
        self.dashboard.query_one(LogPane).jump(message.source, message.line)

    # ------------------------------------------------------------- palette
    async def _run_from_palette(self, action: Action) -> None:
        """Run an entry of the action table; a widget's action shows its tab first."""
        owner = OWNER_TAB.get(action.owner)
        if owner is None:
            await self.run_action(action.action)
            return
        widget, tab = owner
        self.action_tab(tab)
        await self.run_action(action.action, self.dashboard.query_one(widget))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own "Keys" entry duplicates our "Help: keys" (which lists every binding).
        yield from (c for c in super().get_system_commands(screen) if c.title != "Keys")
        for action, title, description in palette_entries(KEYS, self.keymap):
            yield SystemCommand(title, description, partial(self._run_from_palette, action))

    # Where the palette's "Screenshot" saves: this directory if set (a `--screenshot-dir`), else
    # the current directory, which the user knows (Textual's default, ~/Downloads, may not exist
    # on a cluster node, and its failure toast named neither the path nor the reason).
    screenshot_dir: Path | None = None

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """Save an SVG of the screen and say where, or why not. Returns the file's path."""
        if self.is_web:  # served in a browser: the browser downloads it
            return super().deliver_screenshot(filename, path, time_format)
        directory = Path(path) if path else (self.screenshot_dir or Path.cwd())
        target = directory.resolve() / (filename or generate_datetime_filename(self.title, ".svg", time_format))
        try:
            target.write_text(self.export_screenshot(), encoding="utf-8")
        except OSError as exc:
            why = exc.strerror or exc.__class__.__name__
            self.notify(f"not saved to {target}: {why}", title="Screenshot", severity="error", markup=False)
            return None
        self.notify(f"saved to {target}", title="Screenshot", markup=False)
        return str(target)


def run_dashboard(
    paths: list[str],
    poll: bool = False,
    poll_interval: float | None = None,
    labels: Sequence[str] = (),
    notify: bool = False,
    notify_settle: float = SETTLE_S,
    screenshot_dir: Path | None = None,
) -> None:
    """Open the dashboard on paths (the `open` command; `labels` name its stream PATHs; screenshots
    go to `screenshot_dir`, else the current directory). Exits 1 if the dashboard stopped on an
    internal error or its reading died."""
    pipeline = Pipeline(paths, poll_interval=poll_interval, force_poll=poll, labels=labels)
    app = TrainwatchApp(
        paths, pipeline=pipeline, poll=poll, poll_interval=poll_interval, notify=notify, notify_settle=notify_settle
    )
    app.screenshot_dir = screenshot_dir.resolve() if screenshot_dir is not None else None
    if app.pipeline is not None and not app.pipeline.readers:
        for problem in app.pipeline.problems:
            warn(problem.message)
    app.run()
    for keymap_problem in app.keymap_problems:
        warn(keymap_problem)
    if app.ingest_error is not None:
        warn(f"reading stopped: {app.ingest_error}")
    code = app.return_code or (1 if app.ingest_error is not None else 0)
    if code:
        sys.exit(code)


if __name__ == "__main__":  # `python -m trainwatch.ui.app PATH...` (used by `serve`)
    run_dashboard(sys.argv[1:])
