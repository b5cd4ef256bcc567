"""JAX trainers that log metrics through absl with the step in brackets: CLU's `LoggingWriter`
(Flax examples, Scenic, t5x) and big_vision's `mlog` (one metric a line).

    I1002 21:43:51.424899 140400640460352 logging_writer.py:35] [1000] steps_per_second=1.760847,
        train_accuracy=0.0067, train_learning_rate=0.9738461971282959, train_loss=6.525280952453613
    I0314 09:12:44.104410 140201827936064 utils.py:1185] [1000] training_loss = 6.217891693115234

The absl prefix (level, date, time, thread, `file.py:line]`) is followed by `[step]` and either
`key=value, key=value` or one `key = value`. Every host of a multi-host job prints the same lines.
`steps_per_second` becomes the step time; `train_`/`training_` figures are the training ones.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.bulk import BulkTemplate
from trainwatch.parsers.fields import read_group

_LINE = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.-]+\.py:\d+\] \[(?P<step>\d{1,12})\] (?P<rest>[A-Za-z_][^=]*=.*)$")


class CluParser(Parser):
    name = "clu"
    title = "JAX absl metric lines (CLU LoggingWriter, big_vision)"
    triggers = ("] [",)
    example = "I1002 21:43:51.424899 1404 logging_writer.py:35] [1000] steps_per_second=1.76, train_loss=6.52"
    priority = 100
    samples = (
        Sample(  # google/flax issue #3364 (imagenet example, several hosts)
            "I1002 21:43:14.805023 139917864867392 logging_writer.py:35] [936] eval_accuracy=0.005859375, "
            "eval_loss=6.6112446784973145\n"
            "I1002 21:43:14.805183 140396270327360 logging_writer.py:35] [936] eval_accuracy=0.005859375, "
            "eval_loss=6.6112446784973145\n"
            "I1002 21:43:51.424899 140400640460352 logging_writer.py:35] [1000] steps_per_second=1.760847, "
            "train_accuracy=0.006696777418255806, train_learning_rate=0.9738461971282959, "
            "train_loss=6.525280952453613\n",
            steps=(
                (936, {"eval_loss": 6.6112446784973145, "eval_accuracy": 0.005859375}),
                (1000, {"loss": 6.525280952453613, "lr": 0.9738461971282959, "step_time_s": 1 / 1.760847}),
            ),
        ),
        Sample(  # big_vision ViT-i1k: one metric a line (ANSI colour around the step already stripped)
            "I0314 09:12:44.104410 140201827936064 utils.py:1185] [1000] training_loss = 6.217891693115234\n"
            "I0314 09:12:44.106611 140201827936064 utils.py:1185] [1000] img/sec/core = 291.8371582031255\n",
            steps=((1000, {"loss": 6.217891693115234}),),
        ),
    )

    def bulk_declines(self, template: BulkTemplate) -> bool:
        """A shape whose lines start with a literal other than absl's level letter (DeepSpeed's
        `[2020-12-12 ...] [INFO]`): `_LINE` is anchored there, so `feed` rejects them untouched."""
        head = template.parts[0]
        return isinstance(head, str) and head[:1] != "" and head[0] not in "IWEF"

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.match(text)
        reading = read_group(m)
        if m is None or reading is None:
            return False
        out.step(int(m.group("step")), dict(reading.metrics))
        return True
