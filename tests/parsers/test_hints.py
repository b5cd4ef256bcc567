"""Every alternative of a hinted prefilter holds one of its hints in any match (`parsers.hints`):
the hint is part of text the alternative must match, found by parsing the pattern."""

from __future__ import annotations

import re

import pytest

from trainwatch.parsers.formats import events, generic
from trainwatch.parsers.hints import Hinted

_parser = pytest.importorskip("re._parser")  # (CPython's own regex parser: the test reads the pattern with it)
_c = pytest.importorskip("re._constants")


def _alternatives(pattern: str) -> list[list[tuple[object, object]]]:
    items = list(_parser.parse(pattern))
    if len(items) == 1 and items[0][0] is _c.BRANCH:
        return [list(branch) for branch in items[0][1][1]]
    return [items]


def _mandatory_text(items: list[tuple[object, object]]) -> list[str]:
    """The runs of literal characters every match of this sequence holds (case-sensitive literals
    at its top level; anything optional, repeated or alternative breaks a run)."""
    runs, run = [], ""
    for op, arg in items:
        if op is _c.LITERAL:
            run += chr(arg)  # type: ignore[arg-type]
            continue
        runs.append(run)
        run = ""
        if op is _c.SUBPATTERN:  # a group (no flags): its own mandatory text counts too
            _group, add_flags, del_flags, inner = arg  # type: ignore[misc]
            if not add_flags and not del_flags:
                runs += _mandatory_text(list(inner))
    runs.append(run)
    return [r for r in runs if r]


HINTED = {"events._PREFILTER": events._PREFILTER, "generic._NOT_PROGRESS": generic._NOT_PROGRESS}


@pytest.mark.parametrize("name", sorted(HINTED))
def test_every_alternative_holds_a_hint(name: str) -> None:
    hinted = HINTED[name]
    assert not hinted.regex.flags & re.IGNORECASE
    for alternative in _alternatives(hinted.regex.pattern):
        texts = _mandatory_text(alternative)
        assert any(h in t for h in hinted.hints for t in texts), (name, texts)


def test_the_check_reads_a_pattern_as_it_should() -> None:
    """(The parsing above finds what a match must hold, and no more.)"""
    assert _mandatory_text(_alternatives(r"[Ss]av(?:e|ed)\s")[0]) == ["ave"]  # (`re` factors out the `e`)
    assert _mandatory_text(_alternatives(r"oom.kill")[0]) == ["oom", "kill"]
    assert _mandatory_text(_alternatives(r"Training (?:finished|done)")[0]) == ["Training "]
    assert [_mandatory_text(a) for a in _alternatives("a(?:bc)d|x?y|p(q|r)s")] == [["abcd"], ["y"], ["p", "s"]]
    bad = Hinted("Killed|Aborted", ("Killed",))
    assert not any(h in t for h in bad.hints for t in _mandatory_text(_alternatives(bad.regex.pattern)[1]))


def test_hinted_search_finds_what_the_pattern_finds() -> None:
    for text in ("Signal 15 (SIGTERM) received", "oom-kill event", "step 5 | loss 2.3", "Saving model to x", ""):
        assert bool(events._PREFILTER.search(text)) == bool(events._PREFILTER.regex.search(text))
