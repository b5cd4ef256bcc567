"""The header's "last write" is when the file was written (its mtime), not when trainwatch read it: a log
from 2020 opened now must not read "last write: 9s ago" next to "nothing written for 5.9 years"."""

from __future__ import annotations

from trainwatch.store.store import SourceState
from trainwatch.ui.widgets.header import source_line


def test_last_write_is_the_files_mtime_not_the_read_time() -> None:
    now = 1_000_000.0
    state = SourceState("logs/out.log")
    state.mtime = now - 3 * 3600  # written three hours ago
    state.last_data_wall = now - 9  # read by us nine seconds ago
    text = source_line([state], now, [0]).plain
    assert "last write: 3.0h ago" in text, text


def test_stdin_has_no_mtime_so_arrival_time_counts() -> None:
    now = 1_000_000.0
    state = SourceState("-")
    state.last_data_wall = now - 9
    text = source_line([state], now, [0]).plain
    assert "last write: 9s ago" in text, text
