"""A log that ended long ago (seed 004, 2020) read today: say where and when it ends, not
"no step for 5.9 years"; a recent stall keeps the "no step for" wording. Records: realdata.py."""

from __future__ import annotations

from realdata import epoch, seed004_records, store_of

from trainwatch.diagnosis.check import check_line
from trainwatch.diagnosis.findings import findings
from trainwatch.diagnosis.status import run_status

LAST_004 = epoch("2020-12-12T05:58:34.376")  # seed 004's last timestamp (step 23000)
NOW = 1_760_000_000.0  # 2025-10-09

ENDS = "log ends at step 23000 (last line 2020-12-12 05:58) with no end marker"
OLD = f"{ENDS}; last write 4.8 years ago"


def test_seed004_read_years_later_says_where_and_when_the_log_ends() -> None:
    store = store_of(seed004_records(), mtime=LAST_004)
    status = run_status(store, now=NOW)
    assert (status.state, status.reason) == ("stalled", OLD)
    (stall,) = [f for f in findings(store, NOW, status=status) if f.kind == "stall"]
    assert stall.message == ENDS and status.cause == ENDS  # (screens print the age on their own clock)
    assert check_line(store, now=NOW) == (1, f"stalled: {OLD}")


def test_copied_today_the_log_clock_still_says_when_it_ends() -> None:
    store = store_of(seed004_records(), mtime=NOW)  # a fresh copy: mtime now, lines from 2020
    # one clock: the copy was written now, whatever its lines say
    assert run_status(store, now=NOW).reason == f"{ENDS}; last write now"


def test_a_stall_of_hours_keeps_the_no_step_for_wording() -> None:
    store = store_of(seed004_records(), mtime=LAST_004)
    reason = run_status(store, now=LAST_004 + 5 * 3600).reason
    assert reason == "no step for 5.0h after step 23000 (usual 0.91s/step) and no end marker"
