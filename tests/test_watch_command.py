"""`trainwatch watch LOG --on-change CMD` as a user runs it: the real program following a log that a
real process writes, with a real command run for each change.

The steps are Megatron-LM's iteration line (seed 004's format); the crash is the end of seed 002 (the
trimmed copy in sample_logs): torchrun's "Received 1 death signal" and its SignalException traceback;
the relaunch is sample_logs' torchrun run whose rank 1 raised, relaunched and finished. The command
appends its TRAINWATCH_* variables to a file, as JSON, so each call can be checked.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SAMPLES

pytestmark = pytest.mark.slow  # real writer processes and commands, waits of seconds

EXE = [sys.executable, "-m", "trainwatch", "watch"]
COCA = SAMPLES / "deepspeed__coca_4rank_zero1_sighup.log"  # trimmed seed 002
RESTART = SAMPLES / "ranks__torchrun_unprefixed_restart.log"
FAST = ["--every", "0.1", "--settle", "0.3"]  # look often, settle quickly: the tests take seconds
VARS = ("TRAINWATCH_STATUS", "TRAINWATCH_REASON", "TRAINWATCH_SOURCE", "TRAINWATCH_STEP", "TRAINWATCH_FINDING")

RECORDER = f"""
import json, os, sys
with open(sys.argv[1], "a", encoding="utf-8") as f:
    f.write(json.dumps({{k: os.environ.get(k) for k in {VARS!r}}}) + "\\n")
"""
WRITER = """
import sys, time
log, tail = sys.argv[1], sys.argv[5]
first, last, pause, pace = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[6])
for i in range(first, last + 1):
    with open(log, "a") as f:
        f.write(" iteration %8d/ %8d | elapsed time per iteration (ms): 900.0 | learning rate 1.000E-04 |"
                " lm loss %.6E | loss scale 4096.0 |\\n" % (i, 100000, 2 + i / 1e6))
    time.sleep(0.1)
time.sleep(pause)
lines = open(tail).readlines()
for part in [lines] if pace == 0 else [[line] for line in lines]:  # pace 0: in one write, as a crash flushes
    with open(log, "a") as f:
        f.write("".join(part))
    time.sleep(pace)
"""


def megatron_lines(first: int, last: int) -> str:
    return "".join(
        f" iteration {i:8d}/ {100000:8d} | elapsed time per iteration (ms): 900.0 | learning rate 1.000E-04 |"
        f" lm loss {2 + i / 1e6:.6E} | loss scale 4096.0 |\n"
        for i in range(first, last + 1)
    )


def crash_block(tmp_path: Path) -> Path:
    """Seed 002's end, from torchrun's death-signal warning to the SignalException."""
    lines = COCA.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "Received 1 death signal" in line)
    path = tmp_path / "crash_block.txt"
    path.write_text("".join(lines[start:]), encoding="utf-8")
    return path


def recorder(tmp_path: Path) -> tuple[str, Path]:
    """A command that appends its TRAINWATCH_* variables to calls.jsonl, and that file."""
    script = tmp_path / "record.py"
    script.write_text(RECORDER, encoding="utf-8")
    calls = tmp_path / "calls.jsonl"
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(calls))}", calls


def calls_of(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def start_writer(
    log: Path, first: int, last: int, pause: float, tail: Path, pace: float = 0.0
) -> subprocess.Popen[bytes]:
    """Appends Megatron steps first..last every 0.1 s, waits `pause` s, then appends `tail`'s lines."""
    args = [str(log), str(first), str(last), str(pause), str(tail), str(pace)]
    return subprocess.Popen([sys.executable, "-c", WRITER, *args])


class Watch:
    """`trainwatch watch ARGS` with its stdout and stderr lines collected as they come."""

    def __init__(self, *args: str, stdin: int | None = subprocess.DEVNULL) -> None:
        self.proc = subprocess.Popen(
            [*EXE, *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self.arrived: dict[str, float] = {}  # each line (stdout or stderr) -> when it first came
        self._threads = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _read(self, stream: object, into: list[str]) -> None:
        for raw in stream:  # type: ignore[attr-defined]
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.arrived.setdefault(line, time.monotonic())
            into.append(line)

    def wait_for(self, done: Callable[[list[str]], bool], timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done(list(self.out)):
                return True
            time.sleep(0.05)
        return done(list(self.out))

    def finish(self, timeout: float = 30.0) -> int:
        code = self.proc.wait(timeout)
        for t in self._threads:
            t.join(5)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def statuses(lines: list[str]) -> list[str]:
    """`2026-05-01 03:12:09 crashed: ...` -> `crashed`; finding lines (`... warning straggler: ...`) left out."""
    out = []
    for line in lines:
        what = line.split(" ", 2)[2].split(":", 1)[0]
        if " " not in what:
            out.append(what)
    return out


def test_a_crash_written_by_a_running_process_calls_the_command_once_and_ends_the_watch(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text(megatron_lines(1, 8), encoding="utf-8")
    command, calls = recorder(tmp_path)
    watch = Watch(str(log), "--on-change", command, *FAST)
    writer = None
    try:
        assert watch.wait_for(lambda out: any(" running: step 8" in line for line in out)), (watch.out, watch.err)
        writer = start_writer(log, 9, 12, 0.6, crash_block(tmp_path))
        assert watch.finish() == 1  # `check`'s code for crashed
    finally:
        watch.kill()
        if writer is not None:
            writer.wait(10)
    assert statuses(watch.out) == ["running", "crashed"], watch.out
    crashed = watch.out[-1]
    assert "crashed: Received 1 death signal, shutting down workers (SIGHUP) after step 12" in crashed
    assert crashed.endswith(f"[{log}]")
    # the starting status (running) asks nothing of the user: the command ran once, for the crash
    assert calls_of(calls) == [
        {
            "TRAINWATCH_STATUS": "crashed",
            "TRAINWATCH_REASON": "Received 1 death signal, shutting down workers (SIGHUP) after step 12",
            "TRAINWATCH_SOURCE": str(log),
            "TRAINWATCH_STEP": "12",
            "TRAINWATCH_FINDING": "",
        }
    ]
    assert watch.err == []


def test_a_hanging_command_is_killed_at_its_timeout_and_the_watch_goes_on(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text(megatron_lines(1, 8), encoding="utf-8")
    record, calls = recorder(tmp_path)
    sleeper = tmp_path / "sleep.pid"
    # for the stall: hang (a child that outlives a plain kill of the shell); for the crash: return
    command = f'{record}; if [ "$TRAINWATCH_STATUS" = stalled ]; then sleep 60 & echo $! > {sleeper}; wait; fi'
    watch = Watch(str(log), "--on-change", command, "--timeout", "3", "--stall-after", "1", *FAST)
    writer = None
    try:
        assert watch.wait_for(lambda out: any(" running: step 8" in line for line in out)), (watch.out, watch.err)
        started = time.monotonic()
        writer = start_writer(log, 9, 10, 2.5, crash_block(tmp_path))  # 2.5 s without a step: stalled
        assert watch.finish() == 1
        took = time.monotonic() - started
    finally:
        watch.kill()
        if writer is not None:
            writer.wait(10)
    assert statuses(watch.out) == ["running", "stalled", "crashed"], watch.out
    assert "stalled: no step for" in watch.out[1]
    assert [c["TRAINWATCH_STATUS"] for c in calls_of(calls)] == ["stalled", "crashed"]
    killed = "trainwatch: on-change command for stalled timed out after 3 s and was killed"
    assert killed in watch.err
    # the crash (about 1.5 s after the stall) was told while the stall's command still hung
    assert watch.arrived[watch.out[2]] < watch.arrived[killed]
    assert took < 15, took  # not the 60 s the command wanted
    pid = int(sleeper.read_text())
    assert not _alive(pid), "the command's own child outlived its timeout"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_failing_command_is_reported_and_names_are_made_printable(tmp_path: Path) -> None:
    log = tmp_path / "out\x1b]0;pwned\x07.log"  # a hostile name: its ESC and BEL must not reach anyone
    log.write_text(megatron_lines(1, 12) + crash_block(tmp_path).read_text(encoding="utf-8"), encoding="utf-8")
    record, calls = recorder(tmp_path)
    command = f'{record}; echo "curl: (6) Could not resolve host: ntfy.sh" >&2; exit 6'
    watch = Watch(str(log), "--on-change", command, *FAST)
    try:
        assert watch.finish() == 1
    finally:
        watch.kill()
    shown = str(tmp_path / "out␛]0;pwned␇.log")
    assert statuses(watch.out) == ["crashed"]
    assert watch.out[0].endswith(f"[{shown}]")
    assert not any("\x1b" in line or "\x07" in line for line in watch.out + watch.err)
    (call,) = calls_of(calls)  # a crashed run at the start is told, and the command runs for it
    assert call["TRAINWATCH_SOURCE"] == shown
    assert call["TRAINWATCH_STATUS"] == "crashed"
    assert watch.err == [
        "trainwatch: on-change command for crashed exited with status 6: curl: (6) Could not resolve host: ntfy.sh"
    ]


def test_forever_keeps_watching_after_a_crash_through_the_relaunch_until_interrupted(tmp_path: Path) -> None:
    lines = RESTART.read_text(encoding="utf-8").splitlines(keepends=True)
    crash_end = next(i for i, line in enumerate(lines) if "failed (exitcode: 1)" in line) + 1
    log = tmp_path / "out.log"
    log.write_text("".join(lines[:crash_end]), encoding="utf-8")
    relaunch = tmp_path / "relaunch.txt"
    relaunch.write_text("".join(lines[crash_end:]), encoding="utf-8")
    command, calls = recorder(tmp_path)
    watch = Watch(str(log), "--on-change", command, "--forever", *FAST)
    writer = None
    try:
        assert watch.wait_for(lambda out: "crashed" in statuses(out)), (watch.out, watch.err)
        time.sleep(0.5)
        assert watch.proc.poll() is None  # a crash does not end a watch --forever
        # the launcher's relaunch: the rest of the real log, a line every 30 ms
        writer = start_writer(log, 1, 0, 0.0, relaunch, pace=0.03)
        assert watch.wait_for(lambda out: "finished" in statuses(out)), (watch.out, watch.err)
        time.sleep(0.5)
        assert watch.proc.poll() is None  # nor does the end of the run
        watch.proc.send_signal(signal.SIGINT)
        assert watch.finish() == 130
    finally:
        watch.kill()
        if writer is not None:
            writer.wait(10)
    assert statuses(watch.out) == ["crashed", "running", "finished"], watch.out
    assert "rank 1 RuntimeError: simulated failure on rank 1 at iteration 6" in watch.out[0]
    told = [c["TRAINWATCH_STATUS"] for c in calls_of(calls) if not c["TRAINWATCH_FINDING"]]
    assert told == ["crashed", "running", "finished"]


def test_a_log_on_stdin_is_judged_when_the_input_ends(tmp_path: Path) -> None:
    text = megatron_lines(1, 12) + crash_block(tmp_path).read_text(encoding="utf-8")
    proc = subprocess.run([*EXE, "-", *FAST], input=text.encode(), capture_output=True, timeout=30)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.decode().splitlines()
    assert statuses(out) == ["crashed"]
    assert "after step 12" in out[0]
    assert b"Traceback" not in proc.stderr
