"""Streams as sources: a FIFO or `/dev/fd/N` named on the command line (`mkfifo`, process
substitution `<(ssh node1 tail -F out.log)`) is read as a live stream, each its own source with
its own ranks, named by `--label` or its position. A FIFO found while walking a directory is
still skipped (it could block a reader forever).

Logs: sample_logs/megatron__gpt2_deepspeed.log (one rank, crashed at step 23000) and
sample_logs/deepspeed__coca_4rank_zero1_sighup.log (4 ranks). Each stream's summary must equal
the summary of the same file read as a file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
MEGATRON = SAMPLES / "megatron__gpt2_deepspeed.log"
COCA = SAMPLES / "deepspeed__coca_4rank_zero1_sighup.log"
NOT_READ = "not a regular file (FIFOs and devices are not read)"
# A writer that sends a log in small pieces with pauses, as `ssh node tail -F` does.
WRITER = """
import sys, time
data = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb", buffering=0) as out:
    for at in range(0, len(data), 4096):
        out.write(data[at : at + 4096])
        if at % (64 * 4096) == 0:
            time.sleep(0.01)
"""


def _trainwatch(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "trainwatch", *args], capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _write(log: Path, fifo: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(log), str(fifo)])


def _summary_of_file(log: Path) -> dict[str, Any]:
    done = _trainwatch(["summary", "--json", str(log)])
    return dict(json.loads(done.stdout))


def _per_source(summary: dict[str, Any], source: str) -> list[tuple[Any, ...]]:
    """(rank, last step) of each rank of one source. (Not the state: a file's age comes from its
    mtime, a stream's from when its bytes arrived, as for stdin.)"""
    return [(r["rank"], r["last_step"]) for r in summary["rank_status"] if r["source"] == source]


@pytest.fixture
def fifos(tmp_path: Path) -> tuple[Path, Path]:
    one, two = tmp_path / "node1.pipe", tmp_path / "node2.pipe"
    os.mkfifo(one)
    os.mkfifo(two)
    return one, two


def test_two_fifos_are_two_sources_with_their_own_ranks(fifos: tuple[Path, Path]) -> None:
    writers = [_write(MEGATRON, fifos[0]), _write(COCA, fifos[1])]
    done = _trainwatch(["summary", "--json", "--label", "node1", "--label", "node2", *map(str, fifos)])
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    assert done.returncode == 0 and done.stderr == ""
    both = json.loads(done.stdout)
    assert both["sources"] == ["node1", "node2"]
    megatron, coca = _summary_of_file(MEGATRON), _summary_of_file(COCA)
    assert sorted(both["ranks"]) == sorted(set(megatron["ranks"]) | set(coca["ranks"]))
    # each stream holds what its log holds, as if read from the file
    assert _per_source(both, "node1") == _per_source(megatron, str(MEGATRON))
    assert _per_source(both, "node2") == _per_source(coca, str(COCA))
    assert both["lines"] == megatron["lines"] + coca["lines"]


def test_streams_without_labels_are_named_by_position(fifos: tuple[Path, Path]) -> None:
    writers = [_write(MEGATRON, fifos[0]), _write(MEGATRON, fifos[1])]
    done = _trainwatch(["summary", "--json", "--label", "a", *map(str, fifos)])
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    assert json.loads(done.stdout)["sources"] == ["a", "stream 2"]


def test_labels_that_do_not_fit_the_streams_are_a_usage_error(fifos: tuple[Path, Path]) -> None:
    done = _trainwatch(["summary", "--label", "a", "--label", "b", str(MEGATRON), str(fifos[0])])
    assert done.returncode == 2
    assert done.stderr == "trainwatch: 2 --label given for 1 stream\n"
    done = _trainwatch(["check", "--label", "a", "--label", "a", *map(str, fifos)])
    assert done.returncode == 2
    assert done.stderr == "trainwatch: --label 'a' names two streams\n"


def test_a_dev_fd_path_is_read_as_a_stream() -> None:
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainwatch", "summary", "--json", f"/dev/fd/{read_end}"],
        pass_fds=(read_end,),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(read_end)
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(COCA.read_bytes())
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == ""
    got = json.loads(out)
    assert got["sources"] == ["stream 1"]  # not "/dev/fd/N": a name that means nothing
    assert _per_source(got, "stream 1") == _per_source(_summary_of_file(COCA), str(COCA))


def test_check_and_export_read_a_stream_until_it_closes(fifos: tuple[Path, Path]) -> None:
    writer = _write(MEGATRON, fifos[0])
    check = _trainwatch(["check", str(fifos[0])])
    assert writer.wait(timeout=60) == 0
    piped = subprocess.run(
        [sys.executable, "-m", "trainwatch", "check", "-"], input=MEGATRON.read_text(), capture_output=True, text=True
    )
    assert (check.returncode, check.stdout) == (piped.returncode, piped.stdout)  # as the same log on stdin
    assert " 23000 " in check.stdout  # the log's last step: read to its end
    # export --follow ends when every stream has closed, with every record of the log
    writers = [_write(MEGATRON, fifos[0]), _write(COCA, fifos[1])]
    followed = _trainwatch(["export", "--follow", *map(str, fifos)])
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    assert followed.returncode == 0
    records = [json.loads(line) for line in followed.stdout.splitlines()]
    by_file = [
        json.loads(line) for log in (MEGATRON, COCA) for line in _trainwatch(["export", str(log)]).stdout.splitlines()
    ]
    assert len(records) == len(by_file)
    assert {r["source"] for r in records} == {"stream 1", "stream 2"}


def test_watch_ends_when_the_stream_closes(fifos: tuple[Path, Path], tmp_path: Path) -> None:
    # a log cut before its end: the run is still running when the stream closes
    cut = tmp_path / "cut.log"
    cut.write_bytes(b"".join(COCA.read_bytes().splitlines(keepends=True)[:400]))
    writer = _write(cut, fifos[0])
    done = _trainwatch(["watch", "--every", "0.1", "--settle", "0", "--label", "node1", str(fifos[0])])
    assert writer.wait(timeout=60) == 0
    assert done.returncode in (0, 1, 3), done.stderr  # ended (the stream closed), status as its code
    assert done.stderr == ""
    assert done.stdout.splitlines()[0].endswith("[node1]")  # told under the stream's label


def test_a_fifo_inside_a_walked_directory_is_still_skipped(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "out.log").write_bytes(MEGATRON.read_bytes())
    os.mkfifo(logs / "rank1.log")  # no writer: opening it would block forever
    done = _trainwatch(["summary", "--json", str(logs)], timeout=60)
    assert done.returncode == 0
    assert done.stderr.splitlines() == [f"trainwatch: {logs}/rank1.log: {NOT_READ}"]
    assert json.loads(done.stdout)["sources"] == [str(logs / "out.log")]


SLOW_WRITER = """
import sys, time
data = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb") as pipe:
    half = len(data) // 2
    pipe.write(data[:half])
    pipe.flush()
    time.sleep(1.0)  # the reader has drained the pipe long before the rest comes
    pipe.write(data[half:])
"""


def test_a_stream_read_to_its_close_is_judged_as_the_same_log_in_a_file(fifos: tuple[Path, Path]) -> None:
    """`check` reads a stream until it closes: a pipe that drains faster than its writer fills it
    is not a live run. The first half of a 2020 log must not make the rest "arrive now"."""
    writer = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(MEGATRON), str(fifos[0])])
    check = _trainwatch(["check", str(fifos[0])])
    assert writer.wait(timeout=60) == 0
    from_file = _trainwatch(["check", str(MEGATRON)])
    assert check.returncode == from_file.returncode == 1, (check.stdout, from_file.stdout)
    assert check.stdout.startswith("stalled: log ends at step 23000"), check.stdout
