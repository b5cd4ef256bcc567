"""The verdict under the header is the whole tail window's, not its first part's.

The first verdict comes with the first numbers drawn; on a big log those may be of the window's
first reads only ("log ends at step 133123" under a header at step 140,005 while the history was
read, seen on a 64 MB Megatron-LM log). Before the history is read, the whole window is judged.
"""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from _ui_helpers import header_text, wait_for
from textual.css.query import NoMatches

from trainwatch.feeds import SourceFeed
from trainwatch.pipeline import Pipeline
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.judging import Judging

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import make_format_logs  # tests/bench/make_format_logs.py: recent Megatron-LM's stamped lines


def _header(app: TrainwatchApp) -> str:
    """The header's text, or "" while it is being rebuilt (the history adopted meanwhile)."""
    try:
        return header_text(app)
    except NoMatches:
        return ""


async def test_the_whole_window_is_judged_before_the_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "train.log"
    make_format_logs.build(log, "megatron_lm_stamped", 2)
    last = int(re.findall(r"\] iteration +(\d+)/", log.read_text(encoding="utf-8"))[-1])
    monkeypatch.setattr("trainwatch.pipeline.WINDOW_BYTES", 1 << 20)
    # The window is read 16 KB a round, and its second round waits for the first verdict: that
    # verdict is of the window's first part, as it may be on a big log.
    judged = threading.Event()
    plan = Judging.plan

    def planned(self: Judging, *args: Any, **kwargs: Any) -> str | None:
        judged.set()
        return plan(self, *args, **kwargs)

    pump = SourceFeed.pump
    rounds = [0]

    def small_pump(self: SourceFeed, limit: int = 0, *, live: bool = True) -> bool:
        rounds[0] += 1
        if rounds[0] == 2:
            judged.wait(10)
        return pump(self, 16 * 1024, live=live)

    seen: list[tuple[int, int | None]] = []
    release = Pipeline.release_history

    def released(self: Pipeline) -> None:
        seen.append((app.dashboard.judging.version, self._windows_version))
        release(self)

    monkeypatch.setattr(Judging, "plan", planned)
    monkeypatch.setattr(SourceFeed, "pump", small_pump)
    monkeypatch.setattr(Pipeline, "release_history", released)
    app = TrainwatchApp([str(log)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: bool(seen), tries=200), _header(app)
        judged_at, windows_at = seen[0]
        assert windows_at is not None and judged_at >= windows_at  # the whole window judged first
        assert await wait_for(pilot, lambda: f"log ends at step {last}" in _header(app)), _header(app)
        assert await wait_for(pilot, lambda: f"step {last:,} of" in _header(app)), _header(app)
