"""Karpathy's GPT trainers and their descendants: nanoGPT, nanochat, modded-nanogpt, llm.c.

One family, four print formats (one Parser each):
- nanoGPT   `iter 100: loss 4.1234, time 120.50ms, mfu 35.20%` / `step 2000: train loss 2.12, val loss 2.23`
- nanochat  `step 00100/21400 (0.47%) | loss: 5.12 | grad norm: 1.23 | lrm: 1.00 | dt: 512.34ms | tok/sec: 1,023,456 | mfu: 45.67 | total time: 1.23m`
- modded-nanogpt `step:7140/20000 train_loss:5.2e-02 train_time:31797340ms step_avg:4453.41ms`
- llm.c     `step    1/74 | loss 11.0 (+nanz)| norm 15.4 (+nanz)| lr 1.00e-04 | 3034.18 ms | 40.3% bf16 MFU | 21597 tok/s`

nanoGPT and llm.c print `-100%` MFU until they have an estimate: that sentinel is not a measurement
and is dropped. nanoGPT's periodic eval line estimates the train loss over many batches; it is kept
as `eval_train_loss` so the per-iteration `loss` series is not overwritten by it.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_duration_s, parse_number
from trainwatch.parsers.base import Emitter, Parser

_NUM = r"[-+]?(?:\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"


def _mfu(raw: str) -> float | None:
    value = parse_number(raw)
    if value is None or value < 0:  # -100: "not estimated yet"
        return None
    return value


# --------------------------------------------------------------------------- nanoGPT
_NANOGPT_ITER = re.compile(
    rf"\biter (?P<step>\d{{1,18}}(?!\d)): loss (?P<loss>{_NUM}), time (?P<time>{_NUM})ms(?:, mfu (?P<mfu>{_NUM})%)?\s*$"
)
_NANOGPT_EVAL = re.compile(
    rf"\bstep (?P<step>\d{{1,18}}(?!\d)): train loss (?P<train>{_NUM}), val loss (?P<val>{_NUM})\s*$"
)


class NanoGPTParser(Parser):
    name = "nanogpt"
    title = "nanoGPT"
    triggers = ("iter ", "val loss")
    example = "iter 2920: loss 3.9883, time 1099.34ms, mfu 15.34%"
    priority = 100

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _NANOGPT_ITER.search(text)
        if m:
            metrics: dict[str, float] = {}
            loss = parse_number(m.group("loss"))
            step_ms = parse_number(m.group("time"))
            if loss is None or step_ms is None:
                return False
            metrics["loss"] = loss
            metrics["step_time_s"] = step_ms / 1000
            if m.group("mfu") is not None:
                mfu = _mfu(m.group("mfu"))
                if mfu is not None:
                    metrics["mfu_pct"] = mfu
            out.step(int(m.group("step")), metrics)
            return True
        m = _NANOGPT_EVAL.search(text)
        if m:
            train = parse_number(m.group("train"))
            val = parse_number(m.group("val"))
            if train is None or val is None:
                return False
            out.step(int(m.group("step")), {"eval_loss": val, "eval_train_loss": train})
            return True
        return False


# -------------------------------------------------------------------------- nanochat
_NANOCHAT = re.compile(
    r"^step (?P<step>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d)) \((?P<pct>[0-9.]+)%\) \| (?P<rest>.*)$"
)
_NANOCHAT_EVAL = re.compile(
    rf"^Step (?P<step>\d{{1,18}}(?!\d)) \| (?P<label>[A-Za-z][A-Za-z ]*): (?P<value>{_NUM})\s*$"
)
_NANOCHAT_NAMES = {
    "loss": "loss",
    "grad norm": "grad_norm",
    "grad_norm": "grad_norm",
    "lrm": "lrm",  # a multiplier of the base lr, not the lr itself
    "tok/sec": "tokens_per_s",
    "mfu": "mfu_pct",
}


class NanochatParser(Parser):
    name = "nanochat"
    title = "nanochat"
    triggers = ("step ", "Step ")
    example = "step 00004/21400 (0.02%) | loss: 8.893647 | lrm: 1.00 | dt: 989.44ms | tok/sec: 529,882 | mfu: 74.13 | total time: 0.00m"
    priority = 100

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _NANOCHAT.match(text)
        if m:
            metrics: dict[str, float] = {"total_steps": float(int(m.group("total")))}
            for field in m.group("rest").split("|"):
                label, sep, raw = field.partition(":")
                if not sep:
                    continue
                label = label.strip()
                raw = raw.strip().rstrip("*")  # `mfu: 74.13*` = estimated peak flops
                if label == "dt":
                    value = parse_duration_s(raw)
                    if value is not None:
                        metrics["step_time_s"] = value
                elif label == "total time":
                    value = parse_duration_s(raw)
                    if value is not None:
                        metrics["total_time_s"] = value
                else:
                    value = parse_number(raw)
                    name = _NANOCHAT_NAMES.get(label, snake(label))
                    if value is not None and name:  # `| : 529,882` names nothing
                        metrics[name] = value
            if len(metrics) == 1:
                return False
            out.step(int(m.group("step")), metrics)
            return True
        m = _NANOCHAT_EVAL.match(text)
        if m:
            value = parse_number(m.group("value"))
            if value is None:
                return False
            out.step(int(m.group("step")), {snake(m.group("label")): value})
            return True
        return False


# -------------------------------------------------------------------- modded-nanogpt
_MODDED = re.compile(r"^step:(?P<step>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d)) (?P<rest>\S+:\S+(?: \S+:\S+)*)\s*$")


class ModdedNanoGPTParser(Parser):
    """`train_time` is cumulative and `step_avg` a running mean; `step_time_s` is the time since the
    previous train line divided by the steps between them (the current value the contract asks for)."""

    name = "modded_nanogpt"
    title = "modded-nanogpt"
    triggers = ("step:",)
    example = "step:7140/20000 train_loss:5.226859e-02 train_time:31797340ms step_avg:4453.41ms"
    priority = 100

    def __init__(self) -> None:
        self._last_train: tuple[int, float] | None = None  # (step, train_time_s) of the last train line

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _MODDED.match(text)
        if not m:
            return False
        step = int(m.group("step"))
        metrics: dict[str, float] = {"total_steps": float(int(m.group("total")))}
        train_time: float | None = None
        for pair in m.group("rest").split():
            key, _, raw = pair.partition(":")
            if key in ("train_time", "step_avg"):
                value = parse_duration_s(raw)
                if value is None:
                    continue
                metrics[f"{key}_s"] = value
                if key == "train_time":
                    train_time = value
            else:
                value = parse_number(raw)
                if value is None:
                    continue
                name = {"train_loss": "loss", "val_loss": "eval_loss"}.get(key, snake(key))
                metrics[name] = value
        if len(metrics) == 1:
            return False
        is_train = "val_loss" not in m.group("rest")
        if is_train and train_time is not None:
            last = self._last_train
            if last is not None and step > last[0] and train_time >= last[1]:
                metrics["step_time_s"] = round((train_time - last[1]) / (step - last[0]), 6)
            self._last_train = (step, train_time)
        out.step(step, metrics)
        return True


# ---------------------------------------------------------------------------- llm.c
_LLMC = re.compile(r"^step\s+(?P<step>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d)) \| (?P<rest>.*)$")
_LLMC_PAREN = re.compile(r"\(\+nanz\)|[()]")
_LLMC_OLD = re.compile(rf"^step (?P<step>\d{{1,18}}(?!\d)): train loss (?P<loss>{_NUM}) \(took (?P<ms>{_NUM}) ms\)\s*$")
_LLMC_VAL = re.compile(rf"^val loss (?P<val>{_NUM})\s*$")


class LlmcParser(Parser):
    """llm.c prints `val loss X` before the line of the next step: it belongs to the last step printed."""

    name = "llmc"
    title = "llm.c"
    triggers = ("step ", "val loss ")
    example = "step    1/74 | train loss 11.009 | norm 15.4 | lr 1.00e-04 | (3034.18 ms | 21597 tok/s)"
    priority = 100

    def __init__(self) -> None:
        self._last_step: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LLMC.match(text)
        if m:
            metrics = self._fields(m.group("rest"))
            if not metrics:
                return False
            metrics["total_steps"] = float(int(m.group("total")))
            self._last_step = int(m.group("step"))
            out.step(self._last_step, metrics)
            return True
        m = _LLMC_OLD.match(text)
        if m:
            loss = parse_number(m.group("loss"))
            ms = parse_number(m.group("ms"))
            if loss is None or ms is None:
                return False
            self._last_step = int(m.group("step"))
            out.step(self._last_step, {"loss": loss, "step_time_s": ms / 1000})
            return True
        m = _LLMC_VAL.match(text)
        if m:
            val = parse_number(m.group("val"))
            if val is None:
                return False
            out.step(self._last_step, {"eval_loss": val})
            return True
        return False

    @staticmethod
    def _fields(rest: str) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for field in _LLMC_PAREN.sub(" ", rest).split("|"):
            words = field.split()
            if len(words) < 2:
                continue
            if words[-1] == "ms" and len(words) == 2:
                value = parse_number(words[0])
                if value is not None:
                    metrics["step_time_s"] = value / 1000
            elif words[-1] == "tok/s" and len(words) == 2:
                value = parse_number(words[0])
                if value is not None:
                    metrics["tokens_per_s"] = value
            elif words[-1] == "MFU" and words[0].endswith("%"):
                mfu = _mfu(words[0][:-1])
                if mfu is not None:
                    metrics["mfu_pct"] = mfu
            else:
                value = parse_number(words[-1])
                if value is None:
                    continue
                label = " ".join(words[:-1])
                name = {"train loss": "loss", "loss": "loss", "norm": "grad_norm", "lr": "lr"}.get(label, snake(label))
                metrics[name] = value
        return metrics
