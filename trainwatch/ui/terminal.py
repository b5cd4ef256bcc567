"""Whether the terminal the dashboard draws on is still there.

An SSH session that drops, or the tmux holding the dashboard killed, hangs the terminal up. The
SIGHUP that follows ends the process only if it arrives: under `make demo` it did not, and
Textual's input thread then spun on the dead terminal at a whole core of a GPU node, forever.
A hung-up terminal answers `tcgetattr` with EIO: the dashboard asks on its 1 s clock and ends the
process there (`leave`): Textual's shutdown writes to the terminal, and on a dead one its writer's
queue filled and the exit hung; nothing it would restore is there any more.
"""

from __future__ import annotations

import os
import termios
from collections.abc import Callable
from typing import NoReturn


def terminal_fd(driver: object) -> int | None:
    """The terminal the driver reads keys from, when it is one (not a test's headless driver)."""
    fd = getattr(driver, "fileno", None)
    if not isinstance(fd, int):
        return None
    try:
        return fd if os.isatty(fd) else None
    except OSError:
        return None


def hung_up(fd: int | None) -> bool:
    if fd is None:
        return False
    try:
        termios.tcgetattr(fd)
    except (termios.error, OSError):
        return True
    return False


def leave(stop: Callable[[], None]) -> NoReturn:
    """End the process now, `stop` (the pipeline's) first."""
    try:
        stop()
    finally:
        os._exit(1)
