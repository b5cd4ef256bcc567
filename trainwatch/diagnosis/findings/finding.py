"""A finding: what is wrong, the evidence in numbers, and the usual remedy; how ranks are named."""

from __future__ import annotations

from dataclasses import dataclass

from trainwatch.diagnosis.status import rank_name
from trainwatch.store.store import RankKey

KINDS = (
    "crash",
    "stall",
    "nan",
    "loss_spike",
    "overflow_storm",
    "straggler",
    "dataloader_bound",
    "comm_bound",
    "slowdown",
    "memory_pressure",
    "overfitting",
)
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Finding:
    kind: str  # one of KINDS
    severity: str  # error | warning | info
    ranks: tuple[int, ...]
    steps: tuple[int, ...]
    message: str  # one plain sentence with the evidence
    remedy: str = ""  # the usual fix, "" when there is none
    hosts: tuple[str | None, ...] = ()  # the node of each of `ranks`, when the log names nodes

    @property
    def text(self) -> str:
        """Message and remedy as the contract's one sentence."""
        return f"{self.message}: {self.remedy}" if self.remedy else self.message


def ranks_text(ranks: list[int]) -> str:
    ranks = sorted(set(ranks))
    if not ranks:
        return ""
    if len(ranks) > 2 and ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"ranks {ranks[0]}-{ranks[-1]}"
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def ranks_of(keys: list[RankKey]) -> tuple[int, ...]:
    return tuple(sorted({k.rank for k in keys if k.rank is not None}))


def named_ranks(keys: list[RankKey]) -> tuple[tuple[int, ...], tuple[str | None, ...], str]:
    """Ranks, their nodes and how to name them: `rank 0 on task1` when the log names nodes
    (local rank numbers repeat on every node), else `ranks 0-3`."""
    pairs = sorted({(k.host or "", k.rank) for k in keys if k.rank is not None})
    if not pairs:
        return (), (), ""
    if any(h for h, _ in pairs):
        text = ", ".join(rank_name(r, h or None) for h, r in pairs)
        return tuple(r for _, r in pairs), tuple(h or None for h, _ in pairs), text
    ranks = tuple(sorted({r for _, r in pairs}))
    return ranks, (), ranks_text(list(ranks))
