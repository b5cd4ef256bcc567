"""When the follow loop reads each source, and which directories it watches.

Local sources are read when inotify (a background thread watching their parent directories)
wakes the loop, and stat-polled every `SAFETY_POLL_S` (spread out when there are hundreds) in
case a change was missed; sources on network filesystems, or all with `--poll`, are read on their
`PollClock`. Every round gives each source at most `ROUND_BUDGET` bytes, so a multi-GB backlog in
one file never holds back the live lines of the others.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterable, Mapping
from typing import Protocol

from trainwatch.sources.discover import glob_root
from trainwatch.sources.poll import PollClock
from trainwatch.sources.watch import fstype_of, is_network_fs

POLL_INTERVAL_S = 0.25  # polling sources (network filesystems, --poll)
SAFETY_POLL_S = 1.0  # inotify sources: stat anyway this often...
SAFETY_POLLS_PER_S = 50  # ...or less often with many files: at most this many such stats a second
SAFETY_TICK_S = 1.0  # safety polls fall on this grid (one wake-up a second for them all)
ROUND_BUDGET = 1024 * 1024  # bytes per source per round while following
EVENT_DRIVEN = ("inotify", "stdin", "stream")  # follow modes read when woken, not on a poll clock


class Followed(Protocol):
    """A source as the schedule sees it."""

    @property
    def finished(self) -> bool: ...

    @property
    def last_data(self) -> float | None:
        """When bytes last arrived (monotonic clock)."""

    def quiet(self) -> bool:
        """Unchanged since it was read to its end (one stat)."""

    def pump(self, limit: int) -> bool:
        """Read up to about `limit` bytes; True if more is waiting."""


def safety_poll_s(sources: int) -> float:
    """How often an inotify-watched file is stat-checked anyway: 1 s, or spread so that 256
    per-rank files cost at most SAFETY_POLLS_PER_S stats a second (5.1 s apart)."""
    return max(SAFETY_POLL_S, sources / SAFETY_POLLS_PER_S)


def safety_due(now: float, sources: int) -> float:
    """The next safety poll, on a grid of SAFETY_TICK_S: hundreds of files come due together
    in a few wake-ups a second, not one wake-up (and a pass over every source) each."""
    return math.ceil((now + safety_poll_s(sources)) / SAFETY_TICK_S) * SAFETY_TICK_S


def follow_mode(path: str | None, force_poll: bool, inotify_ok: bool) -> str:
    """How a source is followed, as the dashboard shows it: "inotify", "polling (nfs)", "stdin"..."""
    if path is None:
        return "stdin"
    fstype = fstype_of(path)
    if force_poll:
        return "polling"
    if is_network_fs(fstype):
        return f"polling ({fstype})"
    if not inotify_ok:
        return "polling (inotify unavailable)"
    return "inotify"


def watch_dirs(event_driven: Iterable[str], patterns: Iterable[str], force_poll: bool) -> tuple[set[str], set[str]]:
    """The directories to watch flat (the parents of inotify-followed files) and recursively (the
    local directory and glob PATHs new files may appear under)."""
    flat = {os.path.dirname(os.path.abspath(path)) for path in event_driven}
    recursive: set[str] = set()
    if force_poll:
        return flat, recursive
    for pattern in patterns:
        if os.path.isdir(pattern):
            root, deep = pattern, True
        else:
            root, deep = glob_root(pattern)
        if not is_network_fs(fstype_of(root)):
            (recursive if deep else flat).add(os.path.abspath(root))
    return flat, recursive


def patterns_watched(patterns: Iterable[str], force_poll: bool) -> bool:
    """Every directory and glob PATH is watched by `watch_dirs` (none on a network filesystem)."""
    if force_poll:
        return False
    for pattern in patterns:
        root = pattern if os.path.isdir(pattern) else glob_root(pattern)[0]
        if is_network_fs(fstype_of(root)):
            return False
    return True


class Schedule:
    """When each followed source is due: at once when woken (event-driven sources), else at its
    safety poll or on its poll clock."""

    def __init__(self, poll_interval: float) -> None:
        self.poll_interval = poll_interval
        self._event_driven: dict[str, bool] = {}  # absent: True (stdin, inotify) until a mode is set
        self._due: dict[str, float] = {}
        self._clocks: dict[str, PollClock] = {}  # polled sources: stat often while active
        # The soonest due time after the last round, and the number of sources then: a round
        # before it that nothing woke has nothing to do (256 idle files: no pass over them all).
        self._next: float | None = None
        self._count = -1
        # Each source's place in the sources' order, for woken rounds; made again after a full
        # round (a source added, dropped or set to another mode always leads to one).
        self._order: dict[str, int] | None = None

    def set_mode(self, name: str, mode: str) -> None:
        self._next = None
        self._event_driven[name] = mode in EVENT_DRIVEN

    def event_driven(self, name: str) -> bool:
        return self._event_driven.get(name, True)

    def forget(self, name: str) -> None:
        self._next = None
        self._event_driven.pop(name, None)
        self._due.pop(name, None)
        self._clocks.pop(name, None)

    def round(
        self, sources: Mapping[str, Followed], now: float, woken: bool, only: Collection[str] | None = None
    ) -> tuple[bool, bool]:
        """Read every source that is due. Returns (more: one has more waiting right now,
        active: one got data). `only`: the event-driven sources the wake-up is for (the files
        the watcher reported); None: all of them."""
        more = active = False
        count = len(sources)
        if self._next is not None and count == self._count and now < self._next:
            if not woken:
                return more, active
            if only is not None:
                return self._woken_round(sources, now, only)
        soonest = math.inf
        self._order = None
        for name, source in list(sources.items()):
            if source.finished:
                continue
            event_driven = self.event_driven(name)
            due = self._due.get(name, 0.0)
            if due <= now or (woken and event_driven and (only is None or name in only)):
                seen = source.last_data
                more = self._read(name, source, now, woken, event_driven, count) or more
                active = active or source.last_data != seen
                due = self._due[name]
            soonest = min(soonest, due)
        self._next, self._count = soonest, count
        return more, active

    def _woken_round(self, sources: Mapping[str, Followed], now: float, only: Collection[str]) -> tuple[bool, bool]:
        """A wake-up for some event-driven sources while none is due on the clock: those are
        read, in the order of `sources`, and no other is looked at (256 files growing 4 lines/s:
        40 wake-ups a second, each for a tenth of them). The soonest due time can only come
        sooner; one that moved later is found by the next full round (an early round is harmless)."""
        more = active = False
        order = self._order
        if order is None:
            order = self._order = {name: i for i, name in enumerate(sources)}
        soonest = self._next if self._next is not None else math.inf
        for name in sorted((n for n in only if n in order), key=order.__getitem__):
            source = sources[name]
            if source.finished or not self.event_driven(name):
                continue  # (a polled source is read on its clock, and none is due)
            seen = source.last_data
            more = self._read(name, source, now, True, True, len(sources)) or more
            active = active or source.last_data != seen
            soonest = min(soonest, self._due[name])
        self._next = soonest
        return more, active

    def _read(self, name: str, source: Followed, now: float, woken: bool, event_driven: bool, count: int) -> bool:
        """One due source: its safety poll, a poll-clock look or a read; sets when it is due
        next. True: it has more waiting right now."""
        if event_driven and not woken and source.quiet():
            # inotify's safety poll of an unchanged file (a change would have woken us)
            self._due[name] = safety_due(now, count)
            return False
        clock = None if event_driven else self._clock(name)
        if clock is not None and clock.stat_is_enough(now) and source.quiet():
            self._due[name] = clock.next_look(now)  # polled, recently active, unchanged
            return False
        seen = source.last_data
        if source.pump(ROUND_BUDGET):
            self._due[name] = now
            return True
        if clock is not None:
            self._due[name] = clock.after_read(now, source.last_data != seen)
        else:
            self._due[name] = safety_due(now, count)
        return False

    def wait_s(self, sources: Mapping[str, Followed], now: float) -> float:
        """Until the next source is due (a safety poll's interval when none is)."""
        if self._next is not None and len(sources) == self._count:
            return (self._next if self._next < math.inf else now + safety_poll_s(len(sources))) - now
        pending = [self._due.get(name, 0.0) for name, source in sources.items() if not source.finished]
        return min(pending, default=now + safety_poll_s(len(sources))) - now

    def _clock(self, name: str) -> PollClock:
        clock = self._clocks.get(name)
        if clock is None:
            clock = self._clocks[name] = PollClock(self.poll_interval)
        return clock
