"""DeepSpeed engine output: wall_clock_breakdown timers, step=N progress, timer.py throughput,
fp16 OVERFLOW, see_memory_usage and checkpoint saves.

Step attribution of the timer lines. DeepSpeed prints no step number on them, so the step is
counted from the engine's own `step=N` progress lines (printed at init as `step=0` and every
`steps_per_print`). Per optimizer step DeepSpeed prints, in this order: the ZeRO optimizer's
`optimizer_*` timers (absent on an overflow step, which prints `OVERFLOW!` instead), then when
due `step=N` and the timer.py line, then the `*_microstep` timers (once per micro-batch) and the
global `forward/backward/step` timers once. So after `step=N` the breakdown lines belong to N;
a global line closes its step; an `optimizer_*` line or OVERFLOW opens the next step when the
current one already had one (logs without global lines, e.g. Megatron+DeepSpeed). Every
`step=N` re-syncs the count. Before the first `step=N` (or after a checkpoint load, which moves
the engine's counter) the step is unknown and the records say `step: null`.

timer.py's counters restart at every launch, unlike the engine's: its `global_step` is used
only when the engine's step is not known, and the old `0/100, SamplesPerSec=` form reports the
running average (DeepSpeed's `avg_samples_per_sec`), so it becomes `running_avg_samples_per_s`.

DeepSpeed's "GB" (`MemAllocated=5.29GB`, `MA 1.2 GB`) is bytes / 1024**3, i.e. GiB: taken as is.
see_memory_usage lines carry no step: they become a step record at the last reported step when
one is known (the memory was read after it), and are otherwise ignored (init-time readings).

The comms logger (`comm op: broadcast | ... | time (ms): 4138.40 | msg size: ...`) is left
alone: those are single collective calls, not phases of a training step.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import ClassVar

from trainwatch.lines.assembler import Line
from trainwatch.names import phase_name
from trainwatch.numbers import ms_to_s, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.bulk import DECIMAL, INT, NUMBER, RANK, STAMP, BulkTemplate, Part, can_straddle

_TIMER = re.compile(
    r"(?:\[Rank (?P<rank_a>\d{1,18}(?!\d))\]\s+)?(?:\brank=(?P<rank_b>\d{1,18}(?!\d))\s+)?\btime \(ms\)\s*\|(?P<body>.*)$"
)
_FIELD = re.compile(r"^\s*(?P<name>[A-Za-z_][\w-]*)\s*:\s*(?P<value>\S+)\s*$")
_PROGRESS = re.compile(
    r"(?:\[Rank (?P<rank>\d{1,18}(?!\d))\]\s+)?\bstep=(?P<step>\d{1,18}(?!\d)), skipped=(?P<skipped>\d{1,18}(?!\d)), lr=\[(?P<lr>[^\]]*)\]"
)
_TIMER_NEW = re.compile(
    r"\bepoch=(?P<epoch>\d{1,18}(?!\d))/micro_step=(?P<micro>\d{1,18}(?!\d))/global_step=(?P<step>\d{1,18}(?!\d)), "
    r"RunningAvgSamplesPerSec=(?P<avg>[^,\s]+), CurrSamplesPerSec=(?P<curr>[^,\s]+)"
    r"(?:, MemAllocated=(?P<mem>[\d.]+)GB, MaxMemAllocated=(?P<maxmem>[\d.]+)GB)?"
)
_TIMER_OLD = re.compile(r"\] (?P<epoch>\d{1,18}(?!\d))/(?P<step>\d{1,18}(?!\d)), SamplesPerSec=(?P<avg>[^,\s]+)\s*$")
_OVERFLOW = re.compile(
    r"\[(?:deepscale|deepspeed)\] OVERFLOW! Rank (?P<rank>\d{1,18}(?!\d)) Skipping step\. "
    r"Attempted loss scale: (?P<attempted>[\d.]+), "
    r"(?:reducing to (?P<new>[\d.]+)|but hysteresis is (?P<hyst>\d{1,18}(?!\d))\. Reducing hysteresis to (?P<new_hyst>\d{1,18}(?!\d)))"
    r"\s*$"
)
# The same line cut short before its scales (a terminal's hard wrap: `... Attempted loss sc` / `ale:
# 4096.0, reducing to 2048.0`): the overflow is still there, its scales are not.
_OVERFLOW_CUT = re.compile(
    r"\[(?:deepscale|deepspeed)\] OVERFLOW! Rank (?P<rank>\d{1,18}(?!\d)) Skipping step\.[ A-Za-z]*$"
)  # (the line ends in the words before the scales: a number that is there but damaged is no overflow read)
_MEMORY = re.compile(
    r"\bMA (?P<ma>[\d.]+) GB\s+Max_MA (?P<max_ma>[\d.]+) GB\s+CA (?P<ca>[\d.]+) GB\s+Max_CA (?P<max_ca>[\d.]+) GB\s*$"
)
_CHECKPOINT = re.compile(r"\bSaving model checkpoint: (?P<path>\S+)\s*$")
_GLOBAL_STEP_TAG = re.compile(r"global_step(\d{1,18}(?!\d))")
_LOADING = re.compile(r"\bloading checkpoint\b", re.I)

_GLOBAL_TIMERS = {"forward", "backward", "backward_inner", "backward_allreduce", "step"}
_RAW_GLOBAL = {
    "forward",
    "backward",
    "backward_inner",
    "backward_allreduce",
    "step",
    "fwd",
    "bwd",
    "bwd_inner",
    "bwd_allreduce",
}


# The form DeepSpeed itself prints (`%.2f`, single spaces): validated and split by two C-level
# regex calls instead of a match and a parse per piece; any other body takes the general path.
_PRINTED_BODY = re.compile(r"(?: [A-Za-z_][\w-]*: \d+\.\d+ \|)* [A-Za-z_][\w-]*: \d+\.\d+")
_PRINTED_PAIR = re.compile(r"([A-Za-z_][\w-]*): (\d+\.\d+)")
_PRINTED_LINE = re.compile(r"(?P<rank_a>)rank=(?P<rank_b>\d{1,18})(?!\d) time \(ms\) \|(?P<body>.*)$")
FAST = True  # tests/perf compare both paths
# The timestamped lines `log_dist` and timer.py print every `steps_per_print` (DeepSpeed's own
# form), as bulk shapes: the stamp, then what lies between it and the fields as literal text.
_STAMPED = re.compile(r"\[(?P<stamp>[^\]]{19,26})\]")
_PROGRESS_SHAPE = re.compile(
    r"(?P<mid>.*?)(?:\[Rank (?P<rank>\d{1,9})\] )?step=(?P<step>\d{1,18}), skipped=(?P<skipped>\d{1,18}), "
    r"lr=\[(?P<lr>[^\]]*)\](?P<rest>.*)"
)
_THROUGHPUT_SHAPE = re.compile(
    r"(?P<mid>.*?\] )(?P<epoch>\d{1,18})/(?P<step>\d{1,18}), SamplesPerSec=(?P<avg>\S+)(?P<rest>\s*)"
)
_NUMBER = re.compile(NUMBER.pattern)
STAMP_RE = re.compile(STAMP.pattern)


def _ms_fields(body: str) -> dict[str, float] | None:
    """`forward: 6475.32 | backward: 3422.89` -> raw names to ms; None if any piece is not that."""
    if FAST and _PRINTED_BODY.fullmatch(body):
        return {name: float(value) for name, value in _PRINTED_PAIR.findall(body)}
    found: dict[str, float] = {}
    for piece in body.split("|"):
        if not piece.strip():
            continue
        m = _FIELD.match(piece)
        if not m:
            return None
        value = parse_number(m.group("value"))
        if value is None:
            return None
        found[m.group("name")] = value
    return found or None


def _is_deepspeed_name(raw: str) -> bool:
    return raw in _RAW_GLOBAL or raw.endswith("_microstep") or raw.startswith("optimizer_")


def _all_deepspeed_names(body: str) -> bool:
    """False when some piece's name (the text before its `:`) is not a DeepSpeed timer: such a
    piece is either not a field or not DeepSpeed's, so the line is not an unranked DeepSpeed line."""
    for piece in body.split("|"):
        if piece.strip() and not _is_deepspeed_name(piece.split(":", 1)[0].strip()):
            return False
    return True


@lru_cache(maxsize=256)
def _timer_kind(raw_names: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """Phase names of a timer line's raw names, and which timers they are (one line shape repeats)."""
    names = set(map(phase_name, raw_names))
    if all(name.startswith("optimizer_") for name in names):
        kind = "optimizer"
    elif all(name.endswith("_microstep") for name in names):
        kind = "microstep"
    elif names <= _GLOBAL_TIMERS and "forward" in names:
        kind = "global"
    else:
        kind = "other"
    return tuple(map(phase_name, raw_names)), kind


class DeepSpeedParser(Parser):
    name: ClassVar[str] = "deepspeed"
    title: ClassVar[str] = "DeepSpeed"
    triggers: ClassVar[tuple[str, ...]] = (
        "time (ms)",
        "step=",
        "SamplesPerSec=",
        "OVERFLOW!",
        "Max_MA ",
        "Saving model checkpoint: ",
        "oading checkpoint",
    )
    example: ClassVar[str] = (
        "[2024-02-20 09:55:01,108] [INFO] [logging.py:77:log_dist] [Rank 0] rank=0 time (ms) | "
        "forward: 6475.32 | backward: 3422.89 | backward_inner: 3105.27 | backward_allreduce: 317.44 | step: 8489.29"
    )
    priority: ClassVar[int] = 100
    samples: ClassVar[tuple[Sample, ...]] = (
        Sample(  # Megatron-DeepSpeed ALCF/README.md (DeepSpeed 0.12+, `fwd`/`bwd` names): step=1 and its timers
            "[2024-04-04 09:09:53,311] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | optimizer_allgather: "
            "884.11 | optimizer_gradients: 6.43 | optimizer_step: 23.44\n"
            "[2024-04-04 09:09:53,312] [INFO] [logging.py:96:log_dist] [Rank 0] step=1, skipped=0, "
            "lr=[0.00029999999999267505, 0.00029999999999267505], mom=[(0.9, 0.999), (0.9, 0.999)]\n"
            "[2024-04-04 09:09:53,313] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd_microstep: 6567.68 | "
            "bwd_microstep: 17950.36 | bwd_inner_microstep: 17711.20 | bwd_allreduce_microstep: 239.11 | "
            "step_microstep: 1139.27\n"
            "[2024-04-04 09:09:53,313] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd: 6567.66 | "
            "bwd: 17950.35 | bwd_inner: 17711.19 | bwd_allreduce: 239.11 | step: 1139.29\n",
            steps=((1, {"lr": 0.00029999999999267505, "skipped": 0}),),
            ranks=(0,),
            phases=(
                (None, {"optimizer_allgather": 0.88411, "optimizer_gradients": 0.00643, "optimizer_step": 0.02344}),
                (1, {"forward_microstep": 6.56768, "backward_microstep": 17.95036, "step_microstep": 1.13927}),
                (1, {"forward": 6.56766, "backward": 17.95035, "backward_allreduce": 0.23911, "step": 1.13929}),
            ),
        ),
        Sample(  # seed 004 (DeepSpeed 0.3.8 + Megatron GPT-2), lines 479-480: the old timer.py running average
            "[2020-12-12 00:01:20,672] [INFO] [logging.py:60:log_dist] [Rank 0] step=100, skipped=0, "
            "lr=[1.5e-06, 1.5e-06], mom=[(0.9, 0.999), (0.9, 0.999)]\n"
            "[2020-12-12 00:01:20,672] [INFO] [timer.py:166:stop] 0/100, SamplesPerSec=421.75204796909713\n",
            steps=((100, {"lr": 1.5e-06, "skipped": 0, "running_avg_samples_per_s": 421.75204796909713, "epoch": 0}),),
        ),
        Sample(  # seed 002 (DeepSpeed 0.8.2, ZeRO-1, CoCa), lines 3708-3709 and 5042: fp16 overflow, timer.py
            "[2024-02-20 10:12:18,756] [INFO] [logging.py:77:log_dist] [Rank 0] rank=0 time (ms) | forward: 363.14 | "
            "backward: 1033.29 | backward_inner: 1024.81 | backward_allreduce: 8.43 | step: 278.25\n"
            "[2024-02-20 10:12:20,361] [INFO] [stage_1_and_2.py:1784:step] [deepspeed] OVERFLOW! Rank 0 Skipping "
            "step. Attempted loss scale: 65536, reducing to 32768.0\n"
            "[2024-02-20 10:25:57,892] [INFO] [timer.py:198:stop] epoch=0/micro_step=1000/global_step=1000, "
            "RunningAvgSamplesPerSec=1126.8026294283802, CurrSamplesPerSec=1211.289158780771, MemAllocated=5.29GB, "
            "MaxMemAllocated=28.74GB\n",
            steps=(
                (
                    1000,
                    {
                        "samples_per_s": 1211.289158780771,
                        "running_avg_samples_per_s": 1126.8026294283802,
                        "mem_gib": 5.29,
                        "max_mem_gib": 28.74,
                    },
                ),
            ),
            events=("overflow",),
            phases=((None, {"forward": 0.36314, "backward": 1.03329, "step": 0.27825}),),
        ),
    )

    def __init__(self) -> None:
        # The engine step the next breakdown line belongs to (None: not known).
        self._cur: int | None = None
        # Whether `_cur` already had its optimizer timers (or overflow, or step=N line).
        self._cur_has_opt = False
        self._timer_set: int | None = None  # the `_cur` a timer.py line set while the engine's step was unknown

    # ----------------------------------------------------------------- feed
    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if "time (ms)" in text:
            return self._timer_line(text, out)
        if "step=" in text:
            m = _PROGRESS.search(text)
            if m:
                return self._progress(m, out)
        if "SamplesPerSec=" in text:
            return self._throughput(text, out)
        if "OVERFLOW!" in text:
            m = _OVERFLOW.search(text) or _OVERFLOW_CUT.search(text)
            if m:
                return self._overflow(m, out)
            return False
        if "Max_MA " in text:
            m = _MEMORY.search(text)
            if m:
                return self._memory(m, out)
            return False
        if "Saving model checkpoint: " in text:
            m = _CHECKPOINT.search(text)
            if m:
                return self._checkpoint(m, out)
            return False
        if _LOADING.search(text):
            # A checkpoint load sets the engine's step to the saved one: the count is lost
            # until the next `step=N`. Not a record: other parsers may still want the line.
            self._cur = None
        return False

    # ----------------------------------------------------------------- bulk
    def bulk_template(self, text: str) -> BulkTemplate | None:
        """`rank=N time (ms) | name: 1.23 | ...` as DeepSpeed prints it: the hot line of a
        `wall_clock_breakdown` log. The step moves as `_timer_line` moves it. Also the
        timestamped `step=N` and `N/M, SamplesPerSec=` lines (every `steps_per_print`)."""
        if text.startswith("["):
            return self._stamped_template(text)
        m = _PRINTED_LINE.match(text)
        if m is None or not _PRINTED_BODY.fullmatch(m.group("body")):
            return None
        raw = tuple(name for name, _value in _PRINTED_PAIR.findall(m.group("body")))
        names_of, kind = _timer_kind(raw)
        parts: list[Part] = ["rank=", INT, " time (ms) |"]
        for i, name in enumerate(raw):
            parts += [" | " if i else " ", f"{name}: ", DECIMAL]
        values = tuple((i + 1, names_of[i], True) for i in range(len(raw)))
        if len(set(raw)) != len(raw):
            return None  # a repeated name: the dict keeps one (per line)
        return BulkTemplate(
            self,
            "phases",
            tuple(parts),
            values,
            self._bulk_step(kind),
            rank_group=0,
            on_lines=self._bulk_steps(kind),
        )

    def _stamped_template(self, text: str) -> BulkTemplate | None:
        """The progress or old-form throughput line behind its `[timestamp]`, when every value
        is a plain number (anything else stays per line)."""
        stamp = _STAMPED.match(text)
        if stamp is None or not STAMP_RE.fullmatch(stamp.group("stamp")):
            return None
        head: list[Part] = ["[", STAMP, "]"]
        body = text[stamp.end() :]
        m = _PROGRESS_SHAPE.fullmatch(body)
        if m is not None:
            return self._progress_template(head, m)
        m = _THROUGHPUT_SHAPE.fullmatch(body)
        if m is not None and _NUMBER.fullmatch(m.group("avg")) and "step=" not in m.group("mid"):
            return self._throughput_template(head, m)
        return None

    def _progress_template(self, head: list[Part], m: re.Match[str]) -> BulkTemplate | None:
        lrs = m.group("lr").split(", ") if m.group("lr") else []
        if not all(_NUMBER.fullmatch(lr) for lr in lrs) or "step=" in m.group("mid") or "[Rank" in m.group("mid"):
            return None  # (then `_PROGRESS.search` finds this very match on every line of the shape)
        parts = [*head, m.group("mid")]
        ranked = m.group("rank") is not None
        if ranked:
            parts += ["[Rank ", RANK, "] "]
        parts += ["step=", INT, ", skipped=", INT, ", lr=["]
        for i in range(len(lrs)):
            parts += [", " if i else "", NUMBER]
        parts += ["]", m.group("rest")]
        first = 2 if ranked else 1  # the step's group
        values = ((first + 2, "lr", False),) if lrs else ()

        def on_line(groups: tuple[str, ...]) -> int | None:
            self._cur = int(groups[first])
            self._cur_has_opt = True
            return self._cur

        return BulkTemplate(
            self,
            "step",
            tuple(parts),
            values,
            on_line,
            rank_group=1 if ranked else None,
            step_group=first,
            extras=(("skipped", first + 1),),
            absent=("time (ms)",),
            timed=True,
            mentions_rank=ranked,
        )

    def _throughput_template(self, head: list[Part], m: re.Match[str]) -> BulkTemplate:
        parts = [*head, m.group("mid"), INT, "/", INT, ", SamplesPerSec=", NUMBER, m.group("rest")]

        def step_now(groups: tuple[str, ...]) -> int | None:
            return self._timer_step(int(groups[2]), commit=False)

        def on_line(groups: tuple[str, ...]) -> int | None:
            return self._timer_step(int(groups[2]), commit=True)

        return BulkTemplate(
            self,
            "step",
            tuple(parts),
            ((3, "running_avg_samples_per_s", False),),
            on_line,
            extras=(("epoch", 1),),
            absent=("time (ms)", "step=", "epoch=", "RunningAvgSamplesPerSec="),
            timed=True,
            step_now=step_now,
        )

    def _bulk_steps(self, kind: str) -> Callable[[int], list[int | None]]:
        """`_bulk_step` of n lines in a row (their values play no part): arithmetic, no call per line."""

        def optimizer(n: int) -> list[int | None]:
            cur, had = self._cur, self._cur_has_opt
            if n == 0:
                return []
            self._cur_has_opt = True
            if cur is None:
                return [None] * n
            first = cur + 1 if had else cur
            self._cur = first + n - 1
            return list(range(first, first + n))

        def microstep(n: int) -> list[int | None]:
            return [self._cur] * n

        def global_(n: int) -> list[int | None]:
            cur = self._cur
            self._cur_has_opt = False
            if cur is None:
                return [None] * n
            self._cur = cur + n
            return list(range(cur, cur + n))

        def other(n: int) -> list[int | None]:
            return [None] * n

        return {"optimizer": optimizer, "microstep": microstep, "global": global_}.get(kind, other)

    def _bulk_step(self, kind: str) -> Callable[[tuple[str, ...]], int | None]:
        def optimizer(_groups: tuple[str, ...]) -> int | None:
            if self._cur is not None and self._cur_has_opt:
                self._cur += 1
            self._cur_has_opt = True
            return self._cur

        def microstep(_groups: tuple[str, ...]) -> int | None:
            return self._cur

        def global_(_groups: tuple[str, ...]) -> int | None:
            step = self._cur
            if self._cur is not None:
                self._cur += 1
            self._cur_has_opt = False
            return step

        def other(_groups: tuple[str, ...]) -> int | None:
            return None

        return {"optimizer": optimizer, "microstep": microstep, "global": global_}.get(kind, other)

    def bulk_declines(self, template: BulkTemplate) -> bool:
        """Megatron's `time (ms) | forward: .. | batch generator: ..`: an unranked timer line
        with a name DeepSpeed never prints is rejected by `_timer_line` before any state change,
        whatever its values (names are literal text of the shape, values have no `|` or `:`)."""
        if template.owner is self or any(can_straddle(template.parts, s) for s in ("rank=", "[Rank ")):
            return False
        line = template.sample()
        if "rank=" in line or "[Rank " in line:
            return False
        m = _TIMER.search(line)
        if m is None or m.group("rank_a") or m.group("rank_b"):
            return False
        return not _all_deepspeed_names(m.group("body"))

    # -------------------------------------------------------------- timers
    def _timer_line(self, text: str, out: Emitter) -> bool:
        # `rank=0 time (ms) | ...` at the line start (the common form) is what `_TIMER.search`
        # finds there; matching it anchored skips trying the pattern at every position.
        m = _PRINTED_LINE.match(text) if FAST else None
        if m is None:
            m = _TIMER.search(text)
            if not m:
                return False
        body = m.group("body")
        rank_text = m.group("rank_b") or m.group("rank_a")
        if FAST and rank_text is None and not _all_deepspeed_names(body):
            return False  # Megatron's `time (ms) | forward: .. | batch generator: ..`, rejected unparsed
        raw = _ms_fields(body)
        if raw is None:
            return False
        if rank_text is None and not all(_is_deepspeed_name(name) for name in raw):
            return False  # a bare `time (ms) | forward: .. | allreduce: ..` is Megatron's
        rank = int(rank_text) if rank_text is not None else None
        names_of, kind = _timer_kind(tuple(raw))
        phases = dict(zip(names_of, map(ms_to_s, raw.values()), strict=True))
        if kind == "optimizer":
            if self._cur is not None and self._cur_has_opt:
                self._cur += 1
            self._cur_has_opt = True
            step = self._cur
        elif kind == "microstep":
            step = self._cur
        elif kind == "global":
            step = self._cur
            if self._cur is not None:
                self._cur += 1
            self._cur_has_opt = False
        else:
            step = None  # other engine timers (e.g. init_optimizer_state): no step
        out.phases(step, phases, rank=rank)
        return True

    def _progress(self, m: re.Match[str], out: Emitter) -> bool:
        step = int(m.group("step"))
        lrs = [p for p in m.group("lr").split(",") if p.strip()]
        metrics: dict[str, float] = {"skipped": float(int(m.group("skipped")))}
        if lrs:
            lr = parse_number(lrs[0])
            if lr is None:
                return False
            metrics = {"lr": lr, **metrics}
        # step=N is printed after step N's optimizer timers, before its breakdown lines.
        self._cur = step
        self._cur_has_opt = True
        rank = m.group("rank")
        out.step(step, metrics, rank=int(rank) if rank is not None else None)
        return True

    def _throughput(self, text: str, out: Emitter) -> bool:
        m = _TIMER_NEW.search(text)
        metrics: dict[str, float] = {}
        if m:
            avg, curr = parse_number(m.group("avg")), parse_number(m.group("curr"))
            if avg is None or curr is None:
                return False
            metrics = {"samples_per_s": curr, "running_avg_samples_per_s": avg}
            if m.group("mem") is not None:
                mem, maxmem = parse_number(m.group("mem")), parse_number(m.group("maxmem"))
                if mem is None or maxmem is None:
                    return False
                metrics["mem_gib"] = mem
                metrics["max_mem_gib"] = maxmem
            metrics["epoch"] = float(int(m.group("epoch")))
            printed = int(m.group("step"))
        else:
            m = _TIMER_OLD.search(text)
            if not m:
                return False
            avg = parse_number(m.group("avg"))
            if avg is None:
                return False
            metrics = {"running_avg_samples_per_s": avg, "epoch": float(int(m.group("epoch")))}
            printed = int(m.group("step"))
        out.step(self._timer_step(printed, commit=True), metrics)
        return True

    def _timer_step(self, printed: int, *, commit: bool) -> int:
        """The step of a timer.py line: the engine's, or, while it is unknown (no `step=N` nor breakdown
        line moved the count since a timer line set it), the timer's own count, line after line (a loop
        printing only `0/130, SamplesPerSec=`)."""
        if self._cur is not None and self._cur != self._timer_set:
            return self._cur
        if commit:
            self._cur = self._timer_set = printed
            self._cur_has_opt = True
        return printed

    # -------------------------------------------------------------- events
    def _overflow(self, m: re.Match[str], out: Emitter) -> bool:
        data = {} if m.re is _OVERFLOW_CUT else _scales(m)  # (a cut line's scales were cut off)
        if data is None:
            return False
        # An overflow step prints OVERFLOW in place of its optimizer timers.
        if self._cur is not None and self._cur_has_opt:
            self._cur += 1
        self._cur_has_opt = True
        message = m.group(0).split("] ", 1)[-1].strip()
        out.event("overflow", "warning", message, data, step=self._cur, rank=int(m.group("rank")))
        return True

    def _memory(self, m: re.Match[str], out: Emitter) -> bool:
        step = out.last_step()
        if step is None:
            return False
        names = {"ma": "mem_gib", "max_ma": "max_mem_gib", "ca": "reserved_mem_gib", "max_ca": "max_reserved_mem_gib"}
        metrics: dict[str, float] = {}
        for group, name in names.items():
            value = parse_number(m.group(group))
            if value is None:  # `1.2.3 GB`: not a number
                return False
            metrics[name] = value
        out.step(step, metrics)
        return True

    def _checkpoint(self, m: re.Match[str], out: Emitter) -> bool:
        path = m.group("path")
        tag = _GLOBAL_STEP_TAG.search(path)
        step = int(tag.group(1)) if tag else None
        out.event("checkpoint", "info", f"Saving model checkpoint: {path}", {"path": path}, step=step)
        return True


def _int_if_whole(value: float) -> float | int:
    return int(value) if value.is_integer() else value


def _scales(m: re.Match[str]) -> dict[str, float | int] | None:
    """The loss scales an OVERFLOW line names (None: one is no number)."""
    attempted = parse_number(m.group("attempted"))
    if attempted is None:
        return None
    data: dict[str, float | int] = {"attempted_scale": _int_if_whole(attempted)}
    if m.group("new") is not None:
        new = parse_number(m.group("new"))
        if new is None:
            return None
        data["new_scale"] = _int_if_whole(new)
    else:
        data["hysteresis"] = int(m.group("hyst"))
        data["new_hysteresis"] = int(m.group("new_hyst"))
    return data
