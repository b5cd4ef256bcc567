"""The chart's own SGR decoder gives the `Text` Rich's `Text.from_ansi` gives (trainwatch/ui/sgr.py):
on the plots the dashboard draws, and on random SGR text."""

from __future__ import annotations

import math
import random
from array import array

import pytest
from rich.text import Text

from trainwatch.ui import sgr
from trainwatch.ui.data import Trace
from trainwatch.ui.widgets import chart
from trainwatch.ui.widgets.chart import ChartOptions, render_chart


def _rich(ansi: str) -> Text:
    return Text.from_ansi(ansi, no_wrap=True, end="")


def _same(ansi: str) -> None:
    ours, theirs = sgr.sgr_text(ansi), _rich(ansi)
    assert ours.plain == theirs.plain
    assert ours.spans == theirs.spans
    assert (ours.no_wrap, ours.end, ours.style) == (theirs.no_wrap, theirs.end, theirs.style)


def _traces(n: int, rng: random.Random) -> list[Trace]:
    out = []
    for k in range(n):
        xs = array("d", [float(s) for s in range(1, 400)])
        ys = array("d", [2.0 + math.sin(s / (7 + k)) + rng.random() * 0.3 for s in range(1, 400)])
        if k == 0:
            ys[3] = 90.0  # an off-scale point: drawn as a marker at the edge
        out.append(Trace(f"rank {k}", xs, ys))
    return out


@pytest.mark.parametrize("options", [ChartOptions(), ChartOptions(log_y=True), ChartOptions(smoothing=0.9)])
@pytest.mark.parametrize("ranks", [1, 3, 12])
def test_the_dashboards_plots_decode_as_rich_decodes_them(
    options: ChartOptions, ranks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[str] = []

    def spy(ansi: str) -> Text:
        drawn.append(ansi)
        return sgr.sgr_text(ansi)

    monkeypatch.setattr(chart, "sgr_text", spy)
    render_chart(_traces(ranks, random.Random(ranks)), 120, 30, name="loss", options=options, marks=[50.0])
    render_chart(_traces(1, random.Random(0))[:1], 40, 8, name="step_time_s", options=options, x_label="step")
    assert len(drawn) == 2 and all("\x1b[" in a for a in drawn)
    for ansi in drawn:
        _same(ansi)


_CODES = ["0", "1", "2", "3", "4", "7", "9", "22", "23", "24", "39", "49", "31", "42", "91", "107", "38;5;33"]
_CODES += ["48;5;200", "38;2;10;20;30", "48;2;255;0;128", "1;38;5;9", "", "0;1;4"]


@pytest.mark.parametrize("trial", range(30))
def test_random_sgr_text_decodes_as_rich_decodes_it(trial: int) -> None:
    rng = random.Random(trial)
    pieces = []
    for _ in range(rng.randrange(1, 60)):
        roll = rng.random()
        if roll < 0.4:
            pieces.append(f"\x1b[{rng.choice(_CODES)}m")
        elif roll < 0.5:
            pieces.append("\n")
        else:
            pieces.append(rng.choice(["ab", "⠁⠂", " ", "│", "x y", "1.5", "▲"]))
    _same("".join(pieces))


@pytest.mark.parametrize("ansi", ["a\rb\x1b[31mc", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x1b[2Ka\x1b[31mb"])
def test_text_with_other_codes_is_left_to_rich(ansi: str) -> None:
    _same(ansi)
