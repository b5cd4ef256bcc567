"""Messages to stderr: one line each, `trainwatch: ...`, never a byte a terminal acts on.

They quote what the user's PATHs found (file and directory names, glob matches) and OS errors
about them, so each goes through `printable` on its way out.
"""

from __future__ import annotations

import click

from trainwatch.lines.sanitize import printable


def warn(message: str) -> None:
    """One line on stderr, with any control character in `message` shown, not sent."""
    click.echo(f"trainwatch: {printable(message)}", err=True)
