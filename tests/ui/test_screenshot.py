"""The palette's "Screenshot" saves where it says (the current directory, or the app's
`screenshot_dir`), and a failure says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from _ui_records import build_store
from textual.message import Message
from textual.notifications import Notify

from trainwatch.ui.app import TrainwatchApp


def app_telling(told: list[tuple[str, str]], directory: Path | None) -> tuple[TrainwatchApp, object]:
    def hook(message: Message) -> None:
        if isinstance(message, Notify):
            told.append((message.notification.severity, message.notification.message))

    app = TrainwatchApp(store=build_store(), fast_interval=3600.0, slow_interval=3600.0)
    app.screenshot_dir = directory
    return app, hook


async def test_a_screenshot_goes_to_the_current_directory_and_the_toast_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    told: list[tuple[str, str]] = []
    app, hook = app_telling(told, None)
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:  # type: ignore[arg-type]
        await app.run_action("screenshot")
        await pilot.pause()
    saved = list(tmp_path.glob("*.svg"))
    assert len(saved) == 1 and "<svg" in saved[0].read_text(encoding="utf-8")
    assert ("information", f"saved to {saved[0]}") in told


async def test_a_screenshot_that_cannot_be_written_says_where_and_why(tmp_path: Path) -> None:
    told: list[tuple[str, str]] = []
    missing = tmp_path / "no-such-dir"
    app, hook = app_telling(told, missing)
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:  # type: ignore[arg-type]
        await app.run_action("screenshot")
        await pilot.pause()
    errors = [m for severity, m in told if severity == "error"]
    assert len(errors) == 1 and str(missing) in errors[0] and "No such file or directory" in errors[0]
    assert not missing.exists()


def test_open_with_a_missing_screenshot_dir_says_so_at_start(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from trainwatch.cli import main

    log = tmp_path / "train.log"
    log.write_text("step 1 loss 2.0\n")
    result = CliRunner().invoke(main, ["open", "--screenshot-dir", str(tmp_path / "shots"), str(log)])
    assert result.exit_code == 2
    assert f"Invalid value for '--screenshot-dir': Directory '{tmp_path / 'shots'}' does not exist." in result.output


def test_open_screenshot_dir_is_where_the_dashboard_saves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwatch.ui import app as app_module

    log = tmp_path / "train.log"
    log.write_text("step 1 loss 2.0\n")
    shots = tmp_path / "shots"
    shots.mkdir()
    ran: list[Path | None] = []
    monkeypatch.setattr(TrainwatchApp, "run", lambda self, *a, **k: ran.append(self.screenshot_dir))
    monkeypatch.chdir(tmp_path)
    app_module.run_dashboard([str(log)], screenshot_dir=Path("shots"))
    assert ran == [shots.resolve()]  # absolute: the toast names the full path
