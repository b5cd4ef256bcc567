"""Python tracebacks, read per output stream, one event per chain.

A helper of `events.py`, not a parser. Tracebacks are tracked per launcher prefix rank
(`[rank3]:`) and per glog-prefixed logger, because several ranks print theirs interleaved line
by line. A traceback is emitted when the next line of the same stream shows it is not chained
(`During handling of the above exception...`), so one chain is one event whose message is its
final exception line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter
from trainwatch.parsers.formats.failures import GOT_SIGNAL, signal_name
from trainwatch.parsers.timestamps import line_time
from trainwatch.records import Severity

TB_START = "Traceback (most recent call last):"
_CHAIN = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
# The final line of a traceback: `pkg.mod.SomeError: message`, `KeyboardInterrupt`, `socket.timeout: ...`.
EXC_LINE = re.compile(r"^((?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*))(?::(?:\s(.*))?)?$")
EXC_BARE = re.compile(r"(?:Error|Exception|Interrupt|Exit|Warning|Iteration|timeout)$")
# IPython's header names the exception first: `KeyboardInterrupt          Traceback (most recent call last)`.
IPYTHON_HEADER = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\s+Traceback \(most recent call last\)\s*$")
# IPython's frames are not indented: `Cell In[3], line 1`, `File ~/x.py:264, in f(a)`, `----> 1 fit()`,
# `~/x.py in f(a)`, `<ipython-input-5-...> in <module>`.
_IPYTHON_FRAME = re.compile(
    r"^(?:-*>\s*\d+\s|Cell In\[\d+\], line \d+|File \S.*:\d+, in |<ipython-input-|\S.*\sin\s+(?:<module>|[\w.]+\(.*\))\s*$)"
)
# A Python frame line: seen without its `Traceback` header, that header was glued to a line
# another format read (`Epoch 10:   0%|   | 0/5878 [00:00<?, ?it/s]Traceback (most recent call last):`).
FRAME = re.compile(r'^\s+File "[^"]+", line \d+, in \S')
_MAX_STRAY = 50  # unrelated lines tolerated inside a traceback before it is abandoned

StreamKey = tuple[int | None, str | None]  # (launcher prefix rank, glog logger)
# What an exception line implies besides the traceback (OOM, NCCL failure, a signal).
Derived = Callable[[str, str, Line, Emitter, int | None], None]


@dataclass
class _Traceback:
    """One traceback (or chain of them) being read from one output stream."""

    line: int
    time: str | None
    rank: int | None
    severity: Severity
    exceptions: list[str] = field(default_factory=list)
    ended: bool = False  # final exception line seen; waiting to know whether a chain follows
    chained: bool = False  # a chain marker was seen: the next Traceback continues this event
    stray: int = 0
    header: str | None = None  # the exception IPython names in its header


class Tracebacks:
    """The open tracebacks of one source, one per output stream."""

    def __init__(self, derived: Derived) -> None:
        self._open: dict[StreamKey, _Traceback] = {}
        self._derived = derived

    def feed(self, key: StreamKey, body: str, line: Line, out: Emitter) -> bool | None:
        """True/False: the line belongs to the stream's open traceback; None: it does not."""
        tb = self._open.get(key)
        if tb is None:
            return None
        return self._feed(key, tb, body, line, out)

    def start(
        self, key: StreamKey, line_no: int, time: str | None, severity: Severity, header: str | None = None
    ) -> None:
        self._open[key] = _Traceback(line_no, time, key[0], severity, header=header)

    def at_eof(self, out: Emitter) -> None:
        """Emit the tracebacks that ended and are not waiting for a chained one."""
        for key, tb in list(self._open.items()):
            if tb.ended and not tb.chained:
                self._emit(tb, out)
                del self._open[key]

    def finish(self, out: Emitter) -> None:
        for tb in self._open.values():
            if not tb.exceptions:
                # The input ends inside the traceback (a log cut short, a paste): it is still a crash.
                tb.exceptions.append(tb.header or "Traceback (the log ends before its exception line)")
            self._emit(tb, out)
        self._open.clear()

    def _feed(self, key: StreamKey, tb: _Traceback, body: str, line: Line, out: Emitter) -> bool | None:
        if not body.strip():
            return False
        if tb.ended:
            if body.startswith(_CHAIN):
                tb.chained = True
                return True
            if tb.chained and body.startswith(TB_START):
                tb.ended = tb.chained = False
                return True
            self._emit(tb, out)
            del self._open[key]
            return None
        if body[0] in " \t" or (tb.header is not None and _IPYTHON_FRAME.match(body)):
            return True  # a frame, its source line, or a ^^^^ marker
        if body.startswith(TB_START):
            tb.line, tb.time = line.no, line_time(body)  # a truncated traceback was restarted
            return True
        exc = EXC_LINE.match(body.rstrip())
        if exc and (exc.group(3) is not None or body.rstrip().endswith(":") or EXC_BARE.search(exc.group(2))):
            message = body.strip()
            tb.exceptions.append(message)
            tb.ended = True
            if tb.severity == "error":
                self._derived(message, exc.group(1), line, out, tb.rank)
            return True
        tb.stray += 1
        if tb.stray > _MAX_STRAY:
            del self._open[key]
            if tb.header is not None:  # IPython named the exception: it happened
                tb.exceptions.append(tb.header)
                self._emit(tb, out)
        return None

    @staticmethod
    def _emit(tb: _Traceback, out: Emitter) -> None:
        message = tb.exceptions[-1]
        exc = EXC_LINE.match(message)
        exception = (
            exc.group(1) if exc else "unknown" if message.startswith("Traceback (") else message.split(":", 1)[0]
        )
        data: dict[str, Any] = {"exception": exception}
        if len(tb.exceptions) > 1:
            data["cause"] = tb.exceptions[0]
        m = GOT_SIGNAL.search(message)
        if m:
            data["signal"] = signal_name(m.group(2))
        out.event("traceback", tb.severity, message, data, rank=tb.rank, time=tb.time, line=tb.line)
