"""The header's status badge is coloured by a CSS class on theme variables: a theme switch
recolours it."""

from __future__ import annotations

import shutil
from pathlib import Path

from _ui_helpers import header_text, wait_for
from rich.text import Text
from textual.app import App
from textual.color import Color

from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.header import RunHeader, StatusBadge

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "deepspeed__coca_4rank_zero1_sighup.log"


async def test_a_crashed_run_has_a_crashed_badge_in_the_themes_error_colour(tmp_path: Path) -> None:
    log = tmp_path / "nohup.out"
    shutil.copy(SAMPLE, log)
    app = TrainwatchApp([str(log)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "CRASHED" in header_text(app))
        badge = app.query_one(StatusBadge)
        assert badge.has_class("-crashed") and not badge.has_class("-running")
        assert str(badge.render()).strip() == "CRASHED"
        colours = []
        for theme in ("textual-dark", "gruvbox"):
            app.theme = theme
            await pilot.pause()
            error = app.current_theme.error
            assert error is not None
            want, got = Color.parse(error), badge.styles.background
            assert max(abs(a - b) for a, b in zip(want.rgb, got.rgb, strict=True)) <= 2  # to rounding
            colours.append(badge.styles.background.hex)
        assert colours[0] != colours[1]


async def test_news_before_the_headers_own_widgets_are_mounted_is_shown_once_they_are() -> None:
    """A fast first read posts its news while the dashboard is still mounting: the header,
    attached but its badge not yet, shows it a moment later instead of failing the app."""

    class Host(App[None]):
        def on_mount(self) -> None:
            header = RunHeader()
            self.mount(header)  # (not awaited: its compose has not run yet)
            header.show(Text("train.log"), Text(" RUNNING   step 7 of 10"), Text(""))
            header.show(Text("train.log"), Text(" STALLED   step 9 of 10"), Text(""))

    app = Host()
    async with app.run_test(size=(80, 10)) as pilot:

        def badge() -> str:
            found = app.query(StatusBadge)  # (a new query each time: none until mounted)
            return str(found.first().render()) if found else ""

        assert await wait_for(pilot, lambda: "STALLED" in badge())
        assert "step 9 of 10" in header_text(app)  # type: ignore[arg-type]  # (any app holding a RunHeader)
