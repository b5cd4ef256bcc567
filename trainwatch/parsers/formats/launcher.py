"""What torchrun's elastic agent prints about its workers: the `ChildFailedError` failure summary,
and the launches and restarts of its worker group.

A helper of `events.py`, not a parser. The summary is a block between `=====` borders whose
title ends in `FAILED`; its root cause (rank, host, exit code or signal, error) becomes one
`crash` event, and every worker it reports killed by a signal one `signal` event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter
from trainwatch.parsers.formats.failures import SIGNAL_RECEIVED, Failures, signal_name
from trainwatch.parsers.formats.tracebacks import EXC_BARE, EXC_LINE

BORDER = re.compile(r"^\s*(?:={10,}|\*{10,})\s*$")
_SECTION = re.compile(r"^\s*-{10,}\s*$")
FAILED_TITLE = re.compile(r"^\s*(\S.*?) FAILED\s*$")
_ENTRY = re.compile(r"^\s*\[(\d{1,18}(?!\d))\]:\s*$")
_FIELD = re.compile(r"^\s{1,4}(time|host|rank|exitcode|error_file|traceback|msg)\s*:\s?(.*)$")
_RANK_FIELD = re.compile(r"^(\d{1,18}(?!\d))(?: \(local_rank: (\d{1,18}(?!\d))\))?")
_EXIT_FIELD = re.compile(r"^(-?\d{1,18}(?!\d))(?: \(pid: (\d{1,18}(?!\d))\))?")
_MAX_LINES = 400  # a summary longer than this is not one (a border that was something else)

_LAUNCH = re.compile(r"Starting elastic_operator with launch configs")
_RESTART = re.compile(
    r"\[(\w+)\] Worker group (\w+)\. (\d{1,18}(?!\d))/(\d{1,18}(?!\d)) attempts left; will restart worker group"
)
_MEMBERSHIP = re.compile(
    r"\[(\w+)\] Detected (\d{1,18}(?!\d)) new nodes from group_rank=(\d{1,18}(?!\d)); will restart worker group"
)


@dataclass
class _Failure:
    rank: int | None = None
    local_rank: int | None = None
    exitcode: int | None = None
    pid: int | None = None
    host: str | None = None
    time: str | None = None
    error_file: str | None = None
    error: str | None = None
    signal: str | None = None


@dataclass
class _Crash:
    """A torchrun `ChildFailedError` summary being read."""

    line: int
    title: str
    section: str = ""
    root: _Failure | None = None
    others: list[_Failure] = field(default_factory=list)
    current: _Failure | None = None
    in_traceback: bool = False
    lines: int = 0


class FailureSummary:
    """Reads torchrun's failure summary block of one source."""

    def __init__(self, failures: Failures) -> None:
        self._failures = failures  # dedupes a worker's signal already reported by a single line
        self._crash: _Crash | None = None
        self._after_border = -10

    def feed_open(self, body: str, line: Line, out: Emitter) -> bool:
        """True: the line belongs to the summary being read."""
        return self._crash is not None and self._feed(body, line, out)

    def feed_start(self, body: str, line: Line) -> bool | None:
        """True: the line opens a summary; False: a border (never understood); None: neither."""
        if BORDER.match(body):
            self._after_border = line.no
            return False
        if self._after_border == line.no - 1:
            m = FAILED_TITLE.match(body)
            if m:
                self._crash = _Crash(line.no, m.group(0).strip())
                return True
        return None

    def finish(self, out: Emitter) -> None:
        if self._crash is not None:
            self._emit(self._crash, out)
            self._crash = None

    def _feed(self, body: str, line: Line, out: Emitter) -> bool:
        crash = self._crash
        assert crash is not None
        crash.lines += 1
        if BORDER.match(body) or crash.lines > _MAX_LINES:
            if crash.root is not None or crash.lines > _MAX_LINES:
                self._emit(crash, out)
                self._crash = None
            return True
        stripped = body.strip()
        if _SECTION.match(body):
            crash.in_traceback = False
            return True
        if stripped in ("Failures:", "Other Failures:"):
            crash.section, crash.in_traceback = "others", False
            return True
        if stripped.startswith("Root Cause"):
            crash.section, crash.in_traceback = "root", False
            return True
        if stripped == "<NO_OTHER_FAILURES>":
            return True
        m = _ENTRY.match(body)
        if m:
            crash.current = _Failure()
            crash.in_traceback = False
            if crash.section == "root":
                crash.root = crash.current
            else:
                crash.others.append(crash.current)
            return True
        failure = crash.current
        if failure is None:
            return bool(stripped) and crash.lines < 3
        m = _FIELD.match(body)
        if m:
            crash.in_traceback = False
            self._field(crash, failure, m.group(1), m.group(2).strip())
            return True
        if crash.in_traceback and stripped:
            _crash_message(failure, stripped)
            return True
        return bool(stripped)

    @staticmethod
    def _field(crash: _Crash, failure: _Failure, name: str, value: str) -> None:
        if name == "rank":
            r = _RANK_FIELD.match(value)
            if r:
                failure.rank = int(r.group(1))
                failure.local_rank = int(r.group(2)) if r.group(2) else None
        elif name == "exitcode":
            e = _EXIT_FIELD.match(value)
            if e:
                failure.exitcode = int(e.group(1))
                failure.pid = int(e.group(2)) if e.group(2) else None
                if failure.exitcode < 0:
                    failure.signal = signal_name(failure.exitcode)
        elif name == "host":
            failure.host = value
        elif name == "time":
            failure.time = value
        elif name == "error_file":
            failure.error_file = value
        elif name in ("traceback", "msg"):
            crash.in_traceback = True
            _crash_message(failure, value.strip('"'))

    def _emit(self, crash: _Crash, out: Emitter) -> None:
        root = crash.root or (crash.others[0] if crash.others else None)
        if root is None:
            return
        parts = [f"{crash.title}: root cause rank {root.rank}"]
        if root.local_rank is not None:
            parts.append(f" (local_rank {root.local_rank})")
        if root.host:
            parts.append(f" on {root.host}")
        if root.exitcode is not None:
            parts.append(f" exited with code {root.exitcode}")
        if root.signal:
            parts.append(f" ({root.signal})")
        if root.error:
            parts.append(f": {root.error}")
        data: dict[str, Any] = {"exitcode": root.exitcode}
        for name in ("local_rank", "pid", "host", "signal", "error"):
            value = getattr(root, name)
            if value is not None:
                data[name] = value
        if crash.others:
            data["failures"] = [
                {k: v for k, v in (("rank", f.rank), ("exitcode", f.exitcode), ("pid", f.pid)) if v is not None}
                for f in crash.others
            ]
        out.event("crash", "error", "".join(parts), data, rank=root.rank, line=crash.line)
        for failure in [root, *crash.others]:
            if failure.signal and failure.pid is not None:
                message = f"rank {failure.rank} (pid {failure.pid}) was killed by {failure.signal}"
                self._failures.pid_signal(message, failure.pid, failure.signal, crash.line, out, failure.rank)


def _crash_message(failure: _Failure, text: str) -> None:
    if text.startswith(("To enable traceback", "Traceback (most recent", "File ")):
        return
    m = SIGNAL_RECEIVED.search(text)
    if m:
        failure.signal = m.group(2)
        return
    exc = EXC_LINE.match(text)
    if exc and (exc.group(3) is not None or EXC_BARE.search(exc.group(2))):
        failure.error = text
    elif text.startswith("Process failed with exitcode"):
        failure.error = failure.error or text


class Relaunches:
    """The agent's launches and worker-group restarts (`restart` events from the second launch on)."""

    def __init__(self) -> None:
        self._launches = 0

    def line(self, body: str, line: Line, out: Emitter) -> bool:
        """True: a launch or restart line (what the run printed before it belongs to an earlier attempt)."""
        if _LAUNCH.search(body):
            self._launches += 1
            if self._launches > 1:
                out.event("restart", "warning", body, {"launch": self._launches}, line=line.no)
            return True
        m = _RESTART.search(body)
        if m:
            left, max_restarts = int(m.group(3)), int(m.group(4))
            data: dict[str, Any] = {"attempt": max_restarts - left + 1, "attempts_left": left}
            data["max_restarts"] = max_restarts
            data["state"] = m.group(2)
            out.event("restart", "warning", body, data, line=line.no)
            return True
        m = _MEMBERSHIP.search(body)
        if m:
            out.event("restart", "warning", body, {"new_nodes": int(m.group(2))}, line=line.no)
            return True
        return False
