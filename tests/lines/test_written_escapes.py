"""Escape sequences written out as text (a paste from `cat -v`, an editor, a repr) are not read as values."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers._pipeline import read_steps
from trainwatch.lines.written import strip_written_escapes


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("ESC[4AESC[J0           200", "0           200"),  # an editor's name for the byte, two in a row
        ("^[[32mINFO^[[0m loss 1.5", "INFO loss 1.5"),  # cat -v / less / vim
        ("\\x1b[1;31mloss 2.0\\x1b[0m", "loss 2.0"),  # a Python repr
        ("\\033[K step 3", " step 3"),
        ('{"log": "\\u001b[32mstep 4 loss 1.0\\u001b[0m"}', '{"log": "step 4 loss 1.0"}'),  # a JSON string
    ],
)
def test_written_sequences_are_removed(written: str, shown: str) -> None:
    assert strip_written_escapes(written) == shown


@pytest.mark.parametrize("text", ["DESC[2J is a name", "plain [x] text", "ESC key pressed", "a^[b", "x[0m"])
def test_text_that_only_looks_like_one_is_kept(text: str) -> None:
    assert strip_written_escapes(text) == text


def test_a_table_pasted_with_written_escapes_reads_every_row(tmp_path: Path) -> None:
    """ESPnet 1's Chainer PrintReport, pasted with its cursor moves written `ESC[4A` (espnet PR #1138)."""
    log = tmp_path / "train.log"
    log.write_text(
        "epoch       iteration   main/loss   main/loss_ctc  elapsed_time\n"
        "ESC[J0           100         622.995     1544.82        114.502\n"
        "ESC[J     total [..................................................]  0.00%\n"
        "       100 iter, 0 epoch / 100 epochs\n"
        "ESC[4AESC[J0           200         677.669     1669.19        152.819\n"
    )
    steps = read_steps(log)
    assert [(s.step, s.metrics.get("loss")) for s in steps] == [(100, 622.995), (200, 677.669)]
