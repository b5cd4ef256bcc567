"""NeMo 2 (`nemo.lightning`) ProgressPrinter lines, as NeMo and BioNeMo recipes print them:

    Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 | global_step: 120 | reduced_train_loss: 1.233 | train_step_timing in s: 0.03146 | val_loss: 4.106

`format_string` appends ` | {metric}: {value:.4}` for every logged metric, so the last field has no
closing `|` (unlike Megatron's iteration line, whose unclosed tail is a torn write). The step is
`global_step` where it is logged (the optimizer step), else the iteration as printed; the
iteration's `/M` is `total_steps`. `reduced_train_loss` is the loss, `train_step_timing in s` the
step time, `val_loss` the last validation loss (repeated on every line until the next validation).
An earlier form ends its prefix with a colon: `Epoch 0, iteration 5/100: | ...`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import named_value

_LINE = re.compile(
    r"^(?:Training epoch|Epoch) (?P<epoch>\d{1,9}), iteration (?P<n>\d{1,18})/(?P<m>\d{1,18}):?"
    r"(?P<fields>(?: \| [^|:]+: [^|]*)+?)\s*$"
)
_STEP_KEY = "global_step"


class NeMoProgressParser(Parser):
    name = "nemo"
    title = "NeMo 2 ProgressPrinter"
    triggers = (", iteration ",)
    example = "Training epoch 0, iteration 120/149 | lr: 3e-05 | global_step: 120 | reduced_train_loss: 1.233"
    priority = 90  # before Megatron's iteration lines, which read an unclosed last field as torn
    samples = (
        Sample(  # NVIDIA-BioNeMo/bionemo-recipes PR #740
            "Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 | global_batch_size: 1 | "
            "global_step: 120 | reduced_train_loss: 1.233 | train_step_timing in s: 0.03146 | val_loss: 4.106\n"
            "Training epoch 0, iteration 121/149 | lr: 3e-05 | consumed_samples: 122 | global_batch_size: 1 | "
            "global_step: 121 | reduced_train_loss: 1.288 | train_step_timing in s: 0.03163 | val_loss: 4.106\n",
            steps=(
                (
                    120,
                    {
                        "loss": 1.233,
                        "lr": 3e-05,
                        "step_time_s": 0.03146,
                        "eval_loss": 4.106,
                        "total_steps": 149,
                        "consumed_samples": 121,
                        "epoch": 0,
                    },
                ),
                (121, {"loss": 1.288, "step_time_s": 0.03163}),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.match(text)
        if m is None:
            return False
        step = int(m.group("n"))
        metrics: dict[str, float] = {"epoch": float(m.group("epoch")), "total_steps": float(m.group("m"))}
        for field in m.group("fields").split(" | ")[1:]:
            key, _, raw = field.rpartition(": ")
            value = parse_number(raw.strip())
            if value is None:
                continue
            if key == _STEP_KEY and value.is_integer() and value >= 0:
                step = int(value)
                continue
            named = named_value(key.strip(), value)
            if named is not None:
                metrics.setdefault(*named)
        out.step(step, metrics)
        return True
