"""When to look at a polled source (network filesystems, --poll) again.

A fixed interval is either slow (0.25 s: a new line waits ~125 ms on average, 250 ms at
worst) or costly (256 idle per-rank files read 20 times a second). Files that grew in the
last `ACTIVE_S` seconds are therefore stat-checked every `FAST_S` (one `stat`, read only
when size/mtime/inode moved), and every source still gets a full read — which does not trust
a cached size — at the configured interval. A file quiet for longer than `ACTIVE_S` (longer
than a training step usually takes) is read every `QUIET_MAX_S` (what `tail -F` uses): a job
that has not written for a minute is not hurried by 250 ms, and 256 idle per-rank files cost
a quarter of the reads (and of the filesystem's round trips). A line after such a pause is
seen within 1 s instead of 0.25 s; the next ones, while the file grows, within 50 ms.
"""

from __future__ import annotations

FAST_S = 0.05  # stat-check cadence of a file that grew recently
ACTIVE_S = 10.0  # "recently": a training step rarely takes longer than this
QUIET_MAX_S = 1.0  # full reads of a file quiet for ACTIVE_S (never closer than the configured interval)


class PollClock:
    """The schedule of one polled source: quick stat checks while it is active, full reads at the interval."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.fast = min(FAST_S, interval)
        self.last_growth = -1e18
        self.quiet_since: float | None = None  # the last growth, or the first read
        self.read_due = 0.0  # the next full read, whatever the stat says

    def stat_is_enough(self, now: float) -> bool:
        """A quick look may stand in for a read: the full read is not due yet."""
        return now < self.read_due

    def after_read(self, now: float, grew: bool) -> float:
        """A full read happened (grew: it got data). Returns when to look next. The first read
        (the file's history) is not a sign of a live writer."""
        if self.quiet_since is None:
            self.quiet_since = now
        elif grew:
            self.last_growth = self.quiet_since = now
        self.read_due = now + self.read_interval(now)
        return self.next_look(now)

    def read_interval(self, now: float) -> float:
        """Time to the next full read: the configured interval, or QUIET_MAX_S once the file has
        been quiet for ACTIVE_S."""
        quiet = now - (self.quiet_since if self.quiet_since is not None else now)
        return max(self.interval, QUIET_MAX_S) if quiet >= ACTIVE_S else self.interval

    def next_look(self, now: float) -> float:
        if now - self.last_growth < ACTIVE_S:
            return min(now + self.fast, self.read_due)
        return self.read_due
