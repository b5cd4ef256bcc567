"""nanotron (Hugging Face): one `|`-separated line per logged iteration, values in human units.

    [0434:0]:11/01/2024 11:05:18 [INFO|DP=0|PP=0|TP=0|lrdn0434]: iteration: 12001 / 17500 |
        consumed_tokens: 25.2G | elapsed_time_per_iteration_ms: 28.2K | tokens_per_sec: 74.5K |
        tokens_per_sec_per_gpu: 2.33K | global_batch_size: 1.02K | lm_loss: 2.3 | lr: 0.000289 |
        model_tflops_per_gpu: 26.7 | hardware_tflops_per_gpu: 26.7 | grad_norm: 0.15 |
        cuda_memory_allocated: 8.86G | cuda_max_memory_reserved: 34.1G | hd_total_memory_tb: 9.25T | ...

nanotron prints every number with a K/M/G/T suffix (`human_format`): `28.2K` ms is 28.2 s, `74.5K`
tokens/s is 74,500, and the CUDA memory figures are bytes (`8.86G` is 8.86e9 bytes, 8.25 GiB).
`model_tflops_per_gpu` is the model FLOPs figure (`tflops`); disk-space fields are not training metrics.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import read_group

_LINE = re.compile(r"\biteration: (?P<step>\d{1,12}) / (?P<total>\d{1,12}) \|(?P<rest>.*)$")
_BYTES = {"cuda_memory_allocated": "mem_gib", "cuda_max_memory_reserved": "max_mem_gib"}
_GIB = float(1 << 30)


class NanotronParser(Parser):
    name = "nanotron"
    title = "nanotron"
    triggers = ("consumed_tokens: ",)
    example = "iteration: 991 / 1000 | consumed_tokens: 634K | elapsed_time_per_iteration_ms: 45 | lm_loss: 10.6"
    priority = 100
    samples = (
        Sample(  # huggingface/nanotron PR #23, issue #233 (srun label, DP/PP/TP logger prefix)
            "01/17/2024 13:47:27 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 991 / 1000 | consumed_tokens: "
            "634K | elapsed_time_per_iteration_ms: 45 | tokens_per_sec: 14.2K | tokens_per_sec_per_gpu: 1.78K | "
            "global_batch_size: 20 | lm_loss: 10.6 | lr: 1e-05 | model_tflops_per_gpu: 0.00869 | "
            "hardware_tflops_per_gpu: 0.00869 | grad_norm: 0.515 | cuda_memory_allocated: 75.2M | "
            "cuda_max_memory_reserved: 547M |\n"
            "[0434:0]:11/01/2024 11:05:18 [INFO|DP=0|PP=0|TP=0|lrdn0434]: iteration: 12001 / 17500 | "
            "consumed_tokens: 25.2G | elapsed_time_per_iteration_ms: 28.2K | tokens_per_sec: 74.5K | "
            "tokens_per_sec_per_gpu: 2.33K | global_batch_size: 1.02K | lm_loss: 2.3 | lr: 0.000289 | "
            "model_tflops_per_gpu: 26.7 | hardware_tflops_per_gpu: 26.7 | grad_norm: 0.15 | "
            "cuda_memory_allocated: 8.86G | cuda_max_memory_reserved: 34.1G | hd_total_memory_tb: 9.25T |\n",
            steps=(
                (991, {"total_steps": 1000, "loss": 10.6, "step_time_s": 0.045, "tokens_per_s": 14200.0}),
                (
                    12001,
                    {
                        "loss": 2.3,
                        "lr": 0.000289,
                        "step_time_s": 28.2,
                        "tokens_per_s": 74500,
                        "tokens_per_s_per_gpu": 2330,
                        "tflops": 26.7,
                        "grad_norm": 0.15,
                        "mem_gib": 8.86e9 / _GIB,
                    },
                ),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.search(text)
        reading = read_group(m)
        if m is None or reading is None:
            return False
        metrics: dict[str, float] = {}
        for name, value in reading.metrics.items():
            if name.startswith("hd_"):
                continue  # disk space of the node
            if name in _BYTES:
                metrics[_BYTES[name]] = value / _GIB
            elif name == "model_tflops_per_gpu":
                metrics["tflops"] = value
            else:
                metrics.setdefault(name, value)
        metrics["total_steps"] = float(m.group("total"))
        out.step(int(m.group("step")), metrics)
        return True
