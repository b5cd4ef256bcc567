"""XLM's trainer (facebookresearch/XLM) and the repos built on it (UnsupervisedMT, TransCoder /
CodeGen, XNLG), whose progress line is fields joined by ` - ` after its logger's prefix:

    INFO - 10/04/19 14:41:25 - 0:11:11 -    1135 -   56.12 sent/s -  2143.80 words/s - MLM-en:  7.7416 -  - model LR: 3.8795e-06
    INFO - 02/06/20 09:30:22 - 0:00:16 -       5 -   56.87 sent/s -  2164.25 words/s - MLM-en:  9.6898 || MLM-fr:  8.8403 -  - model LR: 1.0000e-04

The unlabelled number is the iteration, `sent/s` sentences per second (samples), `words/s` the
tokens (BPE units) per second. The objectives' cross-entropy losses are joined by `||`, each under
its name (`MLM-en` -> `mlm_en`, `MT-en-fr` -> `mt_en_fr`); when the line prints one, it is the
loss (XLM's authors: "MLM-en is the cross-entropy loss"), several stay under their names (their
sum is no figure the log prints). `<name> LR:` is each optimizer's learning rate (` / ` between its
parameter groups): the first printed is the lr.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

# (XLM's LogFormatter: `LEVEL - MM/DD/YY HH:MM:SS - H:MM:SS - `, the time since start last)
_PREFIX = r"(?:[A-Z]+ - \d\d/\d\d/\d\d \d\d:\d\d:\d\d - \d+:\d\d:\d\d - )?"
_LINE = re.compile(
    rf"^{_PREFIX}\s*(?P<step>\d{{1,12}}) - +(?P<sent>{NUMBER}) sent/s - +(?P<words>{NUMBER}) words/s - (?P<rest>.*)$"
)
_STAT = re.compile(rf"^\s*(?P<name>[A-Za-z][\w-]{{0,40}}):\s*(?P<v>{NUMBER})\s*$")
_LR = re.compile(rf"(?:^|\s-\s+)(?P<name>[\w-]{{1,40}}) LR: (?P<v>{NUMBER})")


class XlmParser(Parser):
    name = "xlm"
    title = "XLM trainer (XLM, UnsupervisedMT, TransCoder)"
    triggers = (" sent/s - ",)
    example = "INFO - 10/04/19 14:41:25 - 0:11:11 -    1135 -   56.12 sent/s -  2143.80 words/s - MLM-en:  7.7416 -  - model LR: 3.8795e-06"
    priority = 100
    samples = (
        Sample(  # facebookresearch/XLM issue #209: one objective, its loss
            "INFO - 10/04/19 14:41:25 - 0:11:11 -    1135 -   56.12 sent/s -  2143.80 words/s - MLM-en:  7.7416 -  - model LR: 3.8795e-06\n"
            "INFO - 10/04/19 14:41:27 - 0:11:14 -    1140 -   56.10 sent/s -  2092.52 words/s - MLM-en:  7.6028 -  - model LR: 3.8962e-06\n",
            steps=(
                (1135, {"loss": 7.7416, "lr": 3.8795e-06, "samples_per_s": 56.12, "tokens_per_s": 2143.8}),
                (1140, {"loss": 7.6028, "lr": 3.8962e-06}),
            ),
        ),
        Sample(  # a walkthrough of XLM's training loop: two objectives, each under its name
            "INFO - 02/06/20 09:30:22 - 0:00:16 -       5 -   56.87 sent/s -  2164.25 words/s - MLM-en:  9.6898 || MLM-fr:  8.8403 -  - model LR: 1.0000e-04\n",
            steps=((5, {"mlm_en": 9.6898, "mlm_fr": 8.8403, "lr": 1e-4}),),
        ),
        Sample(  # UnsupervisedMT / TransCoder: an encoder and a decoder optimizer
            "INFO - 06/09/20 10:02:11 - 0:05:40 -     200 -   48.10 sent/s -  3051.77 words/s - AE-java:  2.1043 || "
            "BT-java-python-java:  3.0117 -  - encoder LR: 1.0000e-04 - decoder LR: 2.0000e-04\n",
            steps=((200, {"ae_java": 2.1043, "bt_java_python_java": 3.0117, "lr": 1e-4, "decoder_lr": 2e-4}),),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.match(text)
        if m is None:
            return False
        metrics: dict[str, float] = {}
        for name, raw in (("samples_per_s", m.group("sent")), ("tokens_per_s", m.group("words"))):
            value = parse_number(raw)
            if value is not None:
                metrics[name] = value
        stats, _, lrs = m.group("rest").partition(" - ")
        losses: dict[str, float] = {}
        for part in stats.split("||"):
            s = _STAT.match(part)
            value = parse_number(s.group("v")) if s is not None else None
            if s is not None and value is not None:
                losses[s.group("name").lower().replace("-", "_")] = value
        if len(losses) == 1:
            metrics["loss"] = next(iter(losses.values()))
        else:
            metrics.update(losses)
        for i, lr in enumerate(_LR.finditer(" - " + lrs)):
            value = parse_number(lr.group("v"))
            if value is not None:
                metrics["lr" if i == 0 else f"{lr.group('name').lower().replace('-', '_')}_lr"] = value
        out.step(int(m.group("step")), metrics)
        return True
