"""Standard input beside the keyboard: the data on fd 0 moved aside so the dashboard can read keys
(`StreamSource` reads the data)."""

from __future__ import annotations

import os
import sys


def keys_from_terminal() -> bool:
    """Free fd 0 for the keyboard when the data comes on it (`tail -F out.log | trainwatch -`).

    Textual reads keys from fd 0; a pipe there leaves the dashboard deaf. The pipe moves to a new
    descriptor behind `sys.stdin` (which `StreamSource` reads) and fd 0 becomes the controlling
    terminal. False when there is none (cron, `ssh host cmd` without -t): the caller runs headless.
    """
    try:
        if os.isatty(0):
            return True
    except OSError:
        return False
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False
    data = os.dup(0)
    os.dup2(tty, 0)
    os.close(tty)
    sys.stdin = open(data, encoding="utf-8", errors="surrogateescape", closefd=True)  # lives as stdin
    return True
