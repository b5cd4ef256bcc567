"""Resource bounds: whatever is in the log or the directory, memory and time stay bounded, no
traceback, and the real steps around the garbage are still found.

Memory is measured with tracemalloc (in-process) or the child's max RSS (subprocesses).
Where a hang is the failure mode, `trainwatch` runs as a subprocess under a timeout.
Real lines: sample_logs/megatron__gpt2_deepspeed.log (seed 004, DeepSpeed + Megatron GPT-2).

Manual 1 GB run (not in the suite, for time): one 1 GiB line between Megatron iterations 5/10
and 15, read by `trainwatch export` in a child: 3.0 s, 50 MB peak RSS, all three iterations
exported (the suite runs the same shape at 200 MB in-process). 20 MB of os.urandom: ~7 s and
~114 MB peak RSS; 60 MB: ~19 s and ~126 MB (bounded by the 8 MB read chunk, not the file).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from trainwatch.pipeline import Pipeline
from trainwatch.records import Record, Step

TRAINWATCH = [sys.executable, "-m", "trainwatch"]


def _it(n: int, loss: float) -> bytes:
    return (
        f" iteration {n:8d}/ 1000000 | elapsed time per iteration (ms): 930.5 | learning rate 1.500E-07 |"
        f" lm loss {loss:.6E} | loss scale 4096.0 |\n"
    ).encode()


def _write_around(path: Path, middle: Callable[[object], None]) -> None:
    """Iterations 5 and 10 before, 15 after whatever `middle` writes (streamed, never in memory)."""
    with path.open("wb") as f:
        f.write(_it(5, 10.9899) + _it(10, 10.9891))
        middle(f)
        f.write(b"\n" + _it(15, 10.98057))


def _read(paths: list[str]) -> tuple[list[Record], Pipeline, int]:
    """Read to the end in-process; returns records, the pipeline and the traced peak (bytes)."""
    records: list[Record] = []
    tracemalloc.start()
    try:
        pipeline = Pipeline(paths, sink=records.extend)
        pipeline.read_to_end()
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return records, pipeline, peak


def _loss_steps(records: list[Record]) -> dict[int | None, float]:
    return {r.step: r.metrics["loss"] for r in records if isinstance(r, Step) and "loss" in r.metrics}


def _no_errors(pipeline: Pipeline) -> None:
    for reader in pipeline.readers.values():
        assert reader.parser.stats.parser_errors == 0


def _run(args: list[str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [*TRAINWATCH, *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, "NO_COLOR": "1"}
    )
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-2000:]
    return proc


MB = 1024 * 1024
RSS_BOUND = 200 * MB  # a child reading a tiny log peaks at ~23 MB; 20 MB of garbage at ~114 MB


# `trainwatch` in a child that reports its own peak RSS on exit (on stderr, after everything else).
# VmHWM belongs to the child's own address space; getrusage's ru_maxrss would also carry the
# high-water mark of the forked parent (pytest) across exec on Linux.
_WITH_RSS = (
    "import atexit, sys\n"
    "def _hwm():\n"
    "    for row in open('/proc/self/status'):\n"
    "        if row.startswith('VmHWM:'):\n"
    "            return int(row.split()[1])\n"
    "atexit.register(lambda: sys.stderr.write(f'\\nMAXRSS={_hwm()}\\n'))\n"
    "from trainwatch.cli import run\n"
    "sys.argv[0] = 'trainwatch'\n"
    "run()\n"
)


def _export_with_rss(path: Path, timeout: float = 60) -> tuple[list[dict], int]:
    """`trainwatch export PATH` (JSONL) in a child: its records and its peak RSS in bytes."""
    proc = subprocess.run(
        [sys.executable, "-c", _WITH_RSS, "export", str(path)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    rss_kib = int(proc.stderr.rsplit("MAXRSS=", 1)[1].split()[0])
    return [json.loads(line) for line in proc.stdout.splitlines()], rss_kib * 1024


def _losses(records: list[dict]) -> dict[int, float]:
    return {r["step"]: r["metrics"]["loss"] for r in records if r["type"] == "step" and "loss" in r["metrics"]}


def _export_finds_every_step(log: Path) -> None:
    """`trainwatch export` of a log with junk between its steps: every step, bounded memory."""
    records, rss = _export_with_rss(log)
    assert _losses(records) == {5: 10.9899, 10: 10.9891, 15: 10.98057}
    assert rss < RSS_BOUND, f"max RSS {rss / MB:.0f} MB"


@pytest.mark.slow  # sized like a bench
def test_200mb_single_line_bounded_memory(tmp_path: Path) -> None:
    def middle(f: object) -> None:
        block = (b"x=1.0 | " * (MB // 8))[:MB]
        for _ in range(200):
            f.write(block)  # type: ignore[attr-defined]

    log = tmp_path / "long.log"
    _write_around(log, middle)
    records, pipeline, peak = _read([str(log)])
    assert _loss_steps(records) == {5: 10.9899, 10: 10.9891, 15: 10.98057}
    assert peak < 80 * MB, f"traced peak {peak / MB:.0f} MB for a 200 MB line"
    _no_errors(pipeline)
    # the long line counts as one line: the step after it is line 4
    assert [r.line for r in records if isinstance(r, Step) and r.step == 15] == [4]


@pytest.mark.slow  # sized like a bench
def test_20mb_binary_garbage_between_real_lines(tmp_path: Path) -> None:
    """A crashed process's memory dump in the log (os.urandom): steps before and after still found."""

    def middle(f: object) -> None:
        for _ in range(20):
            f.write(os.urandom(MB))  # type: ignore[attr-defined]

    log = tmp_path / "crashed.log"
    _write_around(log, middle)
    _export_finds_every_step(log)


@pytest.mark.slow  # sized like a bench
def test_millions_of_carriage_returns(tmp_path: Path) -> None:
    """2 million bare `\\r` and 20 000 tqdm frames on one line: a frame storm costs no memory."""
    frame = b"\r 45%|####5     | 450/1000 [00:10<00:12, 45.0it/s]"

    def middle(f: object) -> None:
        f.write(b"\r" * 1_000_000)  # type: ignore[attr-defined]
        f.write(frame * 20_000)  # type: ignore[attr-defined]
        f.write(b"\r" * 1_000_000)  # type: ignore[attr-defined]

    log = tmp_path / "bars.log"
    _write_around(log, middle)
    _export_finds_every_step(log)


def test_nul_hole_from_copytruncate(tmp_path: Path) -> None:
    """A sparse 100 MB run of NUL bytes (copytruncate + a writer keeping its offset)."""
    log = tmp_path / "holes.log"
    with log.open("wb") as f:
        f.write(_it(5, 10.9899) + _it(10, 10.9891))
        f.seek(f.tell() + 100 * MB)
        f.write(_it(15, 10.98057))
    records, pipeline, peak = _read([str(log)])
    assert _loss_steps(records) == {5: 10.9899, 10: 10.9891, 15: 10.98057}
    assert peak < 80 * MB, f"traced peak {peak / MB:.0f} MB"
    _no_errors(pipeline)


def test_file_shrinking_while_read(tmp_path: Path) -> None:
    log = tmp_path / "shrink.log"
    log.write_bytes(b"".join(_it(n, 10.0 + n / 1000) for n in range(1, 4001)))
    records: list[Record] = []
    pipeline = Pipeline([str(log)], sink=records.extend)
    reader = next(iter(pipeline.readers.values()))
    reader.pump(64 * 1024)  # part of the file read
    with log.open("r+b") as f:
        f.truncate(10_000)  # shrinks under us, mid-line
    for _ in range(10):
        reader.pump(64 * 1024)
    with log.open("ab") as f:
        f.write(b"\n" + _it(9000, 1.5))  # the truncated file ended mid-line
    while reader.pump():
        pass
    reader.finish(final=True)
    steps = _loss_steps(records)
    assert steps[1] == 10.001
    assert steps[9000] == 1.5
    assert reader.parser.stats.parser_errors == 0


@pytest.mark.slow  # sized like a bench
def test_two_thousand_sources(tmp_path: Path) -> None:
    logs = tmp_path / "ranks"
    logs.mkdir()
    for rank in range(2000):
        (logs / f"rank{rank}.log").write_bytes(_it(5, 10.9899) + _it(10, 10.9891))
    proc = _run(["summary", "--json", str(logs)], timeout=60)
    assert proc.returncode == 0
    summary = json.loads(proc.stdout)
    assert len(summary["sources"]) == 2000
    assert summary["last_step"] == {str(r): 10 for r in range(2000)}


def _fifo_dir(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rank0.log").write_bytes(_it(5, 10.9899) + _it(10, 10.9891))
    os.mkfifo(logs / "rank1.log")  # opening this for reading blocks until a writer comes
    os.mkfifo(logs / "stdout")
    return logs


def test_fifo_in_a_directory_is_never_opened(tmp_path: Path) -> None:
    logs = _fifo_dir(tmp_path)
    proc = _run(["summary", "--json", str(logs)], timeout=20)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["sources"] == [str(logs / "rank0.log")]


def test_device_given_directly_is_refused_not_opened() -> None:
    # (a FIFO given directly is a stream, read until its writer closes it: tests/sources/test_streams.py)
    proc = _run(["summary", "/dev/zero"], timeout=20)  # endless: opening it would never finish
    assert proc.returncode != 0
    assert "not a regular file" in proc.stderr


def test_export_follow_with_a_fifo_beside_the_log(tmp_path: Path) -> None:
    logs = _fifo_dir(tmp_path)
    proc = subprocess.Popen([*TRAINWATCH, "export", "--follow", str(logs)], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert json.loads(line)["step"] == 5
        os.mkfifo(logs / "rank2.log")  # appears while following: rediscovery must skip it too
        with (logs / "rank3.log").open("wb") as f:
            f.write(_it(7, 3.0))
        while True:
            record = json.loads(proc.stdout.readline()) if proc.stdout else {}
            if record.get("source", "").endswith("rank3.log"):
                break
        assert record["metrics"]["loss"] == 3.0
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_symlink_loops_deep_nesting_and_unreadable_entries(tmp_path: Path) -> None:
    root = tmp_path / "run"
    root.mkdir()
    (root / "rank0.log").write_bytes(_it(5, 10.9899))
    (root / "loop").symlink_to(root)  # loop to itself
    (root / "a").mkdir()
    (root / "a" / "up").symlink_to(root)  # loop through a child
    (root / "dangling.log").symlink_to(root / "missing.log")  # stat fails
    (root / "dir.log").mkdir()  # a directory named like a log
    (root / "mem.log").symlink_to("/proc/self/mem")  # regular file whose reads fail (EIO)
    deep = root
    for i in range(50):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "rank9.log").write_bytes(_it(5, 1.0))  # beyond the walk's depth bound
    shallow = root / "d0" / "d1" / "d2"
    (shallow / "rank1.log").write_bytes(_it(5, 2.0))
    # chmod 000 does not stop root (the tests run as root): unreadable files are modelled by
    # the EIO file above and the dangling link instead.
    proc = _run(["summary", "--json", str(root)], timeout=30)
    assert proc.returncode == 0
    summary = json.loads(proc.stdout)
    assert summary["last_step"].get("0") == 5 and summary["last_step"].get("1") == 5
    # rank 9, beyond the bound, is not read, and that is said once
    assert "9" not in summary["last_step"]
    assert proc.stderr.count("stopped at depth") == 1
    assert f"trainwatch: stopped at depth 12 under {root}: deeper files are not followed" in proc.stderr.splitlines()
