"""FileTail, in-process: every byte of every stream read once, in order, whatever happens to the path."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from trainwatch.sources import tail as tail_mod
from trainwatch.sources.tail import Ev, FileTail, TailEvent


def collect(t: FileTail, limit: int = 1 << 20) -> tuple[dict[int, bytes], list[TailEvent]]:
    """Read until nothing is left; per-stream bytes (a RESET starts a stream's bytes again)."""
    streams: dict[int, bytes] = {}
    events: list[TailEvent] = []
    while True:
        got = t.read(limit)
        for ev in got.events:
            events.append(ev)
            if ev.kind is Ev.DATA:
                streams[ev.gen] = streams.get(ev.gen, b"") + ev.data
            elif ev.kind is Ev.RESET:
                streams[ev.gen] = streams.get(ev.gen, b"") + b"|RESET|"
        if got.at_eof:
            return streams, events


def test_waits_for_a_file_that_does_not_exist_yet(tmp_path: Path) -> None:
    path = tmp_path / "nohup.out"
    t = FileTail(str(path))
    got = t.read()
    assert got.events == [] and got.notes == [
        f"waiting for the file to appear: no such file (looked for {path}); nothing named like it in {tmp_path}"
    ]
    assert t.read().notes == []  # said once
    path.write_bytes(b"a\n")
    assert collect(t)[0] == {0: b"a\n"}


def test_small_limit_reads_in_order_and_reports_more(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    data = bytes(range(256)) * 100
    path.write_bytes(data)
    t = FileTail(str(path))
    first = t.read(1000)
    assert not first.at_eof and t.offset == 1000 and t.size == len(data)
    assert collect(t, 1000)[0][0] == data[1000:]


def test_truncation_restarts_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    path.write_bytes(b"one\ntwo\n")
    t = FileTail(str(path))
    collect(t)
    path.write_bytes(b"x\n")  # O_TRUNC + shorter content
    streams, events = collect(t)
    assert streams == {0: b"|RESET|x\n"}
    assert [e.kind for e in events] == [Ev.RESET, Ev.DATA]


def test_copytruncate_takes_unread_tail_from_the_copy(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    path.write_bytes(b"line 1\n")
    t = FileTail(str(path))
    collect(t)
    with open(path, "ab") as f:
        f.write(b"line 2\nline 3\n")  # written, not yet read...
    shutil.copyfile(path, f"{path}.1")  # ...when logrotate copies and truncates
    os.truncate(path, 0)
    with open(path, "ab") as f:
        f.write(b"line 4\n")
    streams, _ = collect(t)
    assert streams == {0: b"line 2\nline 3\n|RESET|line 4\n"}


def test_regrowth_past_the_offset_is_still_seen_as_a_new_content(tmp_path: Path) -> None:
    """copytruncate then the job writes more than we had read before we looked: size never went down."""
    path = tmp_path / "out.log"
    path.write_bytes(b"run A step 1\n")
    t = FileTail(str(path))
    collect(t)
    path.write_bytes(b"run B step 1\nrun B step 2\nrun B step 3\n")  # truncated and regrown at once
    streams, _ = collect(t)
    assert streams == {0: b"|RESET|run B step 1\nrun B step 2\nrun B step 3\n"}


@pytest.mark.parametrize("banner_lines", [1, 200])
@pytest.mark.parametrize("regrown", [1, 20_000], ids=["small-append", "large-regrowth"])
def test_relaunch_with_same_banner_detected_by_the_bytes_before_the_offset(
    tmp_path: Path, banner_lines: int, regrown: int
) -> None:
    """A banner longer than the first bytes' look (200 lines): only the bytes just before the
    offset tell, whether the new content is a small append's (compared by the read itself) or
    a large regrowth's (compared on their own)."""
    path = tmp_path / "out.log"
    banner = b"".join(b"banner line %d of the job's start\n" % i for i in range(banner_lines))
    path.write_bytes(banner + b"step 1 loss 2.0\n")
    t = FileTail(str(path))
    collect(t)
    rewritten = banner + b"step 1 loss 3.0\n" + b"".join(b"step %d loss 2.9\n" % i for i in range(2, 2 + regrown))
    path.write_bytes(rewritten)
    assert collect(t)[0] == {0: b"|RESET|" + rewritten}


def test_rename_rotation_drains_the_old_file_the_writer_still_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tail_mod, "DRAIN_QUIET_S", 0.0)
    path = tmp_path / "out.log"
    writer = open(path, "ab", buffering=0)  # the job's stdout
    writer.write(b"a1\n")
    t = FileTail(str(path))
    collect(t)
    os.rename(path, f"{path}.1")
    path.write_bytes(b"")  # logrotate `create`: a new empty file; the job keeps its descriptor
    writer.write(b"a2\n")
    streams, _ = collect(t)
    assert streams == {0: b"a2\n"}
    writer.write(b"a3\n")
    assert collect(t)[0] == {0: b"a3\n"}
    assert t.draining, "the old file stays open while the new one is empty"
    writer.close()
    with open(path, "ab") as f:
        f.write(b"b1\n")
    streams, events = collect(t)
    assert streams == {1: b"b1\n"}
    events += collect(t)[1]
    assert not t.draining and TailEvent(Ev.CLOSED, 0) in events


def test_delete_and_recreate_finishes_old_then_reads_new(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    path.write_bytes(b"old 1\n")
    t = FileTail(str(path))
    collect(t)
    with open(path, "ab") as f:
        f.write(b"old 2\n")
    os.unlink(path)
    got = t.read()
    assert any("deleted" in n for n in got.notes)
    assert got.events == [TailEvent(Ev.DATA, 0, b"old 2\n")]  # still read through the descriptor
    path.write_bytes(b"new 1\n")
    streams, _ = collect(t)
    assert streams == {1: b"new 1\n"}
    assert t.rotations == 1


class _Clock:
    """tail.py's `time`, stopped: the test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_with_the_watchers_path_events_a_growing_file_asks_its_path_only_after_one_or_an_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under inotify (`path_events`), appends are read without a `stat` of the path each time
    (256 files x 4 appends a second). The path is asked again after an event at it
    (`path_changed`: the watcher saw a file created, moved or deleted there), after
    PATH_CHECK_S, or at once by a read that found nothing new."""
    clock = _Clock()
    monkeypatch.setattr(tail_mod, "time", clock)
    path = tmp_path / "out.log"
    path.write_bytes(b"a1\n")
    t = FileTail(str(path))
    t.path_events = True
    collect(t)
    looked: list[str] = []
    real = os.stat

    def counted(p: object, *args: object, **kwargs: object) -> os.stat_result:
        if p == str(path):
            looked.append("path")
        return real(p, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tail_mod.os, "stat", counted)
    with open(path, "ab", buffering=0) as writer:  # the job's stdout, kept through the renames
        for i in range(2, 6):
            clock.now += 0.01
            writer.write(b"a%d\n" % i)
            assert t.read().events == [TailEvent(Ev.DATA, 0, b"a%d\n" % i)]
        assert looked == []
        # Replaced twice while the old file still grows, each time told by the watcher: no file skipped.
        for gen, name in ((1, b"b"), (2, b"c")):
            os.rename(path, f"{path}.{gen}")
            path.write_bytes(name + b"1\n")
            writer.write(b"a%d\n" % (5 + gen))
            t.path_changed()
            clock.now += 0.01
            got = t.read()
            assert TailEvent(Ev.DATA, 0, b"a%d\n" % (5 + gen)) in got.events
            assert TailEvent(Ev.DATA, gen, name + b"1\n") in got.events
        assert t.rotations == 2
    # Not told (an event lost): the file read now, still growing, is asked again after the interval.
    with open(path, "ab", buffering=0) as writer:  # a writer of c
        os.rename(path, f"{path}.3")
        path.write_bytes(b"d1\n")
        writer.write(b"c2\n")
        clock.now += 0.01
        assert t.read().events == [TailEvent(Ev.DATA, 2, b"c2\n")]
        clock.now += tail_mod.PATH_CHECK_S
        writer.write(b"c3\n")
        got = t.read()
    assert TailEvent(Ev.DATA, 2, b"c3\n") in got.events and TailEvent(Ev.DATA, 3, b"d1\n") in got.events
    path.unlink()
    clock.now += 0.01
    assert any("deleted" in n for n in t.read().notes)  # nothing new: the path is asked at once


def test_without_path_events_the_path_is_asked_after_every_read(tmp_path: Path) -> None:
    """Polling (a network filesystem, --poll, no inotify): no watcher tells of a new file at the
    path, so a read that got data asks anyway, as before."""
    path = tmp_path / "out.log"
    path.write_bytes(b"a1\n")
    t = FileTail(str(path))
    collect(t)
    with open(path, "ab", buffering=0) as writer:
        os.rename(path, f"{path}.1")
        path.write_bytes(b"b1\n")
        writer.write(b"a2\n")
        got = t.read()
    assert TailEvent(Ev.DATA, 0, b"a2\n") in got.events and TailEvent(Ev.DATA, 1, b"b1\n") in got.events


def test_directory_or_fifo_at_path_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    got = FileTail(str(fifo)).read()
    assert got.events == [] and got.notes == ["not a regular file; not read"]


def test_sparse_hole_after_copytruncate_restarts_and_keeps_the_text(tmp_path: Path) -> None:
    """A writer without O_APPEND keeps its offset after the truncation: the file restarts with a hole of NULs."""
    path = tmp_path / "out.log"
    path.write_bytes(b"x" * 2000 + b"\n")
    t = FileTail(str(path))
    collect(t)
    os.truncate(path, 0)
    with open(path, "r+b") as f:
        f.seek(3000)
        f.write(b"after\n")
    streams, _ = collect(t)
    assert streams[0] == b"|RESET|" + b"\x00" * 3000 + b"after\n"


def test_two_unseen_copytruncates_recover_from_both_copies(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    path.write_bytes(b"s1 line 1\n")
    t = FileTail(str(path))
    collect(t)
    for segment in (b"s1 line 2\n", b"s2 line 1\n"):
        with open(path, "ab") as f:
            f.write(segment)
        if os.path.exists(f"{path}.1"):
            os.rename(f"{path}.1", f"{path}.2")
        shutil.copyfile(path, f"{path}.1")
        os.truncate(path, 0)
    path.write_bytes(b"s3 line 1\n")
    assert collect(t)[0] == {0: b"s1 line 2\n|RESET|s2 line 1\n|RESET|s3 line 1\n"}


def test_same_size_new_mtime_and_new_content_is_read_again(tmp_path: Path) -> None:
    """lnav's check: nothing grew, but the file was rewritten in place with the same length."""
    path = tmp_path / "out.log"
    path.write_bytes(b"step 1 loss 2.0\n")
    t = FileTail(str(path))
    collect(t)
    path.write_bytes(b"step 1 loss 9.0\n")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert collect(t)[0] == {0: b"|RESET|step 1 loss 9.0\n"}
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))  # touched, content unchanged
    assert collect(t)[0] == {}


def test_an_append_is_one_read_and_a_chunked_file_arrives_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A followed file's append costs one `pread` besides the first bytes' look (a short read is the file's end as of now:
    256 growing files are a thousand appends a second), and a file longer than the chunk size
    is read in full pieces, every byte once, in order."""
    path = tmp_path / "out.log"
    data = b"".join(b"line %d\n" % i for i in range(3000))
    path.write_bytes(data)
    t = FileTail(str(path), chunk=4096)
    calls: list[int] = []
    real = os.pread

    def counted(fd: int, n: int, at: int) -> bytes:
        calls.append(n)
        return real(fd, n, at)

    monkeypatch.setattr(tail_mod.os, "pread", counted)
    first = t.read(1 << 20)
    assert b"".join(ev.data for ev in first.events) == data and first.at_eof
    assert calls[: len(data) // 4096] == [4096] * (len(data) // 4096)  # full chunks, then the short last one
    with path.open("ab") as f:
        f.write(b"appended\n")
    calls.clear()
    t.chunk = tail_mod.CHUNK  # (8 MB: what a followed file is read with)
    got = t.read(1 << 20)
    assert [ev.data for ev in got.events] == [b"appended\n"]
    # The first bytes' look, then one read from the anchor (the bytes before the offset, which
    # it compares) asking for what fstat said is there plus slack, not for `limit`.
    assert calls == [len(t.current.head), tail_mod.ANCHOR_BYTES + len(b"appended\n") + tail_mod.READ_SLACK]


def test_a_file_growing_between_stat_and_read_is_read_to_its_end(tmp_path: Path) -> None:
    """The first read asks for what `fstat` saw plus slack: more than that is read on, in chunks."""
    path = tmp_path / "out.log"
    path.write_bytes(b"start\n")
    t = FileTail(str(path), chunk=4096)
    collect(t)
    grown = b"".join(b"row %d\n" % i for i in range(40_000))
    real = os.fstat

    def stale(fd: int) -> os.stat_result:  # fstat taken just before the writer's burst
        st = real(fd)
        with path.open("ab") as f:
            f.write(grown)
        os.fstat = real
        return st

    os.fstat = stale
    try:
        streams, _events = collect(t, limit=1 << 22)
    finally:
        os.fstat = real
    assert streams == {0: grown}
