"""Run segments: a run restarted into the same source starts a new attempt.

A torchrun worker-group failure then progress again, a second launcher banner, a rank's step
going back, or the file rewritten and its steps starting over: a new segment (the runner emits
a `restart` event and duplicate detection starts afresh, so re-run steps with the same values
are kept). Files under torchrun's `attempt_<k>/` are segment k; local rank 0's file of an
attempt k >= 1 emits that attempt's `restart` event at its first step.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal, NamedTuple

from trainwatch.parsers.rank import is_launch_banner, is_worker_failure

# What a launcher line says about attempts.
Marker = Literal["", "failure", "relaunch"]


class Restart(NamedTuple):
    """A step shows a restart: `message` for the `restart` event; `begins_segment` (a new
    attempt starts at it) or not (the attempt the path names is announced)."""

    message: str
    begins_segment: bool


class Segments:
    """The attempt a source is in, what may start the next one, and each stream's last step."""

    def __init__(self, attempt: int, announce: bool) -> None:
        self.attempt = attempt
        self._announce = announce  # the attempt's `restart` event is due at the first step
        self._armed = False  # a worker failed: a step going back is a restart
        # The file was truncated, rewritten or replaced (why): its next step tells a relaunch
        # (the steps go back) from rotation under a run that goes on.
        self._rewritten = ""
        self._banners: Counter[str | None] = Counter()
        self._launches = 0
        self._last_by_stream: dict[tuple[str | None, int | None], int] = {}
        self._last_step: dict[int | None, int] = {}

    @property
    def armed(self) -> bool:
        """A worker failed: the same step again, or an earlier one, is a restart."""
        return self._armed

    @property
    def steady(self) -> bool:
        """No step can be a restart for a reason outside the steps (an announced attempt, a rewritten file)."""
        return not self._announce and not self._rewritten

    def marker(self, text: str, launcher: str | None) -> Marker:
        """What a line says about attempts (checked on every line, cheap): "failure" (a worker
        group failed), "relaunch" (the launcher of `launcher` started again), else ""."""
        if "exitcode" in text or "attempts left" in text:
            if is_worker_failure(text):
                return "failure"
        elif "OMP_NUM_THREADS" in text or "WORLD INFO DICT" in text:
            if is_launch_banner(text):
                # Multi-node launchers print the banner once per node (host label): the
                # n-th banner of any host is the n-th launch.
                self._banners[launcher] += 1
                if self._banners[launcher] > self._launches:
                    again = self._launches > 0
                    self._launches = self._banners[launcher]
                    if again:
                        return "relaunch"
        return ""

    def arm(self) -> None:
        """A worker failed: the next step going back starts a new attempt."""
        self._armed = True

    def rewritten(self, why: str) -> None:
        """The source's text starts again from its first line (see `SourceParser.content_restarted`)."""
        self._rewritten = why

    def judge(self, step: int | None, rank: int | None, host: str | None) -> Restart | None:
        """Does this step (about to go out) show a restart?"""
        if self._announce:
            self._announce = False
            return Restart(f"torchrun attempt {self.attempt} (files under attempt_{self.attempt}/)", False)
        if step is None:
            return None
        prev = self._last_by_stream.get((host, rank))
        if self._rewritten:
            why, self._rewritten = self._rewritten, ""
            if prev is None and self._last_by_stream:  # the new text labels its steps otherwise
                prev = max(self._last_by_stream.values())
            if prev is not None and step <= prev:
                return Restart(f"{why}, then step {step} followed step {prev}", True)
            return None
        if prev is None or step > prev:
            return None
        if self._armed:
            return Restart(f"a worker failed, then step {step} followed step {prev}", True)
        if rank is not None and step < prev:
            return Restart(f"rank {rank} went back from step {prev} to {step}", True)
        return None

    def begin_next(self) -> int:
        """A new attempt starts: its number (steps are compared afresh)."""
        self.attempt += 1
        self._armed = False
        self._last_by_stream.clear()
        self._last_step.clear()
        return self.attempt

    def goes_on(self, rank: int | None, step: int) -> bool:
        """Does `step` of an unlabelled stream of `rank` come after its last step?"""
        prev = self._last_by_stream.get((None, rank))
        return prev is None or step > prev

    def record(self, host: str | None, rank: int | None, step: int) -> None:
        """A step went out."""
        stream = (host, rank)
        prev = self._last_by_stream.get(stream)
        self._last_by_stream[stream] = step if prev is None or step > prev else prev
        self._last_step[rank] = step
        self._last_step[None] = step

    def last_step(self, rank: int | None) -> int | None:
        """The last step out of this rank (None: of any rank) in this attempt."""
        return self._last_step.get(rank)

    def step_of_event(self, rank: int | None) -> int | None:
        """The step an event of `rank` without one happened at: that rank's last, else any rank's."""
        return self._last_step.get(rank, self._last_step.get(None))
