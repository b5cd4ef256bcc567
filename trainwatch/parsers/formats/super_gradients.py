"""SuperGradients' (Deci-AI, YOLO-NAS) end-of-epoch summary tree:

    SUMMARY OF EPOCH 1
    ├── Training
    │   ├── Ppyoloeloss/loss = 2.1742
    │   │   ├── Best until now = 2.2521 (↘ -0.0779)
    │   │   └── Epoch N-1      = 2.2521 (↘ -0.0779)
    │   └── Ppyoloeloss/loss_iou = 0.2044
    └── Validation
        ├── Map@0.50 = 0.6063
        └── Ppyoloeloss/loss = 1.512

One record per summary, with its epoch and no step number (the training bar's `Train epoch 1: ...
1.73s/it, PPYoloELoss/loss=2.17` lines are the generic layer's, numbered by the bar, with rounded figures). A section's own
figures are the entries right under it; the `Best until now` / `Epoch N-1` lines under an entry are
history, not figures. The criterion's `<Loss>/loss` is the loss (its `loss_cls`, `loss_iou` terms keep
their names); the `Validation` section's figures are `eval_*`, a `Test` section's `test_*`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import field_name
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_HEAD = re.compile(r"^\s*SUMMARY OF EPOCH (?P<epoch>\d{1,9})\s*$")
# A tree line: its depth is where its branch starts (four characters a level).
_ENTRY = re.compile(
    rf"^(?P<indent>(?:[│ ] {{3}})*)[├└]── (?P<name>[^=()]+?)(?: = (?P<value>{NUMBER}|nan|inf))?(?: \([^()]*\))?\s*$"
)
_SECTIONS = {"training": "", "train": "", "validation": "eval_", "valid": "eval_", "test": "test_"}
_MAX_LINES = 400  # a summary longer than this is not one


class SuperGradientsParser(Parser):
    name = "super_gradients"
    title = "SuperGradients epoch summaries (YOLO-NAS)"
    triggers = ("SUMMARY OF EPOCH", "── ")
    example = "SUMMARY OF EPOCH 1 / ├── Training / │   ├── Ppyoloeloss/loss = 2.1742"
    priority = 100
    samples = (
        Sample(  # Deci-AI/super-gradients issue #1162 (a maintainer's one-batch smoke run)
            "===========================================================\n"
            "SUMMARY OF EPOCH 1\n"
            "├── Training\n"
            "│   ├── Ppyoloeloss/loss = 2.1742\n"
            "│   │   ├── Best until now = 2.2521 (↘ -0.0779)\n"
            "│   │   └── Epoch N-1      = 2.2521 (↘ -0.0779)\n"
            "│   └── Ppyoloeloss/loss_iou = 0.2044\n"
            "│       ├── Best until now = 0.2175 (↘ -0.0131)\n"
            "│       └── Epoch N-1      = 0.2175 (↘ -0.0131)\n"
            "└── Validation\n"
            "    ├── Map@0.50 = 0.6063\n"
            "    │   ├── Best until now = 0.6509 (↘ -0.0445)\n"
            "    │   └── Epoch N-1      = 0.6509 (↘ -0.0445)\n"
            "    └── Ppyoloeloss/loss = 1.512\n"
            "        ├── Best until now = 1.4454 (↗ 0.0666)\n"
            "        └── Epoch N-1      = 1.4454 (↗ 0.0666)\n"
            "\n"
            "===========================================================\n",
            steps=(
                (None, {"epoch": 1, "loss": 2.1742, "loss_iou": 0.2044, "eval_loss": 1.512, "eval_map_0_50": 0.6063}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._epoch: int | None = None
        self._prefix: str | None = None  # the section being read (None: between sections)
        self._metrics: dict[str, float] = {}
        self._lines = 0
        self._line = 0  # the summary's first line

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        head = _HEAD.match(text) if "SUMMARY" in text else None
        if head is not None:
            self._emit(out)
            self._epoch, self._prefix, self._lines, self._line = int(head.group("epoch")), None, 0, line.no
            return True
        if self._epoch is None:
            return False
        self._lines += 1
        m = _ENTRY.match(text)
        if m is None or self._lines > _MAX_LINES:
            self._emit(out)  # the tree ended
            return False
        depth = len(m.group("indent")) // 4
        name, value = m.group("name").strip(), m.group("value")
        if depth == 0:
            self._prefix = _SECTIONS.get(name.lower())
        elif depth == 1 and value is not None and self._prefix is not None:
            number = parse_number(value)
            metric = _metric(name)
            if number is not None and metric:
                self._metrics.setdefault(self._prefix + metric, number)
        return True

    def finish(self, out: Emitter) -> None:
        self._emit(out)

    def _emit(self, out: Emitter) -> None:
        if self._epoch is not None and self._metrics:
            out.step(None, {"epoch": float(self._epoch), **self._metrics}, line=self._line)
        self._epoch, self._prefix, self._metrics = None, None, {}


def _metric(name: str) -> str:
    """`Ppyoloeloss/loss` -> `loss` (the criterion's total), `Ppyoloeloss/loss_cls` -> `loss_cls`, `Map@0.50` -> its name."""
    head, _, tail = name.rpartition("/")
    if head and tail.lower().startswith("loss"):
        return tail.lower()
    return field_name(name, "")
