"""Darknet (YOLOv2-v4, AlexeyAB/darknet and pjreddie/darknet), one line per iteration after its
`Region Avg IOU` / `v3 (mse loss, Normalizer: ...)` detail lines:

    51458: 9.307969, 10.018262 avg, 0.000004 rate, 1.161277 seconds, 3521890 images
     1234: 2.452, 2.731 avg loss, 0.001000 rate, 3.34 seconds, 78976 images, 12.43 hours left

The leading number is the iteration; the first value is that iteration's loss, `avg` (`avg loss`)
its running average, `rate` the learning rate, `seconds` the iteration's time, `images` the images
seen so far, `hours left` darknet's own estimate of the remaining time.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|-?inf)"
_LINE = re.compile(
    rf"^\s*(?P<it>\d{{1,12}}): (?P<loss>{_NUM}), (?P<avg>{_NUM}) avg(?: loss)?, (?P<lr>{_NUM}) rate, "
    rf"(?P<t>{_NUM}) seconds, (?P<images>\d{{1,18}}) images(?:, (?P<left>{_NUM}) hours left)?",
    re.I,
)


class DarknetParser(Parser):
    name = "darknet"
    title = "Darknet (YOLOv2-v4)"
    triggers = (" rate, ",)
    example = "51458: 9.307969, 10.018262 avg, 0.000004 rate, 1.161277 seconds, 3521890 images"
    priority = 100
    samples = (
        Sample(  # pjreddie/darknet issue #668
            "Region Avg IOU: 0.647465, Class: 0.040123, Obj: 0.442353, No Obj: 0.012484, Avg Recall: 0.666667,  count: 3\n"
            "51458: 9.307969, 10.018262 avg, 0.000004 rate, 1.161277 seconds, 3521890 images\n",
            steps=((51458, {"loss": 9.307969, "avg_loss": 10.018262, "lr": 4e-06, "step_time_s": 1.161277}),),
        ),
        Sample(  # AlexeyAB/darknet's line, with its estimate of the time left
            " 1234: 2.452, 2.731 avg loss, 0.001000 rate, 3.34 seconds, 78976 images, 12.43 hours left\n",
            steps=((1234, {"loss": 2.452, "images": 78976, "eta_s": 12.43 * 3600}),),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.match(text)
        if m is None:
            return False
        metrics: dict[str, float] = {}
        for group, name in (
            ("loss", "loss"),
            ("avg", "avg_loss"),
            ("lr", "lr"),
            ("t", "step_time_s"),
            ("images", "images"),
        ):
            value = parse_number(m.group(group))
            if value is not None:
                metrics[name] = value
        left = parse_number(m.group("left")) if m.group("left") else None
        if left is not None and left >= 0:
            metrics["eta_s"] = left * 3600
        out.step(int(m.group("it")), metrics)
        return True
