"""`/` with its options (`R` regex, `C` case-sensitive): the whole-file search counts what `grep -E`
(`-i` unless case) counts, `n` walks the matches, and every occurrence on the screen is marked."""

from __future__ import annotations

import re
import subprocess

from _ui_helpers import wait_for
from conftest import seed
from rich.text import Text
from test_log_viewer import app_on, open_log, status, type_into, visible

from trainwatch.ui.widgets.logview import MATCH_STYLE, LogView


def grep_count(args: list[str], path: str) -> int:
    out = subprocess.run(["grep", "-c", *args, path], capture_output=True, text=True, check=False).stdout
    return int(out.strip() or 0)


async def test_a_regex_search_counts_as_grep_and_marks_every_match() -> None:
    app = app_on("004")
    path = str(seed("004"))
    pattern = r"iteration +[0-9]*00/"
    want = grep_count(["-i", "-E", pattern], path)
    assert want > 100
    async with app.run_test(size=(160, 45)) as pilot:
        pane = await open_log(app, pilot)
        await pilot.press("R")
        await pilot.press("slash")
        assert "regex on" in str(pane.query_one("#log-input").placeholder)
        await type_into(pilot, pane, "escape", "")  # the box closes; the option stays on
        await type_into(pilot, pane, "slash", pattern)
        assert await wait_for(pilot, lambda: f"/{want:,} in the file" in status(app), tries=200)
        assert "[regex]" in status(app)
        assert await wait_for(pilot, lambda: any(re.search(pattern, line, re.I) for line in visible(app)))
        at = int(re.search(rf"(\d+)/{want:,} in the file", status(app)).group(1))  # type: ignore[union-attr]
        await pilot.press("n")
        assert await wait_for(pilot, lambda: f" {at % want + 1}/{want:,} in the file" in status(app))
        # Every occurrence on the screen is marked, not only the current line's.
        matcher = app.query_one(LogView).matcher
        marked = 0
        for line in visible(app):
            text = Text(line)
            matcher.highlight(text)
            spans = [(s.start, s.end) for s in text.spans if s.style == MATCH_STYLE]
            body = line.index(" │ ") + 3
            assert spans == [(m.start() + body, m.end() + body) for m in re.finditer(pattern, line[body:], re.I)]
            marked += len(spans)
        assert pane.hits is not None
        current = pane.hits[pane.hit_at]
        assert marked >= 1 and any(int(line.lstrip("▶").split("│")[0]) == current for line in visible(app))


async def test_case_sensitive_search_and_an_invalid_regex() -> None:
    app = app_on("004")
    path = str(seed("004"))
    insensitive = grep_count(["-i", "-F", "ITERATION"], path)
    sensitive = grep_count(["-F", "ITERATION"], path)
    assert insensitive > sensitive
    async with app.run_test(size=(160, 45)) as pilot:
        pane = await open_log(app, pilot)
        await type_into(pilot, pane, "slash", "ITERATION")
        assert await wait_for(pilot, lambda: f"/{insensitive:,} in the file" in status(app), tries=200)
        await pilot.press("C")  # the same search again, case-sensitive
        assert await wait_for(pilot, lambda: f"/{sensitive:,} in the file" in status(app), tries=200)
        assert "[case]" in status(app)
        await pilot.press("R")
        await type_into(pilot, pane, "slash", "iteration (")
        await pilot.pause()
        assert pane.search == "ITERATION"  # not replaced by a pattern that cannot run
        assert any("not a valid regex" in n.message for n in app._notifications)
