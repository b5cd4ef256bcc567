"""OpenMMLab training logs: mmengine (MMDet 3.x, MMSeg 1.x, ...) and mmcv 1.x runners.

    2023/06/04 12:08:18 - mmengine - INFO - Epoch(train)  [1][84/86]  lr: 3.3433e-03  eta: 0:24:11  time: 0.3421  data_time: 0.0038  memory: 3184  loss: 0.3238  loss_cls: 0.1247  acc: 97.4609
    04/22 11:14:42 - mmengine - INFO - Iter(train) [10/270]  lr: 1.000e-02  eta: 0:00:27  time: 0.004  data_time: 0.000  memory: 0  loss: 5.3294
    2023/06/04 12:10:28 - mmengine - INFO - Epoch(val) [5][22/22]    coco/bbox_mAP: 0.4590  coco/bbox_mAP_50: 0.9670  data_time: 0.0148  time: 0.1539
    2020-05-08 18:44:23,494 - mmdet - INFO - Epoch [1][1200/7517]	lr: 0.00125, eta: 4:44:04, time: 0.593, data_time: 0.031, memory: 6836, loss_rpn_cls: 0.0927, loss: 0.4606
    2024-01-19 12:25:44,947 - mmdet - INFO - Iter [500/120000]	lr: 4.000e-04, eta: 6:43:22, time: 0.200, data_time: 0.003, memory: 6267, loss: 0.4167

Step: mmengine and mmcv count iterations globally, and an epoch-based line `[e][i/n]` is
iteration `(e - 1) x n + i` of the run (the runner's `iter + 1` when every epoch has n
iterations); an iteration-based line `[i/N]` prints the iteration itself, N is `total_steps`.
`memory` is `torch.cuda.max_memory_allocated()` in MiB since the last log line -> `mem_gib`.
`time` / `data_time` are seconds per iteration averaged over the logging interval.
The runner prints its Config when built from one (`Runner.from_cfg`, tools/train.py); its
`train_cfg = dict(... max_epochs=12 ...)` (or `max_iters=`) is the run's length, so an
epoch-based run's `total_steps` is max_epochs x the iterations per epoch of its train lines.
Validation progress lines (`Epoch(val) [5][ 1/22]  eta ... time ...`) time the evaluation
loop, not training, and are not reported; the validation metrics line is, at the last
training step (names in snake_case: `coco/bbox_mAP` -> `coco_bbox_m_ap`, `loss` -> `eval_loss`).
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import metric_name, snake
from trainwatch.numbers import parse_eta_s, parse_mem_gib, parse_number
from trainwatch.parsers.base import Emitter, Parser

_HEAD = re.compile(
    r"(?P<mode>Epoch|Iter)(?:\((?P<phase>train|val|test)\))?\s*"
    r"(?:\[\s*(?P<epoch>\d{1,18}(?!\d))\]\[\s*(?P<i>\d{1,18}(?!\d))(?:/\s*(?P<n>\d{1,18}(?!\d)))?\]|\[\s*(?P<it>\d{1,18}(?!\d))(?:/\s*(?P<total>\d{1,18}(?!\d)))?\])"
    r"(?P<rest>.*)$"
)
_ETA = re.compile(r"\beta: ((?:\d+ days?, )?\d+:\d{2}:\d{2})")
_PAIR = re.compile(r"(?:^|[\s,])(?P<key>[A-Za-z_][\w./-]*): (?P<value>[^\s,]+)")
_TIMING = {"eta", "time", "data_time", "memory"}
_TRAIN_CFG = re.compile(r"^train_cfg = dict\((?P<rest>.*)$")
_MAX = re.compile(r"(?:^|[(,\s])max_(?P<unit>epochs|iters)=(?P<n>\d{1,18}(?!\d))\s*[,)]")
_RENAME = {"time": "step_time_s", "data_time": "data_time_s"}


def _pairs(rest: str) -> tuple[dict[str, float], float | None, float | None]:
    """key: value pairs -> (metrics with canonical names, eta_s, mem_gib)."""
    eta_m = _ETA.search(rest)
    eta = parse_eta_s(eta_m.group(1)) if eta_m else None
    if eta_m:
        rest = rest[: eta_m.start()] + rest[eta_m.end() :]
    metrics: dict[str, float] = {}
    mem: float | None = None
    for m in _PAIR.finditer(rest):
        key, raw = m.group("key"), m.group("value")
        if key == "memory":
            mem = parse_mem_gib(raw, default_unit="mib")
            continue
        value = parse_number(raw)
        if value is None:
            continue
        name = _RENAME.get(key) or metric_name(key)
        metrics.setdefault(name, value)
    return metrics, eta, mem


class MMEngineParser(Parser):
    name = "mmengine"
    title = "OpenMMLab (mmengine / mmcv / mmdet)"
    triggers = ("Epoch(", "Iter(", "Epoch [", "Iter [", "train_cfg = dict(", "max_epochs=", "max_iters=")
    example = "Epoch(train)  [1][84/86]  lr: 3.3433e-03  eta: 0:24:11  time: 0.3421  data_time: 0.0038  memory: 3184  loss: 0.3238"
    priority = 100

    def __init__(self) -> None:
        self._last_step: int | None = None  # the runner's last_step lags while it merges
        self._max: tuple[str, int] | None = None  # ("epochs" | "iters", n) from the printed Config
        self._in_train_cfg = False  # `train_cfg = dict(` wrapped onto the next lines

    def _config(self, text: str) -> bool:
        """`train_cfg = dict(by_epoch=True, max_epochs=2)`, possibly wrapped; other lines are not ours."""
        head = _TRAIN_CFG.match(text)
        if head is None and not (self._in_train_cfg and text[:1].isspace()):
            self._in_train_cfg = False
            return False
        body = head.group("rest") if head is not None else text
        m = _MAX.search(body)
        if m is not None and int(m.group("n")) > 0:
            self._max = (m.group("unit"), int(m.group("n")))
        self._in_train_cfg = not body.rstrip().endswith(")")
        return True

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _HEAD.search(text)
        if m is None or ":" not in m.group("rest"):
            return self._config(text)
        self._in_train_cfg = False
        phase = m.group("phase") or "train"
        rest = m.group("rest")
        if phase != "train" or (m.group("epoch") is not None and m.group("n") is None):
            return self._validation(rest, out)  # mmcv 1.x prints `Epoch(val) [1][500]` metrics
        metrics, eta, mem = _pairs(rest)
        if not metrics:
            return False
        if m.group("epoch") is not None:
            epoch, i, n = int(m.group("epoch")), int(m.group("i")), int(m.group("n"))
            if epoch < 1 or n < 1 or i > n:
                return False
            step = (epoch - 1) * n + i
            metrics["epoch"] = float(epoch)
            if self._max is not None and self._max[0] == "epochs":
                metrics["total_steps"] = float(self._max[1] * n)
        else:
            step = int(m.group("it"))
            if m.group("total") is not None:
                metrics["total_steps"] = float(int(m.group("total")))
            elif self._max is not None and self._max[0] == "iters":
                metrics["total_steps"] = float(self._max[1])
        if eta is not None:
            metrics["eta_s"] = eta
        if mem is not None:
            metrics["mem_gib"] = mem
        self._last_step = step
        out.step(step, metrics)
        return True

    def _validation(self, rest: str, out: Emitter) -> bool:
        pairs = {m.group("key") for m in _PAIR.finditer(rest)}
        if not pairs:
            return False
        if pairs <= _TIMING:
            return True  # evaluation-loop progress
        metrics: dict[str, float] = {}
        for m in _PAIR.finditer(rest):
            key = m.group("key")
            if key in _TIMING:
                continue
            value = parse_number(m.group("value"))
            if value is not None:
                name = snake(key)
                metrics.setdefault("eval_loss" if name == "loss" else name, value)
        if metrics:
            out.step(self._last_step, metrics)
        return True
