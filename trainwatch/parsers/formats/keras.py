"""Keras 2 / tf.keras and Keras 3 `fit()` progress lines.

    Epoch 2/10
    32/32 [==============================] - 0s 781us/step - loss: 1457.4397 - mse: 1457.4397
    13184/60000 [=====>........................] - ETA: 3s - loss: 0.0952 - acc: 0.9743
    1079/1079 - 21s - loss: 0.2431 - 21s/epoch - 19ms/step                                  (verbose=2)
    313/313 ━━━━━━━━━━━━━━━━━━━━ 52s 158ms/step - accuracy: 0.6562 - loss: 0.6014 - val_loss: 0.3919

The counter is the batch within the epoch (very old Keras counted samples), so the step is
`(epoch - 1) x total + n`: batches since the start of `fit()`, which is the optimizer's iteration
count when every epoch has the same number of batches. A bar line after an epoch's final line
with no new `Epoch e/E` header is `evaluate()`: its metrics become `eval_*` at the last step.
`781us/step` is `step_time_s`; the bare `52s` (elapsed at the end, ETA before it) is not reported.
`\\b` overstrikes are applied by the sanitizer before this parser sees the text. A log that went through
syslog has its control characters escaped as `#` and three octal digits (rsyslog): the bar's `\\b`
erasures are `#010` and its `\\r` redraws `#015`, so all the redraws of an epoch arrive on one line;
each of them is read as the frame it was on the terminal.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import metric_name, snake
from trainwatch.numbers import parse_duration_s, parse_eta_s, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import prefix_end
from trainwatch.parsers.formats import _escaped as escaped

_EPOCH = re.compile(r"^\s*Epoch (\d{1,18}(?!\d))/(\d{1,18}(?!\d))\s*$")
_K2 = re.compile(r"^\s*(?P<n>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d)) \[[=>.]*\](?P<rest>(?: - .*)?)$")
_K2_V2 = re.compile(r"^\s*(?P<n>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d))(?P<rest> - \d+m?s - .*)$")
_K3 = re.compile(
    r"^\s*(?P<n>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d)) ━+\s+(?P<time>\S+)(?: (?P<per>\S+/step))?(?P<rest>(?: - .*)?)$"
)
_PAIR = re.compile(r"^(?P<key>[A-Za-z_][\w./-]*): (?P<value>\S+)$")
# A message printed over the bar after the last value (`loss: 44.4110Batch 3: Invalid loss, terminating training`)
_GLUED_PAIR = re.compile(r"^(?P<key>[A-Za-z_][\w./-]*): (?P<value>[-+]?\d+\.\d+(?:e[-+]?\d+)?)(?=[A-Z][a-z])")


def _fields(rest: str) -> tuple[dict[str, float], float | None, float | None]:
    """`- 5s 50ms/step - loss: 0.3 - val_loss: 0.4` -> (metrics, step_time_s, eta_s)."""
    metrics: dict[str, float] = {}
    per_step: float | None = None
    eta: float | None = None
    for part in rest.split(" - "):
        part = part.strip()
        if not part:
            continue
        pair = _PAIR.match(part) or _GLUED_PAIR.match(part)
        if pair is not None:
            key, raw = pair.group("key"), pair.group("value")
            if key == "ETA":
                eta = (
                    parse_duration_s(raw)
                    if raw[-1:].isalpha()
                    else parse_eta_s(raw if raw.count(":") == 2 else f"0:{raw}")
                )
                continue
            value = parse_number(raw)
            if value is not None:
                metrics.setdefault(metric_name(key), value)
            continue
        for token in part.split():
            if token.endswith("/step"):
                per_step = parse_duration_s(token)
    return metrics, per_step, eta


class KerasParser(Parser):
    name = "keras"
    title = "Keras"
    triggers = ("Epoch ", "/step", "[=", "[.", " - loss", "━")
    example = "313/313 ━━━━━━━━━━━━━━━━━━━━ 52s 158ms/step - accuracy: 0.9 - loss: 0.3"
    priority = 100
    samples = (
        Sample(  # alexander-rakhlin/CNN-for-Sentence-Classification-in-Keras issue #7: Keras 2, nan from epoch 2
            "Epoch 1/10\n"
            "9595/9595 [==============================] - 1s - loss: 0.6242 - acc: 0.6295 - val_loss: 0.5265 - "
            "val_acc: 0.7470\n"
            "Epoch 2/10\n"
            "9595/9595 [==============================] - 1s - loss: nan - acc: 0.4117 - val_loss: nan - val_acc: "
            "0.0000e+00\n",
            steps=(
                (9595, {"loss": 0.6242, "eval_loss": 0.5265, "epoch": 1}),
                (19190, {"eval_loss": float("nan"), "epoch": 2}),
            ),
            events=("nan",),
        ),
        Sample(  # Keras 3 in a notebook (sample_logs/keras__keras3_notebook_stream.log): 313 batches an epoch
            "Epoch 2/5\n"
            "\x1b[1m313/313\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m \x1b[1m82s\x1b[0m 160ms/step - "
            "accuracy: 0.8825 - loss: 0.2964 - val_accuracy: 0.8454 - val_loss: 0.3654\n",
            steps=((626, {"loss": 0.2964, "eval_loss": 0.3654, "step_time_s": 0.160, "epoch": 2}),),
        ),
    )

    def __init__(self) -> None:
        self._epoch: int | None = None
        self._epoch_done = False
        self._last_step: int | None = None  # the runner's last_step lags while it merges
        self._seen_bar = False

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if escaped.CR in text:
            understood = False
            for frame in escaped.frames(text):
                understood = self._feed(frame, line, out) or understood
            return understood
        return self._feed(text, line, out)

    def _feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _EPOCH.match(text)
        if m is None and "Epoch " in text:  # behind a logger's prefix: `INFO:__main__:Epoch 1/5`
            m = _EPOCH.match(text[prefix_end(text) :])
        if m:
            self._epoch = int(m.group(1))
            self._epoch_done = False
            # Until a bar shows this is fit(), the header is also offered on: a loop printing `Epoch 42/49`
            # and then `train Loss: 0.2172` (PyTorch's fine-tuning tutorial) reports that epoch.
            return self._seen_bar
        m = _K3.match(text) or _K2.match(text) or _K2_V2.match(text)
        if m is None:
            return False
        self._seen_bar = True
        n, total = int(m.group("n")), int(m.group("total"))
        if total <= 0 or n > total:
            return False
        metrics, per_step, eta = _fields(m.group("rest"))
        if "per" in m.groupdict() and m.group("per"):
            per_step = parse_duration_s(m.group("per"))
        if self._epoch is None:
            return False  # a bar with no `Epoch e/E` before it: not fit() (or a slice we cannot place)
        if self._epoch_done:
            if metrics:  # evaluate(): its metrics at the last training step
                evals = {("eval_loss" if k == "loss" else f"eval_{snake(k)}"): v for k, v in metrics.items()}
                out.step(self._last_step, evals)
            return True
        step = (self._epoch - 1) * total + n
        metrics["epoch"] = float(self._epoch)
        if per_step is not None:
            metrics["step_time_s"] = per_step
        if eta is not None:
            metrics["eta_s"] = eta
        self._last_step = step
        out.step(step, metrics)
        if n == total and eta is None:  # the last batch's frame with an ETA is redrawn with the epoch's time
            self._epoch_done = True
        return True
