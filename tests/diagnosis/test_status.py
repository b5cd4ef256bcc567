"""run_status on stores built from real record values (tests/diagnosis/realdata.py names each source)."""

from __future__ import annotations

import math

from realdata import (
    SEED004,
    epoch,
    seed002_records,
    seed004_records,
    store_of,
)

from trainwatch.diagnosis.check import check_line
from trainwatch.diagnosis.ranks import root_cause
from trainwatch.diagnosis.status import cadence, run_status
from trainwatch.records import Event, Step
from trainwatch.store.store import RankKey

LAST_004 = epoch("2020-12-12T05:58:34.376")  # seed 004's last timestamp (step 23000)
NOW = 1_760_000_000.0  # "today" (2025-10-09), years after both seeds


def test_seed004_copied_today_is_stalled_by_its_own_timestamps() -> None:
    # mtime = now: a file copied to a temp dir today; its lines still say 2020-12-12
    store = store_of(seed004_records(), mtime=NOW)
    status = run_status(store, now=NOW)
    assert status.state == "stalled"
    assert status.last_step == 23000
    assert "no end marker" in status.reason
    assert "(last line 2020-12-12 05:58)" in status.reason  # when it ends, by its own clock
    assert status.reason.endswith("last write now")  # the one clock: the copy was written now


def test_seed004_read_while_it_was_being_written_is_running() -> None:
    # the same records, looked at 20 s after the last step was written
    store = store_of(seed004_records(), mtime=LAST_004 + 5)
    status = run_status(store, now=LAST_004 + 20)
    assert status.state == "running", status.reason
    assert math.isclose(status.sec_per_step, 0.905, rel_tol=0.01)  # 100 steps per ~90.5 s between timestamps


def test_seed004_log_clock_in_another_time_zone_is_not_a_stall() -> None:
    # the node logs UTC-8 wall time; the file is being written now (mtime 3 s ago)
    mtime = LAST_004 + 8 * 3600 + 2
    store = store_of(seed004_records(), mtime=mtime)
    assert run_status(store, now=mtime + 3).state == "running"


def test_no_timestamps_old_mtime_is_stalled_fresh_mtime_is_running() -> None:
    store = store_of(seed004_records(with_times=False), mtime=NOW - 3 * 3600)
    old = run_status(store, now=NOW)
    assert old.state == "stalled"
    assert "3.0h" in old.reason
    store = store_of(seed004_records(with_times=False), mtime=NOW - 2)
    assert run_status(store, now=NOW).state == "running"


def test_stall_threshold_follows_the_runs_cadence_and_stall_after() -> None:
    store = store_of(seed004_records(), mtime=LAST_004 + 5)
    c = cadence(store, RankKey(SEED004, 0))
    assert c.steps_per_record == 5  # Megatron --log-interval 5
    # 10 minutes of silence after a ~0.9 s/step run with a line every 4.5 s ... is a stall
    assert run_status(store, now=LAST_004 + 600).state == "stalled"
    # unless the user says stalls start at one hour
    assert run_status(store, now=LAST_004 + 600, stall_after=3600).state == "running"


def test_seed002_dies_from_sighup_crashed_not_stalled() -> None:
    store = store_of(seed002_records(), mtime=NOW)
    status = run_status(store, now=NOW)
    assert status.state == "crashed"
    assert status.last_step == 1601
    assert status.total_steps == 1191600
    assert "death signal" in status.reason
    assert status.failure is not None and status.failure.line == 7054
    # the log never says which worker failed first: no root cause rank
    assert root_cause(store) is None


def test_seed002_without_the_tail_is_running_while_fresh() -> None:
    store = store_of(seed002_records(with_tail=False), mtime=epoch("2024-02-20T10:45:55"))
    status = run_status(store, now=epoch("2024-02-20T10:46:00"))
    assert status.state == "running", status.reason
    assert math.isclose(status.sec_per_step, 1.82, rel_tol=0.05)  # 100 steps per ~3 minutes


def test_traceback_mid_run_followed_by_steps_is_history_not_a_crash() -> None:
    # moddednanogpt real log: a torch._dynamo fallback traceback at start, then training continues
    # (real_logs/moddednanogpt__AkramjitS_gpt-lab-diffusion__train.log_L1-4_L5698-5730.log and _L7720-7732.log)
    src = "train.log"
    records = [
        Event(
            src,
            None,
            None,
            "2025-05-30T14:48:43.150",
            5,
            "traceback",
            "error",
            "SystemError: PY_SSIZE_T_CLEAN macro must be defined for '#' formats",
            {"exception": "SystemError"},
        ),
        Step(src, None, 1999, None, 7724, {"loss": 0.02496552, "step_avg_s": 4.42950}),
        Step(src, None, 2000, None, 7725, {"loss": 0.02652339, "step_avg_s": 4.42945}),
        Step(src, None, 2001, None, 7729, {"loss": 0.03016191, "step_avg_s": 4.43001}),
    ]
    store = store_of(records, mtime=NOW - 1)
    assert run_status(store, now=NOW).state == "running"


def test_torchrun_root_cause_names_the_oom_rank() -> None:
    # lines from QwenLM/Qwen3-Coder#174 ([rank3]: torch.OutOfMemoryError ...) and the torchrun
    # `Root Cause (first observed failure)` block layout of hiyouga/LlamaFactory#6827
    src = "out.log"
    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 132.00 MiB. GPU 3 has a total capacity "
        "of 79.10 GiB of which 98.00 MiB is free."
    )
    records = [
        Step(src, 0, 120, "2024-11-20T14:36:50", 10, {"loss": 1.25}),
        Step(src, 0, 121, "2024-11-20T14:37:02", 11, {"loss": 1.24}),
        Event(src, 3, 121, "2024-11-20T14:37:16", 12, "oom", "error", oom, {"requested_gib": 132 / 1024}),
        Event(src, 3, 121, None, 13, "traceback", "error", oom, {"exception": "torch.OutOfMemoryError"}),
        Event(src, 3, 121, None, 30, "crash", "error", "rank 3 (local_rank: 3) exitcode 1", {"exitcode": 1}),
    ]
    store = store_of(records, mtime=NOW)
    status = run_status(store, now=NOW)
    assert status.state == "crashed"
    rc = root_cause(store)
    assert rc is not None and rc.rank == 3 and "CUDA out of memory" in rc.message
    code, line = check_line(store, now=NOW)
    assert code == 1
    assert line.startswith("crashed: rank 3 torch.OutOfMemoryError: CUDA out of memory")


def test_nccl_watchdog_at_the_end_is_a_hang() -> None:
    # XPixelGroup/BasicSR#737: every rank's watchdog fires on the same all-reduce, nothing after it
    src = "train.log"
    msg = (
        "[Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, "
        "NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 6000{r}0 milliseconds before timing out."
    )
    records: list = [Step(src, r, 4040, "2025-06-26T06:14:40", 100 + r, {"loss": 0.0123}) for r in range(3)]
    records += [
        Event(
            src,
            r,
            4040,
            "2025-06-26T06:24:44",
            200 + i,
            "nccl_timeout",
            "error",
            msg.format(r=r),
            {"op": "ALLREDUCE", "timeout_ms": 600000},
        )
        for i, r in enumerate((1, 0, 2))
    ]
    store = store_of(records, mtime=epoch("2025-06-26T06:24:45"))
    status = run_status(store, now=epoch("2025-06-26T06:24:50"))
    assert status.state == "stalled"
    assert status.reason.startswith("hung in a collective: rank 1 [Rank 1] Watchdog caught")


def test_finished_event_after_the_last_step() -> None:
    src = "train.log"
    records = [
        Step(src, None, 4599, "2023-06-04T12:30:01", 10, {"loss": 0.11}),
        Step(src, None, 4600, "2023-06-04T12:30:02", 11, {"loss": 0.10}),
        Event(src, None, 4600, "2023-06-04T12:30:05", 12, "finished", "info", "Training completed.", {}),
    ]
    store = store_of(records, mtime=NOW)
    status = run_status(store, now=NOW)
    assert status.state == "finished"
    assert check_line(store, now=NOW)[0] == 0


def test_rank_that_stops_while_others_continue() -> None:
    src = "out.log"
    records: list = []
    for i, step in enumerate(range(100, 1700, 100)):
        t = f"2024-02-20T10:{i * 3:02d}:00"
        for r in range(4):
            if r == 2 and step > 1000:
                continue
            records.append(Step(src, r, step, t, 10 * i + r, {"loss": 29.0 - i * 0.1, "step_time_s": 1.8}))
    store = store_of(records, mtime=epoch("2024-02-20T10:45:01"))
    status = run_status(store, now=epoch("2024-02-20T10:45:10"))
    assert status.state == "running"
    by_rank = {r.rank: r for r in status.ranks}
    assert by_rank[2].state == "stalled" and by_rank[2].last_step == 1000
    assert by_rank[0].state == "running"
    assert "rank 2 at step 1000" in status.reason


def test_unknown_without_any_step() -> None:
    store = store_of([], mtime=NOW)
    store.source("x.log").lines = 12
    status = run_status(store, now=NOW)
    assert status.state == "unknown"
    assert check_line(store, now=NOW) == (3, "unknown: no training step recognised in 12 lines")


def test_a_profiler_report_alone_says_where_it_is() -> None:
    # seed 000: a Lightning SimpleProfiler report and no training step
    from conftest import seed

    from trainwatch.pipeline import Pipeline

    pipeline = Pipeline([str(seed("000"))])
    pipeline.read_to_end()
    status = run_status(pipeline.store, now=NOW)
    assert status.state == "unknown"
    assert status.reason.endswith("; 1 profiler report") and status.profiles == 1
    assert "key" not in status.reason  # where the dashboard shows it is the dashboard's to say
