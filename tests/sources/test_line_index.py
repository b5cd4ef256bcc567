"""The sparse line-offset index: any line found by seeking to an indexed offset and reading
at most `step` lines; memory bounded whatever the file; a truncation starts it again."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from trainwatch.lines.assembler import Line
from trainwatch.sources.discover import SourceSpec
from trainwatch.sources.line_index import LineIndex
from trainwatch.sources.reader import SourceReader
from trainwatch.ui.linereader import Needle, scan

SEED_004 = next(Path(__file__).resolve().parents[2].parent.joinpath("shared", "seeds").glob("004_*"))


def line_at(path: Path, index: LineIndex, no: int) -> bytes:
    """Line `no` read the way the Log tab reads it: from the nearest indexed offset."""
    first, offset = index.locate(no)
    assert no - first < index.step
    with open(path, "rb") as f:
        f.seek(offset)
        for _ in range(no - first):
            f.readline()
        return f.readline()


class NullSink:
    def lines(self, lines: list[Line]) -> None:
        pass

    def block(self, first: int, count: int, text: str) -> None:
        pass

    def at_eof(self) -> None:
        pass

    def restarted(self, note: str) -> None:
        pass

    def bulk_worth_trying(self) -> bool:
        return True


def read_all(reader: SourceReader, limit: int) -> None:
    while reader.pump(limit).more:
        pass


def test_every_line_of_a_seed_found_from_the_index_fed_in_odd_chunks() -> None:
    data = SEED_004.read_bytes()
    lines = data.splitlines(keepends=True)
    index = LineIndex(step=100)
    rng = random.Random(4)
    pos = 0
    while pos < len(data):
        n = rng.randint(1, 300_000)
        index.feed(data[pos : pos + n])
        pos += n
    assert index.lines == len(lines) == 33_088
    assert index.size == len(data)
    for no in (1, 2, 99, 100, 101, 7_727, 33_087, 33_088):
        assert line_at(SEED_004, index, no) == lines[no - 1]


def test_memory_is_bounded_by_the_index_not_the_lines(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(1, 200_001)))
    index = LineIndex(step=10, max_entries=64)
    index.feed(path.read_bytes())
    assert index.lines == 200_000
    assert index.entries <= 64
    assert index.step >= 200_000 // 64  # thinned: every other offset dropped, the step doubled
    assert line_at(path, index, 123_457) == b"line 123457\n"
    assert line_at(path, index, 200_000) == b"line 200000\n"


def test_the_reader_indexes_the_file_and_truncation_resets_it(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    path.write_bytes(b"".join(b"old %d\n" % i for i in range(1, 5_001)))
    reader = SourceReader(SourceSpec(str(path), str(path)), NullSink(), lambda: None, lambda: True)
    index = reader.line_index
    assert index is not None
    read_all(reader, 4096)
    assert index.lines == 5_000
    assert line_at(path, index, 4_321) == b"old 4321\n"
    epoch = index.epoch
    with open(path, "wb") as f:  # truncated and rewritten, shorter
        f.write(b"new 1\nnew 2\nnew 3\n")
    read_all(reader, 4096)
    assert index.epoch > epoch
    assert index.lines == 3
    assert index.size == os.path.getsize(path)
    assert line_at(path, index, 2) == b"new 2\n"
    reader.close()


def test_a_stream_has_no_index() -> None:
    reader = SourceReader(SourceSpec("-", None), NullSink(), lambda: None, lambda: True)
    assert reader.line_index is None


def grep_count(*args: str) -> int:
    done = subprocess.run(["grep", "-c", *args, str(SEED_004)], capture_output=True, text=True, check=False)
    return int(done.stdout)


def test_a_whole_file_scan_counts_what_grep_counts() -> None:
    plain = scan(str(SEED_004), Needle("VALIDATION loss at iteration"))
    assert plain.done and plain.count == grep_count("-i", "-F", "VALIDATION loss at iteration") == 22
    assert plain.hits[0] == 1_763  # the first: its line number, as the pipeline numbers lines
    assert scan(str(SEED_004), Needle("VALIDATION loss", case=True)).count == 0
    regex = scan(str(SEED_004), Needle(r"iteration +\d+000/", regex=True), keep=True)
    assert regex.count == grep_count("-E", "iteration +[0-9]+000/") > 0
    assert all("000/" in text for _, text in regex.kept)
    stopped = scan(str(SEED_004), Needle("iteration"), cancelled=lambda: True)
    assert not stopped.done and stopped.count == 0
