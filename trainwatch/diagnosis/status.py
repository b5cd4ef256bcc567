"""Is the run running, stalled, finished or crashed, and why.

"Recently" is judged against the run's own cadence (how far apart its progress lines usually
are), never a fixed timeout. How long ago the last step happened is bounded from below by
several independent clocks, and the largest bound wins:

- the file's mtime (or, for stdin, when bytes last arrived): no step can be newer than the last write;
- the log's own timestamps: lines kept coming after the last step (e.g. NCCL watchdog messages);
- now minus the last step's log timestamp. A file copied today has a fresh mtime but its lines
  still say 2020, so the log wins; when the file *is* being written and the log clock sits a whole
  number of quarter-hours away from the mtime, the log is in another time zone and is corrected.

Steps that arrive while we follow the file are timed by their arrival instead (see progress_age).
"""

from __future__ import annotations

import math
import re
import time as _time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from trainwatch.diagnosis.cadence import (
    MIN_STALL_S,
    NO_CADENCE_STALL_S,
    Cadence,
    cadence,
    cadences,
    stall_threshold,
)
from trainwatch.diagnosis.cause import first_by_order
from trainwatch.diagnosis.clock import fmt_age, write_age
from trainwatch.diagnosis.events import (
    FAILURE_KINDS,
    EventIndex,
    after_last_progress,
    event_index,
    root_cause_event,
)
from trainwatch.diagnosis.progress import NO_PROGRESS, Part, Progress, progress, progress_parts, progress_text
from trainwatch.diagnosis.segments import superseded
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.diagnosis.window import median_without
from trainwatch.parsers.fields import prefix_end
from trainwatch.records import Event
from trainwatch.store.store import RankKey, Store

STATES = ("running", "stalled", "finished", "crashed", "unknown")
CHECKPOINT_STALL_S = 1800.0  # a save in progress may take this long
TZ_STEP_S = 900.0  # time zones are whole quarter-hours apart
TZ_MAX_S = 14.5 * 3600
OLD_LOG_S = 86400.0  # a stall older than this is a log that ended long ago: say when, not "no step for 5.9 years"
LAG_RECORDS = 3  # a rank this many log intervals behind the others has stopped advancing


@dataclass(frozen=True)
class RankStatus:
    source: str
    rank: int | None
    state: str
    last_step: int | None
    age_s: float  # seconds since its last step (a lower bound); nan if unknown
    reason: str
    host: str | None = None  # the node, when the log names it (two nodes' rank 0 are two entries)

    @property
    def key(self) -> RankKey:
        return RankKey(self.source, self.rank, self.host)


@dataclass(frozen=True)
class RunStatus:
    """The verdict, with its parts as fields so that a screen shows them without taking the
    sentence apart: `reason` is the whole sentence (`check`, `summary`); `cause` is what it says
    beyond the step, pace and age that `progress` and `write_age_s` hold (the dashboard's header
    prints those itself, on its own clock)."""

    state: str  # one of STATES
    reason: str  # one sentence: why
    ranks: tuple[RankStatus, ...]
    last_step: int | None = None
    total_steps: int | None = None
    sec_per_step: float = math.nan
    step_time_s: float = math.nan
    age_s: float = math.nan
    stall_after_s: float = math.nan
    failure: Event | None = None  # the event that ended (crashed) or hung (stalled) the run
    write_age_s: float = math.nan  # seconds since the freshest source was written: the age to show
    cause: str = ""  # the reason without the step, pace and age ("" for a running run with no news)
    progress: Progress = NO_PROGRESS  # step N of M, the pace, the ETA
    profiles: int = 0  # profiler reports in the log (an "unknown" run may be a profiler report alone)

    @property
    def eta_s(self) -> float:
        """Seconds left at the pace, for a running run; nan otherwise or when unknown."""
        return self.progress.eta_s if self.state == "running" else math.nan

    def progress_parts(self, *, percent: bool = False) -> list[Part]:
        """The one step/pace/ETA line's pieces (`progress.progress_parts`) for this verdict."""
        return progress_parts(self.progress, eta=self.state == "running", percent=percent)


def _source_last_log_t(store: Store, source: str) -> float:
    times = [t for k, t in store.last_log_time.items() if k.source == source]
    return max(times) if times else math.nan


def _write_age(store: Store, source: str, now: float, mono_now: float) -> float:
    """Seconds since the source was last written (a lower bound of the age of its last step)."""
    st = store.sources.get(source)
    if st is None:
        return math.nan
    if st.mtime is not None:
        return max(0.0, now - st.mtime)
    if st.last_data_monotonic is not None:
        return max(0.0, mono_now - st.last_data_monotonic)
    if st.last_data_wall is not None:
        return max(0.0, now - st.last_data_wall)
    return math.nan


def _tz_offset(store: Store, source: str, last_log_t: float, tolerance: float) -> float:
    """The log clock's offset from the file clock when it looks like a time zone, else 0."""
    st = store.sources.get(source)
    written = st.mtime if st is not None and st.mtime is not None else (st.last_data_wall if st is not None else None)
    if written is None or math.isnan(last_log_t):
        return 0.0
    offset = written - last_log_t
    if abs(offset) > TZ_MAX_S + tolerance:
        return 0.0
    zone = round(offset / TZ_STEP_S) * TZ_STEP_S
    residual = offset - zone
    if zone != 0 and -60.0 <= residual <= tolerance:
        return zone
    return 0.0


def progress_age(store: Store, key: RankKey, c: Cadence, threshold: float, now: float, mono_now: float) -> float:
    """Largest lower bound on the seconds since this rank's last step; nan without any clock.

    A step seen arriving after the source was caught up (live following, `trainwatch demo`,
    a replayed or re-timestamped log) is timed by its arrival: our clock beats the log's."""
    obs = store.observations.get(key)
    st = store.sources.get(key.source)
    write_age = _write_age(store, key.source, now, mono_now)
    if obs and st is not None and st.caught_up_monotonic is not None and obs[-1].seen > st.caught_up_monotonic:
        # (a block held to the end of a file read once "arrives" after catching up: its file's
        # write time still bounds it, or "last step 92 µs ago" on a log written hours ago)
        arrived = max(0.0, mono_now - obs[-1].seen)
        return max(arrived, write_age) if not math.isnan(write_age) else arrived
    bounds: list[float] = []
    if not math.isnan(write_age):
        bounds.append(write_age)
    if not math.isnan(c.progress_log_t):
        last_log_t = _source_last_log_t(store, key.source)
        if not math.isnan(last_log_t):
            bounds.append(max(0.0, last_log_t - c.progress_log_t))
        log_age = now - c.progress_log_t
        if not math.isnan(write_age) and write_age <= threshold and log_age > threshold:
            tolerance = min(max(120.0, 2 * (c.usual_gap_s if not math.isnan(c.usual_gap_s) else 0.0)), 420.0)
            log_age -= _tz_offset(store, key.source, last_log_t, tolerance)
        bounds.append(max(0.0, log_age))
    return max(bounds) if bounds else math.nan


def lagging_ranks(store: Store, cadences: dict[RankKey, Cadence]) -> dict[RankKey, float]:
    """Ranks several log intervals behind the median of the others -> the others' median last step.

    In synchronous training a rank cannot fall behind and keep going: it stopped (died, hung, or
    its log stopped flushing) while the rest went on."""
    last = {k: s for k, s in store.latest_step.items() if k.rank is not None and not superseded(store, k)}
    if len(last) < 2:
        return {}
    out: dict[RankKey, float] = {}
    ordered = sorted(float(s) for s in last.values())
    for key, step in last.items():
        others = median_without(ordered, float(step))
        c = cadences.get(key)
        interval = c.steps_per_record if c is not None else 1.0
        if others - step >= max(LAG_RECORDS * interval, LAG_RECORDS):
            out[key] = others
    return out


def _latest_progress_t(store: Store, cadences: dict[RankKey, Cadence]) -> float:
    times = [c.progress_log_t for c in cadences.values() if not math.isnan(c.progress_log_t)]
    return max(times) if times else math.nan


def _terminal(store: Store, index: EventIndex, events: tuple[Event, ...], latest_t: float) -> list[Event]:
    return [e for e in events if after_last_progress(store, e, index, latest_t)]


def rank_name(rank: int | None, host: str | None = None) -> str:
    """`rank 0`, or `rank 0 on task1` when the log names the node (local ranks repeat per node)."""
    if rank is None:
        return f"a rank on {host}" if host else "a rank"
    return f"rank {rank} on {host}" if host else f"rank {rank}"


def _rank_text(e: Event) -> str:
    return f"{rank_name(e.rank, e.host)} " if e.rank is not None else ""


def where_in_run(step: int | None, reports: bool = False) -> str:
    """Where in the run: `reports`, steps were read whose log numbers none (CNTK, a cut record)."""
    if step is not None:
        return f" after step {step}"
    return " after its last report (the log numbers no steps)" if reports else " before the first step"


LOGGER_PREFIX = re.compile(r"^(?:WARNING|ERROR|INFO|CRITICAL|DEBUG):[\w.]+:\s*")
BRACKET_PREFIX = re.compile(r"^(?:\[[^\]]*\]:?\s*)+")  # `[2022-09-08 12:07:13,642] [INFO] [launch.py:318:main] `


def _report_gap_s(store: Store) -> float:
    """The longest wait between the last two reports a stream delivered (as they arrived): reports that
    number no steps may come further and further apart (Vowpal Wabbit prints at doubling example counts)."""
    gaps = [obs[-1].seen - obs[-2].seen for obs in store.observations.values() if len(obs) >= 2]
    return max(gaps, default=0.0)


def _after_prefix(text: str) -> str:
    """The end marker's words without its logging prefix (fairseq's `2023-05-01 10:00:00 | INFO | fairseq_cli.train | `)."""
    return text[prefix_end(text) :]


def failure_sentence(e: Event) -> str:
    message = LOGGER_PREFIX.sub("", e.message.strip()) or e.kind
    if e.kind == "signal" and e.data.get("signal") and str(e.data["signal"]) not in message:
        message = f"{message} ({e.data['signal']})"
    return f"{_rank_text(e)}{message}"


def run_status(store: Store, now: float | None = None, stall_after: float | None = None) -> RunStatus:
    """The run's state and one sentence why; cheap (recent windows, one pass over events)."""
    wall = _time.time()
    now = wall if now is None else now
    mono_now = _time.monotonic() + (now - wall)
    with store.lock:
        index = event_index(store)
        by_key = cadences(store)
        step_keys = list(by_key)
        latest_t = _latest_progress_t(store, by_key)
        prog = progress(store)
        source_order = {name: i for i, name in enumerate(store.sources)}
        terminal_failures = _terminal(store, index, index.failures, latest_t)
        terminal_finished = _terminal(store, index, index.finished, latest_t)
        total = store.total_steps
        noted = set(store.ranks)
        for st in store.sources.values():
            noted |= set(getattr(st, "ranks_seen", ()) or ())

        per_rank: list[RankStatus] = []
        freshest: tuple[float, RankKey] | None = None
        behind = lagging_ranks(store, by_key)
        for key in step_keys:
            c = by_key[key]
            threshold = stall_threshold(c, stall_after)
            ckpt = index.checkpoints_last.get(key.source)
            if stall_after is None and ckpt is not None and after_last_progress(store, ckpt, index, latest_t):
                threshold = max(threshold, CHECKPOINT_STALL_S)
            age = progress_age(store, key, c, threshold, now, mono_now)
            state = "stalled" if not math.isnan(age) and age > threshold else "running"
            reason = (
                f"no step for {fmt_duration(age)} (usual {fmt_duration(c.usual_gap_s)} between progress lines)"
                if state == "stalled"
                else ""
            )
            if key in behind:
                state = "stalled"
                reason = f"stopped at step {store.latest_step[key]} while the other ranks reached {behind[key]:.0f}"
            per_rank.append(RankStatus(key.source, key.rank, state, store.latest_step[key], age, reason, key.host))
            score = age if not math.isnan(age) else math.inf
            if freshest is None or score < freshest[0]:
                freshest = (score, key)

        last_step = max((store.latest_step[k] for k in step_keys), default=None)
        reports = last_step is None and any(store.step_records.values())
        main_key = freshest[1] if freshest else None
        main = by_key.get(main_key) if main_key is not None else None
        sps = main.sec_per_step if main else math.nan
        step_time = main.step_time_s if main else math.nan
        age = freshest[0] if freshest and not math.isinf(freshest[0]) else math.nan
        threshold = stall_threshold(main, stall_after) if main else NO_CADENCE_STALL_S
        write_age_s = write_age(store, now, sorted({k.source for k in step_keys}) or None)
        common: dict[str, Any] = {
            "progress": prog,
            "profiles": len(store.profiles),
            "write_age_s": write_age_s,
            "last_step": last_step,
            "total_steps": total,
            "sec_per_step": sps,
            "step_time_s": step_time,
            "age_s": age,
            "stall_after_s": threshold,
        }

        # End markers after the last step decide first; the later of a failure and a finish wins.
        hard = [e for e in terminal_failures if e.kind != "nccl_timeout"]
        first_fail = first_by_order(hard, source_order)
        finish = terminal_finished[-1] if terminal_finished else None
        if first_fail is not None and finish is not None and finish.source == first_fail.source:
            if finish.line > max(e.line for e in hard if e.source == finish.source):
                first_fail = None
        if first_fail is not None:
            root = root_cause_event(store, index)
            # (without a rank's own error, the launcher's error rather than its warnings: torchrun's `failed
            # (exitcode: -9) local_rank: 3`, not the `Sending process N closing signal SIGTERM` to the others before it)
            errors = [e for e in hard if e.severity == "error"]
            cause = root if root is not None else first_by_order(errors, source_order) or first_fail
            said = failure_sentence(cause)
            ranks = _with_inherited(per_rank, noted, "crashed", {e.rank for e in hard if e.rank is not None})
            return RunStatus(
                "crashed", f"{said}{where_in_run(last_step, reports)}", ranks, failure=cause, cause=said, **common
            )
        if finish is not None:
            # (the trainer's word over wandb's `Waiting for W&B process to finish... (success).` after it)
            own = [e for e in terminal_finished if e.source == finish.source and "W&B process" not in e.message]
            marker = own[-1] if own else finish
            said = _after_prefix(BRACKET_PREFIX.sub("", LOGGER_PREFIX.sub("", marker.message.strip())))
            said = said or "the run reported completion"
            reason = said + (f" (step {last_step})" if last_step is not None else "")
            ranks = _with_inherited(per_rank, noted, "finished", set())
            return RunStatus("finished", reason, ranks, cause=said, **common)
        hangs = [e for e in terminal_failures if e.kind == "nccl_timeout"]
        if hangs:
            hang = first_by_order(hangs, source_order)
            assert hang is not None
            hung = f"hung in a collective: {failure_sentence(hang)}"
            reason, said = hung + where_in_run(last_step, reports), hung
            root = root_cause_event(store, index)
            if root is not None and root is not hang:
                first = f"; first failure: {failure_sentence(root)}"
                reason, said = reason + first, said + first
            ranks = _with_inherited(per_rank, noted, "stalled", {e.rank for e in hangs if e.rank is not None})
            return RunStatus("stalled", reason, ranks, failure=hang, cause=said, **common)
        ended = _reached_the_end(store, index, last_step, total, age, main, latest_t)
        if ended is not None:
            ranks = _with_inherited(per_rank, noted, "finished", set())
            return RunStatus("finished", ended[0], ranks, cause=ended[1], **common)
        reported = sum(store.step_records.values())
        if not step_keys and reported:
            # reports that number no steps (HF Trainer's dicts, Vowpal Wabbit's rows, CNTK's epochs): training
            # was recognised; the age of the last write says whether it goes on
            what = f"{reported} report{'s' if reported > 1 else ''} read; the log numbers no steps"
            limit = stall_after if stall_after is not None else max(NO_CADENCE_STALL_S, 3 * _report_gap_s(store))
            if math.isnan(write_age_s) or write_age_s <= limit:
                reason = what + (f", last write {fmt_age(write_age_s)}" if not math.isnan(write_age_s) else "")
                ranks = _with_inherited([], noted, "running", set())
                return RunStatus("running", reason, ranks, cause=what, **common)
            said = f"no new report ({what}) and no end marker"
            reason = f"no report for {fmt_duration(write_age_s)} ({what}) and no end marker"
            if write_age_s > OLD_LOG_S:
                said = reason = _ended_long_ago(store, None).replace("before any step", "after its last report")
            ranks = _with_inherited([], noted, "stalled", set())
            return RunStatus("stalled", reason, ranks, cause=said, **common)
        if not step_keys:
            lines = sum(st.lines for st in store.sources.values())
            reason = f"no training step recognised in {lines} lines" if lines else "nothing read yet"
            if store.profiles:  # a profiler report alone (Lightning, torch.profiler): say so
                n = len(store.profiles)
                reason += f"; {n} profiler report{'s' if n > 1 else ''}"
            ranks = _with_inherited([], noted, "unknown", set())
            return RunStatus("unknown", reason, ranks, cause=reason, **common)
        if all(r.state == "stalled" for r in per_rank if r.key not in behind):
            usual = prog.pace_s
            usual_text = f"usual {fmt_duration(usual)}/step" if not math.isnan(usual) else "no cadence known"
            reason = f"no step for {fmt_duration(age)} after step {last_step} ({usual_text}) and no end marker"
            said = f"no new step ({usual_text}) and no end marker"
            if not math.isnan(age) and age > OLD_LOG_S:
                said = _ended_long_ago(store, last_step)  # (the header prints the age on its clock)
                reason = said + written_suffix(write_age_s)
            ranks = _with_inherited(per_rank, noted, "stalled", set())
            return RunStatus("stalled", reason, ranks, cause=said, **common)
        parts = [progress_text(progress_parts(prog, eta=False))]
        if not math.isnan(write_age_s):
            parts.append(f"last write {fmt_age(write_age_s)}")
        stopped = [r for r in per_rank if r.state == "stalled"]
        news = ""
        if stopped:
            news = "stopped: " + ", ".join(f"{rank_name(r.rank, r.host)} at step {r.last_step}" for r in stopped)
            parts.append(news)
        ranks = _with_inherited(per_rank, noted, "running", set())
        return RunStatus("running", ", ".join(parts), ranks, cause=news, **common)


SUMMARY_METRIC = "train_runtime"  # HF Trainer's final summary dict: printed once, after the last step
QUIET_GAPS = 2.0  # at its total, this many usual intervals without a write: no further step is coming


def _reached_the_end(
    store: Store,
    index: EventIndex,
    last_step: int | None,
    total: int | None,
    age: float,
    main: Cadence | None,
    latest_t: float,
) -> tuple[str, str] | None:
    """Why the run is finished though no end marker was printed, as (reason, cause: the reason
    without the step), or None.

    What frameworks print at the end without a marker: the Trainer's `train_runtime` summary;
    the last epoch/iteration followed by its checkpoint (mmengine's "Saving checkpoint at 2
    epochs"); or simply the total reached and nothing written since."""
    if any(SUMMARY_METRIC in m for k, m in store.latest.items() if not superseded(store, k)):
        said = "the Trainer printed its final train_runtime summary"
        return said + (f" (step {last_step})" if last_step is not None else ""), said
    if total is None or last_step is None or last_step < total:
        return None
    ckpt = [e for e in index.checkpoints_last.values() if after_last_progress(store, e, index, latest_t)]
    if ckpt:
        said = f"reached step {last_step} of {total} and saved its final checkpoint"
        return said, said
    gap = main.usual_gap_s if main is not None and not math.isnan(main.usual_gap_s) else 0.0
    if math.isnan(age) or age > max(QUIET_GAPS * gap, 1.0):
        said = f"reached step {last_step} of {total} and stopped writing"
        return said, said
    return None


def written_suffix(write_age_s: float) -> str:
    """The age a stalled old log's `reason` ends with: the one every screen shows, since the file
    was written (a copy made today was written now)."""
    return f"; last write {fmt_age(write_age_s)}"


def _ended_long_ago(store: Store, last_step: int | None) -> str:
    """An old log read today: when it ends, rather than a stall measured in years."""
    at = f"at step {last_step}" if last_step is not None else "before any step"
    times = [t for t in store.last_log_time.values() if not math.isnan(t)]
    if times:
        when = f" (last line {datetime.fromtimestamp(max(times)).strftime('%Y-%m-%d %H:%M')})"
    else:
        written = [st.mtime for st in store.sources.values() if st.mtime is not None]
        when = f" (last written {datetime.fromtimestamp(max(written)).strftime('%Y-%m-%d %H:%M')})" if written else ""
    return f"log ends {at}{when} with no end marker"


def _with_inherited(
    per_rank: list[RankStatus], noted: set[int], state: str, failed: set[int]
) -> tuple[RankStatus, ...]:
    """A run-wide end (crash, finish, stall) is every rank's state; ranks without steps share the run's."""
    out: list[RankStatus] = []
    for r in per_rank:
        if state == "running" or r.state == state:
            out.append(r)
        else:
            why = "the rank that failed" if r.rank in failed else r.reason
            out.append(RankStatus(r.source, r.rank, state, r.last_step, r.age_s, why, r.host))
    have = {r.rank for r in per_rank if r.rank is not None}
    for rank in sorted(noted - have):
        why = "the rank that failed" if rank in failed else "reports no steps of its own"
        out.append(RankStatus("", rank, state, None, math.nan, why))
    return tuple(out)


__all__ = [
    "FAILURE_KINDS",
    "MIN_STALL_S",
    "STATES",
    "Cadence",
    "RankStatus",
    "RunStatus",
    "cadence",
    "lagging_ranks",
    "rank_name",
    "run_status",
    "stall_threshold",
]
