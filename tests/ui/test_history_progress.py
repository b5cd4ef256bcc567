"""While a big log's history is read behind its tail window, the header says how much ("history 35%")
and the findings say they come from the window only; once read, neither is shown."""

from __future__ import annotations

from trainwatch.diagnosis.findings import Finding
from trainwatch.store.store import SourceState
from trainwatch.ui.widgets.findings import findings_text
from trainwatch.ui.widgets.header import source_line


def test_header_shows_history_progress_then_nothing() -> None:
    state = SourceState("logs/big.log")
    state.mtime = 999_990.0
    state.catching_up = True
    state.history_read(0.354)
    text = source_line([state], 1_000_000.0, [0]).plain
    assert "history 35%" in text, text
    assert "reading…" not in text  # the window is read: what is left is history
    state.history_read(None)
    text = source_line([state], 1_000_000.0, [0]).plain
    assert "history" not in text and "reading…" in text, text


def test_findings_say_they_are_the_windows_until_history_is_read() -> None:
    finding = Finding(kind="restart", severity="warning", ranks=(), steps=(), message="run restarted 1 time")
    assert "history 50%: from the last MBs of the log only" in findings_text([finding], 0.5).plain
    assert "history" not in findings_text([finding], None).plain
