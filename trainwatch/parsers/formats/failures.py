"""Single-line failures any training log can contain: signals, OOM, NCCL errors and timeouts, and a
process that exits on its own error (IPython's `SystemExit: 1`, a loop's `stopping training`).

A helper of `events.py`, not a parser (it has no Parser subclass, so the registry registers
nothing from it). It keeps what dedupes one failure printed several times: torchrun reports a
killed worker twice, a watchdog line is echoed by `what(): ...`, an OOM is echoed by a launcher,
and one Ctrl-C interrupts the main loop and then atexit handlers.
"""

from __future__ import annotations

import re
from typing import Any

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_mem_gib
from trainwatch.parsers.base import Emitter
from trainwatch.records import Severity

_DEATH = re.compile(r"Received (\S+) death signal, shutting down workers")
_CLOSING = re.compile(r"Sending process (\d{1,18}(?!\d)) closing signal (SIG[A-Z0-9]+)")
GOT_SIGNAL = re.compile(r"SignalException: Process (\d{1,18}(?!\d)) got signal: (\S+)")
_TERMINATION = re.compile(r"Got termination signal: (\S+)")
_FAILED_EXIT = re.compile(
    r"failed \(exitcode: (-\d{1,18}(?!\d))\) local_rank: (\d{1,18}(?!\d)) \(pid: (\d{1,18}(?!\d))\)"
)
# The same line with a plain exit code: the worker raised (its own error is in its traceback).
_FAILED_CODE = re.compile(
    r"failed \(exitcode: (\d{1,9}(?!\d))\) local_rank: (\d{1,18}(?!\d)) \(pid: (\d{1,18}(?!\d))\)"
)
# DeepSpeed's launcher after a worker failed: `[launch.py:320:sigkill_handler] ['python', ...] exits with return code = 1`
_DS_LAUNCHER_EXIT = re.compile(r"\bsigkill_handler\].* exits with return code = (-?\d{1,9})\s*$")
# Slurm ending a job or step: `slurmstepd: error: *** JOB 123 ON node7 CANCELLED AT 2024-04-23T12:18:08 DUE TO
# TIME LIMIT ***` (scancel, a time limit, preemption: SIGTERM, then SIGKILL after KillWait), and srun's
# report per task: `srun: error: node7: task 0: Killed` / `Terminated` / `Exited with exit code 1`.
_SLURM_CANCEL = re.compile(r"\*\*\* (JOB|STEP) (\S+) ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Za-z ]+?))? \*\*\*")
_SRUN_TASK = re.compile(r"srun: error: (\S+): tasks? ([\d,-]+): (Killed|Terminated|Exited with exit code (\d{1,9}))")
_SLURM_OOM = re.compile(r"slurmstepd: error: Detected (\d{1,9}) oom[-_]kill event")
# A process the shell, the kernel or the runtime reports dead: bash's job notice (`bash: line 1: 23670 Aborted
# (core dumped) ( cmd )`, a bare `Killed` from the OOM killer, `Segmentation fault (core dumped)`), Python's
# faulthandler (`Fatal Python error: Segmentation fault`), PyTorch's DataLoader (`ERROR: Unexpected segmentation
# fault encountered in worker.`), LSF's end of job (`TERM_RUNLIMIT: job killed after reaching LSF run time limit.`).
_DEATHS = {
    "Killed": "SIGKILL",
    "已杀死": "SIGKILL",
    "Aborted": "SIGABRT",
    "Segmentation fault": "SIGSEGV",
    "Terminated": "SIGTERM",
    "Bus error": "SIGBUS",
    "Illegal instruction": "SIGILL",
    "Floating point exception": "SIGFPE",
    "User defined signal 1": "SIGUSR1",
    "User defined signal 2": "SIGUSR2",
}
_SHELL_DEATH = re.compile(
    r"^(?:\S*: line \d{1,9}:\s+)?(?:\d{1,9}\s+)?\**(?P<what>"
    + "|".join(re.escape(k) for k in _DEATHS)
    + r")\**(?: \(core dumped\))?(?:\s{2,}\S.*|\s*)$"
)
_FATAL_PYTHON = re.compile(
    r"^Fatal Python error: (?P<what>Segmentation fault|Aborted|Bus error|Floating point exception)"
)
_WORKER_SEGFAULT = re.compile(r"\bUnexpected (?P<what>segmentation fault|bus error) encountered in worker")
_LSF_TERM = re.compile(
    r"^TERM_(?P<why>RUNLIMIT|MEMLIMIT|OWNER|ADMIN|CPULIMIT|PREEMPT|REQUEUE_\w+|\w+): (?P<text>job killed.*)$"
)
_CUDA_ERROR = re.compile(r"\bCUDA error: (?P<what>[A-Za-z][^\n]{3,160}?)\.?\s*$")
_CUDA_GOES_ON = re.compile(r"[Ww]arning|retry|retrying|skipping|skipped|falling back|ignored|ignoring")
# glibc's failed `assert()` (the process aborts right after): `lstmtraining: ../ccutil/genericvector.h:696:
# T& GenericVector<T>::operator[](int) const [with T = char]: Assertion `index >= 0' failed.`
_C_ASSERT = re.compile(r"^\S{1,200}: \S{1,300}:\d{1,9}: .{0,400}: Assertion [`'](?P<what>.{1,300})' failed\.?\s*$")
_CPP_TERMINATE = re.compile(r"\bterminate called after throwing an instance of '(?P<what>[^']+)'")
_SIGNALS_ENUM = re.compile(r"<?Signals\.(SIG[A-Z0-9]+)(?::\s*(\d{1,18}(?!\d)))?>?")
SIGNAL_RECEIVED = re.compile(r"Signal (\d{1,18}(?!\d)) \((SIG[A-Z0-9]+)\) received by PID (\d{1,18}(?!\d))")
_KEYBOARD = re.compile(r"^KeyboardInterrupt(?::.*)?$")
_NAN_RAISED = re.compile(r"\b[Ll]oss became infinite or NaN(?: at iteration=(?P<step>\d{1,18}))?")

_OOM = re.compile(
    r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|HIP out of memory"
    r"|\b(?:MPS|NPU|XPU) (?:backend )?out of memory"  # Apple MPS, Ascend, Intel GPUs
    r"|cuda runtime error \(2\) ?: out of memory"  # PyTorch <= 0.4 (THC)
    r"|\bOOM when allocating tensor"  # TensorFlow's ResourceExhaustedError
    r"|RESOURCE_EXHAUSTED: Out of memory"  # XLA (JAX, TF, torch_xla)
)
# An OOM the loop caught and went on from (it skips the batch, retries smaller): a warning, not an error.
# fairseq `| WARNING: ran out of memory, skipping batch`, GPT2-Chinese `WARNING: ran out of memory`,
# `batch size 64 ran out of memory, retrying with batch size 32` (not `if the GPU ran out of memory, ...`)
_CAUGHT_OOM = re.compile(r"\bWARNING\b.{0,80}\b[Rr]an out of memory|\b[Rr]an out of memory\b.{0,200}\b(?:skipp|retry)")
_OOM_REQUEST = re.compile(r"Tried to allocate ([\d.]+ ?[KMGT]i?B)")
_OOM_GPU = re.compile(r"\bGPU (\d{1,18}(?!\d))")

_WATCHDOG = re.compile(
    r"(?:\[Rank (\d{1,18}(?!\d))\] )?Watchdog caught collective operation timeout: WorkNCCL\(([^()]*(?:\([^()]*\)[^()]*)*)\)"
    r"(?: ran for (\d{1,18}(?!\d)) milliseconds)?"
)
_WORK_FIELD = re.compile(r"(SeqNum|OpType|Timeout\(ms\))=([^,]+)")
# (ASCII digits a machine int holds: `isdigit()` passes `²` and 5,000 digits, which `int()` refuses)
_COUNT = re.compile(r"\s*([0-9]{1,18})\s*").fullmatch
_NCCL_ERROR = re.compile(r"NCCL error in: (\S+?),? (.*)")
_NCCL_CODE = re.compile(r"\bnccl(?:Internal|System|UnhandledCuda|InvalidUsage|InvalidArgument|Remote)Error\b")
_NCCL_ECHO = (
    "Exception (either an error or timeout) detected by watchdog",
    "Some NCCL operations have failed or timed out",
)

# IPython reports a `sys.exit()` in a cell with this note, then `SystemExit: <code>`, no traceback.
_IPYTHON_EXIT_NOTE = "An exception has occurred, use %tb to see the full traceback."
_SYSTEM_EXIT = re.compile(r"^SystemExit(?::(?P<code>.*)|\s*)$")  # (the code stripped: `.*?\s*$` was quadratic)
_CLEAN_EXIT_CODES = ("", "0", "None", "False")
# An IDE's run console under a pasted log (PyCharm, CLion): `Process finished with exit code 1`,
# `... exit code 137 (interrupted by signal 9: SIGKILL)`; 0 is the end (`finished.py`)
_IDE_EXIT = re.compile(
    r"^Process finished with exit code (?P<code>-?\d{1,9})(?: \(interrupted by signal \d{1,3}: (?P<sig>SIG[A-Z]{2,8})\))?\s*$"
)
_EXIT_CODE = re.compile(r"-?[0-9]{1,18}").fullmatch
_CRASH_ECHO_LINES = 20  # a loop's `stopping training` and the exit that follows are one crash

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


class Failures:
    """Reads signal, OOM and NCCL lines of one source and reports each failure once."""

    def __init__(self) -> None:
        self._signal_pids: set[tuple[int, str]] = set()
        self._watchdogs: set[tuple[Any, ...]] = set()
        self._last_nccl_error = -10
        self._last_sigint = -1000
        self._last_oom: tuple[int | None, str, int] = (None, "", -100)
        self._last_crash = -100
        self._exit_note = -100

    def line(self, body: str, line: Line, out: Emitter, rank: int | None) -> bool:
        """A single line that is an OOM, an NCCL failure or a signal (True), or none of them."""
        if _OOM.search(body) or ("an out of memory" in body and _CAUGHT_OOM.search(body)):
            return self.oom(body, line, out, rank)
        if ("oom-kill" in body or "oom_kill" in body) and _SLURM_OOM.search(body):
            return self.oom(body, line, out, rank)
        if "atchdog" in body or "NCCL" in body or "nccl" in body:
            if self.nccl(body, line, out, rank):
                return True
        if self.death(body, line, out, rank):
            return True
        if (
            "ignal" in body
            or "SIG" in body
            or "exitcode" in body
            or "KeyboardInterrupt" in body
            or "sigkill_handler" in body
            or "CANCELLED AT" in body
            or "srun: error" in body
        ):
            if self.signal(body, line, out, rank):
                return True
        if "CUDA error: " in body and not _OOM.search(body) and not _CUDA_GOES_ON.search(body):
            m = _CUDA_ERROR.search(body)
            if m is not None:
                # A sticky CUDA error said outside a traceback (a job runner's `Error running job: CUDA error:
                # an illegal memory access was encountered`): the process cannot go on (an OOM is above)
                self.crash(body.strip(), {"exception": "CUDA error", "error": m.group("what")}, line.no, out, rank)
                return True
        return False

    def death(self, body: str, line: Line, out: Emitter, rank: int | None) -> bool:
        """A process reported dead by the shell, the kernel, the runtime or the batch system."""
        text = body.strip()
        m = _SHELL_DEATH.match(text) or _FATAL_PYTHON.match(text)
        if m is not None:
            what = m.group("what")
            out.event("signal", "error", text, {"signal": _DEATHS.get(what, "SIGSEGV")}, rank=rank, line=line.no)
            return True
        m = _WORKER_SEGFAULT.search(text)
        if m is not None:
            sig = "SIGSEGV" if m.group("what") == "segmentation fault" else "SIGBUS"
            out.event("signal", "error", text, {"signal": sig, "where": "dataloader worker"}, rank=rank, line=line.no)
            return True
        m = _LSF_TERM.match(text)
        if m is not None:
            why = m.group("why")
            if why == "MEMLIMIT":
                return self.oom(text, line, out, rank)
            out.event(
                "signal",
                "error",
                text,
                {"signal": "SIGTERM", "scheduler": "lsf", "reason": why.lower()},
                rank=rank,
                line=line.no,
            )
            return True
        m = _C_ASSERT.match(text) if "Assertion" in text else None
        if m is not None:
            self.crash(text, {"exception": "assertion failed", "error": m.group("what")}, line.no, out, rank)
            return True
        m = _CPP_TERMINATE.search(text)
        if m is not None:
            self.crash(text, {"exception": m.group("what")}, line.no, out, rank)
            return True
        return False

    def crash(self, message: str, data: dict[str, Any], line_no: int, out: Emitter, rank: int | None) -> None:
        """The process ends on an error it reported itself (not a launcher's summary), once."""
        if line_no - self._last_crash > _CRASH_ECHO_LINES:
            out.event("crash", "error", message, data, rank=rank, line=line_no)
        self._last_crash = line_no

    def exit_note(self, body: str, line: Line, out: Emitter, rank: int | None) -> bool:
        """IPython's note on `sys.exit()` and the `SystemExit: 1` after it: a crash unless the code is 0;
        an IDE's `Process finished with exit code N` likewise (a signal when it names one)."""
        ide = _IDE_EXIT.match(body) if body.startswith("Process finished") else None
        if ide is not None:
            if ide.group("sig"):
                out.event("signal", "error", body, {"signal": ide.group("sig")}, rank=rank, line=line.no)
            elif ide.group("code") != "0":
                self.crash(body, {"exitcode": int(ide.group("code"))}, line.no, out, rank)
            return ide.group("code") != "0"  # (0: the end, `finished.py`'s to report)
        if body == _IPYTHON_EXIT_NOTE:
            self._exit_note = line.no
            return True
        m = _SYSTEM_EXIT.match(body)
        if m is None or line.no - self._exit_note > 3:
            return False
        code = (m.group("code") or "").strip()
        if code not in _CLEAN_EXIT_CODES:
            self.crash(body, {"exitcode": int(code) if _EXIT_CODE(code) else 1}, line.no, out, rank)
        return True

    def derived(self, message: str, exception: str, line: Line, out: Emitter, rank: int | None) -> None:
        """Events a traceback's exception line implies (OOM, NCCL failure, a signal)."""
        if _OOM.search(message):
            self.oom(message, line, out, rank)
        elif "Watchdog caught" in message or _NCCL_ERROR.search(message):
            self.nccl(message, line, out, rank)
        elif exception == "KeyboardInterrupt":
            self.sigint(message, line, out, rank)
        elif (nan := _NAN_RAISED.search(message)) is not None:
            # detectron2 / fast-reid: `FloatingPointError: Loss became infinite or NaN at iteration=14671!`
            step = int(nan.group("step")) if nan.group("step") else None
            out.event("nan", "error", message, {"metric": "loss"}, step=step, rank=rank, line=line.no)
        else:
            m = _SIGNALS_ENUM.search(message)
            if m and "SignalException" not in exception:
                out.event("signal", "error", message, {"signal": m.group(1)}, rank=rank, line=line.no)

    def signal(self, body: str, line: Line, out: Emitter, rank: int | None) -> bool:
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
        for pattern, severity in ((GOT_SIGNAL, "error"), (_TERMINATION, "error")):
            m = pattern.search(body)
            if m:
                sig = signal_name(m.group(m.lastindex or 1))
                out.event("signal", severity, body, {"signal": sig}, rank=rank, line=line.no)  # type: ignore[arg-type]
                return True
        m = _FAILED_EXIT.search(body)
        if m:
            self.pid_signal(body, int(m.group(3)), signal_name(m.group(1)), line.no, out, rank)
            return True
        m = _FAILED_CODE.search(body)
        if m:
            data = {"exitcode": int(m.group(1)), "local_rank": int(m.group(2)), "pid": int(m.group(3))}
            out.event("crash", "error", body, data, rank=rank, line=line.no)
            return True
        if "CANCELLED AT" in body or "srun: error" in body:
            return self._slurm(body, line, out, rank)
        m = _DS_LAUNCHER_EXIT.search(body) if "sigkill_handler" in body else None
        if m:
            code = int(m.group(1))
            if code < 0:
                out.event("signal", "error", body, {"signal": signal_name(str(-code))}, rank=rank, line=line.no)
            elif code != 0:
                out.event("crash", "error", body, {"exitcode": code}, rank=rank, line=line.no)
            return True
        m = SIGNAL_RECEIVED.search(body)
        if m:
            self.pid_signal(body, int(m.group(3)), m.group(2), line.no, out, rank)
            return True
        if _KEYBOARD.match(body):
            self.sigint(body, line, out, rank)
            return True
        m = _SIGNALS_ENUM.search(body)
        if m and "died with" in body:
            out.event("signal", "error", body, {"signal": m.group(1)}, rank=rank, line=line.no)
            return True
        return False

    def _slurm(self, body: str, line: Line, out: Emitter, rank: int | None) -> bool:
        m = _SLURM_CANCEL.search(body)
        if m:
            ended = {"signal": "SIGTERM", "scheduler": "slurm", m.group(1).lower(): m.group(2), "node": m.group(3)}
            if m.group(5):
                ended["reason"] = m.group(5).strip().lower()  # time limit, preemption, node failure
            out.event("signal", "error", body.strip(), ended, rank=rank, line=line.no)
            return True
        m = _SRUN_TASK.search(body)
        if m is None:
            return False
        data: dict[str, Any] = {"node": m.group(1), "tasks": m.group(2)}
        if m.group(4) is not None:
            if int(m.group(4)) != 0:
                self.crash(body.strip(), {**data, "exitcode": int(m.group(4))}, line.no, out, rank)
            return True
        sig = "SIGKILL" if m.group(3) == "Killed" else "SIGTERM"
        out.event("signal", "error", body.strip(), {**data, "signal": sig}, rank=rank, line=line.no)
        return True

    def pid_signal(self, message: str, pid: int, sig: str, line_no: int, out: Emitter, rank: int | None) -> None:
        """A worker killed by a signal, reported once although torchrun prints it twice."""
        if (pid, sig) in self._signal_pids:
            return
        self._signal_pids.add((pid, sig))
        out.event("signal", "error", message, {"signal": sig, "pid": pid}, rank=rank, line=line_no)

    def sigint(self, message: str, line: Line, out: Emitter, rank: int | None) -> None:
        # One Ctrl-C interrupts the main loop and then atexit handlers: report it once.
        if line.no - self._last_sigint > 200:
            out.event("signal", "error", message, {"signal": "SIGINT"}, rank=rank, line=line.no)
        self._last_sigint = line.no

    def oom(self, message: str, line: Line, out: Emitter, rank: int | None) -> bool:
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
        severity: Severity = "warning" if _CAUGHT_OOM.search(message) else "error"
        out.event("oom", severity, message, data, rank=rank, line=line.no)
        return True

    def nccl(self, message: str, line: Line, out: Emitter, rank: int | None) -> bool:
        m = _WATCHDOG.search(message)
        if m:
            fields = dict(_WORK_FIELD.findall(m.group(2)))
            data: dict[str, Any] = {}
            if "OpType" in fields:
                data["op"] = fields["OpType"].strip()
            for field, name in (("Timeout(ms)", "timeout_ms"), ("SeqNum", "seq")):
                count = _COUNT(fields.get(field, ""))
                if count:
                    data[name] = int(count.group(1))
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
