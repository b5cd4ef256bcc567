"""The run ended or hangs: the crash with the remedy its cause calls for, and the stall."""

from __future__ import annotations

import re

from trainwatch.diagnosis.events import EventIndex, root_cause_event
from trainwatch.diagnosis.findings.finding import Finding
from trainwatch.diagnosis.status import RunStatus, failure_sentence, rank_name, where_in_run, written_suffix
from trainwatch.records import Event
from trainwatch.store.store import Store

SIGNAL_NAME = re.compile(r"\bSIG[A-Z]+\b")
SIGNAL_NUMBER = re.compile(r"got signal:?\s*(\d+)")
SIGNAL_NUMBERS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 15: "SIGTERM"}


def _signal_of(events: list[Event]) -> str | None:
    for e in events:
        sig = e.data.get("signal") if e.data else None
        if isinstance(sig, str) and sig.startswith("SIG"):
            return sig
        if isinstance(sig, int) and sig in SIGNAL_NUMBERS:
            return SIGNAL_NUMBERS[sig]
        m = SIGNAL_NAME.search(e.message)
        if m:
            return m.group(0)
        n = SIGNAL_NUMBER.search(e.message)
        if n and int(n.group(1)) in SIGNAL_NUMBERS:
            return SIGNAL_NUMBERS[int(n.group(1))]
    return None


EXCEPTION_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Interrupt))\b")


def _crash_remedy(cause: Event, failures: list[Event]) -> str:
    kinds = {e.kind for e in failures} | {cause.kind}
    text = " ".join(e.message for e in failures) + " " + cause.message
    if cause.kind == "oom" or "out of memory" in text.lower():
        return (
            "reduce the micro-batch size or sequence length, enable activation checkpointing, or shard more "
            "(ZeRO stage / FSDP); PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True helps when much memory is "
            "reserved but unallocated"
        )
    if cause.kind == "nccl_timeout":
        return (
            "the rank that never reached the collective usually has the real error in its own log; "
            "NCCL_DEBUG=INFO shows which link failed"
        )
    if "KeyboardInterrupt" in text:
        return "it was interrupted with Ctrl-C; resume from the last checkpoint"
    exc = cause.data.get("exception") if isinstance(cause.data.get("exception"), str) else None
    if exc is None and cause.kind == "crash":
        m = EXCEPTION_NAME.search(cause.message)
        exc = m.group(1) if m else None
    if cause.kind in ("traceback", "crash") and exc and "SignalException" not in exc:
        # A rank raised: the launcher's SIGTERMs to the other ranks are consequences, not causes.
        who = rank_name(cause.rank, cause.host) if cause.rank is not None else "the failing process"
        return (
            f"the {exc} raised by {who} is the error to fix (its traceback is in the log); the launcher then "
            "stopped the other ranks. Resume from the last checkpoint once it is fixed"
        )
    sig = _signal_of([cause, *failures]) if "signal" in kinds or "signal" in text else None
    if sig == "SIGHUP":
        return (
            "the launcher got SIGHUP when its terminal closed, and torchrun installs its own SIGHUP handler so "
            "nohup does not protect it: run under tmux/screen, setsid, or the batch scheduler, then resume from "
            "the last checkpoint"
        )
    if sig in ("SIGTERM", "SIGKILL"):
        return (
            "something outside the job stopped it (scheduler time limit, preemption, the host's OOM killer): "
            "check the scheduler's log and dmesg, then resume from the last checkpoint"
        )
    return ""


def crash_finding(store: Store, status: RunStatus, index: EventIndex) -> Finding | None:
    if status.state != "crashed" or status.failure is None:
        return None
    cause = status.failure
    failures = [e for e in index.failures if e.line >= 0]
    root = root_cause_event(store, index)
    ranks = (root.rank,) if root is not None and root.rank is not None else ()
    steps = (status.last_step,) if status.last_step is not None else ()
    where = where_in_run(status.last_step, any(store.step_records.values()))
    message = f"the run crashed{where}: {failure_sentence(cause)}"
    return Finding("crash", "error", ranks, steps, message, _crash_remedy(cause, failures[-8:]))


def stall_finding(status: RunStatus) -> Finding | None:
    steps = (status.last_step,) if status.last_step is not None else ()
    if status.state == "stalled":
        hang = status.failure is not None and status.failure.kind == "nccl_timeout"
        remedy = (
            "a hang in a collective usually means one rank died or is stuck: `py-spy dump --pid PID` on every rank "
            "shows where each one waits; TORCH_NCCL_ASYNC_ERROR_HANDLING=1 with a shorter timeout makes it fail "
            "instead of hanging"
            if hang
            else "if the job is still alive, `py-spy dump --pid PID` shows where it waits (data loader, collective, "
            "I/O); if it is gone, the scheduler's log says why"
        )
        ranks = (status.failure.rank,) if status.failure is not None and status.failure.rank is not None else ()
        # Without the write's age: a screen prints that on its own clock (the dashboard's header
        # above the findings), and a finding's is as old as its judgement.
        message = status.reason.removesuffix(written_suffix(status.write_age_s))
        return Finding("stall", "error", ranks, steps, message, remedy)
    return None
