"""DeepSpeed flops profiler `Profile Summary at step N:` block.

Becomes one `profile` record (kind `deepspeed_flops`, one row named `summary` whose keys are the
summary labels in snake_case without their `= formula` part) and, when it gives the latencies, a
`phases` record for that step. Counts with SI suffixes (`336.23 M`, `6279.86 G`) are expanded,
latencies become seconds (`fwd_latency_s`), FLOPS rates TFLOPS (`fwd_flops_per_gpu_tflops`).
"""

from __future__ import annotations

import re
from typing import Any

from trainwatch.lines.assembler import Kind, Line
from trainwatch.names import snake
from trainwatch.numbers import parse_duration_s, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_BANNER = "DeepSpeed Flops Profiler"
_SUMMARY = re.compile(r"Profile Summary at step (\d{1,18}(?!\d)):")
_KV = re.compile(r"^([A-Za-z][^:]*?):\s+(\S.*?)\s*$")
_COUNT = re.compile(r"^([\d.]+)\s*([KMGTP]?)(?:MACs)?$")
_RATE = re.compile(r"^([\d.]+)\s*([KMGTP]?)FLOPS$")
_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_NOTATION_LINES = 8  # lines from the title to the first number (notation block and a blank line)
_PHASES = {"fwd_latency_s": "forward", "bwd_latency_s": "backward", "step_latency_s": "step"}


def _entry(label: str, text: str) -> tuple[str, float] | None:
    name = snake(label.split(" = ", 1)[0].replace("/", " per "))
    if not name:
        return None
    m = _RATE.match(text)
    if m:
        value = parse_number(m.group(1))
        return None if value is None else (f"{name}_tflops", value * _SCALE[m.group(2)] / 1e12)
    seconds = parse_duration_s(text)
    if seconds is not None and "latency" in name:
        return (f"{name}_s", round(seconds, 9))
    m = _COUNT.match(text)
    if m:
        value = parse_number(m.group(1))
        if value is None:
            return None
        if not m.group(2):
            return (name, int(value) if m.group(1).isdigit() and value.is_integer() else value)
        return (name, value * _SCALE[m.group(2)])
    return None


class FlopsProfilerParser(Parser):
    name = "deepspeed_flops"
    title = "DeepSpeed flops profiler summary"
    triggers = ()  # the summary's lines have nothing in common; idle lines cost one substring test
    example = "Profile Summary at step 10:\nfwd latency:   76.67 ms\nbwd latency:   108.02 ms\nsamples/second:   433.07"
    priority = 90
    samples = (
        Sample(  # deepspeedai/DeepSpeed docs/_tutorials/flops-profiler.md (BERT-Large on an A100)
            "-------------------------- DeepSpeed Flops Profiler --------------------------\n"
            "Profile Summary at step 10:\n"
            "Notations:\n"
            "data parallel size (dp_size), model parallel size(mp_size),\n"
            "number of parameters (params), number of multiply-accumulate operations(MACs),\n"
            "number of floating-point operations (flops), floating-point operations per second (FLOPS),\n"
            "fwd latency (forward propagation latency), bwd latency (backward propagation latency),\n"
            "step (weights update latency), iter latency (sum of fwd, bwd and step latency)\n"
            "\n"
            "world size:                                                   1\n"
            "data parallel size:                                           1\n"
            "model parallel size:                                          1\n"
            "batch size per GPU:                                           80\n"
            "params per gpu:                                               336.23 M\n"
            "params of model = params per GPU * mp_size:                   336.23 M\n"
            "fwd MACs per GPU:                                             3139.93 G\n"
            "fwd flops per GPU:                                            6279.86 G\n"
            "fwd flops of model = fwd flops per GPU * mp_size:             6279.86 G\n"
            "fwd latency:                                                  76.67 ms\n"
            "bwd latency:                                                  108.02 ms\n"
            "fwd FLOPS per GPU = fwd flops per GPU / fwd latency:          81.9 TFLOPS\n"
            "bwd FLOPS per GPU = 2 * fwd flops per GPU / bwd latency:      116.27 TFLOPS\n"
            "fwd+bwd FLOPS per GPU = 3 * fwd flops per GPU / (fwd+bwd latency):   102.0 TFLOPS\n"
            "step latency:                                                 34.09 us\n"
            "iter latency:                                                 184.73 ms\n"
            "samples/second:                                               433.07\n"
            "\n",
            phases=((10, {"forward": 0.07667, "backward": 0.10802, "step": 34.09e-6}),),
            profiles=(
                (
                    "summary",
                    {
                        "world_size": 1,
                        "batch_size_per_gpu": 80,
                        "params_per_gpu": 336.23e6,
                        "fwd_macs_per_gpu": 3139.93e9,
                        "fwd_flops_per_gpu": 6279.86e9,
                        "fwd_latency_s": 0.07667,
                        "fwd_flops_per_gpu_tflops": 81.9,
                        "fwd_bwd_flops_per_gpu_tflops": 102.0,
                        "iter_latency_s": 0.18473,
                        "samples_per_second": 433.07,
                    },
                ),
            ),
        ),
    )

    def __init__(self) -> None:
        self._step: int | None = None
        self._line = 0
        self._row: dict[str, Any] | None = None
        self._banner_line = -10

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if line.kind is Kind.FRAME:
            return False
        if self._row is None:
            if "Profile" not in text:
                return False
            if _BANNER in text:
                self._banner_line = line.no
                return True
            m = _SUMMARY.search(text)
            if m and line.no - self._banner_line <= 2:
                self._step, self._line, self._row = int(m.group(1)), line.no, {"name": "summary"}
                return True
            return False
        m = _KV.match(text.strip())
        if m:
            entry = _entry(m.group(1), m.group(2))
            if entry is not None:
                self._row[entry[0]] = entry[1]
                return True
        if (not text.strip() or "-----" in text) and len(self._row) > 1:
            self._emit(out)
            return False
        # Notation lines (`data parallel size (dp_size), ...`) sit between the title and the numbers.
        if len(self._row) == 1 and line.no - self._line <= _NOTATION_LINES:
            return True
        self._emit(out)
        return False

    def at_eof(self, out: Emitter) -> None:
        self._emit(out)

    def finish(self, out: Emitter) -> None:
        self._emit(out)

    def _emit(self, out: Emitter) -> None:
        row, self._row = self._row, None
        if row is None or len(row) <= 1:
            return
        out.profile("DeepSpeed Flops Profiler", "deepspeed_flops", [row], step=self._step, line=self._line)
        phases = {phase: row[key] for key, phase in _PHASES.items() if key in row}
        if phases:
            out.phases(self._step, phases, line=self._line)
