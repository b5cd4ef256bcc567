"""PyMARL's console logger (PyMARL, PyMARL2, EPyMARL and their forks, on SMAC and other multi-agent tasks):

    [INFO 09:38:59] my_main t_env: 8443380 / 10050000
    [INFO 09:38:59] my_main Estimated time left: 3 hours, 52 minutes, 47 seconds. Time passed: 19 hours, ...
    [INFO 09:39:05] my_main Recent Stats | t_env:    8443380 | Episode:   331792
    battle_won_mean:           0.0025	dead_allies_mean:          5.9931	dead_enemies_mean:         1.5178 ...
    epsilon:                   0.0500	grad_norm:                 1.2608	loss:                      0.1001 ...

The environment timestep `t_env` is the step (of the run's `t_max`); the rows of `name: value` under
`Recent Stats` (four to a row, tab-separated) are its figures, means over the last logging window.
`test_*` figures are the greedy evaluation episodes' (`eval_*`). The total and the time left, announced
on lines of their own before it (with a checkpoint's line between them at times), go with the block. Rows without their header (a log
cut inside a block) are not read: a row of `name: value` pairs alone is no sign of PyMARL.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_HEADER = re.compile(r"\bRecent Stats \| t_env:\s*(?P<t>\d{1,15}) \| Episode:\s*(?P<episode>\d{1,15})\s*$")
_T_ENV = re.compile(r"\bt_env: (?P<t>\d{1,15}) / (?P<of>\d{1,15})\s*$")
# `Estimated time left: 3 hours, 52 minutes, 47 seconds. Time passed: ...` (the parts that are 0 left out)
_TIME_LEFT = re.compile(
    r"\bEstimated time left: (?:(?P<d>\d{1,6}) days?, )?(?:(?P<h>\d{1,2}) hours?, )?(?:(?P<m>\d{1,2}) minutes?, )?"
    r"(?P<s>\d{1,2}(?:\.\d+)?) seconds?\b"
)
# (tab-separated as PyMARL prints them; a pasted log has spaces)
_PAIR = re.compile(rf"(?P<name>[A-Za-z_][\w/.-]{{0,80}}):\s+(?P<value>{NUMBER})(?=\s|$)")
_ROW = re.compile(rf"^(?:\s*[A-Za-z_][\w/.-]{{0,80}}:[ \t]+{NUMBER}(?=\s|$))+\s*$")
_MAX_ROWS = 64  # rows a block may have (the stats a run logs)


def _name(label: str) -> str:
    name = snake(label)
    return "eval_" + name[5:] if name.startswith("test_") else name


class PyMarlParser(Parser):
    name = "pymarl"
    title = "PyMARL / EPyMARL"
    triggers = ("t_env: ", "Estimated time left: ", ": ")
    example = "[INFO 09:39:05] my_main Recent Stats | t_env:    8443380 | Episode:   331792"
    priority = 100
    samples = (
        Sample(  # saizhang0218/TMC issue #3: QMIX on SMAC 6h_vs_8z
            "[INFO 09:38:59] my_main t_env: 8443380 / 10050000\n"
            "[INFO 09:38:59] my_main Estimated time left: 3 hours, 52 minutes, 47 seconds. Time passed: 19 hours, "
            "6 minutes, 4 seconds\n"
            "[INFO 09:39:05] my_main Recent Stats | t_env:    8443380 | Episode:   331792\n"
            "battle_won_mean:           0.0025\tdead_allies_mean:          5.9931\tdead_enemies_mean:         1.5178"
            "\tep_length_mean:           27.9811\n"
            "epsilon:                   0.0500\tgrad_norm:                 1.2608\tloss:                      0.1001"
            "\tq_taken_mean:              0.8819\n"
            "test_return_mean:          9.6935\ttest_return_std:           0.5650\t\n",
            steps=(
                (
                    8443380,
                    {
                        "total_steps": 10050000.0,
                        "eta_s": 13967.0,
                        "episode": 331792.0,
                        "loss": 0.1001,
                        "grad_norm": 1.2608,
                        "ep_length_mean": 27.9811,
                        "eval_return_mean": 9.6935,
                    },
                ),
            ),
        ),
    )

    def __init__(self) -> None:
        self._t: int | None = None  # the block's t_env while its rows are read
        self._rows = 0
        self._announced: dict[str, float] = {}  # the total and time left, for the next block

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if self._t is not None:
            if self._rows < _MAX_ROWS and _ROW.match(text):
                metrics = {}
                for pair in _PAIR.finditer(text):
                    value = parse_number(pair.group("value"))
                    if value is not None:
                        metrics[_name(pair.group("name"))] = value
                self._rows += 1
                out.step(self._t, metrics)
                return True
            self._t = None
        if "t_env: " in text:
            return self._t_env(text, out)
        if "Estimated time left: " not in text:
            return False
        m = _TIME_LEFT.search(text)
        if m is None:
            return False
        days, hours, minutes = (int(m.group(k) or 0) for k in "dhm")
        self._announced["eta_s"] = days * 86400 + hours * 3600 + minutes * 60 + float(m.group("s"))
        return True

    def _t_env(self, text: str, out: Emitter) -> bool:
        m = _HEADER.search(text)
        if m is not None:
            self._t, self._rows = int(m.group("t")), 0
            out.step(self._t, {**self._announced, "episode": float(m.group("episode"))})
            self._announced = {}
            return True
        m = _T_ENV.search(text)
        if m is None:
            return False
        self._announced = {"total_steps": float(m.group("of"))}
        return True
