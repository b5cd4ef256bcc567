"""YOLOX (Megvii) trainer progress lines, printed through loguru:

    2021-07-21 02:58:47 | INFO     | yolox.core.trainer:250 - epoch: 1/300, iter: 640/925, mem: 7751Mb, iter_time: 0.666s, data_time: 0.047s, total_loss: 11.2, iou_loss: 3.8, l1_loss: 0.0, conf_loss: 4.8, cls_loss: 2.7, lr: 3.830e-04, size: 672, ETA: 2 days, 18:48:57

`epoch` is 1-based and `iter` counts within it, so the step is `(epoch - 1) x iters + iter`, as
YOLOX's own `progress_in_iter` counts (plus one). `mem` (`gpu mem` from YOLOX 0.3 on, whose `mem`
is then host RAM in Gb) is `torch.cuda.max_memory_allocated()` in MiB (`max_mem_gib`), `total_loss` the loss, `size` the random input size of the multiscale
schedule (configuration, not a metric). A terminal that hard-wrapped a line puts its tail (up to
`ETA`) on the next line: the two are read as one.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_duration_s, parse_mem_gib, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.timestamps import line_time

_HEAD = re.compile(
    r"\bepoch: (?P<epoch>\d{1,9}(?!\d))/(?P<epochs>\d{1,9}(?!\d)), iter: (?P<iter>\d{1,12}(?!\d))/(?P<iters>\d{1,12}(?!\d)), "
    r"(?P<rest>(?:gpu )?mem: .*)$"
)
_ETA = re.compile(r"(?:^|, )ETA: [^,]*(?:, [\d:]+)?\s*$")
_RENAME = {"total_loss": "loss", "iter_time": "step_time_s", "data_time": "data_time_s", "lr": "lr"}
_SKIP = ("size", "eta")
_MAX_WRAP = 400  # a continuation is the tail of one line, never a paragraph


class YOLOXParser(Parser):
    name = "yolox"
    title = "YOLOX"
    triggers = (", iter: ", "ETA: ")
    example = "epoch: 1/300, iter: 640/925, mem: 7751Mb, iter_time: 0.666s, data_time: 0.047s, total_loss: 11.2, lr: 3.830e-04, size: 672, ETA: 2 days, 18:48:57"
    samples = (
        Sample(
            "2021-07-21 02:58:47 | INFO     | yolox.core.trainer:250 - epoch: 1/300, iter: 640/925, mem: 7751Mb, "
            "iter_time: 0.666s, data_time: 0.047s, total_loss: 11.2, iou_loss: 3.8, l1_loss: 0.0, conf_loss: 4.8, "
            "cls_loss: 2.7, lr: 3.830e-04, size: 672, ETA: 2 days, 18:48:57\n"
            "2023-08-10 08:54:53 | INFO     | yolox.core.trainer:253 - epoch: 2/300, iter: 10/12, mem: 2956Mb, "
            "iter_time: 0.383s, data_time: 0.001s, total_loss: 4.8, iou_loss: 2.3, l1_loss: 0.0, conf_loss: 1.8, cls_loss:\n"
            "0.7, lr: 6.250e-04, size: 576, ETA: 0:34:23",
            steps=(
                (640, {"epoch": 1, "loss": 11.2, "lr": 3.83e-4, "step_time_s": 0.666, "data_time_s": 0.047}),
                (22, {"epoch": 2, "loss": 4.8, "cls_loss": 0.7, "lr": 6.25e-4, "step_time_s": 0.383}),
            ),
        ),
    )
    priority = 100

    def __init__(self) -> None:
        self._held: tuple[str, Line] | None = None  # a line the terminal wrapped before its ETA

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if self._held is not None:
            held, held_line = self._held
            self._held = None
            if _HEAD.search(text) is None and len(text) < _MAX_WRAP and _ETA.search(text):
                return self._read(held + " " + text.strip(), held_line, out)
            self._read(held, held_line, out)
        m = _HEAD.search(text)
        if m is None:
            return False
        if not _ETA.search(m.group("rest")):
            self._held = (text, line)  # its tail may be on the next line
            return True
        return self._read(text, line, out)

    def at_eof(self, out: Emitter) -> None:
        if self._held is not None:
            self._read(*self._held, out)
            self._held = None

    def finish(self, out: Emitter) -> None:
        self.at_eof(out)

    def _read(self, text: str, line: Line, out: Emitter) -> bool:
        m = _HEAD.search(text)
        if m is None:
            return False
        epoch, iters, it = int(m.group("epoch")), int(m.group("iters")), int(m.group("iter"))
        if epoch < 1 or iters < 1:
            return False
        metrics: dict[str, float] = {"epoch": float(epoch), "total_steps": float(int(m.group("epochs")) * iters)}
        for part in _ETA.sub("", m.group("rest")).split(", "):
            key, sep, raw = part.partition(": ")
            key = snake(key)
            if not sep or key in _SKIP:
                continue
            if key in ("mem", "gpu_mem"):
                host = key == "mem" and raw.endswith("Gb")  # YOLOX 0.3: `gpu mem: 2956Mb, mem: 5.1Gb` (host RAM)
                value = parse_mem_gib(raw.replace("Mb", "MiB").replace("Gb", "GiB"))
                name = "host_mem_gib" if host else "max_mem_gib"
            elif raw.endswith("s") and key.endswith("time"):
                value, name = parse_duration_s(raw), _RENAME.get(key, f"{key}_s")
            else:
                value, name = parse_number(raw), _RENAME.get(key, key)
            if value is not None:
                metrics[name] = value
        out.step((epoch - 1) * iters + it, metrics, time=line_time(text), line=line.no)
        return True
