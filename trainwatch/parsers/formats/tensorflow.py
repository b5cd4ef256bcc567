"""TensorFlow 1.x Estimator / MonitoredTrainingSession logging (tf.compat.v1, tensor2tensor, TF models).

    INFO:tensorflow:global_step/sec: 0.803895
    INFO:tensorflow:loss = 4.264659, step = 100 (124.394 sec)
    INFO:tensorflow:Saving checkpoints for 31622 into /train/model.ckpt.
    ERROR:tensorflow:Model diverged with loss = NaN.

`LoggingTensorHook` prints the loss every N steps with the seconds since its previous print in
parentheses: the step time is those seconds over the steps between the two prints (never the
parenthesised figure itself, which covers N steps). `global_step/sec` (StepCounterHook) is the pace
of the next report. Other fields on the loss line are kept through the field reader.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import read_fields

_LOSS = re.compile(r"tensorflow:(?P<body>.*\bstep = (?P<step>\d{1,18})\b.*?)(?:\s\((?P<secs>[\d.]+) sec\))?\s*$")
_RATE = re.compile(r"tensorflow:global_step/sec: (?P<rate>[\d.eE+-]+)")
_SAVE = re.compile(r"tensorflow:Saving checkpoints for (?P<step>\d{1,18}) into (?P<path>\S+?)\.?\s*$")
_DIVERGED = re.compile(r"tensorflow:Model diverged with loss = (?P<v>NaN|nan|inf|-?Inf)")


class TensorFlowParser(Parser):
    name = "tensorflow"
    title = "TensorFlow 1.x Estimator"
    triggers = ("tensorflow:",)
    example = "INFO:tensorflow:loss = 4.264659, step = 100 (124.394 sec)"
    priority = 100
    samples = (
        Sample(  # tensorflow/tensorflow issue #43014 (Estimator train_and_evaluate, a hook's own line among them)
            "INFO:tensorflow:loss = 96.96749, step = 0\n"
            "INFO:tensorflow:global_steps = 0, loss = 96.96749\n"
            "INFO:tensorflow:global_step/sec: 0.803899\n"
            "INFO:tensorflow:loss = 4.264659, step = 100 (124.394 sec)\n"
            "INFO:tensorflow:global_step/sec: 0.682575\n",
            # 124.394 s since the print at step 0: 100 steps
            steps=((0, {"loss": 96.96749}), (100, {"loss": 4.264659, "step_time_s": 1.24394})),
        ),
        Sample(  # tensorflow/tensor2tensor issue #106: a checkpoint, then the run diverges
            "INFO:tensorflow:loss = 1.8717, step = 31601 (182.200 sec)\n"
            "INFO:tensorflow:Saving checkpoints for 31622 into "
            "/home/minjoong/t2t_train/koen_tokens_32k/transformer-transformer_big/margin/model.ckpt.\n"
            "ERROR:tensorflow:Model diverged with loss = NaN.\n",
            steps=((31601, {"loss": 1.8717}),),
            events=("checkpoint", "nan"),
        ),
    )

    def __init__(self) -> None:
        self._last_step: int | None = None
        self._rate: float | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _RATE.search(text)
        if m is not None:
            try:
                rate = float(m.group("rate"))
            except ValueError:
                return False
            self._rate = rate if rate > 0 else None
            return True
        m = _SAVE.search(text)
        if m is not None:
            out.event(
                "checkpoint", "info", text[m.start() :].strip(), {"path": m.group("path")}, step=int(m.group("step"))
            )
            return True
        m = _DIVERGED.search(text)
        if m is not None:
            out.event("nan", "error", text[m.start() :].strip(), {"metric": "loss"})
            return True
        m = _LOSS.search(text)
        if m is None:
            return False
        reading = read_fields(m.group("body"))
        if reading is None or reading.step is None or not reading.metrics:
            return False
        step = reading.step
        metrics = dict(reading.metrics)
        metrics.pop("step_time_s", None)
        secs = m.group("secs")
        if secs is not None and self._last_step is not None and step > self._last_step:
            metrics["step_time_s"] = float(secs) / (step - self._last_step)
        elif self._rate is not None:
            metrics["step_time_s"] = 1.0 / self._rate
        self._rate = None
        self._last_step = step
        out.step(step, metrics)
        return True
