"""Idle following is cheap because a safety poll of an unchanged file is one stat, not a read.

`SourceReader.quiet()` decides that; it must say "changed" for every change the full read
would act on (appended, truncated, replaced, deleted), or a change inotify missed would wait
until the next real event. Lines are Megatron's (/work/shared/seeds/004).
"""

from __future__ import annotations

import os
from pathlib import Path

from trainwatch.pipeline import Pipeline
from trainwatch.records import Record, Step

LINE = (
    " iteration       %d/ 1000000 | elapsed time per iteration (ms): 930.5 | learning rate 1.500E-07 |"
    " lm loss 1.098910E+01 | loss scale 4096.0 |\n"
)


def _reader(path: Path) -> tuple[Pipeline, list[Record]]:
    records: list[Record] = []
    pipeline = Pipeline([str(path)], sink=records.extend)
    return pipeline, records


def _steps(records: list[Record]) -> list[int | None]:
    return [r.step for r in records if isinstance(r, Step)]


def test_quiet_only_while_the_file_is_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    path.write_text(LINE % 10)
    pipeline, records = _reader(path)
    reader = pipeline.readers[str(path)]
    assert not reader.quiet()  # never read yet
    while reader.pump():
        pass
    assert _steps(records) == [10]
    assert reader.quiet()
    assert reader.quiet()  # asking does not change anything

    with path.open("a") as f:  # appended
        f.write(LINE % 20)
    assert not reader.quiet()
    reader.pump()
    assert _steps(records) == [10, 20]
    assert reader.quiet()

    os.truncate(path, 0)  # truncated (copytruncate)
    assert not reader.quiet()
    reader.pump()

    replacement = tmp_path / "new.log"  # replaced under the same name
    replacement.write_text(LINE % 30)
    os.replace(replacement, path)
    assert not reader.quiet()
    while reader.pump():
        pass
    assert 30 in _steps(records)

    path.unlink()  # deleted
    assert not reader.quiet()
    pipeline.stop()


def test_repeated_polls_of_an_unchanged_file_emit_nothing(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    path.write_text(LINE % 10 + LINE % 20)
    pipeline, records = _reader(path)
    reader = pipeline.readers[str(path)]
    while reader.pump():
        pass
    seen = list(records)
    changes = reader.parser.changes
    for _ in range(5):
        reader.pump()
    assert records == seen
    assert reader.parser.changes == changes
    pipeline.stop()
