"""Deeplearning4j's training listeners (Java, through log4j/logback):

    01:39:55.452 [main] INFO org.deeplearning4j.optimize.listeners.ScoreIterationListener - Score at iteration 78000 is 0.92598
    ... PerformanceListener - ETL: 0 ms; iteration 16; iteration time: 65 ms; samples/sec: 492.308; batches/sec: 7.692;

The `ScoreIterationListener`'s score is the network's loss on the minibatch (DL4J calls its loss
function's value the score), at its iteration count (which runs on over epochs). The
`PerformanceListener`'s line is one iteration's time and throughput. The log line's prefix is
the logging layout's: only the message after ` - ` is read.
"""

from __future__ import annotations

import math
import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, ms_to_s, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_SCORE = re.compile(rf"\bScore at iteration (?P<step>\d{{1,18}}) is (?P<score>{NUMBER}|NaN|-?Infinity)\s*$")
_PERFORMANCE = re.compile(
    rf"\biteration (?P<step>\d{{1,18}}); iteration time: (?P<ms>{NUMBER}) ms;"
    rf"(?: samples/sec: (?P<sps>{NUMBER});)?"
)


class DL4JParser(Parser):
    name = "dl4j"
    title = "Deeplearning4j listeners (ScoreIterationListener, PerformanceListener)"
    triggers = ("Score at iteration ", "; iteration time: ")
    example = "o.d.o.l.ScoreIterationListener - Score at iteration 78000 is 0.9259879637486815"
    priority = 100
    samples = (
        Sample(  # a DL4J text classifier's train.log (ChikkaUdayaSai/yelpreview_text_classification_dl4j)
            "01:39:55.452 [main] INFO org.deeplearning4j.optimize.listeners.ScoreIterationListener - "
            "Score at iteration 78000 is 0.9259879637486815\n"
            "01:41:18.217 [main] INFO org.deeplearning4j.optimize.listeners.ScoreIterationListener - "
            "Score at iteration 78100 is NaN\n",
            steps=((78000, {"loss": 0.9259879637486815}), (78100, {"loss": math.nan})),
            events=("nan",),
        ),
        Sample(  # deeplearning4j/deeplearning4j issue #4470: the PerformanceListener
            "o.d.o.l.PerformanceListener - ETL: 0 ms; iteration 16; iteration time: 65 ms; samples/sec: 492.308; "
            "batches/sec: 15.385;\n",
            steps=((16, {"step_time_s": 0.065, "samples_per_s": 492.308}),),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _SCORE.search(text)
        if m is not None:
            raw = m.group("score")
            score = math.nan if raw == "NaN" else float(raw.replace("Infinity", "inf"))
            out.step(int(m.group("step")), {"loss": score})
            return True
        m = _PERFORMANCE.search(text)
        if m is None:
            return False
        metrics: dict[str, float] = {}
        ms = parse_number(m.group("ms"))
        if ms is not None:
            metrics["step_time_s"] = ms_to_s(ms)
        sps = parse_number(m.group("sps")) if m.group("sps") else None
        if sps is not None:
            metrics["samples_per_s"] = sps
        out.step(int(m.group("step")), metrics)
        return True
