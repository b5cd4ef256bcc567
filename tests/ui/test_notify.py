"""`open --notify`: one desktop notification (and the bell) when the run turns crashed or stalled.

The pilot test opens a healthy torchrun log (sample_logs/ranks__torchrun_tee3_crash.log up to its
first traceback, its timestamps moved to now: an old log reads stalled), appends the rest of that log (a real traceback, rank 3's RuntimeError, then the
others' and torchrun's summary) and captures what the app would send to the terminal.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from _ui_helpers import wait_for

from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.notify import MAX_BODY, MAX_TITLE, Notification, StatusNotifier

CRASH_LOG = Path(__file__).resolve().parents[2] / "sample_logs" / "ranks__torchrun_tee3_crash.log"
HEALTHY_LINES = 32  # line 33 is the first `Traceback (most recent call last):`
STAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]")
CONTROLS = {chr(c) for c in range(0x20)} | {chr(c) for c in range(0x7F, 0xA0)}


def test_a_hostile_reason_cannot_end_or_start_a_sequence() -> None:
    reason = "RuntimeError: boom\x07\x1b]52;c;cHduZWQ=\x07 \x9c\x9d0;title\x1b\\ a;b\tc " + "x" * 500
    out = Notification.of("crashed", reason, "out;1.log").sequences()
    osc9, osc777 = out.split("\x07\x1b]777;")
    assert osc9.startswith("\x1b]9;trainwatch: crashed [out;1.log]: RuntimeError: boom")
    assert osc777.startswith("notify;trainwatch: crashed [out,1.log];RuntimeError: boom")
    # our two sequences, each ended by its own BEL, and no other control anywhere
    assert out.count("\x1b") == 2 and out.count("\x07") == 2 and out.endswith("\x07")
    inside = osc9.removeprefix("\x1b]9;") + osc777.removesuffix("\x07")
    assert not CONTROLS & set(inside)
    assert osc777.count(";") == 2  # notify ; title ; body: the log's `;` became `,`
    assert len(Notification.of("crashed", reason).body) == MAX_BODY


def test_a_flapping_run_is_notified_once_and_the_baseline_never() -> None:
    sent: list[Notification] = []
    notifier = StatusNotifier(sent.append, settle_s=30.0)
    assert notifier.look("crashed", "old crash", "", 0.0, caught_up=False) is None  # half-read backlog
    notifier.look("crashed", "old crash", "", 1.0, caught_up=True)  # the baseline: on screen already
    assert sent == []
    t = 100.0
    for status in ["running", "stalled", "running", "stalled", "running", "stalled"]:
        notifier.look(status, f"{status} reason", "", t, caught_up=True)
        notifier.look(status, f"{status} reason", "", t + 31.0, caught_up=True)  # held the settle time
        t += 60.0
    assert [n.title for n in sent] == ["trainwatch: stalled"]
    assert sent[0].body == "stalled reason"


def test_a_brief_crash_reading_is_not_notified() -> None:
    sent: list[Notification] = []
    notifier = StatusNotifier(sent.append, settle_s=30.0)
    notifier.look("running", "", "", 0.0, caught_up=True)
    notifier.look("crashed", "a traceback mid-run", "", 10.0, caught_up=True)
    notifier.look("running", "", "", 20.0, caught_up=True)  # the next step came
    notifier.look("running", "", "", 60.0, caught_up=True)
    assert sent == []


async def test_the_dashboard_notifies_once_when_the_run_crashes(tmp_path: Path) -> None:
    now = time.strftime("[%Y-%m-%d %H:%M:%S]")
    lines = STAMP.sub(now, CRASH_LOG.read_text()).splitlines(keepends=True)
    log = tmp_path / "train.log"
    log.write_text("".join(lines[:HEALTHY_LINES]))
    sent: list[Notification] = []
    app = TrainwatchApp([str(log)], notify=True, notify_settle=0.0, notify_send=sent.append)
    async with app.run_test(size=(140, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.notifier is not None and app.notifier.settler.told_status == "running")
        assert sent == []
        with log.open("a") as f:
            f.write("".join(lines[HEALTHY_LINES:]))
        assert await wait_for(pilot, lambda: app.dashboard.verdict.status.state == "crashed" and bool(sent))
        await pilot.pause(0.5)
        reason = app.dashboard.verdict.status.reason
    assert len(sent) == 1
    assert sent[0].title.startswith("trainwatch: crashed [") and len(sent[0].title) <= MAX_TITLE
    assert (
        "rank 3 RuntimeError: simulated failure on rank 3" in sent[0].body
        and sent[0].body == Notification.of("crashed", reason).body
    )
    assert not CONTROLS & set(sent[0].title + sent[0].body)


async def test_without_notify_nothing_is_sent(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(CRASH_LOG.read_text())
    app = TrainwatchApp([str(log)])
    async with app.run_test(size=(140, 40)) as pilot:
        assert await wait_for(pilot, lambda: app.dashboard.verdict.status.state == "crashed")
    assert app.notifier is None
