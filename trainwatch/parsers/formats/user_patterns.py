"""User-defined line formats from a TOML file, for loops no built-in parser knows.

    [[pattern]]
    name = "mytrainer"
    regex = 'ep (?P<epoch>\\d+) it (?P<step>\\d+) loss=(?P<loss>[\\d.]+)'
    trigger = "loss="          # optional: substring(s) that must be in a line (lets it win over built-ins)

Named groups: `step` is the step, `rank` the rank, every other group a metric (names canonicalized:
`train_loss` -> `loss`). The file is `$TRAINWATCH_CONFIG` if set, else `./trainwatch.toml`.
`load_patterns()` raises ValueError with a one-line message for a bad file; the parser itself never
raises: with a bad or missing file it has no patterns (`config_error()` says why).
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwatch.lines.assembler import Line
from trainwatch.names import metric_name
from trainwatch.numbers import parse_number, parse_scaled
from trainwatch.parsers.base import Emitter, Parser

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ENV_VAR = "TRAINWATCH_CONFIG"
DEFAULT_FILE = "trainwatch.toml"


@dataclass(frozen=True)
class UserPattern:
    name: str
    regex: re.Pattern[str]
    triggers: tuple[str, ...] = ()


def config_path() -> Path | None:
    """The config file in effect: `$TRAINWATCH_CONFIG`, else `./trainwatch.toml` when it exists."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    local = Path(DEFAULT_FILE)
    return local if local.is_file() else None


def load_patterns(path: str | os.PathLike[str]) -> list[UserPattern]:
    """Read and validate a pattern file. Raises ValueError("<file>: <what is wrong>")."""
    where = str(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ValueError(f"{where}: no such file") from None
    except OSError as exc:
        raise ValueError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: not valid TOML: {exc}") from None
    entries = data.get("pattern", [])
    if not isinstance(entries, list):
        raise ValueError(f"{where}: `pattern` must be an array of tables ([[pattern]])")
    return [_one(where, i, entry) for i, entry in enumerate(entries, 1)]


def _one(where: str, index: int, entry: Any) -> UserPattern:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: pattern #{index} must be a table")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{where}: pattern #{index} needs a `name`")
    label = f"{where}: pattern {name!r}"
    source = entry.get("regex")
    if not isinstance(source, str) or not source:
        raise ValueError(f"{label} needs a `regex` string")
    try:
        regex = re.compile(source)
    except re.error as exc:
        raise ValueError(f"{label}: bad regex: {exc}") from None
    if not regex.groupindex:
        raise ValueError(f"{label}: the regex has no named groups ((?P<loss>...)), so it yields nothing")
    if set(regex.groupindex) <= {"step", "rank"}:
        raise ValueError(f"{label}: the regex needs at least one metric group besides step/rank")
    trigger = entry.get("trigger", ())
    triggers = (trigger,) if isinstance(trigger, str) else tuple(trigger)
    if not all(isinstance(t, str) and t for t in triggers):
        raise ValueError(f"{label}: `trigger` must be a non-empty string or a list of them")
    return UserPattern(name.strip(), regex, triggers)


_cache: dict[tuple[str, float], list[UserPattern]] = {}
_error: str | None = None


def configured_patterns() -> list[UserPattern]:
    """The patterns of the config in effect; [] (and `config_error()` set) when it is bad."""
    global _error
    path = config_path()
    if path is None:
        _error = None
        return []
    try:
        key = (str(path.resolve()), path.stat().st_mtime)
    except OSError:
        _error = f"{path}: no such file"
        return []
    if key not in _cache:
        try:
            _cache.clear()
            _cache[key] = load_patterns(path)
            _error = None
        except ValueError as exc:
            _error = str(exc)
            return []
    return _cache[key]


def config_error() -> str | None:
    """Why the last `configured_patterns()` found no usable patterns, if the file was bad."""
    return _error


class UserPatternParser(Parser):
    name = "user_patterns"
    title = "User patterns (trainwatch.toml)"
    triggers = ()
    example = "ep 1 it 200 loss=0.53   (with a [[pattern]] in trainwatch.toml)"
    priority = 50

    def __init__(self, patterns: Sequence[UserPattern] | None = None) -> None:
        self.patterns = list(configured_patterns() if patterns is None else patterns)
        # Patterns that name triggers are offered the lines holding them ahead of the built-in
        # parsers; without any, they see the lines no triggered parser understood.
        triggered = tuple(t for p in self.patterns for t in p.triggers)
        if triggered and all(p.triggers for p in self.patterns):
            # Per instance on purpose: the triggers come from the user's file, not the class.
            self.triggers = triggered  # type: ignore[misc,assignment]

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        for pattern in self.patterns:
            if pattern.triggers and not any(t in text for t in pattern.triggers):
                continue
            m = pattern.regex.search(text)
            if m is None:
                continue
            step: int | None = None
            rank: int | None = None
            metrics: dict[str, float] = {}
            for group, raw in m.groupdict().items():
                if raw is None:
                    continue
                if group in ("step", "rank"):
                    value = parse_number(raw)
                    if value is None or not math.isfinite(value) or not value.is_integer():
                        continue
                    if group == "step":
                        step = int(value)
                    else:
                        rank = int(value)
                    continue
                value = parse_scaled(raw)
                if value is not None:
                    metrics[metric_name(group)] = value
            if metrics:
                out.step(step, metrics, rank=rank)
                return True
        return False
