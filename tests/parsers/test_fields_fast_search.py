"""The field reader's shortcuts give what the plain reading gives, on every value of every real
log here and on random text made of the characters that matter: its end-anchored searches start
where a match can start (`fields.key_end`, `word_end`, `wrapper_end`: the same match as `search`
from the window's first character), and a label read from the text after the value before it
(`label_start`) is the label read from the whole window."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest
from conftest import REAL_LOGS, ROOT, SAMPLES, SEEDS

from trainwatch.parsers import fields

_LOGS = [
    *sorted(SAMPLES.rglob("*.log")),
    *sorted(SEEDS.glob("*")),
    *sorted(REAL_LOGS.glob("*")),
    *sorted((ROOT / "tests" / "corpus").rglob("*.log")),
]
# What the patterns read: label characters, quotes, blanks, separators, brackets and units, a
# few characters no label holds, non-ASCII letters and blanks.
_ALPHABET = "aZ_09./@%-'\" \t:=>[()|,#;*+lossmtenr" + "\x1c\x0b" + "é中\xa0"


def _same(fast: re.Match[str] | None, plain: re.Match[str] | None) -> bool:
    if fast is None or plain is None:
        return fast is plain
    return fast.span() == plain.span() and fast.groupdict() == plain.groupdict()


def _windows(lines: Iterator[str]) -> Iterator[str]:
    """What `label_of` searches: the window before each value, cut at a wrapper as it is cut."""
    for text in lines:
        lo = fields.prefix_end(text)
        for m in fields._VALUE.finditer(text, lo):
            window = text[max(lo, m.start("val") - fields._KEY_WINDOW) : m.start("val")]
            yield window
            wrapped = fields._WRAPPER.search(window)
            if wrapped is not None:
                yield window[: wrapped.start()] + " "


def _log_lines(limit: int = 2000) -> Iterator[str]:
    for path in _LOGS:
        with open(path, encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f):
                if no >= limit:
                    break
                yield line.rstrip("\n")


def _check(window: str, every_prefix: bool = True) -> None:
    assert _same(fields.key_end(window), fields._KEY_END.search(window)), window
    assert _same(fields.wrapper_end(window), fields._WRAPPER.search(window)), window
    # the walk back over the words before a label searches the text before each blank
    cuts = range(len(window) + 1) if every_prefix else [i for i, c in enumerate(window) if c == " "]
    for cut in cuts:
        head = window[:cut]
        assert _same(fields.word_end(head), fields._WORD.search(head)), head


def test_every_value_window_of_the_real_logs() -> None:
    seen = 0
    for window in _windows(_log_lines()):
        _check(window, every_prefix=False)
        seen += 1
    assert seen > 50_000  # (the project's own sample logs and corpus alone hold 57k)


@pytest.mark.parametrize("seed_no", range(4))
def test_random_windows(seed_no: int) -> None:
    rng = random.Random(seed_no)
    for _ in range(5000):
        n = rng.randint(0, 40)
        _check("".join(rng.choice(_ALPHABET) for _ in range(n)))


@pytest.mark.parametrize(
    "window",
    [
        "| elapsed time per iteration (ms): ",  # a unit in parentheses: searched whole
        "memory: 49.66GiB(52.28%)  tps: ",  # a `)` a label cannot end with: searched from the last label
        "Acc@1 ",  # a label holding a value
        "loss tensor(",
        "lr=[",
        "训练 loss: ",
        "x) : ",
        "",
    ],
)
def test_windows_of_each_kind(window: str) -> None:
    _check(window)


def test_a_label_is_still_read_through_a_closing_paren() -> None:
    reading = fields.read_fields("step 5 | elapsed time per iteration (ms): 250.0 | memory: 3.1GiB(52%)  tps: 5,905")
    assert reading is not None
    assert reading.step == 5
    assert reading.metrics["step_time_s"] == 0.25
    assert reading.metrics["tokens_per_s"] == 5905


def _labels_agree(text: str) -> int:
    """Each value's label from its whole window and from the window `label_start` cuts."""
    lo = fields.prefix_end(text)
    previous = None
    n = 0
    for m in fields._VALUE.finditer(text, lo):
        start = m.start("val")
        cut, previous = fields.label_start(text, lo, previous, start), m.span("val")
        whole = fields.label_of(text[max(lo, start - fields._KEY_WINDOW) : start])
        assert fields.label_of(text[max(cut, start - fields._KEY_WINDOW) : start]) == whole, (text, start)
        n += 1
    return n


def test_a_label_read_after_the_value_before_is_the_label_of_the_whole_window() -> None:
    assert sum(_labels_agree(line) for line in _log_lines()) > 50_000


# Labels, values in the forms the reader sees, and what stands between them in real lines.
_PIECES = [
    "loss",
    "lr",
    "Acc@1",
    "top-5",
    "train loss",
    "time (ms)",
    "elapsed time per iteration (ms)",
    "is",
    "was",
    "tensor(",
    "lr=[",
    "v1.2",
    "2024-01",
    "ms",
    "it/s",
    "GiB(",
    "%",
    "epoch",
    "step",
    "iter",
    "5",
    "0.25",
    "-3",
    "1e-4",
    "nan",
    "inf",
    "1,234",
    "12:30:01",
    "3/10",
    ".5",
    "7.",
    ": ",
    "=",
    " ",
    "  ",
    " | ",
    ", ",
    "(",
    ")",
    "[",
    "]",
    "/",
    "-",
    "@",
    "'",
    '"',
    "->",
    "\t",
    "训练",
]


@pytest.mark.parametrize("seed_no", range(4))
def test_labels_agree_on_random_lines(seed_no: int) -> None:
    rng = random.Random(100 + seed_no)
    for _ in range(3000):
        _labels_agree("".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 24))))


def _shape_whole(text: str) -> str:
    """`shape_of` with the whole mask always (what the shortcut for text without nan/inf skips)."""
    if "[" in text:
        text = fields._GLYPH_BAR.sub("[~]", text)
    shape = fields._SHAPE_SCALE.sub(
        "#", fields._SHAPE_DURATION.sub("#t", " ".join(fields._MASK.sub("#", text).split()))
    )
    shape = shape.replace("#:#:#", "#:#")
    if shape.endswith(" *") and not shape.endswith("* *"):
        shape = shape[:-2]
    return shape.replace("( #", "(#").replace("[ #", "[#") if "( #" in shape or "[ #" in shape else shape


def test_shapes_are_masked_as_with_the_whole_mask() -> None:
    rng = random.Random(5)
    lines = list(_log_lines(500))
    lines += [
        "".join(rng.choice([*_PIECES, "NaN", "INF", "İnf", "ınf", "nAn"]) for _ in range(12)) for _ in range(3000)
    ]
    for text in lines:
        assert fields.shape_of(text) == _shape_whole(text), text


# `_VALUE` as it was before its leading lookahead (the first character a value can have).
_VALUE_PLAIN = re.compile(fields._VALUE.pattern.removeprefix(r"(?=[-+.\dni])"), re.I)


def _values(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], str]]:
    return [(m.span("val"), m.group("val")) for m in pattern.finditer(text)]


def test_the_value_lookahead_finds_every_value_the_plain_pattern_finds() -> None:
    assert _VALUE_PLAIN.pattern != fields._VALUE.pattern
    rng = random.Random(7)
    lines = list(_log_lines(500))
    # case folding: `İnf` and `ınf` are `inf` under re.I; other scripts' digits are `\d`
    extra = [*_PIECES, "NaN", "INF", "İnf", "ınf", "nAn", "٣٤", "+", ".", "ſ", "K"]
    lines += ["".join(rng.choice(extra) for _ in range(14)) for _ in range(4000)]
    found = 0
    for text in lines:
        values = _values(fields._VALUE, text)
        assert values == _values(_VALUE_PLAIN, text), text
        found += len(values)
    assert found > 50_000
