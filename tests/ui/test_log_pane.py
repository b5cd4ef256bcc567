"""The Log tab as a user reads it: Esc un-filters, the status says when the view is paused and
which lines it holds, search matches are marked and `n`/`N` walk them.

The ring is set by hand (numbered like the pipeline's) so the line numbers on screen are known."""

from __future__ import annotations

from _ui_helpers import wait_for
from _ui_records import SOURCE, build_store
from textual.pilot import Pilot
from textual.widgets import Input, Static

from trainwatch.store.store import SourceState, Store
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.clock import FrozenClock
from trainwatch.ui.widgets.logview import LogView
from trainwatch.ui.widgets.rawlog import LogPane


def text_of(no: int) -> str:
    """Line `no` of a made-up run: a loss every line, a NaN warning every 100 lines."""
    if no % 100 == 50:
        return f"step {no} WARNING: loss is NaN, skipping batch"
    return f"step {no} | loss {2.0 + (no % 7) / 10:.1f} | lr 1.0E-04"


def store_with_lines(first: int, last: int) -> Store:
    store = build_store(events=False)
    with store.lock:
        state = store.sources.setdefault(SOURCE, SourceState(SOURCE))
        state.recent.clear()
        state.recent.extend((no, text_of(no)) for no in range(first, last + 1))
    return store


def app_for(store: Store) -> TrainwatchApp:
    return TrainwatchApp(
        store=store, clock=FrozenClock(wall_s=1_607_752_720.0, mono_s=0.0), fast_interval=3600.0, slow_interval=3600.0
    )


def status(app: TrainwatchApp) -> str:
    return str(app.query_one("#log-status", Static).render())


def view(app: TrainwatchApp) -> LogView:
    return app.query_one(LogView)


def visible(app: TrainwatchApp) -> list[str]:
    log = view(app)
    top = int(log.scroll_offset.y)
    return list(log.lines[top : top + log.scrollable_content_region.height])


async def open_log(app: TrainwatchApp, pilot: Pilot[None], lines: int) -> LogPane:
    await pilot.press("4")
    pane = app.query_one(LogPane)
    assert await wait_for(pilot, lambda: len(view(app).lines) == lines), len(view(app).lines)
    view(app).focus()
    await pilot.pause()
    return pane


async def type_into(pilot: Pilot[None], pane: LogPane, key: str, value: str) -> None:
    await pilot.press(key)
    pane.query_one(Input).value = value
    await pilot.press("enter")
    await pilot.pause()


async def test_escape_after_a_filter_shows_every_line_again() -> None:
    app = app_for(store_with_lines(1, 300))
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_log(app, pilot, 300)
        await type_into(pilot, pane, "f", "nan")
        assert [line.split("│")[0].strip() for line in view(app).lines] == ["50", "150", "250"]
        assert "filter: nan (3 lines)" in status(app)
        await pilot.press("escape")
        await pilot.pause()
        assert len(view(app).lines) == 300
        assert view(app).lines[-1].startswith("     300 │ step 300 |")
        assert "filter" not in status(app) and "following" in status(app)


async def test_scrolling_up_pauses_and_end_or_g_follows_again() -> None:
    store = store_with_lines(1, 300)
    app = app_for(store)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_log(app, pilot, 300)
        assert "following" in status(app) and "paused" not in status(app)
        assert visible(app)[-1].startswith("     300 │")

        await pilot.press("pageup")
        await pilot.pause()
        top = int(visible(app)[0].split("│")[0])
        assert top < 300 - len(visible(app))
        assert f"paused at line {top} — End to follow" in status(app)
        assert "following" not in status(app)

        # Lines arriving while paused do not move the view, and the status still says paused.
        with store.lock:
            store.sources[SOURCE].recent.extend((no, text_of(no)) for no in range(301, 311))
        pane.update_from_store()
        await pilot.pause()
        assert int(visible(app)[0].split("│")[0]) == top and "paused" in status(app)

        await pilot.press("end")
        await pilot.pause()
        assert "following" in status(app) and "paused" not in status(app)
        assert visible(app)[-1].startswith("     310 │")

        await pilot.press("home")
        await pilot.pause()
        assert visible(app)[0].startswith("       1 │") and "paused at line 1 — End to follow" in status(app)
        await pilot.press("up")  # already at the top: still paused, still line 1
        assert "paused at line 1 " in status(app)

        await pilot.press("G")
        await pilot.pause()
        assert "following" in status(app) and visible(app)[-1].startswith("     310 │")


def styles_of(app: TrainwatchApp, line_no: int, word: str) -> tuple[bool, bool]:
    """(is `word` drawn in reverse video on line `line_no`, is that line drawn as the current one)."""
    log = view(app)
    top = int(log.scroll_offset.y)
    row = next(i for i, line in enumerate(visible(app)) if line.startswith(f"{line_no:>8} │"))
    segments = list(log.render_line(row))
    assert top + row < len(log.lines)
    word_reversed = any(s.text.lower() == word.lower() and s.style is not None and s.style.reverse for s in segments)
    line_lit = all(s.style is not None and s.style.underline for s in segments if s.text.strip())
    return word_reversed, line_lit


async def test_search_marks_every_match_and_n_moves_between_them() -> None:
    app = app_for(store_with_lines(1, 300))
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_log(app, pilot, 300)
        await type_into(pilot, pane, "slash", "NaN")
        assert "search: NaN 1/3" in status(app)
        assert styles_of(app, 50, "NaN") == (True, True)  # the first match, centred and lit
        assert "paused at line" in status(app)  # the view moved to a match: not following

        await pilot.press("n")
        await pilot.pause()
        assert "search: NaN 2/3" in status(app)
        assert styles_of(app, 150, "NaN") == (True, True)
        # Line 50 is no longer the current match when still on screen; its word stays marked.
        if any(line.startswith("      50 │") for line in visible(app)):
            assert styles_of(app, 50, "NaN") == (True, False)
        assert styles_of(app, 151, "NaN") == (False, False)  # a line without a match: plain

        await pilot.press("N", "N")
        await pilot.pause()
        assert "search: NaN 3/3" in status(app)  # wraps from the first to the last
        assert styles_of(app, 250, "NaN") == (True, True)

        await pilot.press("escape")
        await pilot.pause()
        assert "search" not in status(app)
        assert styles_of(app, 300, "step") == (False, False)  # no marks left


async def test_search_does_not_mark_the_line_number_gutter() -> None:
    app = app_for(store_with_lines(1, 300))
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_log(app, pilot, 300)
        await type_into(pilot, pane, "slash", "250")
        assert "search: 250 1/1" in status(app)
        log = view(app)
        row = next(i for i, line in enumerate(visible(app)) if line.startswith("     250 │"))
        marked = [s.text for s in log.render_line(row) if s.style is not None and s.style.reverse]
        assert marked == ["250"]  # the `step 250` in the text, not the number in the gutter


async def test_state_set_from_code_redraws_view_and_status() -> None:
    """The reactives' watchers do the redraw, whoever sets them (a command, a test, the palette)."""
    app = app_for(store_with_lines(1, 300))
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_log(app, pilot, 300)
        pane.filter = "warning"
        await pilot.pause()
        assert len(view(app).lines) == 3 and "filter: warning (3 lines)" in status(app)
        pane.search = "skipping"
        await pilot.pause()
        assert "search: skipping 0/3" in status(app)
        pane.following = False
        await pilot.pause()
        assert "paused" in status(app) and not view(app).auto_scroll
        pane.filter = ""
        pane.following = True
        await pilot.pause()
        assert len(view(app).lines) == 300 and "following" in status(app) and view(app).auto_scroll


async def test_status_says_the_view_holds_only_recent_lines() -> None:
    app = app_for(store_with_lines(7_727, 12_000))
    async with app.run_test(size=(120, 30)) as pilot:
        await open_log(app, pilot, 12_000 - 7_727 + 1)
        assert "showing lines 7,727-12,000 of 12,000 (older lines: not kept)" in status(app)
        await pilot.press("home")
        await pilot.pause()
        assert visible(app)[0].startswith("    7727 │") and "paused at line 7,727" in status(app)


async def test_status_does_not_claim_a_partial_view_for_the_whole_file() -> None:
    app = app_for(store_with_lines(1, 300))
    async with app.run_test(size=(120, 30)) as pilot:
        await open_log(app, pilot, 300)
        assert "showing lines" not in status(app) and "not kept" not in status(app)


async def test_lines_the_ring_dropped_between_redraws_leave_no_silent_gap() -> None:
    """More lines arrived than the view saw: it starts again from the ring and says where it starts."""
    store = store_with_lines(1, 300)
    app = app_for(store)
    async with app.run_test(size=(120, 30)) as pilot:
        pane = await open_log(app, pilot, 300)
        ring = store.sources[SOURCE].recent
        assert ring.maxlen is not None
        last = 300 + ring.maxlen + 100  # lines 301..400 leave the ring before the next redraw
        with store.lock:
            ring.extend((no, text_of(no)) for no in range(301, last + 1))
        pane.update_from_store()
        await pilot.pause()
        numbers = [int(line.split("│")[0]) for line in view(app).lines]
        assert numbers == list(range(numbers[0], last + 1))  # contiguous: no gap
        first = numbers[0]
        assert f"showing lines {first:,}-{last:,} of {last:,} (older lines: not kept)" in status(app)
