"""Which rank a line belongs to: per-line prefix, then text, then the file's path."""

from __future__ import annotations

import re

# Per-line prefixes added by launchers (stripped before parsing):
#   [rank3]:  (PyTorch, before tracebacks)   [default3]:  (torchrun --tee)
_PREFIX = re.compile(r"^\[(?:rank|default)(\d+)\]:\s?")

# Rank stated in the text of a line.
_TEXT = re.compile(r"\[Rank (\d+)\]|\brank=(\d+)\b|\bRANK: (\d+)\b|\[RANK:(\d+)\]")

# Rank in a path: rank3.log, rank_3, node1_rank7.out, torchrun --log-dir .../attempt_0/3/stdout.log
_PATH = (
    re.compile(r"(?:^|[^a-z])rank[_-]?(\d+)(?:\D|$)", re.I),
    re.compile(r"attempt_\d+/(\d+)/std(?:out|err)\.log$"),
)


def split_prefix(text: str) -> tuple[int | None, str]:
    m = _PREFIX.match(text)
    if m:
        return int(m.group(1)), text[m.end() :]
    return None, text


def text_rank(text: str) -> int | None:
    m = _TEXT.search(text)
    if not m:
        return None
    return int(next(g for g in m.groups() if g is not None))


def path_rank(path: str) -> int | None:
    normalized = path.replace("\\", "/")
    for pattern in reversed(_PATH):
        m = pattern.search(normalized)
        if m:
            return int(m.group(1))
    return None
