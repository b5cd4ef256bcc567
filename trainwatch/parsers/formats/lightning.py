"""PyTorch Lightning: the tqdm progress bar and ModelCheckpoint's verbose messages.

    Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]
    Epoch 0:  92%|█████▉  | 932/1016 [00:33<00:03, 27.70it/s, loss=0.223, v_num=77, acc=0.875]
    Epoch 0:   2%|██▉       | 5337/315209 [54:08<52:23:38,  1.64it/s, v_num=v874, train_loss_step=4.630]
    Validation DataLoader 0:  46%|██████    | 73/157 [00:02<00:02, 37.48it/s]
    Epoch 0, global step 1000: 'val_loss' reached 0.12345 (best 0.12345), saving model to '/x/epoch=0-step=1000.ckpt' as top 1

Step of a bar frame: the bar counts batches within the epoch (0-based epoch in the label), so
the step is `epoch x total + n`, the bar's own running batch count. It equals Lightning's global
step when the bar counts training batches only (Lightning >= 2; 1.x bars also count validation
batches) and there is no gradient accumulation. The checkpoint message prints the real global
step, which its eval metric and `checkpoint` event use.
Lightning draws each batch twice: the position first (with the previous postfix), then the new
postfix at the same position. The last frame of a position is the right one, so a frame is
held until the position changes (or input pauses) and only then reported.
The fit loop's end message is written right after the last frame without a newline, so it arrives
glued to the bar (`...train_loss=0.910]`Trainer.fit` stopped: `max_epochs=2` reached.`) and is
reported here as the `finished` event the events parser reports for it on a line of its own.
`v_num` is the logger's version, not a metric; `*_step` metrics lose the suffix
(`train_loss_step` -> `loss`), `*_epoch` ones keep it (epoch means). A log captured by SageMaker or
syslog writes the redraws' `\\r` as `#015` (`_escaped.py`): each frame is read as it was drawn. A counter logged as a metric
(NeMo's `global_step=794.0`) is a counter, not a metric. Lightning 1.x's own `loss` is the running
mean of the last 20 losses: where the model logs its loss too (`reduced_train_loss=3.090`), that
one is `loss` and Lightning's is `running_loss`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import COUNTER_KEYS, metric_name, snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.formats import _escaped as escaped
from trainwatch.parsers.formats._tqdm import Bar, find_bar

_EPOCH_DESC = re.compile(r"^Epoch (\d{1,18}(?!\d))$")
_OTHER_DESC = ("Validation", "Validating", "Sanity Checking", "Testing", "Predicting", "Training")
_CHECKPOINT = re.compile(
    r"(?:^|[\s:\]])Epoch (?P<epoch>\d{1,18}(?!\d)), global step (?P<step>\d{1,18}(?!\d)): '?(?P<monitor>[^']+?)'? reached (?P<value>\S+) "
    r"\(best (?P<best>\S+)\), saving model to '?(?P<path>[^']+?)'? as top (?P<k>\d{1,18}(?!\d))"
)
_OLD_CHECKPOINT = re.compile(
    r"(?:^|[\s:\]])Epoch (?P<epoch>\d{1,18}(?!\d)): (?P<monitor>\S+) reached (?P<value>\S+) \(best \S+\), saving model to (?P<path>\S+) as top \d+"
)
_STOPPED = re.compile(r"`Trainer\.fit` stopped: `(max_epochs|max_steps)=(\d{1,18}(?!\d))` reached\.")
_SKIP = {"v_num"}


def postfix_metrics(bar: Bar) -> dict[str, float]:
    metrics: dict[str, float] = {}
    running: float | None = None
    for key, raw in bar.postfix:
        if key in _SKIP:
            continue
        value = parse_number(raw)
        if value is None:
            continue
        if key == "loss":
            running = value
            continue
        name = snake(key)
        if name in COUNTER_KEYS:
            continue
        if name.endswith("_step"):
            name = name[: -len("_step")]
        if not name.endswith("_epoch"):
            name = metric_name(name)
        metrics.setdefault(name, value)
    if running is not None:
        metrics["running_loss" if "loss" in metrics else "loss"] = running
    return metrics


class LightningParser(Parser):
    name = "lightning"
    title = "PyTorch Lightning"
    reads_after_bar = True
    triggers = ("Epoch ", "DataLoader", "Validating", "Sanity Checking")
    example = "Epoch 3:  45%|████▌     | 450/1000 [01:23<01:42, 5.38it/s, loss=0.234, v_num=12]"
    priority = 100
    samples = (
        Sample(  # Lightning-AI/pytorch-lightning issue #4225: each batch drawn twice, the postfix second
            "Epoch 0:   6%|▌         | 1/18 [00:08<02:29,  8.77s/it]\n"
            "Epoch 0:   6%|▌         | 1/18 [00:08<02:29,  8.77s/it, loss=10.473, v_num=193315]\n"
            "Epoch 0:  11%|█         | 2/18 [00:11<01:33,  5.82s/it, loss=10.473, v_num=193315]\n"
            "Epoch 0:  11%|█         | 2/18 [00:11<01:33,  5.82s/it, loss=10.224, v_num=193315]\n",
            steps=((1, {"loss": 10.473, "step_time_s": 8.77, "epoch": 0}), (2, {"loss": 10.224, "step_time_s": 5.82})),
        ),
        Sample(  # a CPU run (sample_logs/lightning__cpu_simple_profiler_healthy.log): redraws, then fit's end glued on
            "Epoch 1:  98%|█████████▊| 39/40 [00:00<00:00, 165.83it/s, v_num=0, train_loss=0.709]\r"
            "Epoch 1: 100%|██████████| 40/40 [00:00<00:00, 165.38it/s, v_num=0, train_loss=0.709]\r"
            "Epoch 1: 100%|██████████| 40/40 [00:00<00:00, 165.20it/s, v_num=0, train_loss=0.910]\r"
            "Epoch 1: 100%|██████████| 40/40 [00:00<00:00, 164.86it/s, v_num=0, train_loss=0.910]`Trainer.fit` "
            "stopped: `max_epochs=2` reached.\n",
            steps=((80, {"loss": 0.910, "epoch": 1}),),
            events=("finished",),
        ),
    )

    def __init__(self) -> None:
        self._held: tuple[int, int, dict[str, float], int] | None = None  # (step, epoch, metrics, line)

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if escaped.CR in text:  # SageMaker / syslog: `#015Epoch 0:  50% 1/2 [...]`
            understood = False
            for frame in escaped.frames(text):
                understood = self._feed(frame, line, out) or understood
            return understood
        return self._feed(text, line, out)

    def _feed(self, text: str, line: Line, out: Emitter) -> bool:
        if ", global step " in text or "saving model to" in text:
            return self._checkpoint(text, out)
        bar = find_bar(text)
        if bar is None:
            return False
        m = _EPOCH_DESC.match(bar.desc)
        if m is None:
            return bar.desc.startswith(_OTHER_DESC)
        epoch = int(m.group(1))
        step = epoch * bar.total + bar.n
        metrics = postfix_metrics(bar)
        metrics["epoch"] = float(epoch)
        if bar.seconds_per_it is not None:
            metrics["step_time_s"] = bar.seconds_per_it
        if self._held is not None and self._held[0] != step:
            self._release(out)
        if bar.n > 0:
            self._held = (step, epoch, metrics, line.no)
        stopped = _STOPPED.search(text, bar.end)
        if stopped is not None:
            self._release(out)
            data = {stopped.group(1): int(stopped.group(2))}
            out.event("finished", "info", text[stopped.start() :].strip(), data, line=line.no)
        return True

    def at_eof(self, out: Emitter) -> None:
        self._release(out)

    def finish(self, out: Emitter) -> None:
        self._release(out)

    def _release(self, out: Emitter) -> None:
        held, self._held = self._held, None
        if held is not None:
            step, _epoch, metrics, line_no = held
            out.step(step, metrics, line=line_no)

    def _checkpoint(self, text: str, out: Emitter) -> bool:
        m = _CHECKPOINT.search(text)
        if m is not None:
            self._release(out)
            step = int(m.group("step"))
            value = parse_number(m.group("value"))
            if value is not None:
                out.step(step, {metric_name(m.group("monitor")): value, "epoch": float(m.group("epoch"))})
            out.event("checkpoint", "info", text.strip(), {"path": m.group("path")}, step=step)
            return True
        m = _OLD_CHECKPOINT.search(text)
        if m is not None:  # Lightning < 1.3 prints no global step: the event only
            self._release(out)
            out.event("checkpoint", "info", text.strip(), {"path": m.group("path")})
            return True
        return False
