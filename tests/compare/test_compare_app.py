"""The compare dashboard under Textual's pilot: two real mmengine runs of the same model (one with
a diverging learning rate), each read by its own pipeline into its own store."""

from __future__ import annotations

import asyncio
import io
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from textual.app import App, ComposeResult

from trainwatch.pipeline import Pipeline
from trainwatch.ui.compare.app import CompareApp
from trainwatch.ui.compare.runs_table import RunsTable
from trainwatch.ui.data.runs import RunRow
from trainwatch.ui.screens.help import HelpScreen, help_table
from trainwatch.ui.widgets.chart import Chart

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
HEALTHY = str(SAMPLES / "mmengine__runner_cpu_healthy.log")
DIVERGING = str(SAMPLES / "mmengine__runner_cpu_diverging_lr.log")


def _app() -> CompareApp:
    return CompareApp([("healthy", Pipeline([HEALTHY])), ("diverging", Pipeline([DIVERGING]))], interval=0.1)


async def _until(pilot: object, check: object, tries: int = 60) -> None:
    for _ in range(tries):
        if check():  # type: ignore[operator]
            return
        await pilot.pause(0.1)  # type: ignore[attr-defined]


async def test_runs_tab_lists_each_run_with_its_own_status_step_and_loss() -> None:
    app = _app()
    async with app.run_test(size=(140, 40)) as pilot:
        table = app.query_one(RunsTable)
        await _until(pilot, lambda: table.row_count == 2 and "80 of 80" in str(table.get_row_at(1)[2]))
        await pilot.press("2")
        await pilot.pause(0.2)
        assert table.labels() == ["healthy", "diverging"]
        rows = [[cell.plain for cell in table.get_row_at(i)] for i in range(2)]
        assert rows[0][1:5] == ["finished", "80 of 80", "0.6851", "0.5836"]
        assert rows[1][1:4] == ["finished", "80 of 80", "nan"]  # the diverged run's last loss, not the other's
        assert rows[0][5].endswith("/step") and rows[1][5].endswith("/step")
        assert app.runs[0].store is not app.runs[1].store


async def test_the_loss_chart_holds_one_series_per_run() -> None:
    app = _app()
    async with app.run_test(size=(140, 40)) as pilot:
        await _until(pilot, lambda: any(c.metric == "loss" and c._inputs is not None for c in app.query(Chart)))
        await _until(pilot, lambda: len(next(c for c in app.query(Chart) if c.metric == "loss")._inputs.traces) == 2)
        loss = next(c for c in app.query(Chart) if c.metric == "loss")
        assert loss._inputs is not None
        traces = loss._inputs.traces
        assert [t.label for t in traces] == ["healthy", "diverging"]
        own = [list(next(iter(run.store.series_for("loss").values())).steps) for run in app.runs]
        assert [list(t.xs) for t in traces] == own  # each run's own steps (they log at different intervals)
        assert own[0] != own[1]
        legend = loss.render().plain
        assert "healthy" in legend and "diverging" in legend
        await pilot.press("x")  # no timestamps in these logs: steps, and the chart says why
        await pilot.pause(0.3)
        assert "not every run has" in loss._inputs.x_label


async def test_a_label_with_control_characters_is_shown_not_obeyed() -> None:
    app = CompareApp([("\x1b[2Jevil", Pipeline([HEALTHY])), ("ok", Pipeline([DIVERGING]))], interval=0.1)
    async with app.run_test(size=(140, 40)) as pilot:
        table = app.query_one(RunsTable)
        await _until(pilot, lambda: table.row_count == 2)
        assert table.labels()[0] == "␛[2Jevil"
        assert "\x1b" not in app.query_one("#runs-line").render().plain  # type: ignore[union-attr]


async def test_help_lists_the_compare_keys_with_the_three_x_axes() -> None:
    app = _app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause(0.3)
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(help_table(app.screen.table, app.screen.keymap))
        shown = console.export_text()
        assert "tokens or samples seen" in shown and "quit" in shown
        assert "search" not in shown  # the Log tab's keys are not offered: there is no Log tab here


async def test_a_four_rank_run_beside_a_single_one_shows_its_band_note_and_rank_count() -> None:
    four = str(SAMPLES / "ranks__mmengine_tee3_control.log")
    app = CompareApp([("four", Pipeline([four])), ("one", Pipeline([HEALTHY]))], interval=0.1)
    async with app.run_test(size=(160, 45)) as pilot:
        await _until(pilot, lambda: any(c.metric == "loss" and c._inputs is not None for c in app.query(Chart)))
        loss = next(c for c in app.query(Chart) if c.metric == "loss")
        await _until(pilot, lambda: "band: min/max over ranks" in loss.render().plain)
        shown = loss.render().plain.splitlines()[-1]  # the legend: the chart's last line
        assert "band: min/max over ranks" in shown and "5.983" in shown and "0.6851" in shown
        table = app.query_one(RunsTable)
        await _until(pilot, lambda: table.row_count == 2)
        await pilot.press("2")
        await pilot.pause(0.2)
        assert [table.get_row_at(i)[-1].plain for i in range(2)] == ["4", "1"]


async def test_every_run_is_read_even_with_more_runs_than_the_loops_thread_pool() -> None:
    # Textual's thread workers share the loop's default executor (6 threads on 2 cores): a run
    # read there waits for a free thread that never comes, as each reading follows until the end.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=2))
    paths = [HEALTHY, DIVERGING, str(SAMPLES / "ranks__mmengine_tee3_control.log")]
    app = CompareApp([(f"run{i}", Pipeline([p])) for i, p in enumerate(paths)], interval=0.1)
    async with app.run_test(size=(140, 40)) as pilot:
        table = app.query_one(RunsTable)
        done = lambda: table.row_count == 3 and all(table.get_row_at(i)[2].plain != "-" for i in range(3))  # noqa: E731
        await _until(pilot, done, tries=100)
        assert [table.get_row_at(i)[2].plain for i in range(3)] == ["80 of 80", "80 of 80", "40 of 40"]


async def test_a_runs_cells_widen_their_column_as_the_run_goes_on() -> None:
    # A live run's row is added before its first step ("-") and filled in later: "1,601 of 20,000" must not be cut.
    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield RunsTable()

    nan = math.nan
    app = Host()
    async with app.run_test(size=(140, 20)) as pilot:
        table = app.query_one(RunsTable)
        table.show([RunRow("live", "unknown", None, None, nan, nan, nan, nan)])
        await pilot.pause()
        table.show([RunRow("live", "running", 1601, 20000, 24.31, 24.31, 1.8, 33_000.0, 4)])
        await pilot.pause()
        cells = [c.plain for c in table.get_row_at(0)]
        assert "1,601 of 20,000" in cells and "1.8s/step" in cells
        widths = [c.content_width for c in table.columns.values()]
        assert all(w >= len(text) for w, text in zip(widths, cells, strict=True)), (widths, cells)
