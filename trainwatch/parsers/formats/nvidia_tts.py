"""NVIDIA's Tacotron 2 trainer (NVIDIA/tacotron2 and its forks: Mellotron, many voice-cloning repos):

    Train loss 64998 0.302735 Grad Norm 0.958112 4.36s/it
    Validation loss 61000:  0.325403

`print("Train loss {} {:.6f} Grad Norm {:.6f} {:.2f}s/it".format(iteration, ...))`: the number after
`loss` is the iteration (global; it does not restart per epoch), then the loss. The validation line
names the iteration it ran at. `Saving model and optimizer state at iteration N` is a checkpoint
(`checkpoints.py`); `Epoch: N` a header the generic layer reads.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_NUM = NUMBER
_TRAIN = re.compile(
    rf"^\s*Train loss (?P<step>\d{{1,12}}) (?P<loss>{_NUM}) Grad Norm (?P<norm>{_NUM}) (?P<secs>{_NUM})s/it\s*$"
)
_VALIDATION = re.compile(rf"^\s*Validation loss (?P<step>\d{{1,12}}):\s+(?P<loss>{_NUM})\s*$")


class NvidiaTacotronParser(Parser):
    name = "nvidia_tts"
    title = "NVIDIA Tacotron 2 trainer"
    triggers = ("Train loss ", "Validation loss ")
    example = "Train loss 64998 0.302735 Grad Norm 0.958112 4.36s/it"
    priority = 100
    samples = (
        Sample(  # NVIDIA/tacotron2: a 3-GPU run's first iteration and its validation
            "Epoch: 0\n"
            "Train loss 0 48.220909 Grad Norm 13.484264 5.71s/it\n"
            "Validation loss 0: 37.061010  \n"
            "Train loss 1 35.229748 Grad Norm 25.020286 3.79s/it\n",
            steps=(
                (0, {"loss": 48.220909, "grad_norm": 13.484264, "step_time_s": 5.71, "eval_loss": 37.06101}),
                (1, {"loss": 35.229748}),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _TRAIN.match(text)
        if m is not None:
            values = [parse_number(m.group(g)) for g in ("loss", "norm", "secs")]
            metrics = {k: v for k, v in zip(("loss", "grad_norm", "step_time_s"), values, strict=True) if v is not None}
            out.step(int(m.group("step")), metrics)
            return True
        m = _VALIDATION.match(text)
        if m is None:
            return False
        loss = parse_number(m.group("loss"))
        if loss is None:
            return False
        out.step(int(m.group("step")), {"eval_loss": loss})
        return True
