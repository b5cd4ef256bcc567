"""`trainwatch watch`'s rule for what is told, on a clock the test controls: a status must settle, a
run going back and forth is told once, each finding once, and every line and variable is printable."""

from __future__ import annotations

from trainwatch.diagnosis.findings import Finding
from trainwatch.views.watch import ChangeDetector, Judgement, Notice
from trainwatch.views.watch_options import WatchOptions

SETTLE = 30.0
FLAP = WatchOptions(settle_s=SETTLE).flap_s  # 600 s


def look(status: str, *found: Finding, step: int = 100) -> Judgement:
    return Judgement(status, f"why {status}", "out.log", step, tuple((f, "out.log") for f in found))


def told(detector: ChangeDetector, status: str, at: float, *found: Finding) -> list[str]:
    """What one look at time `at` tells: statuses, and findings as `severity kind`."""
    return [f"{n.severity} {n.finding}" if n.finding else n.status for n in detector.look(look(status, *found), at)]


def test_the_defaults_are_the_documented_ones() -> None:
    """README: a look every 5 s, 30 s to settle, 10 minutes for a run going back and forth, 30 s per command."""
    options = WatchOptions()
    assert (options.every_s, options.settle_s, options.flap_s, options.timeout_s) == (5.0, 30.0, 600.0, 30.0)


def test_the_starting_status_is_told_at_once_and_only_a_problem_runs_the_command() -> None:
    quiet = ChangeDetector(SETTLE, FLAP).look(look("running"), 0.0)
    assert [(n.status, n.calls_hook) for n in quiet] == [("running", False)]
    loud = ChangeDetector(SETTLE, FLAP).look(look("crashed"), 0.0)
    assert [(n.status, n.calls_hook) for n in loud] == [("crashed", True)]


def test_a_change_is_told_once_it_has_held_for_the_settle_time() -> None:
    d = ChangeDetector(SETTLE, FLAP)
    told(d, "running", 0)
    assert told(d, "stalled", 100) == []
    assert told(d, "stalled", 129) == []
    assert told(d, "stalled", 130) == ["stalled"]
    assert told(d, "stalled", 200) == []  # told once, not at every look


def test_a_change_that_does_not_hold_is_not_told_but_counted_on_the_next_line() -> None:
    d = ChangeDetector(SETTLE, FLAP)
    told(d, "running", 0)
    # a traceback in the middle of training reads "crashed" until the next step comes
    assert told(d, "crashed", 10) == []
    assert told(d, "running", 15) == []
    assert told(d, "stalled", 300) == []
    (notice,) = d.look(look("stalled"), 330)
    assert notice.status == "stalled" and notice.unreported == 1
    assert notice.line().endswith("(1 brief change not told)")


def test_a_run_going_back_and_forth_is_told_once_then_must_hold_the_flap_window() -> None:
    d = ChangeDetector(SETTLE, FLAP)
    told(d, "running", 0)
    told(d, "stalled", 100)
    assert told(d, "stalled", 130) == ["stalled"]
    told(d, "running", 200)
    assert told(d, "running", 230) == ["running"]  # the recovery from a real stall is news
    # stalled again three minutes later: the run flaps; a stall must now hold the whole window
    told(d, "stalled", 400)
    assert told(d, "stalled", 430) == []
    assert told(d, "running", 500) == []
    told(d, "stalled", 600)
    assert told(d, "stalled", 1199) == []
    assert told(d, "stalled", 1200) == ["stalled"]  # it stayed: said, one window late at most


def test_the_input_ending_tells_what_is_pending_at_once() -> None:
    d = ChangeDetector(SETTLE, FLAP)
    told(d, "running", 0)
    told(d, "crashed", 10)
    assert [n.status for n in d.look(look("crashed"), 11, final=True)] == ["crashed"]
    assert d.ended


def test_each_finding_is_told_once_when_it_has_held_for_the_settle_time() -> None:
    straggler = Finding("straggler", "warning", (3,), (), "rank 3 is slow", "check its node")
    spike = Finding("loss_spike", "warning", (), (812,), "loss spiked at step 812")
    d = ChangeDetector(SETTLE, FLAP)
    assert told(d, "running", 0) == ["running"]
    assert told(d, "running", 10, straggler) == []
    assert told(d, "running", 20) == []  # gone before it settled: it must hold without a gap
    assert told(d, "running", 30, straggler) == []
    assert told(d, "running", 60, straggler, spike) == ["warning straggler"]
    (notice,) = d.look(look("running", spike), 90)
    assert (notice.finding, notice.step, notice.reason) == ("loss_spike", 812, "loss spiked at step 812")
    assert notice.env()["TRAINWATCH_FINDING"] == "loss_spike"
    assert notice.env()["TRAINWATCH_STATUS"] == "running"
    assert told(d, "running", 500, straggler, spike) == []  # each once per watch


def test_findings_present_at_the_start_are_told_with_it() -> None:
    nan = Finding("nan", "error", (0,), (77,), "loss first became NaN/inf at step 77 (rank 0)", "lower the lr")
    assert told(ChangeDetector(SETTLE, FLAP), "running", 0, nan) == ["running", "error nan"]


def test_the_line_and_the_variables_show_control_characters_and_never_send_them() -> None:
    notice = Notice(0.0, "crashed", "rank 1 Error: \x1b]52;c;cHduZWQ=\x07 boom", "a\x1b[2J.log", 12)
    line = notice.line()
    assert "\x1b" not in line and "\x07" not in line
    assert line.endswith("crashed: rank 1 Error: ␛]52;c;cHduZWQ=␇ boom [a␛[2J.log]")
    env = notice.env()
    assert env == {
        "TRAINWATCH_STATUS": "crashed",
        "TRAINWATCH_REASON": "rank 1 Error: ␛]52;c;cHduZWQ=␇ boom",
        "TRAINWATCH_SOURCE": "a␛[2J.log",
        "TRAINWATCH_STEP": "12",
        "TRAINWATCH_FINDING": "",
    }
