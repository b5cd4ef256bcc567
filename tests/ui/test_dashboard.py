"""The dashboard on real logs: numbers on screen, live appends, every key, inert hostile text.

Logs: seed 004 (DeepSpeed + Megatron GPT-2, /work/shared/seeds/004_*) read through the real
Pipeline and parsers; transcribed seed records (see _ui_records.py) where the exact layout matters.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _ui_helpers import frozen, header_text, wait_for
from _ui_records import SOURCE, build_store
from conftest import seed
from textual.widgets import Input, Log, SelectionList, TabbedContent

from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.clock import FrozenClock
from trainwatch.ui.screens.help import HelpScreen
from trainwatch.ui.screens.metrics import MetricPicker
from trainwatch.ui.widgets.chart import Chart
from trainwatch.ui.widgets.events import EventsTable
from trainwatch.ui.widgets.ranks import RanksTable
from trainwatch.ui.widgets.rawlog import LogPane


def seed_head(tmp_path: Path, upto_iteration: int, name: str = "out.log") -> tuple[Path, list[str]]:
    """The first lines of seed 004, through the `time (ms)` line after `iteration N/`."""
    lines = seed("004").read_text(encoding="utf-8").splitlines(keepends=True)
    marker = f" iteration {upto_iteration:>8}/"
    end = next(i for i, line in enumerate(lines) if line.startswith(marker)) + 2
    path = tmp_path / name
    path.write_text("".join(lines[:end]), encoding="utf-8")
    return path, lines[end:]


def log_lines(app: TrainwatchApp) -> list[str]:
    return list(app.query_one(LogPane).query_one(Log).lines)


async def test_seed_numbers_on_screen(tmp_path: Path) -> None:
    path, _ = seed_head(tmp_path, 200)
    app = TrainwatchApp([str(path)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "step 200 of 1,000,000" in header_text(app)), header_text(app)
        head = header_text(app)
        assert "megatron" in head and "out.log" in head
        # seed 004 line 623: ` iteration      200/ 1000000 | elapsed time per iteration (ms): 906.9 |
        # learning rate 3.000E-06 | lm loss 8.844704E+00 | loss scale 4096.0 |`
        app.dashboard.slow_tick()

        def legend(metric: str) -> str:  # charts are (re)built on the slow tick: look them up each time
            charts = {c.metric: c for c in app.query(Chart)}
            return charts[metric]._legend.plain if metric in charts else ""

        assert await wait_for(pilot, lambda: "3.00e-06" in legend("lr"))
        assert await wait_for(pilot, lambda: "8.845" in legend("loss"))
        table = app.query_one(RanksTable)
        assert table.row_count >= 1
        assert any("200" == str(c) for c in table.get_row_at(0))


async def test_appended_step_appears(tmp_path: Path) -> None:
    path, rest = seed_head(tmp_path, 100)
    app = TrainwatchApp([str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: "step 100 of" in header_text(app)), header_text(app)
        end = next(i for i, line in enumerate(rest) if line.startswith(" iteration      105/")) + 2
        with path.open("a", encoding="utf-8") as f:
            f.write("".join(rest[:end]))
        assert await wait_for(pilot, lambda: "step 105 of" in header_text(app)), header_text(app)
        await pilot.press("4")
        assert await wait_for(pilot, lambda: any("iteration      105/" in line for line in log_lines(app)))


HOSTILE = "loss 1.0 \x1b]52;c;aGVsbG8=\x07 title \x1b]0;pwned\x07 markup [/] and [@click=app.quit]x[/] end\n"


async def test_hostile_line_is_inert(tmp_path: Path) -> None:
    path = tmp_path / "[bold]x.log"
    path.write_text("starting\n" + HOSTILE, encoding="utf-8")
    # The directory, not the path: `[bold]` in a path argument is a glob character class.
    app = TrainwatchApp([str(tmp_path)])
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_for(pilot, lambda: "[bold]x.log" in header_text(app)), header_text(app)
        await pilot.press("4")
        assert await wait_for(pilot, lambda: any("[@click=app.quit]x[/]" in line for line in log_lines(app)))
        shown = "\n".join(log_lines(app))
        assert "\x1b" not in shown and "\x07" not in shown
        assert "aGVsbG8=" not in shown and "pwned" not in shown  # the sequences are gone, not just escaped
        assert "markup [/] and" in shown
        status = app.query_one("#log-status").render()
        assert "[bold]x.log" in str(status)
        assert app.is_running  # `[@click=app.quit]` did nothing


def frozen_app(**kw: object) -> TrainwatchApp:
    return TrainwatchApp(store=build_store(**kw), clock=FrozenClock(wall_s=1_607_752_714.0, mono_s=0.0))  # type: ignore[arg-type]


@pytest.mark.slow  # over 2 s: every tab drawn in turn
async def test_tabs_and_help_keys() -> None:
    app = frozen_app()
    async with app.run_test(size=(160, 45)) as pilot:
        tabs = app.query_one(TabbedContent)
        for key, tab in (("2", "ranks"), ("3", "events"), ("4", "log"), ("5", "profiler"), ("1", "overview")):
            await pilot.press(key)
            assert tabs.active == tab
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


async def test_chart_keys_change_the_charts() -> None:
    app = frozen_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app.dashboard.slow_tick()
        loss = next(c for c in app.query(Chart) if c.metric == "loss")
        assert "EMA 0.9" in loss._legend.plain
        await pilot.press("plus")
        assert app.options.smoothing == 0.95 and "EMA 0.95" in loss._legend.plain
        await pilot.press("minus", "minus")
        assert app.options.smoothing == 0.8
        before = loss.renders
        await pilot.press("l")
        assert app.options.log_y and loss.renders > before
        await pilot.press("x")
        assert app.options.wall_time
        assert "no timestamps" in loss._plot.plain or "wall time" in loss._plot.plain
        await pilot.press("z")
        assert app.options.last_n == 200
        renders = loss.renders
        app.dashboard.slow_tick()
        assert loss.renders == renders  # nothing changed: no redraw


async def test_metric_picker() -> None:
    app = frozen_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert [c.metric for c in app.query(Chart)][:2] == ["loss", "step_time_s"]
        await pilot.press("m")
        assert isinstance(app.screen, MetricPicker)
        picker = app.screen.query_one(SelectionList)
        picker.deselect_all()
        picker.select("lr")
        await pilot.press("enter")
        await pilot.pause()
        assert [c.metric for c in app.query(Chart)] == ["lr"]


async def test_event_enter_jumps_to_log_line(tmp_path: Path) -> None:
    path, _ = seed_head(tmp_path, 50)
    app = TrainwatchApp([str(path)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "step 50 of" in header_text(app))
        table = app.query_one(EventsTable)
        # No event in the first 50 iterations of seed 004: jump through the message path directly.
        pane = app.query_one(LogPane)
        table.post_message(EventsTable.Jump(str(path), 353))
        assert await wait_for(pilot, lambda: app.query_one(TabbedContent).active == "log")
        assert await wait_for(pilot, lambda: any(line.startswith("▶    353 │ ") for line in log_lines(app)))
        assert not pane.following
        assert await wait_for(pilot, lambda: app.focused is pane.log_widget)
        await pilot.press("end")
        assert pane.following


async def test_a_store_change_while_quitting_is_ignored() -> None:
    """The store's poll timer and a StoreChanged message can still arrive after the screens are
    gone (seen under load in CI): quitting then must not end in a traceback."""
    app = frozen_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
    assert not app.screen_stack
    app.store.touch()
    app._poll_store()
    app._store_changed()


async def test_events_table_enter_on_transcribed_events() -> None:
    app = frozen_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("3")
        table = app.query_one(EventsTable)
        assert table.row_count == 2
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: app.query_one(TabbedContent).active == "log")
        assert app.query_one(LogPane).context_of == 3709 or app.query_one(LogPane).following is False


@pytest.mark.slow  # over 2 s: search, filter and each source in the Log tab
async def test_log_search_filter_and_sources() -> None:
    app = frozen_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("4")
        pane = app.query_one(LogPane)
        assert await wait_for(pilot, lambda: len(log_lines(app)) == 2)
        pane.query_one(Log).focus()
        await pilot.press("slash")
        box = pane.query_one(Input)
        assert box.has_focus
        box.value = "forward"
        await pilot.press("enter")
        assert pane.search == "forward" and len(pane.matches) == 1 and pane.match_at == 0
        await pilot.press("n")
        assert pane.match_at == 0
        await pilot.press("f")
        box.value = "iteration"
        await pilot.press("enter")
        assert pane.filter == "iteration" and len(log_lines(app)) == 1
        await pilot.press("right_square_bracket")
        assert pane.source_index == 0  # one source: stays
        await pilot.press("escape")
        assert pane.filter == "" and pane.following


async def test_ranks_view_scrolls_for_many_ranks() -> None:
    app = frozen_app(ranks=64)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        table = app.query_one(RanksTable)
        assert table.row_count == 64
        table.focus()
        assert table.max_scroll_y > 0  # 64 rows do not fit in 40 lines: the table scrolls
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert table.cursor_row == 63 and table.scroll_y == table.max_scroll_y
        assert str(table.get_row_at(63)[0]) == "rank 63"


async def test_command_palette_lists_actions() -> None:
    app = frozen_app()
    async with app.run_test(size=(120, 40)):
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for needed in (
            "Help: keys",
            "More smoothing",
            "Toggle log scale",
            "Toggle x axis",
            "Zoom",
            "Pick metrics",
            "Log: search",
            "Log: filter",
            "Show profiler",
        ):
            assert needed in titles


async def test_palette_has_one_keys_entry() -> None:
    app = frozen(build_store())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Help: keys" in titles and "Keys" not in titles
        assert "Quit" in titles  # Textual's other entries stay


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_small_and_large_terminals(size: tuple[int, int]) -> None:
    app = frozen_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.dashboard.slow_tick()
        shown = [c for c in app.query(Chart) if c.display]
        assert shown and (len(shown) <= 2 if size[0] == 80 else len(shown) >= 4)
        assert app.screen.has_class("narrow") == (size[0] == 80)
        assert SOURCE in header_text(app)


def chart_draws(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The metrics of the chart redraws from now on, in order."""
    drawn: list[str] = []
    real = Chart.redraw
    monkeypatch.setattr(Chart, "redraw", lambda self, view: drawn.append(self.metric) or real(self, view))
    return drawn


async def test_charts_wait_for_the_numbers_to_be_painted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chart redraw (tens to hundreds of ms; the first imports plotext) right after a numbers
    redraw waits until the screen has painted the header's new step: the step is not held back."""
    path, _ = seed_head(tmp_path, 100)
    app = TrainwatchApp([str(path)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "step 100 of" in header_text(app)), header_text(app)
        await pilot.pause(0.3)
        drawn = chart_draws(monkeypatch)
        dashboard = app.dashboard
        dashboard._draw_cost = 0.0  # charts cheap the last time draw inline, not each on a turn of its own
        dashboard.fast_tick()
        dashboard.slow_tick()  # in the same turn: nothing painted yet
        assert drawn == []
        await pilot.pause(0.3)  # (50 ms after the numbers)
        assert "loss" in drawn, drawn
        drawn.clear()
        await pilot.pause(0.1)
        dashboard._draw_cost = 0.0
        dashboard.slow_tick()  # long after the numbers: at once, in this turn
        assert "loss" in drawn, drawn


async def test_charts_wait_for_plotext_imported_in_a_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing plotext takes ~0.3 s: a worker does it once the numbers are on screen, and charts
    wait for it (up to a bound) rather than block the UI thread importing it themselves."""
    import threading

    from trainwatch.ui.screens import dashboard as dashboard_module

    release = threading.Event()
    started: list[bool] = []

    def slow_warm_up(host: object) -> threading.Event:  # a worker whose import takes until released
        started.append(True)
        return release

    monkeypatch.setattr(dashboard_module, "warm_up_charts", slow_warm_up)
    path, _ = seed_head(tmp_path, 100)
    app = TrainwatchApp([str(path)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "step 100 of" in header_text(app)), header_text(app)
        await pilot.pause(0.5)
        drawn = chart_draws(monkeypatch)
        app.dashboard.slow_tick()
        await pilot.pause(0.3)
        assert started == [True] and drawn == []  # still importing: no chart drawn meanwhile
        release.set()
        await pilot.pause(0.3)
        assert "loss" in drawn, drawn


async def test_a_pattern_that_matches_nothing_yet_says_so_in_the_header(tmp_path: Path) -> None:
    """`trainwatch 'logs/*.log'` before the job writes: the header says what the pattern found (its
    warning on stderr is under the dashboard's screen), then the log once it appears."""
    pattern = str(tmp_path / "*.log")
    app = TrainwatchApp([pattern])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "no file matches this pattern yet" in header_text(app))
        assert "waiting" in header_text(app) and pattern in header_text(app)
        (tmp_path / "train.log").write_text("".join(f"step {i}: loss {5.0 / i:.4f}\n" for i in range(1, 30)))
        assert await wait_for(pilot, lambda: "train.log" in header_text(app), tries=300)
        assert "no file matches" not in header_text(app)
