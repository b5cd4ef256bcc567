"""The Log tab as a log viewer over the whole file (issue 21): `Home` is line 1 even when the ring
holds only the end, search and filter cover every line, `n`/`N` walk matches across the file,
paging down reads the next window. Checked against grep on seeds 004 (33,088 lines) and 002."""

from __future__ import annotations

import subprocess

import pytest
from _ui_helpers import frozen, wait_for
from conftest import seed
from textual.pilot import Pilot
from textual.widgets import Input, Static

from trainwatch.pipeline import Pipeline
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.logview import LogView
from trainwatch.ui.widgets.rawlog import LogPane


def status(app: TrainwatchApp) -> str:
    return str(app.query_one("#log-status", Static).render())


def visible(app: TrainwatchApp) -> list[str]:
    log = app.query_one(LogView)
    top = int(log.scroll_offset.y)
    return list(log.lines[top : top + log.scrollable_content_region.height])


def top_no(app: TrainwatchApp) -> int:
    return int(visible(app)[0].lstrip("▶").split("│")[0])


def grep_lines(pattern: str, path: str) -> list[int]:
    out = subprocess.run(["grep", "-n", "-F", pattern, path], capture_output=True, text=True, check=True).stdout
    return [int(line.split(":", 1)[0]) for line in out.splitlines()]


async def open_log(app: TrainwatchApp, pilot: Pilot[None]) -> LogPane:
    app.dashboard.fast_tick()
    await pilot.press("4")
    pane = app.query_one(LogPane)
    assert await wait_for(pilot, lambda: len(app.query_one(LogView).lines) > 0)
    app.query_one(LogView).focus()
    await pilot.pause()
    return pane


async def type_into(pilot: Pilot[None], pane: LogPane, key: str, value: str) -> None:
    await pilot.press(key)
    pane.query_one(Input).value = value
    await pilot.press("enter")
    await pilot.pause()


def app_on(name: str) -> TrainwatchApp:
    pipeline = Pipeline([str(seed(name))])
    pipeline.read_to_end()
    return frozen(pipeline.store)


async def test_home_shows_line_1_of_the_file_and_paging_reads_on() -> None:
    app = app_on("004")
    first_line = seed("004").read_text().splitlines()[0]
    async with app.run_test(size=(160, 45)) as pilot:
        await open_log(app, pilot)
        assert visible(app)[-1].lstrip().startswith("33088 │")  # following: the last line
        await pilot.press("home")
        assert await wait_for(pilot, lambda: top_no(app) == 1)
        assert visible(app)[0] == f"       1 │ {first_line}"
        assert "paused at line 1 " in status(app) and "read from the file" in status(app)
        # Page down past the first window: the next lines are read, the numbering goes on.
        for _ in range(60):
            await pilot.press("pagedown")
        await pilot.pause()
        numbers = [int(line.lstrip("▶").split("│")[0]) for line in app.query_one(LogView).lines]
        assert numbers == list(range(numbers[0], numbers[-1] + 1)) and numbers[-1] > 2_000
        await pilot.press("G")
        assert await wait_for(pilot, lambda: visible(app)[-1].lstrip().startswith("33088 │"))
        assert "following" in status(app)


async def test_a_page_key_moves_the_view_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """PageDown/PageUp and the arrows move the view at once, as in `less`: no scroll animation
    (a dozen redraws of the whole view per key, and held PageDown lagging behind the key)."""
    app = app_on("004")
    async with app.run_test(size=(160, 45)) as pilot:
        await open_log(app, pilot)
        await pilot.press("home")
        assert await wait_for(pilot, lambda: top_no(app) == 1)
        log = app.query_one(LogView)
        animated: list[str] = []
        real = app.animator.animate

        def spy(obj: object, attribute: str, *args: object, **kwargs: object) -> None:
            if obj is log:
                animated.append(attribute)
            real(obj, attribute, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(app.animator, "animate", spy)
        page = log.scrollable_content_region.height
        await pilot.press("pagedown")
        assert top_no(app) == 1 + page
        await pilot.press("down", "down")
        assert top_no(app) == 3 + page
        await pilot.press("up", "pageup")
        assert top_no(app) == 2
        assert animated == []


async def test_search_finds_every_match_in_the_file_and_n_walks_them() -> None:
    path = str(seed("004"))
    needle = "validation loss at iteration"
    expected = grep_lines(needle, path)
    assert len(expected) == 22
    app = app_on("004")
    async with app.run_test(size=(160, 45)) as pilot:
        pane = await open_log(app, pilot)
        await pilot.press("home")
        assert await wait_for(pilot, lambda: top_no(app) == 1)
        await type_into(pilot, pane, "slash", needle)
        assert await wait_for(pilot, lambda: f"{needle} 1/22 in the file" in status(app)), status(app)
        assert pane.hits is not None and list(pane.hits) == expected
        seen = []
        for _ in range(22):
            at = pane.hits[pane.hit_at]
            assert await wait_for(
                pilot, lambda at=at: any(line.lstrip("▶ ").startswith(f"{at} │") for line in visible(app))
            )
            log = app.query_one(LogView)  # the match's line is the one lit as current
            assert log.current is not None and log.lines[log.current].lstrip("▶ ").startswith(f"{at} │")
            seen.append(at)
            await pilot.press("n")
            await pilot.pause()
        assert seen == expected  # every match, in order, across the whole file
        assert f"{needle} 1/22" in status(app)  # n wrapped from the last to the first
        await pilot.press("N")
        await pilot.pause()
        assert f"{needle} 22/22" in status(app)
        assert "not kept" not in status(app)  # a file: older lines are read, not lost


async def test_filter_covers_the_whole_file_from_its_first_match() -> None:
    path = str(seed("002"))
    expected = grep_lines("Global Steps", path)
    assert expected[0] == 2_025
    app = app_on("002")
    async with app.run_test(size=(160, 45)) as pilot:
        pane = await open_log(app, pilot)
        await type_into(pilot, pane, "f", "Global Steps")
        assert await wait_for(pilot, lambda: f"({len(expected):,} lines of the file)" in status(app)), status(app)
        assert await wait_for(pilot, lambda: top_no(app) == 2_025)
        numbers = [int(line.lstrip("▶").split("│")[0]) for line in app.query_one(LogView).lines]
        assert numbers == expected
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: "filter" not in status(app) and "following" in status(app))


async def test_e_and_E_walk_the_event_lines_of_the_file() -> None:
    """Seed 002's events (a crash at its end, warnings before) start at line 3,553."""
    app = app_on("002")
    with app.store.lock:
        lines = sorted({e.line for e in app.store.events if e.line > 1})
    assert len(lines) >= 2 and lines[0] == 3_553
    async with app.run_test(size=(160, 45)) as pilot:
        await open_log(app, pilot)
        await pilot.press("home")
        assert await wait_for(pilot, lambda: top_no(app) == 1)

        def marked() -> list[str]:
            return [line for line in app.query_one(LogView).lines if line.startswith("▶")]

        for want in (lines[0], lines[1]):
            await pilot.press("e")
            assert await wait_for(pilot, lambda want=want: marked() == [f"▶{want:>7} │" + marked()[0].split("│", 1)[1]])
            assert any(line.startswith(f"▶{want:>7} │") for line in visible(app))
        await pilot.press("E")
        assert await wait_for(pilot, lambda: bool(marked()) and marked()[0].startswith(f"▶{lines[0]:>7} │"))


async def test_escape_cancels_a_running_search() -> None:
    app = app_on("004")
    async with app.run_test(size=(160, 45)) as pilot:
        pane = await open_log(app, pilot)
        pane.scanning = "searching"  # as while the worker runs: Esc ends it and says nothing more of it
        pane.set_reactive(LogPane.search, "iteration")
        pane._status()
        assert "searching 0% (Esc cancels)" in status(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not pane.scanning and "search" not in status(app) and "following" in status(app)


async def test_scrolling_above_the_recent_lines_reads_the_older_ones_from_the_file() -> None:
    app = app_on("004")
    async with app.run_test(size=(160, 45)) as pilot:
        await open_log(app, pilot)
        log = app.query_one(LogView)
        ring_first = int(log.lines[0].split("│")[0])
        assert ring_first > 1  # the ring holds the end of the file only
        log.scroll_to(y=0, animate=False)  # the top of what the view holds, as the wheel or PgUp gets there
        assert await wait_for(pilot, lambda: int(log.lines[0].split("│")[0]) < ring_first)
        assert await wait_for(pilot, lambda: top_no(app) == ring_first)  # the same line stays at the top
        numbers = [int(line.lstrip("▶").split("│")[0]) for line in log.lines]
        assert numbers == list(range(numbers[0], numbers[-1] + 1))
        assert "read from the file" in status(app) and "paused" in status(app)
