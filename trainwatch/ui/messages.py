"""What the background threads tell the dashboard: each message carries its data, and a
burst of store changes coalesces in the queue (`can_replace`) instead of a flag two threads write."""

from __future__ import annotations

from textual.message import Message

from trainwatch.diagnosis.findings import Finding
from trainwatch.diagnosis.judge import Judgement


class StoreChanged(Message):
    """Posted from the ingest thread after a round that read something; `version` is the
    store's version then. Several waiting in the queue are handled once: the newest."""

    def __init__(self, version: int) -> None:
        super().__init__()
        self.version = version

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StoreChanged)


class IngestFailed(Message):
    """The ingest thread died: nothing more will be read. `reason` is one printable line."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class Judged(Message):
    """Posted from the judging thread: the verdict and findings of the store as it was."""

    def __init__(self, verdict: Judgement, findings: list[Finding], cost: float, recomputed: bool) -> None:
        super().__init__()
        self.verdict, self.findings, self.cost, self.recomputed = verdict, findings, cost, recomputed
