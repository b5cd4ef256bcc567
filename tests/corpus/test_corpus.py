"""The understanding corpus must not fall below the level reached (`make corpus` prints the table).

Real excerpts of many frameworks with the facts a person reads off them (FORMAT.md); a parser change that
loses facts fails here with the list of what it lost."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from score import excerpts, score_all, table  # noqa: E402

# Off the path again: each framework's directory here (`torch_xla/`, `deepspeed/`, `tensorflow/`) would be
# importable as an empty namespace package, and libraries that probe for them (transformers) would
# think they are installed. pytest put this directory on the path to import this module.
sys.path[:] = [p for p in sys.path if p and Path(p).resolve() != HERE]

# The level reached when this was last raised (`make corpus`); raise it as the reader improves.
MIN_FACTS_PCT = 90.5  # (stop 38: 878 excerpts, set Q held out at 72 % before its fixes)
MIN_EXCERPTS = 875
MIN_FRAMEWORKS = 390


def test_no_framework_directory_is_importable() -> None:
    import importlib.util

    for name in ("torch_xla", "deepspeed", "tensorflow", "accelerate"):
        spec = importlib.util.find_spec(name)
        assert spec is None or not any(HERE in Path(p).parents for p in spec.submodule_search_locations or [])


def test_corpus_is_large_and_varied() -> None:
    paths = excerpts()
    assert len(paths) >= MIN_EXCERPTS
    assert len({p.parent.name for p in paths}) >= MIN_FRAMEWORKS
    for p in paths:
        assert p.with_suffix(".log").is_file(), p


def test_facts_read_off_real_logs() -> None:
    results = score_all(excerpts())
    passed, total = sum(r.passed for r in results), sum(r.total for r in results)
    failed = [f"{r.path.parent.name}/{r.path.stem}: {f}" for r in results for f in r.failures]
    pct = 100 * passed / total
    assert pct >= MIN_FACTS_PCT, f"{pct:.1f}% of facts\n{table(results)}\n" + "\n".join(failed[:80])
