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

import math
import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_duration_s, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

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
    samples = (
        Sample(  # karpathy/nanoGPT issue #215 (timestamped): eval, checkpoint, then the loss turns NaN
            "2023-03-22 09:31:56 iter 2990: loss 3.8853, time 1096.65ms, mfu 15.34%\n"
            "2023-03-22 09:32:32 step 3000: train loss 4.0390, val loss 4.0427\n"
            "saving checkpoint to out\n"
            "2023-03-22 09:32:41 iter 3000: loss 4.2490, time 35392.33ms, mfu 13.85%\n"
            "2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%\n",
            steps=(
                (2990, {"loss": 3.8853, "step_time_s": 1.09665, "mfu_pct": 15.34}),
                (3000, {"eval_loss": 4.0427, "eval_train_loss": 4.0390}),
                (3000, {"loss": 4.2490, "step_time_s": 35.39233, "mfu_pct": 13.85}),
                (3010, {"loss": math.nan, "step_time_s": 1.01995}),
            ),
            events=("checkpoint", "nan"),
        ),
    )

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
    samples = (
        Sample(  # karpathy/nanochat PR #147 (A100 run)
            "step 00004/21400 (0.02%) | loss: 8.893647 | lrm: 1.00 | dt: 989.44ms | tok/sec: 529,882 | mfu: 74.13 | "
            "total time: 0.00m\n"
            "step 00005/21400 (0.02%) | loss: 8.530593 | lrm: 1.00 | dt: 991.09ms | tok/sec: 529,000 | mfu: 74.00 | "
            "total time: 0.00m\n",
            steps=(
                (
                    4,
                    {
                        "total_steps": 21400,
                        "loss": 8.893647,
                        "lrm": 1.0,
                        "step_time_s": 0.98944,
                        "tokens_per_s": 529882,
                        "mfu_pct": 74.13,
                    },
                ),
                (5, {"loss": 8.530593, "step_time_s": 0.99109, "tokens_per_s": 529000}),
            ),
        ),
        Sample(  # karpathy/nanochat PR #492: an evaluation summary line
            "Step 16704 | CORE metric: 0.2633\n",
            steps=((16704, {"core_metric": 0.2633}),),
        ),
    )

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
    samples = (
        Sample(  # ../shared/real_logs/moddednanogpt__* (AkramjitS/gpt-lab-diffusion train.log), lines 7724-7728
            "step:1999/20000 train_loss:2.496552e-02 train_time:8854576ms step_avg:4429.50ms\n"
            "step:2000/20000 train_loss:2.652339e-02 train_time:8858907ms step_avg:4429.45ms\n"
            "Validating on 40960 tokens (10 steps with 4096 batch size)\n"
            "step:2000/20000 val_loss:2.4931e-02 train_time:8858907ms step_avg:4429.45ms\n"
            "Saved checkpoint to experiments/20250530_144815_ModdedGPT/state_step002000.pt\n",
            steps=(
                (1999, {"total_steps": 20000, "loss": 0.02496552, "train_time_s": 8854.576, "step_avg_s": 4.4295}),
                # step_time_s: 8858907 - 8854576 ms of training time over one step
                (2000, {"loss": 0.02652339, "train_time_s": 8858.907, "step_time_s": 4.331}),
                (2000, {"eval_loss": 0.024931}),
            ),
            events=("checkpoint",),
        ),
    )

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
    samples = (
        Sample(  # a public llm.c train_gpt2cu run (GPT-2 124M on fineweb): val loss before step 1, MFU not yet known
            "val loss 11.006021\n"
            "step    1/21479 | loss 11.007906 (+nanz)| norm 16.3235 (+nanz)| lr 2.86e-06 | 2734.72 ms | -100.0% bf16 MFU "
            "| 167751 tok/s\n"
            "step    2/21479 | loss 10.829729 (+nanz)| norm 15.0011 (+nanz)| lr 5.71e-06 | 2391.52 ms | -100.0% bf16 MFU "
            "| 191824 tok/s\n",
            steps=(
                (None, {"eval_loss": 11.006021}),
                (
                    1,
                    {
                        "total_steps": 21479,
                        "loss": 11.007906,
                        "grad_norm": 16.3235,
                        "lr": 2.86e-06,
                        "step_time_s": 2.73472,
                        "tokens_per_s": 167751,
                    },
                ),
                (2, {"loss": 10.829729, "grad_norm": 15.0011, "step_time_s": 2.39152}),
            ),
        ),
        Sample(  # anthonix/llm.c issue #2 (AMD fork): NaN losses, `val loss` after the step it belongs to
            "step   19/74 | loss     nan (+nanz)| norm    nan (+nanz)| lr 3.00e-04 | 36.67 ms | 9.2% bf16 MFU "
            "| 111885 tok/s\n"
            "step   20/74 | loss     nan (+nanz)| norm    nan (+nanz)| lr 3.00e-04 | 36.74 ms | 9.1% bf16 MFU "
            "| 111854 tok/s\n"
            "val loss nan\n",
            steps=(
                (19, {"loss": math.nan, "grad_norm": math.nan, "lr": 3e-4, "step_time_s": 0.03667, "mfu_pct": 9.2}),
                (20, {"eval_loss": math.nan, "mfu_pct": 9.1, "tokens_per_s": 111854}),
            ),
            events=("nan",),
        ),
    )

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
