"""The dashboard moves what it holds once the logs are read out of the collector's reach, and back on exit.

A full collection walks every object of the process; on 256 followed files one came every
15-60 s and held the GIL 130 ms (the screen stalls meanwhile) to find nothing (`gcpause.settle_heap`).
"""

from __future__ import annotations

import gc
from pathlib import Path

from _ui_helpers import wait_for

from tests.conftest import seed
from trainwatch.ui.app import TrainwatchApp


async def test_the_heap_is_settled_once_the_log_is_read_and_released_on_exit(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(seed("004").read_bytes())
    gc.unfreeze()
    app = TrainwatchApp([str(log)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: gc.get_freeze_count() > 0, tries=200)
        assert app.pipeline is not None and not app.pipeline.backfilling
        # the store was whole when it was settled: its indexes are out of the collector's walk
        walked = {id(o) for o in gc.get_objects()}
        assert id(app.store.series) not in walked and id(app.store.latest) not in walked
    assert gc.get_freeze_count() == 0
