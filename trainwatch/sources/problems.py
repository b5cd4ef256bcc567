"""What a PATH argument found that is not a log to read, typed: callers decide by `kind` (exit on
a missing file, note a skipped FIFO on the files found beside it), never by the wording."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from enum import Enum

from trainwatch.lines.sanitize import printable

NEAREST = 3  # names offered for a mistyped path


class ProblemKind(Enum):
    MISSING = "missing"  # a plain PATH that does not exist now (followers wait for it)
    NOT_REGULAR = "not regular"  # a FIFO, socket or device: never opened
    EMPTY = "empty"  # a directory or glob that holds no log yet
    WALK_STOPPED = "walk stopped"  # a directory walk met its depth or count bound
    NOT_READ = "not read"  # a file of a kind an optional extra reads (TensorBoard events), extra not installed


@dataclass(frozen=True, slots=True)
class Problem:
    kind: ProblemKind
    # MISSING, NOT_REGULAR: the file itself; EMPTY, WALK_STOPPED: the directory or glob PATH.
    path: str
    message: str  # one line for the user, as `warn` prints it


def missing_hint(path: str) -> str:
    """What a user needs to fix a mistyped PATH: that it does not exist, the absolute path looked
    for, and the existing names nearest to what was typed (in its directory, or in the nearest
    existing parent when the directory is missing too). Names are untrusted: made `printable`."""
    looked = os.path.abspath(path)
    parent = os.path.dirname(looked)
    ancestor = parent
    while not os.path.isdir(ancestor) and os.path.dirname(ancestor) != ancestor:
        ancestor = os.path.dirname(ancestor)
    # the name typed at the level that exists: the file's own, or the first missing directory's
    typed = os.path.relpath(looked, ancestor).split(os.sep)[0]
    near = _nearest(ancestor, typed)
    where = f"no such file (looked for {looked})"
    if ancestor != parent:
        where += f"; {ancestor} has no {typed}/"
    if near:
        where += f"; nearest in {ancestor}: {', '.join(near)}"
    elif ancestor == parent:
        where += f"; nothing named like it in {ancestor}"
    return printable(where)


def _nearest(directory: str, typed: str) -> list[str]:
    try:
        names = [name for name in os.listdir(directory) if not name.startswith(".") or typed.startswith(".")]
    except OSError:
        return []
    return difflib.get_close_matches(typed, names, n=NEAREST, cutoff=0.6)
