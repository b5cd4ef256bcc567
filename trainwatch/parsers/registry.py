"""Find every parser in `trainwatch.parsers.formats`; build the set a source runs."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from trainwatch.parsers import formats
from trainwatch.parsers.base import Parser


@cache
def parser_classes() -> tuple[type[Parser], ...]:
    """All parser classes, in the order lines are offered to them."""
    found: dict[str, type[Parser]] = {}
    for info in pkgutil.iter_modules(formats.__path__):
        module = importlib.import_module(f"{formats.__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Parser)
                and value is not Parser
                and value.__module__ == module.__name__
                and not getattr(value, "__abstractmethods__", None)
            ):
                found[value.name] = value
    return tuple(sorted(found.values(), key=lambda cls: (cls.priority, cls.name)))


def new_parsers() -> list[Parser]:
    """Fresh parser instances for one source (parsers keep per-source state)."""
    return [cls() for cls in parser_classes()]
