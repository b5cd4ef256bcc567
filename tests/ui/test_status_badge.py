"""The header's status badge is coloured by a CSS class on theme variables: a theme switch
recolours it."""

from __future__ import annotations

import shutil
from pathlib import Path

from _ui_helpers import header_text, wait_for
from textual.color import Color

from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.header import StatusBadge

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
