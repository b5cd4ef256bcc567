"""Events any training log can contain: tracebacks, signals, launcher crash summaries, OOM,
NCCL timeouts, checkpoint saves, clean-finish markers and launcher restarts.

It has no triggers because a traceback's frames and a torchrun failure summary are made of
lines no trigger could name; it is offered only the lines no format parser understood, and a
line outside any open block costs one substring pre-filter. Tracebacks are tracked per
launcher prefix rank (`[rank3]:`) and per glog-prefixed logger, because several ranks print
theirs interleaved line by line. A traceback is emitted when the next line of the same stream
shows it is not chained (`During handling of the above exception...`), so one chain is one
event whose message is its final exception line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trainwatch.lines.assembler import Kind, Line
from trainwatch.numbers import parse_mem_gib
from trainwatch.parsers.base import Emitter, Parser
from trainwatch.parsers.rank import split_prefix
from trainwatch.parsers.timestamps import line_time
from trainwatch.records import Severity

# glog-style headers (torch C++ and torch._logging): `W0530 14:48:26.433000 2622492 path/file.py:1233] `,
# `[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] `, old `[E ProcessGroupNCCL.cpp:737] `.
_GLOG = re.compile(r"^\[?([IWEF])(?:\d{4} \d{2}:\d{2}:\d{2}\.\d+(?: +(\d{1,18}(?!\d)))? +| )[^\s\]]+:\d+\] ?")
_GLOG_SEVERITY: dict[str, Severity] = {"I": "info", "W": "warning", "E": "error", "F": "error"}

_TB_START = "Traceback (most recent call last):"
_CHAIN = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
# The final line of a traceback: `pkg.mod.SomeError: message`, `KeyboardInterrupt`, `socket.timeout: ...`.
_EXC_LINE = re.compile(r"^((?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*))(?::(?:\s(.*))?)?$")
_EXC_BARE = re.compile(r"(?:Error|Exception|Interrupt|Exit|Warning|Iteration|timeout)$")
_MAX_STRAY = 50  # unrelated lines tolerated inside a traceback before it is abandoned

# --------------------------------------------------------------------------- single-line patterns
_PREFILTER = re.compile(
    r"signal|Signal|SIG|KeyboardInterrupt|exitcode|out of memory|OutOfMemory|Watchdog|watchdog|NCCL|nccl"
    r"|heckpoint|[Ss]av(?:e|ed|ing)\s|SAV(?:E|ED|ING)\s|saved\b|Training completed|stopped: `max_|successfully finished"
    r"|worker group finished|Done waiting|after training is done|elastic_operator|will restart worker group"
    r"|exits successfully"
)
_DEATH = re.compile(r"Received (\S+) death signal, shutting down workers")
_CLOSING = re.compile(r"Sending process (\d{1,18}(?!\d)) closing signal (SIG[A-Z0-9]+)")
_GOT_SIGNAL = re.compile(r"SignalException: Process (\d{1,18}(?!\d)) got signal: (\S+)")
_TERMINATION = re.compile(r"Got termination signal: (\S+)")
_FAILED_EXIT = re.compile(
    r"failed \(exitcode: (-\d{1,18}(?!\d))\) local_rank: (\d{1,18}(?!\d)) \(pid: (\d{1,18}(?!\d))\)"
)
# The same line with a plain exit code: the worker raised (its own error is in its traceback).
_FAILED_CODE = re.compile(
    r"failed \(exitcode: (\d{1,9}(?!\d))\) local_rank: (\d{1,18}(?!\d)) \(pid: (\d{1,18}(?!\d))\)"
)
_SIGNALS_ENUM = re.compile(r"<?Signals\.(SIG[A-Z0-9]+)(?::\s*(\d{1,18}(?!\d)))?>?")
_SIGNAL_RECEIVED = re.compile(r"Signal (\d{1,18}(?!\d)) \((SIG[A-Z0-9]+)\) received by PID (\d{1,18}(?!\d))")
_KEYBOARD = re.compile(r"^KeyboardInterrupt(?::.*)?$")

_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|HIP out of memory")
_OOM_REQUEST = re.compile(r"Tried to allocate ([\d.]+ ?[KMGT]i?B)")
_OOM_GPU = re.compile(r"\bGPU (\d{1,18}(?!\d))")

_WATCHDOG = re.compile(
    r"(?:\[Rank (\d{1,18}(?!\d))\] )?Watchdog caught collective operation timeout: WorkNCCL\(([^()]*(?:\([^()]*\)[^()]*)*)\)"
    r"(?: ran for (\d{1,18}(?!\d)) milliseconds)?"
)
_WORK_FIELD = re.compile(r"(SeqNum|OpType|Timeout\(ms\))=([^,]+)")
_NCCL_ERROR = re.compile(r"NCCL error in: (\S+?),? (.*)")
_NCCL_CODE = re.compile(r"\bnccl(?:Internal|System|UnhandledCuda|InvalidUsage|InvalidArgument|Remote)Error\b")
_NCCL_ECHO = (
    "Exception (either an error or timeout) detected by watchdog",
    "Some NCCL operations have failed or timed out",
)

_CKPT_PATTERNS = (
    # HF Trainer: `Saving model checkpoint to output/run/checkpoint-200`
    re.compile(r"\bSaving model checkpoint to (\S+)"),
    # DeepSpeed engine: `Saving model checkpoint: /ckpt/global_step100/mp_rank_00_model_states.pt`
    re.compile(r"\bSaving model checkpoint: (\S+)"),
    # modded-nanogpt & generic: `Saved checkpoint to experiments/.../state_step002000.pt`
    re.compile(r"^(?:.*\s)?(?:Saved|Saving) checkpoint to (\S+)"),
    # Megatron: `saving checkpoint at iteration    1000 to checkpoints/gpt2`
    re.compile(r"^\s*saving checkpoint at iteration\s+(?P<iteration>\d{1,18}(?!\d)) to (\S+)"),
    # mmengine: `Saving checkpoint at 5 epochs` / `Saving checkpoint at 2000 iterations`
    re.compile(r"\bSaving checkpoint at (?P<count>\d{1,18}(?!\d)) (?P<unit>epochs|iterations)\b"),
    # mmengine best: `The best checkpoint with 0.4590 coco/bbox_mAP at 5 epoch is saved to best_....pth.`
    re.compile(r"\bThe best checkpoint with .* is saved to (\S+)"),
    # Lightning ModelCheckpoint(verbose=True): `... saving model to '/path/epoch=0-step=100.ckpt' as top 1`
    re.compile(r"\bsaving model to '([^']+)'"),
    # The family custom loops and smaller frameworks print: a saving verb, up to two words, what is
    # saved, and where: `saving checkpoint to out` (nanoGPT), `Saved an end-of-epoch checkpoint in
    # results/...` (SpeechBrain), `Save weights to ./YOLOX_outputs` (YOLOX), `Saved adapter weights to
    # adapters.npz` (MLX), `saving checkpoint: K:/model.safetensors` (kohya), `save model in ./output`
    # (PaddleOCR), `Saving LoRA weights to 'out/...'` (LitGPT), `saving model` alone (minGPT).
    re.compile(
        r"\b(?:[Ss]av(?:e|ed|ing)|SAV(?:E|ED|ING))\s+(?:an?\s+|the\s+|new\s+)?(?:[\w-]+\s+){0,2}?"
        r"(?:checkpoint|ckpt|model|weights|adapters?|state_dict)s?\b"
        r"(?:\s+(?:to|in|into|at)\s+(?P<path>['\"]?[^\s'\"]+)|\s*:\s*(?P<path2>\S+)|\s*\.?\s*$)"
    ),
    # `model saved.` (kohya), `Model weights saved in /home/...` (diffusers)
    re.compile(
        r"\b(?:[Cc]heckpoint|[Mm]odel|[Ww]eights|ckpt)s?\s+(?:was\s+|is\s+|are\s+)?saved\b(?:\s+(?:to|in|at)\s+(?P<path3>\S+))?"
    ),
)
_BAR_BEFORE = re.compile(r"\d+/\d+ \[[^\]]*\]")
# `Iter 100: Saved adapter weights to ...`: the step the save belongs to, where the line says it.
_CKPT_STEP = re.compile(r"^\s*(?:Iter|Iteration|Step|iter|iteration|step)\s*:?\s*(\d{1,18})\b")
_MEGATRON_SAVED = re.compile(r"^\s*successfully saved checkpoint at iteration\s+(\d{1,18}(?!\d)) to ")

_FINISHED = (
    ("hf", re.compile(r"\bTraining completed\.(?: Do not forget|\s*$)")),
    ("lightning", re.compile(r"`Trainer\.fit` stopped: `(max_epochs|max_steps)=(\d{1,18}(?!\d))` reached\.")),
    ("torchrun", re.compile(r"\] worker group successfully finished\.")),
    ("torchrun", re.compile(r"Local worker group finished \(WorkerState\.SUCCEEDED\)")),
    ("torchrun", re.compile(r"\bDone waiting for other agents\. Elapsed: ")),
    ("megatron", re.compile(r"\[after training is done\]")),
    # DeepSpeed's launcher, once per local rank: `[launch.py:318:main] Process 9104 exits successfully.`
    ("deepspeed", re.compile(r"\bProcess \d{1,18} exits successfully\.")),
)
_LAUNCH = re.compile(r"Starting elastic_operator with launch configs")
_RESTART = re.compile(
    r"\[(\w+)\] Worker group (\w+)\. (\d{1,18}(?!\d))/(\d{1,18}(?!\d)) attempts left; will restart worker group"
)
_MEMBERSHIP = re.compile(
    r"\[(\w+)\] Detected (\d{1,18}(?!\d)) new nodes from group_rank=(\d{1,18}(?!\d)); will restart worker group"
)

# --------------------------------------------------------------------------- torchrun failure summary
_BORDER = re.compile(r"^\s*(?:={10,}|\*{10,})\s*$")
_SECTION = re.compile(r"^\s*-{10,}\s*$")
_FAILED_TITLE = re.compile(r"^\s*(\S.*?) FAILED\s*$")
_ENTRY = re.compile(r"^\s*\[(\d{1,18}(?!\d))\]:\s*$")
_FIELD = re.compile(r"^\s{1,4}(time|host|rank|exitcode|error_file|traceback|msg)\s*:\s?(.*)$")
_RANK_FIELD = re.compile(r"^(\d{1,18}(?!\d))(?: \(local_rank: (\d{1,18}(?!\d))\))?")
_EXIT_FIELD = re.compile(r"^(-?\d+)(?: \(pid: (\d{1,18}(?!\d))\))?")

_SIGNAL_NAMES = {
    1: "SIGHUP",
    2: "SIGINT",
    3: "SIGQUIT",
    4: "SIGILL",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    10: "SIGUSR1",
    11: "SIGSEGV",
    12: "SIGUSR2",
    13: "SIGPIPE",
    14: "SIGALRM",
    15: "SIGTERM",
}


def signal_name(value: str | int) -> str:
    """`1`, `-9`, `Signals.SIGTERM`, `SIGTERM` -> `SIGHUP`, `SIGKILL`, `SIGTERM`, `SIGTERM`."""
    text = str(value).strip().rstrip(".,")
    if text.startswith("Signals."):
        text = text[len("Signals.") :]
    if text.startswith("SIG"):
        return text
    try:
        number = abs(int(text))
    except ValueError:
        return text
    return _SIGNAL_NAMES.get(number, f"signal {number}")


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


class EventsParser(Parser):
    name = "events"
    title = "Training events (tracebacks, signals, crashes, OOM, NCCL, checkpoints)"
    triggers = ()
    example = (
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB ...\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3664692 closing signal SIGHUP"
    )
    priority = 500

    def __init__(self) -> None:
        self._tracebacks: dict[tuple[int | None, str | None], _Traceback] = {}
        self._crash: _Crash | None = None
        self._after_border = -10
        self._signal_pids: set[tuple[int, str]] = set()
        self._watchdogs: set[tuple[Any, ...]] = set()
        self._last_nccl_error = -10
        self._last_sigint = -1000
        self._last_oom: tuple[int | None, str, int] = (None, "", -100)
        self._last_checkpoint: str | None = None
        self._megatron_saving: str | None = None
        self._finished: set[str] = set()
        self._launches = 0
        self._last_text = ""

    # ------------------------------------------------------------------ entry
    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if line.kind is Kind.FRAME:
            return False
        previous, self._last_text = self._last_text, text
        prefix_rank = split_prefix(line.text)[0] if len(line.text) != len(text) else None
        body, level, logger = text, None, None
        if text[:1] in "IWEF[":
            m = _GLOG.match(text)
            if m:
                body, level, logger = text[m.end() :], m.group(1), "glog:" + (m.group(2) or "")
        if self._crash is not None and self._feed_crash(body, line, out):
            return True
        key = (prefix_rank, logger)
        tb = self._tracebacks.get(key)
        if tb is not None:
            handled = self._feed_traceback(key, tb, body, line, out)
            if handled is not None:
                return handled
        if body.startswith(_TB_START):
            severity: Severity = _GLOG_SEVERITY[level] if level else "error"
            if previous.startswith("Exception ignored in"):
                severity = "warning"  # Python reports and then ignores it (atexit, __del__)
            self._tracebacks[key] = _Traceback(line.no, line_time(text), prefix_rank, severity)
            return True
        if _BORDER.match(body):
            self._after_border = line.no
            return False
        if self._after_border == line.no - 1:
            m = _FAILED_TITLE.match(body)
            if m:
                self._crash = _Crash(line.no, m.group(0).strip())
                return True
        if not _PREFILTER.search(body):
            return False
        return self._single(body.strip(), line, out, prefix_rank)

    def at_eof(self, out: Emitter) -> None:
        for key, tb in list(self._tracebacks.items()):
            if tb.ended and not tb.chained:
                self._emit_traceback(tb, out)
                del self._tracebacks[key]

    def segment_ends(self, out: Emitter) -> None:
        self.at_eof(out)  # a chain never spans a relaunch

    def finish(self, out: Emitter) -> None:
        for tb in self._tracebacks.values():
            if not tb.exceptions:
                # The input ends inside the traceback (a log cut short, a paste): it is still a crash.
                tb.exceptions.append("Traceback (the log ends before its exception line)")
            self._emit_traceback(tb, out)
        self._tracebacks.clear()
        if self._crash is not None:
            self._emit_crash(self._crash, out)
            self._crash = None

    # ------------------------------------------------------------ tracebacks
    def _feed_traceback(
        self, key: tuple[int | None, str | None], tb: _Traceback, body: str, line: Line, out: Emitter
    ) -> bool | None:
        """True/False: the line belongs to the traceback; None: it does not (parse it normally)."""
        if not body.strip():
            return False
        if tb.ended:
            if body.startswith(_CHAIN):
                tb.chained = True
                return True
            if tb.chained and body.startswith(_TB_START):
                tb.ended = tb.chained = False
                return True
            self._emit_traceback(tb, out)
            del self._tracebacks[key]
            return None
        if body[0] in " \t":
            return True  # a frame, its source line, or a ^^^^ marker
        if body.startswith(_TB_START):
            tb.line, tb.time = line.no, line_time(body)  # a truncated traceback was restarted
            return True
        exc = _EXC_LINE.match(body.rstrip())
        if exc and (exc.group(3) is not None or body.rstrip().endswith(":") or _EXC_BARE.search(exc.group(2))):
            message = body.strip()
            tb.exceptions.append(message)
            tb.ended = True
            if tb.severity == "error":
                self._derived(message, exc.group(1), line, out, tb.rank)
            return True
        tb.stray += 1
        if tb.stray > _MAX_STRAY:
            del self._tracebacks[key]
        return None

    def _emit_traceback(self, tb: _Traceback, out: Emitter) -> None:
        message = tb.exceptions[-1]
        exc = _EXC_LINE.match(message)
        exception = (
            exc.group(1) if exc else "unknown" if message.startswith("Traceback (") else message.split(":", 1)[0]
        )
        data: dict[str, Any] = {"exception": exception}
        if len(tb.exceptions) > 1:
            data["cause"] = tb.exceptions[0]
        m = _GOT_SIGNAL.search(message)
        if m:
            data["signal"] = signal_name(m.group(2))
        out.event("traceback", tb.severity, message, data, rank=tb.rank, time=tb.time, line=tb.line)

    def _derived(self, message: str, exception: str, line: Line, out: Emitter, rank: int | None) -> None:
        """Events a traceback's exception line implies (OOM, NCCL failure, a signal)."""
        if _OOM.search(message):
            self._oom(message, line, out, rank)
        elif "Watchdog caught" in message or _NCCL_ERROR.search(message):
            self._nccl(message, line, out, rank)
        elif exception == "KeyboardInterrupt":
            self._sigint(message, line, out, rank)
        else:
            m = _SIGNALS_ENUM.search(message)
            if m and "SignalException" not in exception:
                out.event("signal", "error", message, {"signal": m.group(1)}, rank=rank, line=line.no)

    # --------------------------------------------------------- single lines
    def _single(self, body: str, line: Line, out: Emitter, rank: int | None) -> bool:
        if _OOM.search(body):
            return self._oom(body, line, out, rank)
        if "atchdog" in body or "NCCL" in body or "nccl" in body:
            if self._nccl(body, line, out, rank):
                return True
        if "ignal" in body or "SIG" in body or "exitcode" in body or "KeyboardInterrupt" in body:
            if self._signal(body, line, out, rank):
                return True
        if "heckpoint" in body or "sav" in body or "Sav" in body or "SAV" in body or "saved" in body:
            if self._checkpoint(body, line, out):
                return True
        for family, pattern in _FINISHED:
            m = pattern.search(body)
            if m:
                if family not in self._finished:
                    self._finished.add(family)
                    data = {m.group(1): int(m.group(2))} if family == "lightning" else {}
                    out.event("finished", "info", body, data, line=line.no)
                return True
        return self._restart(body, line, out)

    def _signal(self, body: str, line: Line, out: Emitter, rank: int | None) -> bool:
        m = _DEATH.search(body)
        if m:
            out.event("signal", "error", body, {"signal": signal_name(m.group(1))}, rank=rank, line=line.no)
            return True
        m = _CLOSING.search(body)
        if m:
            pid, sig = int(m.group(1)), m.group(2)
            self._signal_pids.add((pid, sig))
            out.event("signal", "warning", body, {"signal": sig, "pid": pid}, rank=rank, line=line.no)
            return True
        for pattern, severity in ((_GOT_SIGNAL, "error"), (_TERMINATION, "error")):
            m = pattern.search(body)
            if m:
                sig = signal_name(m.group(m.lastindex or 1))
                out.event("signal", severity, body, {"signal": sig}, rank=rank, line=line.no)  # type: ignore[arg-type]
                return True
        m = _FAILED_EXIT.search(body)
        if m:
            self._pid_signal(body, int(m.group(3)), signal_name(m.group(1)), line, out, rank)
            return True
        m = _FAILED_CODE.search(body)
        if m:
            data = {"exitcode": int(m.group(1)), "local_rank": int(m.group(2)), "pid": int(m.group(3))}
            out.event("crash", "error", body, data, rank=rank, line=line.no)
            return True
        m = _SIGNAL_RECEIVED.search(body)
        if m:
            self._pid_signal(body, int(m.group(3)), m.group(2), line, out, rank)
            return True
        if _KEYBOARD.match(body):
            self._sigint(body, line, out, rank)
            return True
        m = _SIGNALS_ENUM.search(body)
        if m and "died with" in body:
            out.event("signal", "error", body, {"signal": m.group(1)}, rank=rank, line=line.no)
            return True
        return False

    def _pid_signal(self, message: str, pid: int, sig: str, line: Line, out: Emitter, rank: int | None) -> None:
        """A worker killed by a signal, reported once although torchrun prints it twice."""
        if (pid, sig) in self._signal_pids:
            return
        self._signal_pids.add((pid, sig))
        out.event("signal", "error", message, {"signal": sig, "pid": pid}, rank=rank, line=line.no)

    def _sigint(self, message: str, line: Line, out: Emitter, rank: int | None) -> None:
        # One Ctrl-C interrupts the main loop and then atexit handlers: report it once.
        if line.no - self._last_sigint > 200:
            out.event("signal", "error", message, {"signal": "SIGINT"}, rank=rank, line=line.no)
        self._last_sigint = line.no

    def _oom(self, message: str, line: Line, out: Emitter, rank: int | None) -> bool:
        last_rank, last_message, last_no = self._last_oom
        self._last_oom = (rank, message, line.no)
        if last_rank == rank and last_message == message and line.no - last_no < 50:
            return True  # the same error printed again (exception echoed by a launcher)
        data: dict[str, Any] = {}
        m = _OOM_REQUEST.search(message)
        if m:
            gib = parse_mem_gib(m.group(1).replace(" ", ""))
            if gib is not None:
                data["requested_gib"] = round(gib, 6)
        m = _OOM_GPU.search(message)
        if m:
            data["gpu"] = int(m.group(1))
        out.event("oom", "error", message, data, rank=rank, line=line.no)
        return True

    def _nccl(self, message: str, line: Line, out: Emitter, rank: int | None) -> bool:
        m = _WATCHDOG.search(message)
        if m:
            fields = dict(_WORK_FIELD.findall(m.group(2)))
            data: dict[str, Any] = {}
            if "OpType" in fields:
                data["op"] = fields["OpType"].strip()
            if fields.get("Timeout(ms)", "").strip().isdigit():
                data["timeout_ms"] = int(fields["Timeout(ms)"])
            if fields.get("SeqNum", "").strip().isdigit():
                data["seq"] = int(fields["SeqNum"])
            if m.group(3):
                data["ran_ms"] = int(m.group(3))
            text_rank = int(m.group(1)) if m.group(1) else None
            key = (rank if rank is not None else text_rank, data.get("seq"), data.get("op"), data.get("timeout_ms"))
            if key not in self._watchdogs:  # the watchdog's own line, then `what(): ...` repeating it
                self._watchdogs.add(key)
                out.event("nccl_timeout", "error", message, data, rank=rank, line=line.no)
            return True
        m = _NCCL_ERROR.search(message)
        if m:
            self._last_nccl_error = line.no
            error = m.group(2).split(" (run with", 1)[0].strip().rstrip(",")
            out.event("nccl_timeout", "error", message, {"error": error}, rank=rank, line=line.no)
            return True
        if message.startswith(_NCCL_ECHO):
            return True
        m = _NCCL_CODE.search(message)
        if m:
            if line.no - self._last_nccl_error > 3:  # else the second line of an `NCCL error in:` message
                out.event("nccl_timeout", "error", message, {"error": m.group(0)}, rank=rank, line=line.no)
            return True
        return False

    def _checkpoint(self, body: str, line: Line, out: Emitter) -> bool:
        m = _MEGATRON_SAVED.match(body)
        if m:
            return self._megatron_saving == m.group(1)  # `successfully saved` closes the announced save
        for pattern in _CKPT_PATTERNS:
            m = pattern.search(body)
            if not m:
                continue
            groups = m.groupdict()
            data: dict[str, Any] = {}
            if groups.get("unit"):
                data["epoch" if groups["unit"] == "epochs" else "iteration"] = int(groups["count"])
            elif m.lastindex is not None:
                path = m.group(m.lastindex).strip("'\"").rstrip(".,")
                data["path"] = path
                if groups.get("iteration"):
                    self._megatron_saving = groups["iteration"]
                    data["iteration"] = int(groups["iteration"])
                same_save = _save_id(path)
                if same_save is not None and same_save == self._last_checkpoint:
                    return True  # another shard of the same DeepSpeed save
                self._last_checkpoint = same_save
            at = _CKPT_STEP.match(body)
            out.event("checkpoint", "info", body, data, line=line.no, step=int(at.group(1)) if at else None)
            # A message glued after a progress bar (`...| 500/500 [06:52<00:00]Model weights saved in`):
            # the bar before it is still offered to the formats that read bars.
            return not _BAR_BEFORE.search(body, 0, m.start())
        return False

    def _restart(self, body: str, line: Line, out: Emitter) -> bool:
        if _LAUNCH.search(body):
            self._launches += 1
            self._finished.clear()
            if self._launches > 1:
                out.event("restart", "warning", body, {"launch": self._launches}, line=line.no)
            return True
        m = _RESTART.search(body)
        if m:
            left, max_restarts = int(m.group(3)), int(m.group(4))
            data = {"attempt": max_restarts - left + 1, "attempts_left": left, "max_restarts": max_restarts}
            data["state"] = m.group(2)  # type: ignore[assignment]
            self._finished.clear()
            out.event("restart", "warning", body, data, line=line.no)
            return True
        m = _MEMBERSHIP.search(body)
        if m:
            self._finished.clear()
            out.event("restart", "warning", body, {"new_nodes": int(m.group(2))}, line=line.no)
            return True
        return False

    # ---------------------------------------------------- failure summary
    def _feed_crash(self, body: str, line: Line, out: Emitter) -> bool:
        crash = self._crash
        assert crash is not None
        crash.lines += 1
        if _BORDER.match(body) or crash.lines > 400:
            if crash.root is not None or crash.lines > 400:
                self._emit_crash(crash, out)
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
            name, value = m.group(1), m.group(2).strip()
            crash.in_traceback = False
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
                self._crash_message(failure, value.strip('"'))
            return True
        if crash.in_traceback and stripped:
            self._crash_message(failure, stripped)
            return True
        return bool(stripped)

    @staticmethod
    def _crash_message(failure: _Failure, text: str) -> None:
        if text.startswith(("To enable traceback", "Traceback (most recent", "File ")):
            return
        m = _SIGNAL_RECEIVED.search(text)
        if m:
            failure.signal = m.group(2)
            return
        exc = _EXC_LINE.match(text)
        if exc and (exc.group(3) is not None or _EXC_BARE.search(exc.group(2))):
            failure.error = text
        elif text.startswith("Process failed with exitcode"):
            failure.error = failure.error or text

    def _emit_crash(self, crash: _Crash, out: Emitter) -> None:
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
                self._pid_signal_rank(message, failure, crash.line, out)

    def _pid_signal_rank(self, message: str, failure: _Failure, line_no: int, out: Emitter) -> None:
        assert failure.pid is not None and failure.signal is not None
        if (failure.pid, failure.signal) in self._signal_pids:
            return
        self._signal_pids.add((failure.pid, failure.signal))
        data = {"signal": failure.signal, "pid": failure.pid}
        out.event("signal", "error", message, data, rank=failure.rank, line=line_no)


_GLOBAL_STEP = re.compile(r"(.*/global_step\d+)/")


def _save_id(path: str) -> str | None:
    """DeepSpeed writes one file per shard into `global_stepN/`: they are one save."""
    m = _GLOBAL_STEP.match(path)
    return m.group(1) if m else path
