"""Trax's `training.Loop` (google/trax), one row per figure, each behind its step:

    Step    500: Ran 499 train steps in 5.77 secs
    Step    500: train WeightedCategoryCrossEntropy |  0.62914723
    Step    500: eval  WeightedCategoryCrossEntropy |  0.49253047
    Step    500: eval      WeightedCategoryAccuracy |  0.74062500

`Ran k train steps in s secs` times the k steps since the last report: the step time is s / k.
A `train` row is the training task's loss layer (`loss`), an `eval` row one metric of the
evaluation task: its loss layer is `eval_loss`, any other `eval_<metric>`. A layer is a loss when
its name says so (`...Loss`, `...CrossEntropy`); other names are kept, snake_cased. The rows of
one step are one record (the runner merges a step's adjacent figures).
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_NUM = NUMBER
_RAN = re.compile(rf"^\s*Step\s+(?P<step>\d{{1,12}}): Ran (?P<n>\d{{1,12}}) train steps in (?P<secs>{_NUM}) secs\s*$")
_ROW = re.compile(
    rf"^\s*Step\s+(?P<step>\d{{1,12}}): (?P<split>train|eval)\s+(?P<name>[A-Za-z][\w./-]*)\s+\|\s+(?P<value>{_NUM})\s*$"
)
_LOSS_LAYER = re.compile(r"loss|entropy", re.I)


def _name(split: str, layer: str) -> str:
    if _LOSS_LAYER.search(layer):
        return "loss" if split == "train" else "eval_loss"
    return snake(layer) if split == "train" else "eval_" + snake(layer)


class TraxParser(Parser):
    name = "trax"
    title = "Trax training.Loop"
    triggers = (" train steps in ", ": train ", ": eval ")
    example = "Step    500: train WeightedCategoryCrossEntropy |  0.62914723"
    priority = 100
    samples = (
        Sample(  # google/trax README (a24ed37): the Loop's report of step 500
            "Step    500: Ran 499 train steps in 5.77 secs\n"
            "Step    500: train WeightedCategoryCrossEntropy |  0.62914723\n"
            "Step    500: eval  WeightedCategoryCrossEntropy |  0.49253047\n"
            "Step    500: eval      WeightedCategoryAccuracy |  0.74062500\n",
            steps=(
                (
                    500,
                    {
                        "step_time_s": 5.77 / 499,
                        "loss": 0.62914723,
                        "eval_loss": 0.49253047,
                        "eval_weighted_category_accuracy": 0.740625,
                    },
                ),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        row = _ROW.match(text)
        if row is not None:
            value = parse_number(row.group("value"))
            if value is None:
                return False
            out.step(int(row.group("step")), {_name(row.group("split"), row.group("name")): value})
            return True
        ran = _RAN.match(text)
        if ran is None:
            return False
        seconds, n = parse_number(ran.group("secs")), int(ran.group("n"))
        if seconds is None or n <= 0:
            return False
        out.step(int(ran.group("step")), {"step_time_s": round(seconds / n, 12)})
        return True
