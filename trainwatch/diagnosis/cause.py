"""Which failure is the one to fix: the first rank whose own error is not a reaction.

When rank 1 raises, ranks 0 and 2 die of "Connection closed by peer" in their next collective and
the agent SIGTERMs the rest; none of those is the error to fix. The launcher's
`failed (exitcode: 1) local_rank: 1` line is the evidence that confirms the choice.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from trainwatch.diagnosis.segments import launcher_failure
from trainwatch.records import Event
from trainwatch.store.store import iso_to_epoch


def first_by_order(events: list[Event], source_order: dict[str, int]) -> Event | None:
    """The earliest event: by line within a source; across sources by log time, then source order."""
    if not events:
        return None
    firsts: dict[str, Event] = {}
    for e in events:
        cur = firsts.get(e.source)
        if cur is None or e.line < cur.line:
            firsts[e.source] = e

    def key(e: Event) -> tuple[float, int, int]:
        t = iso_to_epoch(e.time)
        return (t if not math.isnan(t) else math.inf, source_order.get(e.source, 0), e.line)

    return min(firsts.values(), key=key)


# Errors a rank dies of because another rank died first: the peer's socket closed, the
# collective was aborted, the agent sent SIGTERM.
REACTION = re.compile(
    r"Connection closed by peer|Connection reset by peer|remote worker crash|Broken pipe"
    r"|communicator was aborted|NCCL communicator .*abort|ncclRemoteError"
    r"|ProcessGroup\w* .*(?:abort|shut ?down)|gloo.*(?:abort|closed)"
    r"|SignalException|got signal|closing signal|SIGTERM|Terminated",
    re.IGNORECASE,
)
OWN_KINDS = ("traceback", "oom")


def is_reaction(e: Event) -> bool:
    """A failure caused by another rank's death (or the launcher stopping this one)."""
    if e.kind in ("signal", "nccl_timeout"):
        return True
    return bool(REACTION.search(e.message))


@dataclass(frozen=True)
class Cause:
    """Why an attempt failed: the rank whose own error started it, with the launcher's word."""

    rank: int | None
    message: str
    kind: str
    source: str
    line: int
    step: int | None
    host: str | None = None
    evidence: str = ""  # "the launcher reports local_rank 1 exited with code 1"


def _evidence(launcher: list[Event]) -> dict[int, str]:
    out: dict[int, str] = {}
    for e in launcher:
        local = e.data.get("local_rank")
        code = e.data.get("exitcode")
        if isinstance(local, int) and local not in out:
            out[local] = f"the launcher reports local_rank {local} failed with exit code {code}"
    return out


def pick_root_cause(failures: list[Event], source_order: dict[str, int]) -> Cause | None:
    """The failure to fix among one attempt's failures, as a `Cause`."""
    picked = pick_root_event(failures, source_order)
    if picked is None:
        return None
    e, note = picked
    return Cause(e.rank, e.message.strip(), e.kind, e.source, e.line, e.step, e.host, note)


def pick_root_event(failures: list[Event], source_order: dict[str, int]) -> tuple[Event, str] | None:
    """The failure to fix among one attempt's failures, in this order: the own error of the rank
    torchrun's Root Cause names; the first own error of a rank the launcher reports failed; the
    first own error of any rank; torchrun's Root Cause itself; the first ranked failure."""
    evidence = _evidence([e for e in failures if launcher_failure(e)])
    ranked = [e for e in failures if e.rank is not None and not launcher_failure(e)]
    own = [e for e in ranked if e.kind in OWN_KINDS and not is_reaction(e)]
    crashes = sorted((e for e in ranked if e.kind == "crash"), key=lambda e: (source_order.get(e.source, 0), e.line))
    named = [e for e in own if crashes and e.rank == crashes[0].rank and e.host == crashes[0].host]
    confirmed = [e for e in own if e.rank in evidence and e.host is None]
    chosen = first_by_order(named, source_order) or first_by_order(confirmed, source_order)
    chosen = chosen or first_by_order(own, source_order)
    if chosen is None and crashes:
        detail = [e for e in ranked if e.kind in OWN_KINDS and e.rank == crashes[0].rank]
        chosen = first_by_order(detail, source_order) or crashes[0]
    if chosen is None:
        chosen = first_by_order([e for e in ranked if e.kind in (*OWN_KINDS, "nccl_timeout")], source_order)
    if chosen is None:
        return None
    note = evidence.get(chosen.rank, "") if chosen.rank is not None and chosen.host is None else ""
    return chosen, note


def cause_sentence(c: Cause) -> str:
    """`rank 1 RuntimeError: ... (the launcher reports local_rank 1 failed with exit code 1)`."""
    who = f"rank {c.rank}" + (f" on {c.host}" if c.host else "") + " " if c.rank is not None else ""
    return f"{who}{c.message}" + (f" ({c.evidence})" if c.evidence else "")
