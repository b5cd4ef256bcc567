"""DeepSpeed-Chat RLHF step 3 (PPO): a step line, then the throughput line of that step.

    epoch: 0|step: 259|ppo_ep: 1|act_loss: 0.0253753662109375|cri_loss: 0.2144775390625|unsuper_loss: 0.0
    |E2E latency=7.99s |Gather latency=0.00s (0.00%) |Generate time=5.26s (65.81%) |Training time=2.52s (31.46%)
        |Others=0.22 (2.73%)|CurSamplesPerSec=8.01 |AvgSamplesPerSec=8.01

The actor's loss (`act_loss`) is the run's loss, the critic's keeps its name. `print_throughput_step3`
runs after the step line, so the `E2E latency` line belongs to the step printed before it: its
end-to-end latency is the step time, `CurSamplesPerSec` the throughput, and generation versus
training time the step's two phases.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import read_fields

_STEP = re.compile(r"\bepoch: (?P<epoch>\d{1,9})\|step: (?P<step>\d{1,18})\|(?P<rest>.*\bact_loss: .*)$")
_E2E = re.compile(
    r"\|E2E latency=(?P<e2e>[\d.]+)s\s*\|.*?Generate time=(?P<gen>[\d.]+)s.*?\|Training time=(?P<train>[\d.]+)s"
    r".*?CurSamplesPerSec=(?P<sps>[\d.]+)"
)


class DeepSpeedChatParser(Parser):
    name = "deepspeed_chat"
    title = "DeepSpeed-Chat (RLHF step 3)"
    triggers = ("|step: ", "E2E latency=")
    example = "epoch: 0|step: 259|ppo_ep: 1|act_loss: 0.0254|cri_loss: 0.2145|unsuper_loss: 0.0"
    priority = 100
    samples = (
        Sample(  # DeepSpeedExamples, committed step-3 training log
            "epoch: 0|step: 0|ppo_ep: 1|act_loss: 0.2099609375|cri_loss: 0.12042236328125|unsuper_loss: 0.0\n"
            "|E2E latency=7.99s |Gather latency=0.00s (0.00%) |Generate time=5.26s (65.81%) |Training time=2.52s "
            "(31.46%) |Others=0.22 (2.73%)|CurSamplesPerSec=8.01 |AvgSamplesPerSec=8.01\n"
            "epoch: 0|step: 1|ppo_ep: 1|act_loss: inf|cri_loss: inf|unsuper_loss: 0.0\n",
            steps=(
                (0, {"loss": 0.2099609375, "cri_loss": 0.12042236328125, "epoch": 0}),
                (0, {"step_time_s": 7.99, "samples_per_s": 8.01}),
                (1, {"loss": float("inf")}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._last_step: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _STEP.search(text)
        if m is not None:
            reading = read_fields(m.group("rest").replace("|", " | "))
            if reading is None:
                return False
            metrics = dict(reading.metrics)
            if "act_loss" in metrics:
                metrics["loss"] = metrics.pop("act_loss")
            metrics["epoch"] = float(m.group("epoch"))
            self._last_step = int(m.group("step"))
            out.step(self._last_step, metrics)
            return True
        m = _E2E.search(text)
        if m is None:
            return False
        out.step(self._last_step, {"step_time_s": float(m.group("e2e")), "samples_per_s": float(m.group("sps"))})
        out.phases(self._last_step, {"generation": float(m.group("gen")), "training": float(m.group("train"))})
        return True
