"""Issue 22, one clock: the header and the Ranks tab print the same age, the time since the file
was written. Seed 004 (a 2020 GPT-2 log) copied with its mtime three hours ago used to read
"updated 13s ago" in the Ranks tab and "last step 2173d ago" in the header."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from _ui_helpers import header_text, wait_for
from conftest import seed

from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.ranks import RanksTable

pytestmark = pytest.mark.slow  # seed 004 read whole by the live dashboard: over 2 s

THREE_HOURS = 3 * 3600.0


async def test_header_and_ranks_tab_agree_on_the_age(tmp_path: Path) -> None:
    copy = tmp_path / "gpt2.log"
    shutil.copyfile(seed("004"), copy)
    then = time.time() - THREE_HOURS
    os.utime(copy, (then, then))
    app = TrainwatchApp([str(copy)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "log ends at step 23000" in header_text(app))
        await pilot.press("2")
        table = app.query_one(RanksTable)
        assert await wait_for(pilot, lambda: table.row_count > 0)
        columns = [str(c.key.value) for c in table.ordered_columns]
        ages = {str(table.get_row_at(i)[columns.index("updated")]) for i in range(table.row_count)}
        header = header_text(app)
    assert ages == {"3.0h ago"}, ages
    assert "last write 3.0h ago" in header, header  # (printed once: the progress line's age)
    assert "last write" not in header.splitlines()[1], header  # the sources line does not repeat it
    # nor the verdict's cause after it, nor the stall finding under it: their age was the
    # judgement's, seconds behind the progress line's on a file still being written
    assert header.count("last write") == 1, header
    assert "d ago" not in header and "years" not in header, header
