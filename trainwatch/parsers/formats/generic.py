"""Fallback for custom training loops: repeated `key: value` / `key=value` lines with a step counter.

    [0] [1/10: 0/1875 (0%)] epoch=1.0000 step=1.0000 dt=0.3665 batch_acc=0.1094 batch_loss=0.0090
    step 0 | loss: 10.938573 | lr: 6.0000e-05 | norm: 27.0159 | time: 17830.71ms | tokens/sec: 29403.65

It sees every line no other parser understood, so it must be cheap and must not guess:
- a line qualifies only with a step-like counter (`step=`, `iter:`, `Step [N/M]`, `iteration N`, a bare
  `N/M`) and at least one other numeric field;
- a line is only emitted once its template (the line with every number masked) has been seen at
  least twice with an increasing counter; the lines held until then are emitted first, in order.
Config dumps (`lr ....... 0.001`, `--train_steps = 20000`), one-off lines and lines without a
counter therefore never become steps. Field names are snake_case, canonical where the contract has
a name (`train_loss` -> `loss`); durations become seconds (`_s`), memory GiB (`_gib`), `%` `_pct`.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache

from trainwatch.lines.assembler import Line
from trainwatch.names import CANONICAL, metric_name, snake
from trainwatch.numbers import parse_duration_s, parse_mem_gib, parse_number
from trainwatch.parsers.base import Emitter, Parser
from trainwatch.parsers.timestamps import line_time

_PRECHECK = re.compile(r"[=:]")
_DIGIT = re.compile(r"\d")
# A separator and a number: the key is read backwards from the separator (cheaper than letting
# a regex try every start position of a long line).
_VALUE = re.compile(
    r"[:=][ \t]*"
    r"(?P<val>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+|nan|inf)"
    r"(?P<unit>%|[A-Za-z]+)?(?:\([^)]*\))?(?=$|[\s|,;)\]])",
    re.I,
)
_KEY_TOKEN = re.compile(r"[A-Za-z_][\w./()-]*")
_KEY_WORD = re.compile(r"[A-Za-z]+")
_KEY_WINDOW = 80
# `Step [100/1000]`, `iteration 100/1000`, `Iter 5`: a counter word then a number (no separator).
_WORD_COUNTER = re.compile(
    r"\b(?:global_step|step|iteration|iter|it)\s*[:=]?\s*\[?\s*(?P<n>\d{1,18}(?!\d))(?:\s*/\s*(?P<m>\d{1,18}(?!\d)))?\b",
    re.I,
)
# A bare `N/M` not inside a date or path and not an epoch counter.
_BARE_COUNTER = re.compile(r"(?<![\w/.:-])(?P<n>\d{1,18}(?!\d))/(?P<m>\d{1,18}(?!\d))(?![\w/.-])")
_EPOCH_BEFORE = re.compile(r"epoch\W*$", re.I)
# An implied counter after these words counts evaluation batches, not training steps.
_EVAL_WORD = re.compile(r"\b(?:val|valid|validation|validating|eval|evaluation|evaluating|test|testing)\b", re.I)
_MASK = re.compile(r"[-+]?\d[\d,.]*(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b", re.I)

_COUNTER_KEYS = frozenset({"step", "iter", "iters", "it", "iteration", "global_step", "iter_num", "step_num"})
_STEP_TIME_KEYS = frozenset({"dt", "time", "step_time", "iter_time", "batch_time", "time_per_step", "time_per_iter"})
_MEM_KEYS = {
    "memory": "mem_gib",
    "mem": "mem_gib",
    "max_mem": "max_mem_gib",
    "max_memory": "max_mem_gib",
    "peak_memory": "max_mem_gib",
    "peak_mem": "max_mem_gib",
}
_TIME_UNITS = frozenset({"ns", "us", "µs", "ms", "s", "sec", "min", "h"})
_MEM_UNITS = frozenset({"b", "kb", "kib", "mb", "mib", "gb", "gib", "tb", "tib"})

MAX_TEMPLATES = 64  # templates remembered per source (bounded memory)
MAX_HELD = 4  # candidate lines held per template before it is confirmed


@dataclass
class _Held:
    step: int
    metrics: dict[str, float]
    line: int
    time: str | None


@dataclass
class _Template:
    confirmed: bool = False
    held: list[_Held] = field(default_factory=list)


def _int_counter(raw: str) -> int | None:
    value = parse_number(raw)
    if value is None or not math.isfinite(value) or value < 0 or not value.is_integer():
        return None
    return int(value)


_snake = lru_cache(maxsize=2048)(snake)  # keys repeat on every line of a loop


@lru_cache(maxsize=2048)
def _name(key: str) -> str:
    """`train_loss` -> `loss`; `tokens/sec` -> `tokens_per_s` (a `/` reads "per" when that gives a contract name)."""
    if "/" in key:
        per = metric_name(key.replace("/", " per "))
        if per in CANONICAL.values():
            return per
    return metric_name(key)


def _metric(key: str, raw: str, unit: str | None) -> tuple[str, float] | None:
    value = parse_number(raw)
    if value is None:
        return None
    name = _snake(key)
    if not name:
        return None
    if unit is None:
        if name in _STEP_TIME_KEYS:
            return "step_time_s", value
        return _name(key), value
    lower = unit.lower()
    if unit == "%":
        canonical = _name(key)
        return (canonical if canonical.endswith("_pct") else canonical + "_pct"), value
    if lower in _TIME_UNITS or unit in ("m",):
        seconds = parse_duration_s(f"{raw}{unit}")
        if seconds is None:
            return None
        return ("step_time_s" if name in _STEP_TIME_KEYS else f"{name}_s"), seconds
    if lower in _MEM_UNITS:
        gib = parse_mem_gib(f"{raw}{unit}")
        if gib is None:
            return None
        return _MEM_KEYS.get(name, f"{name}_gib"), gib
    return None  # an unknown unit: no value rather than a wrong one


def _key_before(text: str, sep: int) -> str | None:
    """`train loss` in `... | train loss: 3.11`: the token before the separator plus up to two plain
    words before it; upper-case words (`INFO step:`) are log levels, not part of a key."""
    words = text[max(0, sep - _KEY_WINDOW) : sep].split()
    if not words or not _KEY_TOKEN.fullmatch(words[-1]):
        return None
    key = [words[-1]]
    for word in reversed(words[-3:-1]):
        if not _KEY_WORD.fullmatch(word) or word.isupper():
            break
        key.insert(0, word)
    return " ".join(key)


def parse_fields(text: str) -> tuple[int, dict[str, float]] | None:
    """The step counter and numeric fields of a line, or None if it has no counter or no field."""
    step: int | None = None
    total: float | None = None
    fields: list[tuple[str, re.Match[str]]] = []
    for m in _VALUE.finditer(text):
        key = _key_before(text, m.start())
        if key is None:
            continue
        if key.lower().replace(" ", "_") in _COUNTER_KEYS:
            if step is None:
                step = _int_counter(m.group("val"))
            continue
        fields.append((key, m))
    if not fields:
        return None
    if step is None:  # names are only worked out for lines that have a counter: most lines have none
        counter = _WORD_COUNTER.search(text)
        if counter is None:
            for bare in _BARE_COUNTER.finditer(text):
                if not _EPOCH_BEFORE.search(text, 0, bare.start()):
                    counter = bare
                    break
        if counter is None or _EVAL_WORD.search(text, 0, counter.start()):
            return None
        step = int(counter.group("n"))
        if counter.group("m") is not None and int(counter.group("m")) >= step:
            total = float(int(counter.group("m")))
    metrics: dict[str, float] = {}
    for key, m in fields:
        got = _metric(key, m.group("val"), m.group("unit"))
        if got is not None:
            metrics.setdefault(got[0], got[1])
    if not metrics:
        return None
    if total is not None:
        metrics.setdefault("total_steps", total)
    return step, metrics


class GenericParser(Parser):
    name = "generic"
    title = "Generic key=value lines"
    triggers = ()
    example = "step 0 | loss: 10.938573 | lr: 6.0000e-05 | norm: 27.0159 | time: 17830.71ms"
    priority = 900

    def __init__(self) -> None:
        self._templates: OrderedDict[str, _Template] = OrderedDict()

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if not _PRECHECK.search(text) or not _DIGIT.search(text):
            return False
        fields = parse_fields(text)
        if fields is None:
            return False
        step, metrics = fields
        key = " ".join(_MASK.sub("#", text).split())
        template = self._templates.get(key)
        if template is None:
            template = _Template()
            self._templates[key] = template
            if len(self._templates) > MAX_TEMPLATES:
                self._templates.popitem(last=False)
        else:
            self._templates.move_to_end(key)
        if template.confirmed:
            out.step(step, metrics)
            return True
        held = template.held
        if held and step > held[-1].step:
            for h in held:
                out.step(h.step, h.metrics, time=h.time, line=h.line)
            template.held = []
            template.confirmed = True
            out.step(step, metrics)
            return True
        if held and step <= held[-1].step:
            held.clear()
        held.append(_Held(step, metrics, line.no, line_time(text)))
        del held[:-MAX_HELD]
        return False
