"""`trainwatch export`: records as JSONL or CSV, per the contract.

Either may be written to a terminal: JSONL escapes what JSON leaves raw (`json_safe`, the same
data), CSV shows it (`printable`; source names are already shown so by the pipeline)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import TextIO

from trainwatch.lines.sanitize import json_safe, printable
from trainwatch.records import Record, Step, json_number, to_dict

FORMATS = ("jsonl", "csv")
CSV_FIXED = ["source", "rank", "step", "time", "line"]


class JsonlWriter:
    """One record per line; flushed per batch so `--follow` consumers see records at once."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.count = 0

    def write(self, records: Iterable[Record]) -> None:
        lines = [json_safe(json.dumps(to_dict(r), ensure_ascii=False, separators=(", ", ": "))) for r in records]
        if lines:
            self.out.write("\n".join(lines) + "\n")
            self.out.flush()
            self.count += len(lines)

    def close(self) -> None:
        self.out.flush()


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        v = json_number(value)
        return v if isinstance(v, str) else repr(v)
    return printable(str(value))


class CsvWriter:
    """One row per step record. Columns: source,rank,step,time,line, then metric names sorted.

    The contract needs every metric name seen as a column, which is known only at the end:
    rows are held and written on `close()`. With `--follow` the header is fixed by the
    first batch and grows by rewriting nothing: new metric names are appended as columns
    of a new header line (CSV readers see a new section)."""

    def __init__(self, out: TextIO, streaming: bool = False) -> None:
        self.out = out
        self.streaming = streaming
        self.rows: list[Step] = []
        self.columns: list[str] = []
        self.count = 0

    def write(self, records: Iterable[Record]) -> None:
        steps = [r for r in records if isinstance(r, Step)]
        if not steps:
            return
        if not self.streaming:
            self.rows.extend(steps)
            return
        names = sorted({n for s in steps for n in s.metrics} | set(self.columns))
        if names != self.columns:
            self.columns = names
            self._write_rows([], header=True)
        self._write_rows(steps, header=False)
        self.out.flush()

    def _write_rows(self, steps: list[Step], header: bool) -> None:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        if header:
            w.writerow(CSV_FIXED + [printable(c) for c in self.columns])
        for s in steps:
            w.writerow(
                [_cell(s.source), _cell(s.rank), _cell(s.step), _cell(s.time), s.line]
                + [_cell(s.metrics.get(name)) for name in self.columns]
            )
            self.count += 1
        self.out.write(buf.getvalue())

    def close(self) -> None:
        if not self.streaming:
            self.columns = sorted({n for s in self.rows for n in s.metrics})
            self._write_rows(self.rows, header=True)
            self.rows = []
        self.out.flush()
