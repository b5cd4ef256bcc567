"""VITS-family trainers (VITS, FreeVC, so-vits-svc, RVC, Bert-VITS2, GPT-SoVITS), which log a report as
lines through `logger.info`:

    INFO:freevc:Train Epoch: 1515 [70%]
    INFO:freevc:[2.06, 3.00, 14.57, 20.43, 2.24, 845200, 0.00016534851772726235]
    INFO:Zumndamon_Model:Train Epoch: 9 [20%]                       (RVC)
    INFO:Zumndamon_Model:[4200, 9.990004373906418e-05]
    INFO:Zumndamon_Model:loss_disc=3.959, loss_gen=3.062, loss_fm=7.881,loss_mel=17.356, loss_kl=1.535

The bare list after `Train Epoch: E [P%]` is the report: its last two values are the global step and
the learning rate; the values before them are the GAN's losses in the script's order (discriminator,
generator, feature matching, mel, KL), kept as `loss_0` ... since the list does not name them; RVC
prints the names on the next line (`loss_disc=...`), which join the same step. There is no single
total loss, so no `loss`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_EPOCH = re.compile(r"\bTrain Epoch: (?P<epoch>\d{1,9}) \[(?P<pct>\d{1,3}(?:\.\d+)?)%\]\s*$")
_LIST = re.compile(r"(?:^|:)\[(?P<items>[-+\d.eE, ]+)\]\s*$")
_NAMED = re.compile(r"(?P<key>loss_[a-z_]+|grad_norm_[a-z]+)=(?P<value>[-+\d.eE]+|nan|inf)")


class VitsParser(Parser):
    name = "vits"
    title = "VITS-family trainers (VITS, FreeVC, so-vits-svc, RVC)"
    triggers = ("Train Epoch: ", ":[", "loss_disc=")
    example = "INFO:freevc:[2.06, 3.00, 14.57, 20.43, 2.24, 845200, 0.00016534851772726235]"
    priority = 100
    samples = (
        Sample(  # RVC-Project/Retrieval-based-Voice-Conversion-WebUI issue #702
            "INFO:Zumndamon_Model:Train Epoch: 9 [20%]\n"
            "INFO:Zumndamon_Model:[4200, 9.990004373906418e-05]\n"
            "INFO:Zumndamon_Model:loss_disc=3.959, loss_gen=3.062, loss_fm=7.881,loss_mel=17.356, loss_kl=1.535\n",
            steps=((4200, {"epoch": 9, "lr": 9.990004373906418e-05, "loss_mel": 17.356, "loss_disc": 3.959}),),
        ),
        Sample(  # OlaWod/FreeVC issue #58: the VITS list, losses then step and learning rate
            "INFO:freevc:Train Epoch: 1515 [70%]\n"
            "INFO:freevc:[2.0600645542144775, 3.001354932785034, 14.571150779724121, 20.43256950378418, "
            "2.2390851974487305, 845200, 0.00016534851772726235]\n",
            steps=((845200, {"epoch": 1515, "lr": 0.00016534851772726235, "loss_3": 20.43256950378418}),),
        ),
    )

    def __init__(self) -> None:
        self._epoch: float | None = None  # the epoch of the `Train Epoch` line just before
        self._step: int | None = None  # the step of the last report, for the named losses after it

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _EPOCH.search(text)
        if m is not None:
            self._epoch = float(m.group("epoch"))
            return True
        if self._epoch is None:
            return False
        listed = _LIST.search(text)
        if listed is not None:
            values = [parse_number(v) for v in listed.group("items").split(",")]
            if len(values) < 2 or any(v is None for v in values):
                return False
            step, lr = values[-2], values[-1]
            if step is None or lr is None or not step.is_integer() or step < 0:
                return False
            metrics: dict[str, float] = {"epoch": self._epoch, "lr": lr}
            for i, value in enumerate(values[:-2]):
                if value is not None:
                    metrics[f"loss_{i}"] = value
            self._step = int(step)
            out.step(self._step, metrics)
            return True
        named = dict((k, parse_number(v)) for k, v in _NAMED.findall(text)) if self._step is not None else {}
        found = {k: v for k, v in named.items() if v is not None}
        if not found or self._step is None:
            return False
        out.step(self._step, found)
        return True
