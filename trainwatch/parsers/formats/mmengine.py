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
from trainwatch.parsers.base import Emitter, Parser, Sample

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
    samples = (
        Sample(  # ../shared/real_logs/mmengine__chg0901_* (mmengine 0.7, MMDet 3.x), lines 1041-1045: epoch 1 ends
            "2023/06/04 12:08:18 - mmengine - INFO - Epoch(train)  [1][85/86]  lr: 3.3834e-03  eta: 0:24:12  time: "
            "0.3422  data_time: 0.0038  memory: 3811  loss: 0.3221  loss_rpn_cls: 0.0395  loss_rpn_bbox: 0.0162  "
            "loss_cls: 0.1234  acc: 96.9727  loss_bbox: 0.1429\n"
            "2023/06/04 12:08:19 - mmengine - INFO - Exp name: faster_r_cnn_triangle_20230604_120745\n"
            "2023/06/04 12:08:19 - mmengine - INFO - Epoch(train)  [1][86/86]  lr: 3.4234e-03  eta: 0:24:18  time: "
            "0.3455  data_time: 0.0038  memory: 5055  loss: 0.3253  loss_rpn_cls: 0.0396  loss_rpn_bbox: 0.0171  "
            "loss_cls: 0.1239  acc: 94.3359  loss_bbox: 0.1447\n"
            "2023/06/04 12:08:19 - mmengine - INFO - Saving checkpoint at 1 epochs\n"
            "2023/06/04 12:08:21 - mmengine - INFO - Epoch(train)  [2][ 1/86]  lr: 3.4634e-03  eta: 0:24:32  time: "
            "0.3518  data_time: 0.0096  memory: 3494  loss: 0.3237  loss_rpn_cls: 0.0388  loss_rpn_bbox: 0.0171  "
            "loss_cls: 0.1232  acc: 98.4375  loss_bbox: 0.1447\n",
            steps=(
                (
                    85,
                    {
                        "epoch": 1,
                        "lr": 3.3834e-03,
                        "eta_s": 24 * 60 + 12,
                        "step_time_s": 0.3422,
                        "data_time_s": 0.0038,
                        "mem_gib": 3811 / 1024,
                        "loss": 0.3221,
                        "loss_cls": 0.1234,
                        "acc": 96.9727,
                    },
                ),
                (86, {"epoch": 1, "loss": 0.3253, "mem_gib": 5055 / 1024}),
                # Epoch 2's first iteration is the run's 87th (86 per epoch).
                (87, {"epoch": 2, "lr": 3.4634e-03, "loss": 0.3237, "step_time_s": 0.3518}),
            ),
            events=("checkpoint",),
        ),
        Sample(  # the same log, lines 1395-1396 and 1431: epoch 5's last iteration, then its validation metrics
            "2023/06/04 12:10:24 - mmengine - INFO - Epoch(train)  [5][86/86]  lr: 1.7197e-02  eta: 0:22:35  time: "
            "0.3526  data_time: 0.0038  memory: 5523  loss: 0.1977  loss_rpn_cls: 0.0093  loss_rpn_bbox: 0.0177  "
            "loss_cls: 0.0617  acc: 97.7539  loss_bbox: 0.1090\n"
            "2023/06/04 12:10:24 - mmengine - INFO - Saving checkpoint at 5 epochs\n"
            "2023/06/04 12:10:28 - mmengine - INFO - Epoch(val) [5][22/22]    coco/bbox_mAP: 0.4590  "
            "coco/bbox_mAP_50: 0.9670  coco/bbox_mAP_75: 0.3240  coco/bbox_mAP_s: -1.0000  coco/bbox_mAP_m: -1.0000  "
            "coco/bbox_mAP_l: 0.4590  pascal_voc/mAP: 0.9824  pascal_voc/AP50: 0.9820  data_time: 0.0148  time: "
            "0.1539\n",
            steps=(
                (430, {"epoch": 5, "loss": 0.1977, "lr": 1.7197e-02}),
                (430, {"coco_bbox_m_ap": 0.4590, "coco_bbox_m_ap_50": 0.9670, "pascal_voc_m_ap": 0.9824}),
            ),
        ),
        Sample(  # open-mmlab/mmdetection issue #2672 (mmcv 1.x runner: `Epoch [e][i/n]`, comma-separated)
            "2020-05-08 18:56:16,649 - mmdet - INFO - Epoch [1][2400/7517]\tlr: 0.00125, eta: 4:33:09, time: 0.595, "
            "data_time: 0.032, memory: 6836, loss_rpn_cls: 0.0989, loss_rpn_bbox: 0.0477, loss_cls: 0.1939, "
            "acc: 93.4961, loss_bbox: 0.1484, loss: 0.4890\n"
            "2020-05-08 18:56:46,439 - mmdet - INFO - Epoch [1][2450/7517]\tlr: 0.00125, eta: 4:32:41, time: 0.596, "
            "data_time: 0.031, memory: 6836, loss_rpn_cls: 0.0875, loss_rpn_bbox: 0.0440, loss_cls: 0.1996, "
            "acc: 93.3379, loss_bbox: 0.1483, loss: 0.4794\n",
            steps=(
                (
                    2400,
                    {
                        "lr": 0.00125,
                        "eta_s": 4 * 3600 + 33 * 60 + 9,
                        "step_time_s": 0.595,
                        "data_time_s": 0.032,
                        "mem_gib": 6836 / 1024,
                        "loss": 0.4890,
                        "acc": 93.4961,
                    },
                ),
                (2450, {"loss": 0.4794, "step_time_s": 0.596}),
            ),
        ),
    )

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
        if m is not None and m.group("mode") == "Epoch" and m.group("it") is not None:
            m = None  # `Epoch [647/650], Train Loss: ...`: a loop's own epoch counter (mmcv/mmengine count iters so)
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
