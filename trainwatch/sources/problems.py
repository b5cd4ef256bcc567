"""What a PATH argument found that is not a log to read, typed: callers decide by `kind` (exit on
a missing file, note a skipped FIFO on the files found beside it), never by the wording."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ProblemKind(Enum):
    MISSING = "missing"  # a plain PATH that does not exist now (followers wait for it)
    NOT_REGULAR = "not regular"  # a FIFO, socket or device: never opened
    EMPTY = "empty"  # a directory or glob that holds no log yet
    WALK_STOPPED = "walk stopped"  # a directory walk met its depth or count bound


@dataclass(frozen=True, slots=True)
class Problem:
    kind: ProblemKind
    # MISSING, NOT_REGULAR: the file itself; EMPTY, WALK_STOPPED: the directory or glob PATH.
    path: str
    message: str  # one line for the user, as `warn` prints it
