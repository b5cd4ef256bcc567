"""The parsers a line is offered to, remembered by its shape (`parsers/runner/triggers.py`), are
exactly the ones whose triggers it holds: on every corpus line, on the same lines with other
digits (a shape's next line), and with the index switched off for free text."""

from __future__ import annotations

import random
from pathlib import Path

from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import triggers as triggers_module
from trainwatch.parsers.runner.triggers import TriggerIndex

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _triggered() -> list[tuple[object, tuple[str, ...]]]:
    return [(p, tuple(p.triggers)) for p in new_parsers() if p.triggers]


def _offered(index: TriggerIndex, text: str) -> list[str]:
    """What the dispatch offers the line: candidates, live ones tested on the line itself."""
    return [p.name for p, triggers, live in index.candidates(text) if not live or any(t in text for t in triggers)]


def _holding(triggered: list[tuple[object, tuple[str, ...]]], text: str) -> list[str]:
    return [p.name for p, triggers in triggered if any(t in text for t in triggers)]  # type: ignore[attr-defined]


def _other_digits(text: str, rng: random.Random) -> str:
    return "".join(rng.choice("0123456789") if c.isdigit() and c.isascii() else c for c in text)


def test_every_corpus_line_and_its_other_digits_are_offered_to_the_parsers_whose_triggers_they_hold() -> None:
    triggered = _triggered()
    index = TriggerIndex(triggered)
    rng = random.Random(7)
    lines = 0
    for log in sorted(CORPUS.rglob("*.log")):
        for text in log.read_text(encoding="utf-8", errors="replace").splitlines():
            for variant in (text, _other_digits(text, rng), text):
                assert _offered(index, variant) == _holding(triggered, variant), (log.name, variant)
            lines += 1
    assert lines > 10_000


def test_a_trigger_with_a_digit_is_tested_on_the_line_itself() -> None:
    """`E2E latency=` (DeepSpeed-Chat) and `E3E latency=` share a shape; only one holds the trigger."""
    triggered = _triggered()
    index = TriggerIndex(triggered)
    for text in (
        "E2E latency=1.23s",
        "E3E latency=1.23s",
        "E2E latency=4.56s",
        "d2.utils.events: x",
        "d3.utils.events: x",
    ):
        assert _offered(index, text) == _holding(triggered, text), text
    assert "deepspeed_chat" in _offered(index, "E2E latency=9.99s")
    assert "deepspeed_chat" not in _offered(index, "E3E latency=9.99s")


def test_free_text_switches_the_index_off_and_stays_exact(monkeypatch: object) -> None:
    triggered = _triggered()
    index = TriggerIndex(triggered)
    words = ["step", "loss", "Epoch", "iteration", "rate", "|", "time (ms)", "{'", "warning", "node", "the"]
    rng = random.Random(3)
    for i in range(3 * triggers_module.CHECK_EVERY):
        text = " ".join(rng.choice(words) + rng.choice(["", "x", "y:", "="]) for _ in range(6)) + f" #{i}"
        assert _offered(index, text) == _holding(triggered, text), text
    assert index._off > 0  # mostly new shapes: looked for one by one


def test_long_lines_are_looked_at_one_by_one_and_not_kept() -> None:
    """A key is the whole line: long distinct lines that still hit often would fill the memo of
    each followed file with kilobytes a line."""
    triggered = _triggered()
    index = TriggerIndex(triggered)
    rng = random.Random(5)
    long_line = "step 1 | lm loss 2.0 | " + "x" * triggers_module.KEY_MAX
    for _ in range(50):
        text = _other_digits(long_line, rng)
        assert _offered(index, text) == _holding(triggered, text)
    assert index._memo == {}
    short = "step 1 | lm loss 2.0 |"
    assert _offered(index, short) == _holding(triggered, short) and len(index._memo) == 1
