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


def settle_heap() -> None:
    """What is alive once a dashboard has read its logs (the store's indexes, every source's
    parsers, the widgets) lives as long as the dashboard: moved out of the collector's reach
    (`gc.freeze`), it is no longer walked by each full collection. On 256 followed files such
    a collection walked it every 15-60 s, 130 ms each with the GIL held (the screen stalls
    meanwhile), and found nothing. One full collection first, so no cyclic garbage alive at that
    moment is frozen with it (never to be freed); called again after more logs were read, it
    settles what they added."""
    gc.collect()
    gc.freeze()


def unsettle_heap() -> None:
    """The frozen objects back under the collector (the dashboard is closing: they may be garbage now)."""
    gc.unfreeze()
