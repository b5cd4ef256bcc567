"""Ludwig's end-of-epoch tables (ludwig-ai/ludwig), one per output feature, a row per data split:

    Epoch   4
    ╒══════════╤════════╤════════════╤═════════════╕
    │ rating   │   loss │   accuracy │   hits_at_k │
    ╞══════════╪════════╪════════════╪═════════════╡
    │ train    │ 1.1529 │     0.3988 │      0.9133 │
    ├──────────┼────────┼────────────┼─────────────┤
    │ vali     │ 1.2190 │     0.2708 │      0.8958 │
    ├──────────┼────────┼────────────┼─────────────┤
    │ test     │ 1.1510 │     0.3585 │      0.9340 │
    ╘══════════╧════════╧════════════╧═════════════╛

The epoch is the step (the `Epoch   N` line before the table). The `train` row's figures are the
step's (`loss`), the `vali` / `validation` row's the evaluation's (`eval_loss`), the `test` row's
`test_*`. The rows of one epoch are one record (the runner joins a step's adjacent figures).
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_EPOCH = re.compile(r"^\s*Epoch\s+(?P<epoch>\d{1,9})\s*$")
_RULE = re.compile(r"^\s*[╒╞├╘][═─╤╪┼╧]{3,}[╕╡┤╛]\s*$")
_SPLITS = {"train": "", "training": "", "vali": "eval_", "validation": "eval_", "val": "eval_", "test": "test_"}
_MAX_COLUMNS = 32


def _cells(text: str) -> list[str] | None:
    body = text.strip()
    if not (body.startswith("│") and body.endswith("│")) or len(body) < 3:
        return None
    return [c.strip() for c in body[1:-1].split("│")]


class LudwigParser(Parser):
    name = "ludwig"
    title = "Ludwig"
    triggers = ("│", "Epoch ")
    example = "│ train    │ 1.1529 │     0.3988 │      0.9133 │"
    priority = 100
    samples = (
        Sample(  # ludwig-ai/ludwig issue #138
            "Epoch   4\n"
            "╒══════════╤════════╤════════════╤═════════════╕\n"
            "│ rating   │   loss │   accuracy │   hits_at_k │\n"
            "╞══════════╪════════╪════════════╪═════════════╡\n"
            "│ train    │ 1.1529 │     0.3988 │      0.9133 │\n"
            "├──────────┼────────┼────────────┼─────────────┤\n"
            "│ vali     │ 1.2190 │     0.2708 │      0.8958 │\n"
            "├──────────┼────────┼────────────┼─────────────┤\n"
            "│ test     │ 1.1510 │     0.3585 │      0.9340 │\n"
            "╘══════════╧════════╧════════════╧═════════════╛\n",
            steps=(
                (
                    4,
                    {
                        "epoch": 4,
                        "loss": 1.1529,
                        "accuracy": 0.3988,
                        "eval_loss": 1.219,
                        "eval_hits_at_k": 0.8958,
                        "test_loss": 1.151,
                    },
                ),
            ),
        ),
    )

    def __init__(self) -> None:
        self._epoch: int | None = None
        self._header: list[str] | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if "│" not in text:
            m = _EPOCH.match(text)
            if m is not None:
                self._epoch, self._header = int(m.group("epoch")), None
                return False  # (the generic layer reads it too: the epoch of the lines after it)
            if self._header is not None and _RULE.match(text):
                return True
            return False
        if self._epoch is None:
            return False
        cells = _cells(text)
        if cells is None or not 2 <= len(cells) <= _MAX_COLUMNS:
            self._header = None
            return False
        split = _SPLITS.get(cells[0].lower())
        if split is None:
            # a header: a feature's name, then the metrics' names (no number among them)
            if all(c and parse_number(c) is None for c in cells):
                self._header = [snake(c) for c in cells[1:]]
                return True
            self._header = None
            return False
        if self._header is None or len(cells) - 1 != len(self._header):
            return False
        metrics: dict[str, float] = {"epoch": float(self._epoch)}
        for name, cell in zip(self._header, cells[1:], strict=True):
            value = parse_number(cell)
            if value is not None and name:
                metrics.setdefault(split + name, value)
        if len(metrics) < 2:
            return False
        out.step(self._epoch, metrics)
        return True
