"""The dashboard in Textual's idiom: keys from one action table and remapped by `[keymap]` in
trainwatch.toml, the ingest loop as a thread worker whose death is shown, store changes that
coalesce in the message queue, and a redraw scheduler driven without Textual.

Data: transcribed seed-004 records (_ui_records.py) for the dashboard; a pipeline on a file
whose reading raises stands for a reader bug."""

from __future__ import annotations

from pathlib import Path

import pytest
from _ui_helpers import wait_for
from _ui_records import build_store
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import Static, TabbedContent

from trainwatch.pipeline import Pipeline
from trainwatch.ui.actions import ACTIONS, help_rows, key_label
from trainwatch.ui.app import KEYS, TrainwatchApp, run_dashboard
from trainwatch.ui.clock import FrozenClock
from trainwatch.ui.keymap import load_keymap
from trainwatch.ui.messages import StoreChanged
from trainwatch.ui.redraw import CHARTS, NUMBERS, REDRAW_SHARE, RedrawScheduler
from trainwatch.ui.screens.help import HelpScreen

IDS = [a.id for a in KEYS]


def frozen(**kw: object) -> TrainwatchApp:
    return TrainwatchApp(
        store=build_store(),
        clock=FrozenClock(wall_s=1_607_752_720.0, mono_s=0.0),
        fast_interval=3600.0,
        slow_interval=3600.0,
        **kw,  # type: ignore[arg-type]
    )


def test_every_binding_has_an_id_and_each_id_is_once() -> None:
    assert len(IDS) == len(set(IDS))
    assert all(b.id for b in TrainwatchApp.BINDINGS if not isinstance(b, tuple))
    assert {"tab.overview", "tab.phases", "chart.zoom", "log.search", "phases.seconds"} <= set(IDS)


def test_help_rows_show_the_remapped_keys() -> None:
    rows = {what: key for _where, key, what in help_rows(KEYS, {"chart.zoom": "Z", "tab.log": "L"})}
    assert rows["zoom: last 200 / 1000 / 10000 points / all"] == "Z"
    assert rows["overview · ranks · events · log · profiler · phases"] == "1 2 3 L 5 6"
    assert key_label("question_mark") == "?" and key_label("G,end") == "G / end"
    assert all(a.id in IDS for a in ACTIONS)


async def test_keymap_in_trainwatch_toml_remaps_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "trainwatch.toml").write_text('[keymap]\n"tab.log" = "L"\n"chart.zoom" = "Z"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # ./trainwatch.toml, as a user has it
    app = frozen()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        tabs = app.query_one(TabbedContent)
        await pilot.press("4")  # the old key does nothing now
        assert tabs.active == "overview"
        await pilot.press("L")
        assert tabs.active == "log"
        await pilot.press("1", "Z")
        assert app.options.last_n == 200
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        screen = app.screen
        assert ("everywhere", "1 2 3 L 5 6", "overview · ranks · events · log · profiler · phases") in list(
            help_rows(screen.table, screen.keymap)
        )


async def test_a_bad_keymap_entry_is_told_and_the_rest_applies(tmp_path: Path) -> None:
    config = tmp_path / "trainwatch.toml"
    config.write_text('[keymap]\n"tab.nope" = "x"\n"chart.zoom" = "ctrl+ z"\n"tab.log" = "L"\n', encoding="utf-8")
    keymap, problems = load_keymap(IDS, config)
    assert keymap == {"tab.log": "L"}
    assert len(problems) == 2 and "'tab.nope' is no action" in problems[0] and "'ctrl+ z' is not a key" in problems[1]
    told: list[str] = []

    def hook(message: Message) -> None:
        if isinstance(message, Notify):
            told.append(message.notification.message)

    app = TrainwatchApp(store=build_store(), keymap=keymap, fast_interval=3600.0, slow_interval=3600.0)
    app.keymap_problems = problems
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        assert await wait_for(pilot, lambda: len(told) == 2)
        assert any("'tab.nope' is no action" in t for t in told)
        await pilot.press("L")
        assert app.query_one(TabbedContent).active == "log"  # the good entry applies


async def test_a_clashing_remap_says_what_it_replaced() -> None:
    told: list[str] = []

    def hook(message: Message) -> None:
        if isinstance(message, Notify):
            told.append(message.notification.message)

    app = frozen(keymap={"tab.log": "l"})  # `l` is the log-scale key
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        await pilot.press("l")
        assert await wait_for(pilot, lambda: any("'tab.log' = 'l' takes the key of 'chart.log_y'" in t for t in told))
        assert app.query_one(TabbedContent).active == "log"


class BrokenPipeline(Pipeline):
    """A pipeline whose reading raises after the first round, as a reader bug would."""

    def follow(self, stop=None, until_inputs_end=False):  # type: ignore[no-untyped-def]
        self.read_to_end()
        raise RuntimeError("reader bug at offset 42")


async def test_a_dying_ingest_worker_is_shown_and_the_dashboard_goes_on(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text(
        " iteration        5/     100 | elapsed time per iteration (ms): 900.0 | learning rate 1.000E-04 |"
        " lm loss 5.000000E+00 | loss scale 4096.0 |\n",
        encoding="utf-8",
    )
    app = TrainwatchApp(pipeline=BrokenPipeline([str(log)]))
    async with app.run_test(size=(120, 40)) as pilot:
        notice = app.query_one("#ingest-failed", Static)
        assert await wait_for(pilot, lambda: bool(notice.display))
        assert "reading stopped: RuntimeError: reader bug at offset 42" in str(notice.render())
        assert app.ingest_error == "RuntimeError: reader bug at offset 42"
        assert app.store.metric_names()  # what was read stays
        await pilot.press("2")  # keys still work
        assert app.query_one(TabbedContent).active == "ranks"
        await pilot.press("q")
    assert app.return_code in (0, None)  # the UI itself did not crash: run_dashboard turns the error into exit 1


async def test_store_changes_waiting_in_the_queue_are_handled_once() -> None:
    app = frozen()
    handled: list[int] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        real = app.dashboard.request_redraw

        def counting() -> None:
            handled.append(app.store.version)
            real()

        app.dashboard.request_redraw = counting  # type: ignore[method-assign]
        for version in range(20):  # as the ingest thread posts them, faster than the UI reads
            app.post_message(StoreChanged(version))
        await pilot.pause()
        await pilot.pause()
    assert 1 <= len(handled) < 20
    assert StoreChanged(1).can_replace(StoreChanged(2))


def test_scheduler_redraws_numbers_at_once_and_charts_paced() -> None:
    s = RedrawScheduler(fast_interval=0.15, slow_interval=1.0)
    assert s.changed(100.0) == {NUMBERS: 0.0, CHARTS: 0.0}  # nothing drawn yet: both now
    s.ran(NUMBERS, 100.0, 0.001)
    s.ran(CHARTS, 100.0, 0.01)
    plan = s.changed(100.05)
    assert plan[NUMBERS] == pytest.approx(0.10) and plan[CHARTS] == pytest.approx(0.95)
    assert s.changed(100.06) == {}  # timers are set for both: nothing more to ask
    assert s.fired(NUMBERS, 100.15) == 0.0
    s.add_cost(CHARTS, 0.05)  # a chart drawn on its own turn after the timer was set
    assert s.fired(CHARTS, 101.0) == pytest.approx(100.0 + 0.06 / REDRAW_SHARE - 101.0)  # 3 s: 2 % of a core
    assert s.numbers_changed(7) and not s.numbers_changed(7)
    assert not s.unannounced(7)  # a chart redraw is on its way
    assert s.fired(CHARTS, 103.01) == 0.0
    assert s.unannounced(7) and not s.unannounced(s.charts_version)


def test_a_dashboard_that_lost_its_reading_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "out.log"
    log.write_text("step 1 loss 2.0\n", encoding="utf-8")

    def run_and_die(self: TrainwatchApp) -> None:  # the run ends after the ingest worker died
        self.ingest_error = "RuntimeError: reader bug"

    monkeypatch.setattr(TrainwatchApp, "run", run_and_die)
    with pytest.raises(SystemExit) as ended:
        run_dashboard([str(log)])
    assert ended.value.code == 1

    monkeypatch.setattr(TrainwatchApp, "run", lambda self: None)  # a clean quit: no exit code
    run_dashboard([str(log)])
