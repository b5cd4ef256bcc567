"""PyTorch Lightning profiler reports: SimpleProfiler tables and AdvancedProfiler cProfile dumps.

SimpleProfiler layouts: `Action | Mean duration (s) | Total time (s)` (0.x), the tab-separated
extended one with `Num calls` and `Percentage %` and a `Total` row (1.x), and the `|`-framed one
(>= 1.6). The old layouts have no closing rule, so a table also ends at the first line that is not
a row (blank lines included, hence no triggers) or when the input pauses.
AdvancedProfiler prints one `Profile stats for: <action>` cProfile table per action.
"""

from __future__ import annotations

import re
from typing import Any

from trainwatch.lines.assembler import Kind, Line
from trainwatch.names import snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_TITLE = re.compile(r"^\s*((?:[A-Z]+ )?Profiler Report)\s*$")
_RULE = re.compile(r"^\s*-{20,}\s*$")
_STATS_FOR = re.compile(r"^\s*Profile stats for: (.+?)\s*$")
_CPROFILE_HEADER = re.compile(r"^\s*ncalls\s+tottime\s+percall\s+cumtime\s+percall\s+filename:lineno\(function\)")
_CPROFILE_ROW = re.compile(
    r"^\s*(\d{1,18}(?!\d))(?:/(\d{1,18}(?!\d)))?\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S.*?)\s*$"
)
_CPROFILE_PREAMBLE = re.compile(r"function calls|^\s*Ordered by:|^\s*List reduced from|^\s*Random listing order")


def _cells(text: str) -> list[str]:
    cells = [c.strip() for c in text.split("|")]
    if cells and not cells[0] and text.lstrip().startswith("|"):
        cells = cells[1:]
    if cells and not cells[-1]:
        cells = cells[:-1]
    return cells


def _column_key(header: str) -> str:
    key = snake(header)
    return {"action": "name", "num_calls": "num_calls"}.get(key, key)


def _value(text: str) -> float | int | None:
    value = parse_number(text.rstrip("%").strip())
    if value is None:
        return None
    t = text.strip()
    if t.isdigit() and len(t) <= 18:
        return int(t)
    return value


class LightningProfilerParser(Parser):
    name = "lightning_profiler"
    title = "PyTorch Lightning profiler report"
    triggers = ()
    example = (
        "FIT Profiler Report\n"
        "Action   |  Mean duration (s) |Num calls |  Total time (s) |  Percentage %  |\n"
        "run_training_epoch  |  3.5012  |500  |  1750.6  |  98.676  |"
    )
    priority = 90
    samples = (
        Sample(  # seed 000 (Lightning 1.x SimpleProfiler, tab-separated with a Total row), lines 1-9
            "FIT Profiler Report\n"
            "\n"
            "Action                             \t|  Mean duration (s)\t|Num calls      \t|  Total time (s) \t|  "
            "Percentage %   \t|\n"
            "--------------------------------------------------------------------------------------------------------"
            "------------------------------\n"
            "Total                              \t|  -              \t|_              \t|  1774.1         \t|  100 %     "
            "     \t|\n"
            "--------------------------------------------------------------------------------------------------------"
            "------------------------------\n"
            "run_training_epoch                 \t|  3.5012         \t|500            \t|  1750.6         \t|  98.676    "
            "     \t|\n"
            "run_training_batch                 \t|  0.20786        \t|8000           \t|  1662.9         \t|  93.73     "
            "     \t|\n"
            "training_step_and_backward         \t|  0.19617        \t|8000           \t|  1569.4         \t|  88.461    "
            "     \t|\n",
            profiles=(
                ("Total", {"total_time_s": 1774.1, "percentage_pct": 100}),
                (
                    "run_training_epoch",
                    {"mean_duration_s": 3.5012, "num_calls": 500, "total_time_s": 1750.6, "percentage_pct": 98.676},
                ),
                ("run_training_batch", {"mean_duration_s": 0.20786, "num_calls": 8000, "total_time_s": 1662.9}),
            ),
        ),
        Sample(  # Lightning 0.7 docs (profiler.rst), quoted in issue #15785: no calls, no closing rule
            "Profiler Report\n"
            "\n"
            "Action                  |  Mean duration (s)    |  Total time (s)\n"
            "-----------------------------------------------------------------\n"
            "on_epoch_start          |  5.993e-06            |  5.993e-06\n"
            "get_train_batch         |  0.0087412            |  16.398\n"
            "on_batch_start          |  5.0865e-06           |  0.0095372\n"
            "model_forward           |  0.0017818            |  3.3408\n",
            profiles=(
                ("on_epoch_start", {"mean_duration_s": 5.993e-06, "total_time_s": 5.993e-06}),
                ("get_train_batch", {"mean_duration_s": 0.0087412, "total_time_s": 16.398}),
                ("on_batch_start", {"mean_duration_s": 5.0865e-06, "total_time_s": 0.0095372}),
                ("model_forward", {"mean_duration_s": 0.0017818, "total_time_s": 3.3408}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._title: tuple[str, int] | None = None  # last report title and its line
        self._columns: list[str] | None = None
        self._rows: list[dict[str, Any]] = []
        self._start = 0
        self._table_title = ""
        self._kind = ""
        self._data_rows = 0

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if line.kind is Kind.FRAME:
            return False
        if self._columns is None:
            return self._idle(text, line)
        if self._kind == "lightning_simple":
            return self._simple_row(text, line, out)
        return self._cprofile_row(text, line, out)

    def at_eof(self, out: Emitter) -> None:
        self._emit(out)

    def finish(self, out: Emitter) -> None:
        self._emit(out)

    # -------------------------------------------------------------- states
    def _idle(self, text: str, line: Line) -> bool:
        if "Profiler Report" in text:
            m = _TITLE.match(text)
            if m:
                self._title = (m.group(1), line.no)
                return True
            return False
        if "Mean duration (s)" in text and "|" in text:
            cells = _cells(text)
            if len(cells) >= 3 and cells[0] == "Action":
                self._open("lightning_simple", [_column_key(c) for c in cells], self._report_title(line), line)
                return True
            return False
        if "Profile stats for:" in text:
            m = _STATS_FOR.match(text)
            if m:
                self._open("lightning_advanced", [], f"Profile stats for: {m.group(1)}", line)
                return True
        return False

    def _report_title(self, line: Line) -> str:
        if self._title is not None and line.no - self._title[1] <= 4:
            return self._title[0]
        return "Profiler Report"

    def _open(self, kind: str, columns: list[str], title: str, line: Line) -> None:
        self._kind, self._columns, self._table_title = kind, columns, title
        self._rows, self._start, self._data_rows = [], line.no, 0

    def _simple_row(self, text: str, line: Line, out: Emitter) -> bool:
        assert self._columns is not None
        if _RULE.match(text):
            if self._data_rows:
                self._emit(out)
            return True
        cells = _cells(text)
        if "|" not in text or len(cells) != len(self._columns):
            self._emit(out)
            return self._idle(text, line)
        row: dict[str, Any] = {"name": cells[0]}
        for key, cell in zip(self._columns[1:], cells[1:], strict=True):
            value = _value(cell)
            if value is not None:
                row[key] = value
            elif cell not in ("-", "_"):
                self._emit(out)  # not a row of this table after all
                return False
        self._rows.append(row)
        if cells[0] != "Total":
            self._data_rows += 1
        return True

    def _cprofile_row(self, text: str, line: Line, out: Emitter) -> bool:
        m = _CPROFILE_ROW.match(text)
        times = [parse_number(t) for t in m.groups()[2:6]] if m else []
        if m and None not in times:  # `1.2.3` in a time column: not a cProfile row
            ncalls, primitive, _tottime, _tot_per, _cumtime, _cum_per, function = m.groups()
            row: dict[str, Any] = {"name": function, "ncalls": int(ncalls)}
            if primitive is not None:
                row["primitive_calls"] = int(primitive)
            row.update(zip(("tottime_s", "tottime_percall_s", "cumtime_s", "cumtime_percall_s"), times, strict=True))
            self._rows.append(row)
            return True
        if not self._rows and (not text.strip() or _CPROFILE_PREAMBLE.search(text) or _CPROFILE_HEADER.match(text)):
            return bool(text.strip())
        self._emit(out)
        return self._idle(text, line)

    def _emit(self, out: Emitter) -> None:
        if self._columns is not None and self._rows:
            out.profile(self._table_title, self._kind, self._rows, line=self._start)
        self._columns = None
        self._rows = []
