"""detectron2 (and d2go / detectron2-based projects, fast-reid's fork) `CommonMetricPrinter` lines.

    [04/05 01:30:24 d2.utils.events]:  eta: 0:03:35  iter: 19  total_loss: 1.36  loss_cls: 0.6522  time: 0.3636  data_time: 0.1102  lr: 3.8077e-06  max_mem: 433M
    [04/14 09:05:02] d2.utils.events INFO:  eta: 0:11:54  iter: 119  total_loss: 9.214  ...  max_mem: 28515M

Step is `iter` as printed (0-based: `iter: 19` is the 20th iteration). `total_loss` is the
loss; every value is detectron2's median over its window (its design, not ours).
`max_mem` is `torch.cuda.max_memory_allocated()` in MiB -> `max_mem_gib`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import metric_name
from trainwatch.numbers import parse_eta_s, parse_mem_gib, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

# (fast-reid's fork: `fastreid.utils.events]:  eta: 0:37:54  epoch/iter: 1/399  total_loss: 55.97`, the
# epoch and the global iteration)
_BODY = re.compile(
    r"(?:d2|fastreid)\.utils\.events\]?:?(?: INFO:)?\s+(?=\S)"  # (a run of spaces in one place: `.*` after it was
    # tried from each of the run's characters, the square of a long run)
    r"(?P<rest>.*\b(?:epoch/iter: (?P<epoch>\d{1,9})/|(?<!/)iter: )(?P<iter>\d{1,18}(?!\d))\b.*)$"
)
_PAIR = re.compile(r"(?:^|\s)(?P<key>[A-Za-z_][\w/.-]*): (?P<value>\S+)")
_RENAME = {
    "time": "step_time_s",
    "data_time": "data_time_s",
    "last_time": "last_time_s",
    "last_data_time": "last_data_time_s",
}


class Detectron2Parser(Parser):
    name = "detectron2"
    title = "detectron2"
    triggers = ("d2.utils.events", "fastreid.utils.events")
    example = "[06/04 12:08:18 d2.utils.events]:  eta: 0:24:11  iter: 19  total_loss: 2.03  time: 0.4521  lr: 0.0004  max_mem: 3961M"
    priority = 100
    samples = (
        Sample(  # facebookresearch/d2go issue #19 (warmup of a Faster R-CNN)
            "[03/15 07:47:57 d2.engine.train_loop]: Starting training from iteration 0\n"
            "[03/15 07:48:04 d2.utils.events]:  eta: 0:01:23  iter: 19  total_loss: 1.475  loss_cls: 0.7214  "
            "loss_box_reg: 0.6375  loss_rpn_cls: 0.07351  loss_rpn_loc: 0.004179  time: 0.2951  data_time: 0.0589  "
            "lr: 6.1638e-06  max_mem: 824M\n"
            "[03/15 07:48:10 d2.utils.events]:  eta: 0:01:17  iter: 39  total_loss: 1.383  loss_cls: 0.7036  "
            "loss_box_reg: 0.5085  loss_rpn_cls: 0.08158  loss_rpn_loc: 0.004653  time: 0.3084  data_time: 0.0369  "
            "lr: 1.2389e-05  max_mem: 824M\n",
            steps=(
                (
                    19,
                    {
                        "eta_s": 83,
                        "loss": 1.475,
                        "loss_cls": 0.7214,
                        "step_time_s": 0.2951,
                        "data_time_s": 0.0589,
                        "lr": 6.1638e-06,
                        "max_mem_gib": 824 / 1024,
                    },
                ),
                (39, {"loss": 1.383, "step_time_s": 0.3084, "lr": 1.2389e-05}),
            ),
        ),
        Sample(  # ChenhongyiYang/QueryDet-PyTorch issue #17 (`] d2.utils.events INFO:` logger form)
            "[04/14 09:05:02] d2.utils.events INFO:  eta: 0:11:54  iter: 119  total_loss: 9.214  loss_cls: 2.549  "
            "loss_box_reg: 1.002  loss_query: 5.513  time: 0.8153  data_time: 0.0220  lr: 0.001199  max_mem: 28515M\n",
            steps=(
                (
                    119,
                    {
                        "loss": 9.214,
                        "loss_query": 5.513,
                        "step_time_s": 0.8153,
                        "lr": 0.001199,
                        "max_mem_gib": 28515 / 1024,
                    },
                ),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _BODY.search(text)
        if m is None:
            return False
        metrics: dict[str, float] = {}
        for pair in _PAIR.finditer(m.group("rest")):
            key, raw = pair.group("key"), pair.group("value")
            if key in ("iter", "epoch/iter"):
                continue
            if key == "eta":
                eta = parse_eta_s(raw)
                if eta is not None:
                    metrics["eta_s"] = eta
                continue
            if key == "max_mem":
                mem = parse_mem_gib(raw[:-1] if raw.endswith("M") else raw, default_unit="mib")
                if mem is not None:
                    metrics["max_mem_gib"] = mem
                continue
            value = parse_number(raw)
            if value is not None:
                metrics.setdefault(_RENAME.get(key) or metric_name(key), value)
        if not metrics.keys() - {"eta_s"}:
            return False  # a cut line: nothing measured
        if m.group("epoch") is not None:
            metrics["epoch"] = float(int(m.group("epoch")))
        out.step(int(m.group("iter")), metrics)
        return True
