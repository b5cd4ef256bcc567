"""A pause of the cyclic garbage collector around a burst of short-lived allocations."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The collector paused meanwhile: a burst of millions of short-lived objects (a chunk of
    history's rows, a chart's plotext points) triggers collections that walk every object of
    the process and find nothing refcounting does not free. It is never left paused: a pause
    already in place (Textual's during a scroll, another thread's) is its owner's to end."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
