"""A Rich console for reports on stdout that cannot write an untrusted control byte.

The views build their reports as `Text`, so nothing is read as markup; but Rich writes a
`Text`'s characters as they are (it drops only BEL, BS, VT, FF and CR), and an ESC in a file
name would reach the terminal. This hook passes every rendered segment's text through
`printable` on its way out; the console's own styling (its control segments and the SGR
codes it adds around styled text) is untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook, RenderResult
from rich.segment import Segment

from trainwatch.lines.sanitize import needs_sanitizing, printable_lines


class _Printable:
    """A renderable whose text comes out `printable` (line breaks kept)."""

    def __init__(self, renderable: ConsoleRenderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            if segment.control or not needs_sanitizing(segment.text):
                yield segment
            else:
                yield Segment(printable_lines(segment.text), segment.style)


class PrintableHook(RenderHook):
    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Printable(r) for r in renderables]


def safe_console(**options: Any) -> Console:
    """A `Console(**options)` that shows unsafe characters instead of writing them."""
    console = Console(**options)
    console.push_render_hook(PrintableHook())
    return console


@contextmanager
def printing_safely(console: Console) -> Iterator[Console]:
    """`console` (one a caller made) with the hook in place while the block prints."""
    console.push_render_hook(PrintableHook())
    try:
        yield console
    finally:
        console.pop_render_hook()
