"""The compare dashboard: runs overlaid on each chart (one colour per run) and a Runs tab.

Each run is read by its own pipeline in its own thread into its own store (the run is
the unit: runs never mix as ranks of one store). The screen redraws on a timer from copies of
the stores (`ui/data/runs.py`); the charts are the dashboard's `Chart`, fed one trace per run.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from dataclasses import replace

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Container
from textual.css.query import NoMatches
from textual.widgets import Footer, Static, TabbedContent, TabPane

from trainwatch.lines.sanitize import printable
from trainwatch.pipeline import Pipeline
from trainwatch.stderr import warn
from trainwatch.store.store import Store
from trainwatch.ui.actions import ACTIONS, bindings, with_tabs
from trainwatch.ui.compare.runs_table import RunsTable
from trainwatch.ui.data.labels import default_charts
from trainwatch.ui.data.runs import STEP, X_AXES, run_row
from trainwatch.ui.screens.help import HelpScreen
from trainwatch.ui.terminal import hung_up, leave, terminal_fd
from trainwatch.ui.widgets.chart import Chart, ChartOptions, colour

TAB_IDS = ("overview", "runs")
# The dashboard's keys that mean something here (the same ids, keys and help).
KEPT = ("quit", "help", "chart.smooth_more", "chart.smooth_less", "chart.log_y", "chart.x_axis", "chart.zoom")
X_HELP = "x axis: step / wall time since each run's start / tokens or samples seen"
KEYS = with_tabs(
    TAB_IDS,
    tuple(replace(a, help=X_HELP) if a.id == "chart.x_axis" else a for a in ACTIONS if a.id in KEPT),
)
SMOOTHING_STEPS = (0.0, 0.6, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995)
ZOOMS: tuple[int | None, ...] = (None, 200, 1000, 10_000)
AXIS_WORDS = {"step": "step", "wall": "wall time since each run's start", "seen": "tokens / samples seen"}
INGEST_STOP_WAIT_S = 2.0
MAX_CHARTS = 4


class CompareApp(App[None]):
    CSS = """
    #runs-line { height: 1; padding: 0 1; }
    #charts { layout: grid; grid-size: 2; width: 1fr; height: 1fr; }
    """
    TITLE = "trainwatch compare"
    BINDINGS = bindings("app", KEYS)

    def __init__(self, runs: Sequence[tuple[str, Pipeline]], *, interval: float = 0.5) -> None:
        """runs: each run's name and the pipeline that fills its own store."""
        super().__init__()
        self.runs = [_Run(label, pipeline) for label, pipeline in runs]
        self.interval = interval
        self.options = ChartOptions()
        self.x_axis = STEP
        self.closing = False
        self.terminal: int | None = None  # the terminal's fd, once mounted (`ui/terminal.py`)
        self.ingest_errors: dict[str, str] = {}
        self._stop = threading.Event()
        self._done = [threading.Event() for _ in self.runs]

    @property
    def stores(self) -> list[tuple[str, Store]]:
        return [(run.label, run.store) for run in self.runs]

    def compose(self) -> ComposeResult:
        yield Static(self._runs_line(), id="runs-line")
        with TabbedContent(id="tabs", initial="overview"):
            with TabPane("1 Overview", id="overview"):
                yield Container(id="charts")
            with TabPane("2 Runs", id="runs"):
                yield RunsTable(id="runs-table")
        yield Footer()

    def _runs_line(self) -> Text:
        """Each run's colour and name: the key to every chart."""
        out = Text(no_wrap=True, overflow="ellipsis")
        for i, run in enumerate(self.runs):
            out.append("■ ", style=f"color({colour(i)})")
            out.append(run.label)
            out.append("   ")
        return out

    def on_mount(self) -> None:
        # A thread of our own per run, not a Textual thread worker: those share asyncio's default
        # executor (min(32, cores + 4) threads: 6 on 2 cores), where a 7th run's reading, which
        # follows until the app stops, would wait forever for a free thread.
        for i in range(len(self.runs)):
            threading.Thread(target=self._ingest, args=(i,), name=f"trainwatch-ingest-{i}", daemon=True).start()
        self.terminal = terminal_fd(self._driver)  # checked on each redraw (`ui/terminal.py`)
        self.set_interval(self.interval, self.refresh_views)
        self.call_after_refresh(self.refresh_views)

    def _stop_runs(self) -> None:
        for run in self.runs:
            run.pipeline.stop()

    def on_unmount(self) -> None:
        self.closing = True
        self._stop.set()
        for run, done in zip(self.runs, self._done, strict=True):
            done.wait(INGEST_STOP_WAIT_S)  # out of the readers before they are closed
            run.pipeline.stop()

    def _ingest(self, i: int) -> None:
        """Thread: follow run i into its own store until the app stops."""
        try:
            self.runs[i].pipeline.follow(stop=self._stop)
        except Exception as exc:  # told on exit (`run_compare`), which then exits 1
            self.ingest_errors[self.runs[i].label] = printable(f"{exc.__class__.__name__}: {exc}")
        finally:
            self._done[i].set()

    # ------------------------------------------------------------- drawing
    def metrics_to_chart(self) -> list[str]:
        present: set[str] = set()
        for _label, store in self.stores:
            present.update(store.metric_names())
        return default_charts(present)[:MAX_CHARTS]

    def refresh_views(self) -> None:
        if self.closing:
            return
        if hung_up(self.terminal):  # the terminal is gone: end rather than spin on it
            self._stop.set()
            leave(self._stop_runs)
        try:
            holder, table = self.query_one("#charts", Container), self.query_one(RunsTable)
        except NoMatches:  # a redraw queued as the app quits, its screen already gone: nothing to draw on
            return
        self._ensure_charts(holder)
        for chart in holder.query(Chart):
            chart.update_from_runs(self.stores, self.options, self.x_axis)
        table.show([run_row(label, store) for label, store in self.stores])

    def _ensure_charts(self, holder: Container) -> None:
        wanted = self.metrics_to_chart()
        charts = list(holder.query(Chart))
        if [c.metric for c in charts] == wanted:
            return
        for chart, metric in zip(charts, wanted, strict=False):
            chart.set_metric(metric)
        for chart in charts[len(wanted) :]:
            chart.remove()
        if len(wanted) > len(charts):
            holder.mount_all(Chart(m) for m in wanted[len(charts) :])
        self.call_after_refresh(self.refresh_views)

    # ------------------------------------------------------------- keys
    def _set_options(self, **changes: object) -> None:
        self.options = ChartOptions(**{**self.options.__dict__, **changes})  # type: ignore[arg-type]
        self.refresh_views()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_help(self) -> None:
        self.push_screen(HelpScreen(KEYS, {}))

    def action_x_axis(self) -> None:
        self.x_axis = X_AXES[(X_AXES.index(self.x_axis) + 1) % len(X_AXES)]
        self.refresh_views()
        self.notify(f"x axis: {AXIS_WORDS[self.x_axis]}", timeout=2)

    def action_log_scale(self) -> None:
        self._set_options(log_y=not self.options.log_y)

    def action_smoothing(self, delta: int) -> None:
        i = SMOOTHING_STEPS.index(self.options.smoothing) if self.options.smoothing in SMOOTHING_STEPS else 3
        self._set_options(smoothing=SMOOTHING_STEPS[max(0, min(len(SMOOTHING_STEPS) - 1, i + delta))])

    def action_zoom(self) -> None:
        i = ZOOMS.index(self.options.last_n) if self.options.last_n in ZOOMS else 0
        self._set_options(last_n=ZOOMS[(i + 1) % len(ZOOMS)])


class _Run:
    """One run on screen: its name and its pipeline (whose store only this run fills)."""

    def __init__(self, label: str, pipeline: Pipeline) -> None:
        # A name from a path or --label is shown in the legend and the Runs tab: control characters made visible.
        self.label, self.pipeline, self.store = printable(label), pipeline, pipeline.store


def run_compare(runs: Sequence[tuple[str, Pipeline]]) -> None:
    """Open the compare dashboard; exits 1 if reading a run died."""
    app = CompareApp(runs)
    app.run()
    for label, error in app.ingest_errors.items():
        warn(f"{label}: reading stopped: {error}")
    code = app.return_code or (1 if app.ingest_errors else 0)
    if code:
        sys.exit(code)
