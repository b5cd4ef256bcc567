"""YOLACT's training lines (dbolya/yolact, YOLACT++, yolact_edge):

    [  0]      10 || B: 5.982 | C: 20.326 | M: 6.039 | S: 46.819 | T: 79.166 || ETA: 4 days, 8:06:50 || timer: 1.368

The bracketed number is the epoch, the next the iteration (global). Each loss is a letter: `B` box,
`C` class, `M` mask, `S` semantic segmentation, `I` mask IoU, `P` prototype, `D` coefficient diversity,
`E` class existence; `T` is their total (the loss). `timer` is the iteration's seconds.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, parse_eta_s, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_NUM = NUMBER
_LINE = re.compile(
    r"^\s*\[\s*(?P<epoch>\d{1,9})\]\s+(?P<step>\d{1,12}) \|\| (?P<losses>.*?) \|\|"
    rf"(?: ETA: (?P<eta>[^|]*?) \|\|)? timer: (?P<timer>{_NUM})\s*$"
)
_LOSS = re.compile(rf"(?P<letter>[A-Z]{{1,3}}): (?P<value>{_NUM})")
_NAMES = {
    "T": "loss",
    "B": "box_loss",
    "C": "class_loss",
    "M": "mask_loss",
    "S": "semantic_loss",
    "I": "mask_iou_loss",
    "P": "proto_loss",
    "D": "coef_diversity_loss",
    "E": "class_existence_loss",
}


class YolactParser(Parser):
    name = "yolact"
    title = "YOLACT"
    triggers = (" || ",)
    example = "[  0]      10 || B: 5.982 | C: 20.326 | M: 6.039 | S: 46.819 | T: 79.166 || ETA: 4 days, 8:06:50 || timer: 1.368"
    priority = 100
    samples = (
        Sample(  # dbolya/yolact issue #318
            "[  0]       0 || B: 6.326 | C: 27.412 | M: 6.040 | S: 65.752 | T: 105.530 || ETA: 27 days, 0:51:02 || timer: 17.519\n"
            "[  0]      10 || B: 5.982 | C: 20.326 | M: 6.039 | S: 46.819 | T: 79.166 || ETA: 4 days, 8:06:50 || timer: 1.368\n",
            steps=(
                (0, {"epoch": 0, "loss": 105.53, "box_loss": 6.326, "step_time_s": 17.519}),
                (10, {"loss": 79.166, "mask_loss": 6.039, "eta_s": 374810}),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.match(text)
        if m is None:
            return False
        metrics: dict[str, float] = {"epoch": float(int(m.group("epoch")))}
        for loss in _LOSS.finditer(m.group("losses")):
            value = parse_number(loss.group("value"))
            if value is not None:
                metrics[_NAMES.get(loss.group("letter"), loss.group("letter").lower() + "_loss")] = value
        timer = parse_number(m.group("timer"))
        if timer is not None:
            metrics["step_time_s"] = timer
        eta = parse_eta_s(m.group("eta") or "")
        if eta is not None:
            metrics["eta_s"] = float(eta)
        out.step(int(m.group("step")), metrics)
        return True
