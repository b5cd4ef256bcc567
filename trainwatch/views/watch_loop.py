"""`trainwatch watch`'s loop: follow the sources headless, look every few seconds, tell changes.

The pipeline follows on a thread of its own (as the dashboard's does); this thread waits until the
backlog is read, then judges the run every `every_s` seconds (time alone can make a run stalled,
so a look is due even when nothing was written), prints each notice as one line and hands it to
the `--on-change` command. It returns the exit code: `check`'s for the last status told (0 running
or finished, 1 stalled or crashed, 3 unknown), or 130 when interrupted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from trainwatch.diagnosis.findings import SpikeMemo
from trainwatch.pipeline import Pipeline
from trainwatch.views.hooks import HookRunner
from trainwatch.views.watch import ChangeDetector, Notice, judge
from trainwatch.views.watch_options import WatchOptions

CATCH_UP_CHECK_S = 0.05
EXIT_CODES = {"running": 0, "finished": 0, "stalled": 1, "crashed": 1, "unknown": 3}
INTERRUPTED = 130


def _caught_up(pipeline: Pipeline) -> bool:
    return all(r.finished or r.state.caught_up_monotonic is not None for r in pipeline.readers.values())


def run_watch(
    pipeline: Pipeline,
    options: WatchOptions,
    stop: threading.Event,
    emit: Callable[[str], None],
    report: Callable[[str], None],
) -> int:
    """Follow until the run finished or crashed (or forever), until the inputs end (stdin closed),
    or until `stop` is set (a signal). emit: one notice line (stdout); report: a problem (stderr)."""
    reading_stop = threading.Event()
    reader = threading.Thread(target=pipeline.follow, args=(reading_stop, True), name="trainwatch-ingest", daemon=True)
    reader.start()
    hooks = HookRunner(options.on_change, options.timeout_s, report) if options.on_change else None
    detector = ChangeDetector(options.settle_s, options.flap_s)
    memo = SpikeMemo()

    def tell(notices: list[Notice]) -> None:
        for notice in notices:
            emit(notice.line())
            if hooks is not None and notice.calls_hook:
                hooks.submit(f"{notice.severity} {notice.finding}" if notice.finding else notice.status, notice.env())

    try:
        while not stop.is_set() and reader.is_alive() and not _caught_up(pipeline):
            stop.wait(CATCH_UP_CHECK_S)
        while not stop.is_set():
            inputs_ended = not reader.is_alive()  # stdin closed: nothing will change any more
            now = time.time()
            tell(detector.look(judge(pipeline.store, now, options.stall_after, memo), now, final=inputs_ended))
            if inputs_ended or (detector.ended and not options.forever):
                break
            stop.wait(options.every_s)
    finally:
        reading_stop.set()
        reader.join(2.0)
        if hooks is not None:
            if stop.is_set():
                hooks.abort()
            else:
                hooks.close()
    if stop.is_set():
        return INTERRUPTED
    return EXIT_CODES.get(detector.told_status or "unknown", 3)
