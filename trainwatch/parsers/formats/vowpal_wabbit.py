"""Vowpal Wabbit's progressive-validation table, under its two-line header:

    average  since         example        example  current  current  current
    loss     last          counter         weight    label  predict features
    1.000000 1.000000            1            1.0   1.0000   0.0000        1
    1.470775 1.941550            2            2.0  -1.0000   0.3934        1
    0.000000 0.000000           16           16.0   1.0000   0.2857        1 h
    ...
    finished run

A row is printed at doubling example counts, not at optimizer steps: it has no step. `since last`
is the loss over the examples since the row before (`loss`), `average loss` the run's running mean
(`loss_avg`), `example counter` the examples seen (`samples_seen`). A row ending in `h` is the
holdout set's (`eval_loss`, `eval_loss_avg`). A multi-pass run may print the pass as a last column
(`epoch`, as printed). The columns of label and prediction are a task's own (multiclass, contextual
bandit labels) and are not read. Rows are read only under the header: a bare row of numbers is no
sign of Vowpal Wabbit.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_HEADER_1 = re.compile(r"^\s*average\s+since\s+example\s+example\s+current\s+current\s+current(?:\s+current)?\s*$")
_HEADER_2 = re.compile(r"^\s*loss\s+last\s+counter\s+weight\s+label\s+predict\s+features(?:\s+pass)?\s*$")
_ROW = re.compile(
    rf"^\s*(?P<avg>{NUMBER})\s+(?P<since>{NUMBER})\s+(?P<count>\d{{1,18}})\s+(?P<weight>{NUMBER})"
    rf"\s+\S+\s+\S+\s+(?P<features>\d{{1,12}})(?:\s+(?P<pass>\d{{1,9}}))?(?:\s+(?P<h>h))?\s*$"
)
_FINISHED = re.compile(r"^\s*finished run\s*$")


class VowpalWabbitParser(Parser):
    name = "vowpal_wabbit"
    title = "Vowpal Wabbit"
    example = "0.433386 0.420048          128          128.0   1.0000   0.7516       22"
    priority = 100
    samples = (
        Sample(  # VowpalWabbit/vowpal_wabbit#260: a multi-pass run with a holdout set
            "average    since         example     example  current  current  current\n"
            "loss       last          counter      weight    label  predict features\n"
            "1.000000   1.000000            1         1.0   1.0000   0.0000        1\n"
            "1.470775   1.941550            2         2.0  -1.0000   0.3934        1\n"
            "0.000000   0.000000           16        16.0   1.0000   0.2857        1 h\n"
            "\n"
            "finished run\n",
            steps=(
                (None, {"loss": 1.0, "loss_avg": 1.0, "samples_seen": 1.0}),
                (None, {"loss": 1.94155, "loss_avg": 1.470775, "samples_seen": 2.0}),
                (None, {"eval_loss": 0.0, "eval_loss_avg": 0.0, "samples_seen": 16.0}),
            ),
            events=("finished",),
        ),
        Sample(  # VowpalWabbit/vowpal_wabbit#113: the pass as a last column
            "average    since         example     example  current  current  current  current\n"
            "loss       last          counter      weight    label  predict features     pass\n"
            "0.204298   0.054711         2784      2784.0   0.0000   0.0000        4        2\n",
            steps=((None, {"loss": 0.054711, "loss_avg": 0.204298, "samples_seen": 2784.0, "epoch": 2.0}),),
        ),
    )

    def __init__(self) -> None:
        self._header = 0  # header lines seen in a row (2: rows follow)

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if self._header == 2:
            row = _ROW.match(text)
            if row is not None:
                return self._row(row, out)
            if _FINISHED.match(text):
                out.event("finished", "info", text.strip(), line=line.no)
                return True
            if text.strip():
                self._header = 0  # (the table ended: later lines of numbers are not its rows)
        if _HEADER_1.match(text):
            self._header = 1
            return True
        if self._header == 1 and _HEADER_2.match(text):
            self._header = 2
            return True
        if self._header == 1:
            self._header = 0
        return False

    def _row(self, row: re.Match[str], out: Emitter) -> bool:
        avg, since = parse_number(row.group("avg")), parse_number(row.group("since"))
        if avg is None or since is None:
            return False
        prefix = "eval_" if row.group("h") else ""
        metrics = {f"{prefix}loss": since, f"{prefix}loss_avg": avg, "samples_seen": float(row.group("count"))}
        if row.group("pass") is not None:
            metrics["epoch"] = float(row.group("pass"))
        out.step(None, metrics)
        return True
