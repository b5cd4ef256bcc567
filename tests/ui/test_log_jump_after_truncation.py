"""Enter on an event jumps to its line in the Log tab; after `file truncated` the raw-log ring holds two
copies of the same line numbers, and only the current copy is marked.

Data: transcribed seed-004 records and raw lines 353-354 (_ui_records.py).
"""

from __future__ import annotations

from _ui_helpers import frozen
from _ui_records import RAW_LINES, SOURCE, build_store
from textual.widgets import Log, TabbedContent

from trainwatch.store.store import SourceState, Store
from trainwatch.ui.widgets.rawlog import LogPane


def truncated_store() -> Store:
    """The ring after `file truncated`: seed 004 lines 353-354 of the old file, the marker, then
    the relaunched run's lines with the same numbers."""
    store = build_store(events=False)
    with store.lock:
        state = store.sources.setdefault(SOURCE, SourceState(SOURCE))
        state.recent.clear()
        state.recent.extend(RAW_LINES)
        state.recent.append((0, "── file truncated at 2821 bytes: following from the start ──"))
        state.recent.extend(RAW_LINES)
    return store


async def test_jump_after_truncation_marks_the_current_copy_only() -> None:
    app = frozen(truncated_store())
    async with app.run_test(size=(160, 45)) as pilot:
        app.dashboard.fast_tick()
        await pilot.pause()
        pane = app.query_one(LogPane)
        app.action_tab("log")
        pane.jump(SOURCE, 353)
        await pilot.pause()
        lines = list(pane.query_one(Log).lines)
        marker = next(i for i, line in enumerate(lines) if "file truncated" in line)
        marked = [i for i, line in enumerate(lines) if line.startswith("▶")]
        assert len(marked) == 1, lines
        assert marked[0] > marker and lines[marked[0]].startswith("▶    353 │  iteration       10/")
        assert app.query_one(TabbedContent).active == "log" and not pane.following
