"""The Events tab (key 3) and the overview's recent events: where each event is (file:line, the line
number kept on a long path), its message without the logger's prefix, and "no events" said.

Logs: seed 002 (torchrun + DeepSpeed CoCa, SIGHUP) read by the real Pipeline; transcribed seed-004
records (_ui_records.py) without events.
"""

from __future__ import annotations

from _ui_helpers import frozen, read, row_texts
from _ui_records import build_store
from conftest import seed
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Static

from trainwatch.diagnosis.findings import Finding
from trainwatch.ui.widgets.events import EventsTable, display_message, where_text
from trainwatch.ui.widgets.findings import FindingsList


async def test_events_show_the_line_number_and_the_message_without_logger_prefix() -> None:
    app = frozen(read(seed("002")))
    async with app.run_test(size=(160, 45)) as pilot:
        app.dashboard.fast_tick()
        await pilot.press("3")
        await pilot.pause()
        table = app.query_one(EventsTable)
        keys = [str(k.value) for k in table.columns]
        where = keys.index("where")
        visible = sum(c.get_render_width(table) for c in list(table.columns.values())[: where + 1])
        assert visible <= table.size.width  # the `where` column is on screen
        rows = row_texts(table)
        for ev, row in zip(table.events, rows, strict=True):
            assert row[where].endswith(f":{ev.line}")
        # seed 002 line 7046: `WARNING:torch.distributed.elastic.multiprocessing.api:Sending process
        # 3664692 closing signal SIGHUP`
        messages = [r[keys.index("message")] for r in rows]
        assert "Sending process 3664692 closing signal SIGHUP" in messages
        assert not any(m.startswith("WARNING:torch") for m in messages)
        assert any(e.message.startswith("WARNING:torch.distributed") for e in table.events)  # record intact
        assert not app.query_one("#events-empty").display


def test_where_keeps_the_line_number_of_a_long_path() -> None:
    assert where_text("/work/shared/seeds/002_34462940a265b8f9.txt", 7046) == "002_34462940a265b8f9.txt:7046"
    long = where_text("/runs/" + "x" * 80 + ".log", 123456)
    assert long.endswith(".log:123456") and len(long) == 32 and "…" in long
    assert display_message("ERROR:root:ok") == "ok"
    assert display_message("RuntimeError: CUDA out of memory.") == "RuntimeError: CUDA out of memory."


async def test_no_events_says_so() -> None:
    app = frozen(build_store(events=False))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        recent = app.query_one("#recent-events", Static)
        assert "key 3" in str(recent.border_title) and "no events so far" in str(recent.render())
        await pilot.press("3")
        await pilot.pause()
        assert app.query_one("#events-empty").display
        assert "no events yet" in str(app.query_one("#events-empty", Static).render())


async def test_findings_keep_their_height_without_laying_out_the_screen_for_each_new_age() -> None:
    """An idle run's findings change every few seconds ("no new step for 25s", then 30s): the
    list is redrawn in place unless its height changes, and one written while its tab is hidden
    has its full height once the tab is shown."""
    app = frozen(build_store(events=False))

    def finding(message: str, remedy: str = "") -> Finding:
        return Finding(kind="stall", severity="warning", ranks=(), steps=(), message=message, remedy=remedy)

    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        found = app.query_one(FindingsList)
        found.show([finding("no new step for 25s"), finding("loss spike at 900", "lower the lr")])  # tab hidden
        await pilot.press("3")
        await pilot.pause()
        assert found.content_size.height == 3 and "lower the lr" in str(found.render())
        layouts: list[bool] = []
        refresh = found.refresh

        def counting(*regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Widget:
            layouts.append(layout)
            return refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

        found.refresh = counting  # type: ignore[method-assign]
        found.show([finding("no new step for 30s"), finding("loss spike at 900", "lower the lr")])
        await pilot.pause()
        assert "30s" in str(found.render()) and found.content_size.height == 3
        assert layouts and not any(layouts)  # redrawn, not laid out
        found.show([finding("no new step for 35s")])
        await pilot.pause()
        assert found.content_size.height == 1 and any(layouts)
