"""Real log lines, the ways hostile or damaged logs mangle them, and the contract checks.

Shared by the hypothesis tests in this directory and by `tests/bench/fuzz_parsers.py` (atheris):
both drive the real entry point — `SourceParser` over `registry.new_parsers()` — with lines
taken from the real logs in /work/shared (seeds, real_logs) and sample_logs/, one line per
distinct shape (digits masked), then mutated the way truncation, terminal damage or an
attacker would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from trainwatch.lines.assembler import Kind, Line
from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import SourceParser, SourceStats
from trainwatch.records import EVENT_KINDS, Event, Phases, Profile, Record, Step, to_dict

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
LOG_DIRS = (SHARED / "seeds", SHARED / "real_logs", ROOT / "sample_logs")
_SHAPE_DIGITS = re.compile(r"\d+")
_SHAPE_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")

# What a number in a log line is replaced with.
NUMBER_SWAPS = (
    "nan",
    "-nan",
    "inf",
    "-inf",
    "NaN",
    "1e999",
    "-1e999",
    "1e-999",
    "9" * 400,  # fits the int-string limit, overflows float() of an int
    "1" + "0" * 5000,  # beyond Python's 4300-digit int-string limit
    "0x" + "f" * 300,
    "١٢٣",  # ARABIC-INDIC digits: str.isdigit() and re's \d accept them
    "１２３",  # fullwidth
    "²",  # a digit for isdigit(), not for int()
    "1.2.3",
    "..",
    "1,2,3,4",
    "1e",
    "--1",
    "",
    "٣.١٤",
)
INSERTS = ("|", ":", "=", " | ", ": :", "==", "[", "]", "{'", "}", "(", ")", ",", "%", "/", "\\", "'", '"', "\t")


@cache
def corpus(*, excerpts: bool = False) -> tuple[str, ...]:
    """One real line per distinct shape (digits masked): ~2000 lines, every format the repo parses —
    the real logs here, then the lines each format's samples quote from public issues; with
    `excerpts`, ~4000 more from the understanding corpus (tests/corpus, ~900 excerpts of public
    logs; `make bench` section 1c reads them, the tests do not: their sweep would take minutes)."""
    shapes: dict[str, str] = {}
    texts: list[str] = []
    for root in LOG_DIRS + ((ROOT / "tests" / "corpus",) if excerpts else ()):
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix not in (".py", ".sh", ".toml", ".md"):
                texts.extend(path.read_bytes().decode("utf-8", "replace").splitlines())
    for parser in new_parsers():
        for sample in parser.samples:
            texts.extend(sample.text.splitlines())
    for text in texts:
        if len(text) > 4000 or not any(c.isdigit() for c in text):
            continue
        shape = _SHAPE_SPACE.sub(" ", _SHAPE_DIGITS.sub("#", text))
        shapes.setdefault(shape, text)
    return tuple(shapes.values())


def mutate(text: str, op: int, where: int, what: int) -> str:
    """One damage of a real line; `op`, `where`, `what` are any ints (drawn by hypothesis/atheris)."""
    n = len(text)
    at = where % (n + 1)
    numbers = list(_NUMBER.finditer(text))
    kind = op % 9
    if kind == 0:  # torn write / cut
        return text[:at]
    if kind == 1 and numbers:  # a number replaced by something nasty
        m = numbers[where % len(numbers)]
        return text[: m.start()] + NUMBER_SWAPS[what % len(NUMBER_SWAPS)] + text[m.end() :]
    if kind == 2 and numbers:  # every number replaced
        swap = NUMBER_SWAPS[what % len(NUMBER_SWAPS)]
        return _NUMBER.sub(lambda _m: swap, text)
    if kind == 3:  # a separator inserted
        return text[:at] + INSERTS[what % len(INSERTS)] + text[at:]
    if kind == 4:  # a field duplicated
        pieces = re.split(r"(\s*[|,]\s*)", text)
        i = what % len(pieces)
        return "".join(pieces[: i + 1] + pieces[i:])
    if kind == 5:  # a number made very long
        if numbers:
            m = numbers[where % len(numbers)]
            return text[: m.end()] + "7" * (50 + what % 6000) + text[m.end() :]
        return text + "7" * 5000
    if kind == 6:  # a span deleted
        return text[:at] + text[at + 1 + what % 40 :]
    if kind == 7:  # the whole line repeated / glued to itself
        return text + text[: what % (n + 1)]
    if kind == 8 and numbers:  # a number cut in the middle (`2.149121` -> `2.1`)
        m = numbers[where % len(numbers)]
        cut = m.start() + 1 + what % max(1, len(m.group()) - 1)
        return text[:cut] + text[m.end() :]
    return text[:at] + chr(0x660 + what % 10) + text[at:]


def run_lines(texts: Iterable[str], *, frames: Sequence[bool] = ()) -> tuple[list[Record], SourceStats]:
    """Lines through the real per-source runner with every registered parser."""
    records: list[Record] = []
    runner = SourceParser("fuzz.log", new_parsers(), records.append)
    for no, text in enumerate(texts, 1):
        kind = Kind.FRAME if no - 1 < len(frames) and frames[no - 1] else Kind.LINE
        runner.feed_line(Line(no, text, kind))
    runner.at_eof()
    runner.finish()
    return records, runner.stats


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def contract_problems(records: Iterable[Record]) -> list[str]:
    """What in these records breaks shared/spec/records.md (empty: nothing)."""
    bad: list[str] = []
    for r in records:
        if r.rank is not None and (not isinstance(r.rank, int) or isinstance(r.rank, bool) or r.rank < 0):
            bad.append(f"rank {r.rank!r}: {r}")
        if r.step is not None and (not isinstance(r.step, int) or isinstance(r.step, bool)):
            bad.append(f"step {r.step!r}: {r}")
        if not isinstance(r.line, int) or r.line < 0:
            bad.append(f"line {r.line!r}: {r}")
        if r.time is not None and not isinstance(r.time, str):
            bad.append(f"time {r.time!r}: {r}")
        if isinstance(r, Step):
            for k, v in r.metrics.items():
                if not isinstance(k, str) or not k or not _is_number(v):
                    bad.append(f"metric {k!r}={v!r}: {r}")
        elif isinstance(r, Phases):
            for k, v in r.phases_s.items():
                if not isinstance(k, str) or not k or not _is_number(v):
                    bad.append(f"phase {k!r}={v!r}: {r}")
        elif isinstance(r, Event):
            if r.kind not in EVENT_KINDS or r.severity not in ("info", "warning", "error"):
                bad.append(f"event kind/severity: {r}")
            if not isinstance(r.message, str):
                bad.append(f"message: {r}")
            for k, v in r.data.items():
                # Named counts are numbers; others (op, path, exception, signal, metric) may be text.
                if k in ("attempted_scale", "new_scale", "requested_gib", "timeout_ms", "exitcode", "attempt"):
                    if not _is_number(v):
                        bad.append(f"event data {k!r}={v!r}: {r}")
        elif isinstance(r, Profile):
            for row in r.rows:
                for k, v in row.items():
                    if (k.endswith(("_s", "_pct")) or k in ("calls", "num_calls")) and not _is_number(v):
                        bad.append(f"profile {k!r}={v!r}: {r.title}")
        try:
            dumped = json.dumps(to_dict(r), allow_nan=False)
        except (TypeError, ValueError) as exc:
            bad.append(f"not JSON: {exc}: {r}")
            continue
        if "\\u001b" in dumped or "\\u009b" in dumped or "\\u009d" in dumped:
            bad.append(f"escape character in a record: {dumped[:200]}")
    return bad
