"""`torch.profiler` / `torch.autograd.profiler` `key_averages().table()` output.

The table's rule line (`-----  -----  ...`) gives each column's span, so cells are cut by
position: names may contain spaces and `Input Shapes` cells contain commas and spaces.
Durations (`13.980ms`, `3.916s`, `140.000us`) become seconds (`_s`), `%` columns `_pct`,
memory (`1.50 Gb`, `-512 b`) GiB (`_gib`), `# of Calls` `calls`.
"""

from __future__ import annotations

import re
from typing import Any

from trainwatch.lines.assembler import Kind, Line
from trainwatch.names import snake
from trainwatch.numbers import parse_duration_s, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_RULE = re.compile(r"^-{3,}(?: {1,3}-{3,})+\s*$")
_MEM = re.compile(r"^(-?[\d.]+) (b|Kb|Mb|Gb|Tb)$")
_MEM_GIB = {"b": 1 / 1024**3, "Kb": 1 / 1024**2, "Mb": 1 / 1024, "Gb": 1.0, "Tb": 1024.0}
_TEXT_COLUMNS = {"input_shapes", "source_location", "node_id", "stack"}


def _spans(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", rule.rstrip())]


def _cut(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """Cells by column span; a cell may overflow its span to the left (right-aligned numbers)."""
    cells = []
    prev_end = 0
    for i, (_, end) in enumerate(spans):
        stop = end if i < len(spans) - 1 else len(text)
        cells.append(text[prev_end:stop].strip())
        prev_end = stop
    return cells


def _key(header: str) -> str:
    if header.strip() == "# of Calls":
        return "calls"
    return snake(header)


def _cell_value(key: str, cell: str) -> tuple[str, Any] | None:
    if key in _TEXT_COLUMNS or key == "name":
        return (key, cell) if cell else None
    if cell.endswith("%"):
        value = parse_number(cell[:-1])
        return None if value is None else (key, value)
    number = parse_number(cell)
    if number is not None:
        return (key, int(cell) if cell.lstrip("-").isdigit() and len(cell) <= 18 else number)
    seconds = parse_duration_s(cell)
    if seconds is not None:
        return (f"{key}_s", round(seconds, 12))
    m = _MEM.match(cell)
    amount = parse_number(m.group(1)) if m else None
    if m and amount is not None:
        return (f"{key}_gib", amount * _MEM_GIB[m.group(2)])
    return (key, cell) if cell else None


class TorchProfilerParser(Parser):
    name = "torch_profiler"
    title = "torch.profiler key_averages() table"
    triggers = ("---", "%")
    example = (
        "Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg  ...  # of Calls\n"
        "train_step-0         0.17%      13.980ms        47.17%        3.916s        3.916s  ...  1"
    )
    priority = 90
    samples = (
        Sample(  # seed 001 (a MoE training step, CPU + CUDA columns), lines 1-6
            "-------------------------------------------------------  ------------  ------------  ------------  "
            "------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
            "                                                   Name    Self CPU %      Self CPU   CPU total %     "
            "CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls  \n"
            "-------------------------------------------------------  ------------  ------------  ------------  "
            "------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
            "                                           train_step-0         0.17%      13.980ms        47.17%       "
            " 3.916s        3.916s       0.000us         0.00%      46.271ms      46.271ms             1  \n"
            "                               cudaEventCreateWithFlags         0.00%     140.000us         0.00%     "
            "140.000us       1.474us       0.000us         0.00%       0.000us       0.000us            95  \n"
            "                                        cudaEventRecord         0.00%     204.000us         0.00%     "
            "204.000us       1.229us       0.000us         0.00%       0.000us       0.000us           166  \n",
            profiles=(
                (
                    "train_step-0",
                    {
                        "self_cpu_pct": 0.17,
                        "self_cpu_s": 0.01398,
                        "cpu_total_pct": 47.17,
                        "cpu_total_s": 3.916,
                        "cpu_time_avg_s": 3.916,
                        "self_cuda_s": 0.0,
                        "cuda_total_s": 0.046271,
                        "calls": 1,
                    },
                ),
                ("cudaEventCreateWithFlags", {"self_cpu_s": 140e-6, "cpu_time_avg_s": 1.474e-6, "calls": 95}),
                ("cudaEventRecord", {"self_cpu_s": 204e-6, "calls": 166}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._rule: str | None = None  # last rule line, before the header is known
        self._rule_line = 0
        self._spans: list[tuple[int, int]] = []
        self._columns: list[str] | None = None
        self._header_line = 0
        self._body = False  # the rule under the header was seen
        self._rows: list[dict[str, Any]] = []

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if line.kind is Kind.FRAME:
            return False
        if self._columns is None:
            if _RULE.match(text):
                self._rule, self._rule_line = text, line.no
                return True
            if self._rule is not None and line.no == self._rule_line + 1 and "Self CPU" in text and "Name" in text:
                spans = _spans(self._rule)
                # Labels are split on runs of spaces: one too long for its column (`CUDA time avg`)
                # shifts the labels after it, while the rows below stay aligned to the rule.
                cells = re.split(r"\s{2,}", text.strip())
                if cells and cells[0] == "Name" and len(cells) == len(spans):
                    self._spans, self._columns = spans, [_key(c) for c in cells]
                    self._header_line, self._body, self._rows = self._rule_line, False, []
                    return True
            return False
        if _RULE.match(text):
            if not self._body:
                self._body = True
                return True
            self._emit(out)
            return True
        cells = _cut(text, self._spans)
        row: dict[str, Any] = {}
        for key, cell in zip(self._columns, cells, strict=False):
            kv = _cell_value(key, cell)
            if kv is not None:
                row[kv[0]] = kv[1]
        if not self._body or "name" not in row or len(row) < 3:
            self._emit(out)
            return False
        self._rows.append(row)
        return True

    def finish(self, out: Emitter) -> None:
        self._emit(out)

    def _emit(self, out: Emitter) -> None:
        if self._columns is not None and self._rows:
            out.profile("torch.profiler key_averages", "torch_profiler", self._rows, line=self._header_line)
        self._columns = None
        self._rule = None
        self._rows = []
