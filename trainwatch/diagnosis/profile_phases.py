"""The step-time breakdown a profiler table implies: data, forward, backward, optimizer, other,
plus the collectives inside them.

Profiler rows nest (Lightning's `model_forward` holds `training_step`, torch's `forward` holds
its `aten::` ops and its `nccl:` collectives), so rows are never simply added: each phase is the
largest row of each *kind* of work it matched (`optimizer.step` and `zero_grad` are two kinds,
`model_forward` and `training_step` one), and kinds are added. `aten::`/`cuda*` rows are not
attributed: they sit inside the phases and would be counted twice.

Shares are of the profiled step when the table has one (`ProfilerStep*`, a `train_step` label),
else of the table's own 100% (Lightning's `Total` row, torch's percentage column), so they read
like the table itself. Lightning runs the closure (forward + backward) *inside* the optimizer
step; that part is taken out of the optimizer using the call counts, or the phases would add
up to more than the step.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trainwatch.diagnosis.phases import OTHER, ordered_phases
from trainwatch.records import Profile

# The disjoint parts of a step a profiler table's rows are sorted into, in step order.
PARTITION = tuple(ordered_phases(("data", "forward", "backward", "optimizer")))
COMM = "comm"

_PL_PREFIX = re.compile(r"^(?:\[pl\]\[profile\])+")
# (phase, kind of work, pattern). The first pattern that matches a row name wins.
_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (phase, kind, re.compile(pattern, re.I))
    for phase, kind, pattern in (
        (COMM, "all_reduce", r"all_?reduce"),
        (COMM, "all_gather", r"all_?gather"),
        (COMM, "reduce_scatter", r"reduce_?scatter"),
        (COMM, "all_to_all", r"all_?to_?all|all2all"),
        (COMM, "broadcast", r"^(?:nccl|gloo|c10d)\W+_?broadcast"),
        (
            "data",
            "fetch",
            r"train_dataloader_next|get_train_batch|fetch_next_train_batch|enumerate\(DataLoader\)"
            r"|DataLoader\w*\.__next__|^data_?load(?:er|ing)?$|^get_batch$",
        ),
        ("forward", "forward", r"^model_forward$|(?:^|\.)training_step$|^forward$|^model\.forward$|^## forward ##$"),
        ("backward", "backward", r"^model_backward$|(?:^|\.)backward$|^## backward ##$"),
        ("optimizer", "zero_grad", r"(?:^|\.)(?:optimizer_)?zero_grad\b"),
        ("optimizer", "clip", r"clip[-_ ]?grad"),
        ("optimizer", "step", r"^optimizer_step|(?:^|\.)optimizer_step$|^Optimizer\.step\b|^optimizer$"),
    )
)
_STEP_ROW = re.compile(r"^(?:ProfilerStep(?:\*|#\d+)?|train_step(?:[-#]\d+)?)$")
_FLOPS_PHASES = (("forward", "fwd_latency_s"), ("backward", "bwd_latency_s"), ("optimizer", "step_latency_s"))


@dataclass(frozen=True)
class ProfilePhase:
    name: str  # data | forward | backward | optimizer | other | comm
    seconds: float
    share: float  # 0..1 of `ProfileBreakdown.total_s`
    rows: tuple[str, ...]  # the table rows it was read from


@dataclass(frozen=True)
class ProfileBreakdown:
    profile: Profile
    basis: str  # what the shares are of, in words
    total_s: float
    phases: tuple[ProfilePhase, ...]  # PARTITION phases found, then `other`
    comm: ProfilePhase | None  # collectives, inside the phases above (not added to them)

    def phase(self, name: str) -> ProfilePhase | None:
        if name == COMM:
            return self.comm
        return next((p for p in self.phases if p.name == name), None)


def row_phase(name: str) -> tuple[str, str] | None:
    """(phase, kind of work) of a profiler row name, None when it is not a step phase."""
    bare = _PL_PREFIX.sub("", name.strip())
    for phase, kind, pattern in _RULES:
        if pattern.search(bare):
            return phase, kind
    return None


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _time_key(rows: tuple[Mapping[str, Any], ...]) -> str | None:
    keys = {k for r in rows for k in r}
    for k in ("total_time_s", "cpu_total_s", "cuda_total_s", "device_total_s"):
        if k in keys:
            return k
    return next((k for k in sorted(keys) if k.endswith("total_s")), None)


def _pct_key(time_key: str, rows: tuple[Mapping[str, Any], ...]) -> str | None:
    keys = {k for r in rows for k in r}
    for k in ("percentage_pct", time_key.removesuffix("_s") + "_pct"):
        if k in keys:
            return k
    return None


def _calls(row: Mapping[str, Any]) -> float | None:
    return _num(row.get("num_calls", row.get("calls")))


def _is_lightning(profile: Profile) -> bool:
    names = [str(r.get("name", "")) for r in profile.rows]
    return profile.kind.startswith("lightning") or any(
        n.startswith("[pl]") or n in ("run_training_batch", "training_step_and_backward") for n in names
    )


def _basis(profile: Profile, time_key: str, rows: tuple[Mapping[str, Any], ...]) -> tuple[str, float] | None:
    """(words, seconds) the shares are relative to."""
    steps = [
        (str(r["name"]), t) for r in rows if _STEP_ROW.match(str(r.get("name", ""))) and (t := _num(r.get(time_key)))
    ]
    if steps:
        total = sum(t for _, t in steps)
        label = steps[0][0] if len(steps) == 1 else f"{len(steps)} profiled steps"
        return f"of the profiled step ({label})", total
    for r in rows:
        if str(r.get("name", "")).strip().lower() == "total" and (t := _num(r.get(time_key))):
            return "of the profiled time", t
    pct_key = _pct_key(time_key, rows)
    if pct_key is not None:  # the table's own 100%: time / pct of its most telling row
        best = max(
            ((t, p) for r in rows if (t := _num(r.get(time_key))) and (p := _num(r.get(pct_key))) and p >= 1.0),
            default=None,
            key=lambda tp: tp[1],
        )
        if best is not None:
            return "of the profiled time", best[0] * 100.0 / best[1]
    return None


def _flops_breakdown(profile: Profile) -> ProfileBreakdown | None:
    row = profile.rows[0] if profile.rows else {}
    found = [(phase, key, v) for phase, key in _FLOPS_PHASES if (v := _num(row.get(key))) is not None]
    if not found:
        return None
    iteration = _num(row.get("iter_latency_s"))
    parts = sum(v for _, _, v in found)
    total = iteration if iteration and iteration >= parts * 0.5 else parts
    if total <= 0:
        return None
    basis = "of the iteration latency" if total == iteration else "of fwd + bwd + step latency"
    phases = [ProfilePhase(p, v, v / total, (k,)) for p, k, v in found]
    rest = total - parts
    if rest > 0.005 * total:
        phases.append(ProfilePhase(OTHER, rest, rest / total, ()))
    return ProfileBreakdown(profile, basis, total, tuple(phases), None)


def profile_breakdown(profile: Profile) -> ProfileBreakdown | None:
    """The phases a profiler table implies, None when it names none of them."""
    if profile.kind == "deepspeed_flops":
        return _flops_breakdown(profile)
    rows = profile.rows
    time_key = _time_key(rows)
    if time_key is None:
        return None
    # per (phase, kind): the largest row, since rows of one kind nest inside each other
    best: dict[tuple[str, str], tuple[float, Mapping[str, Any]]] = {}
    for r in rows:
        name = str(r.get("name", ""))
        t = _num(r.get(time_key))
        hit = row_phase(name)
        if hit is None or t is None or t <= 0:
            continue
        if hit not in best or t > best[hit][0]:
            best[hit] = (t, r)
    if not best:
        return None
    basis = _basis(profile, time_key, rows)
    seconds: dict[tuple[str, str], float] = {k: t for k, (t, _) in best.items()}
    if ("optimizer", "step") in best and _is_lightning(profile):
        seconds[("optimizer", "step")] = _without_closure(best)
    phases: list[ProfilePhase] = []
    for phase in PARTITION:
        kinds = [k for k in best if k[0] == phase]
        s = sum(seconds[k] for k in kinds)
        if kinds and s > 0:
            phases.append(ProfilePhase(phase, s, 0.0, tuple(str(best[k][1].get("name")) for k in kinds)))
    comm_kinds = [k for k in best if k[0] == COMM]
    comm_s = sum(seconds[k] for k in comm_kinds)
    parts = sum(p.seconds for p in phases)
    if basis is None:
        if not parts:
            return None
        basis = ("of the phases found", parts)
    words, total = basis
    out = [ProfilePhase(p.name, p.seconds, p.seconds / total, p.rows) for p in phases]
    rest = total - parts
    if rest > 0.005 * total:
        out.append(ProfilePhase(OTHER, rest, rest / total, ()))
    comm = None
    if comm_kinds and comm_s > 0:
        comm = ProfilePhase(COMM, comm_s, comm_s / total, tuple(str(best[k][1].get("name")) for k in comm_kinds))
    return ProfileBreakdown(profile, words, total, tuple(out), comm)


def _without_closure(best: dict[tuple[str, str], tuple[float, Mapping[str, Any]]]) -> float:
    """Lightning's optimizer step runs the training closure (forward + backward) inside it, once
    per optimizer call: take out that part, pro rata of the calls, when the table counts them."""
    step_t, step_row = best[("optimizer", "step")]
    step_calls = _calls(step_row)
    if not step_calls:
        return step_t
    inside = 0.0
    for key in (("forward", "forward"), ("backward", "backward")):
        if key not in best:
            continue
        t, row = best[key]
        calls = _calls(row)
        if calls:
            inside += t * min(1.0, step_calls / calls)
    return max(0.0, step_t - inside)


def profile_data_share(profiles: list[Profile]) -> tuple[ProfileBreakdown, ProfilePhase] | None:
    """The newest profile that shows data loading: its breakdown and its data phase."""
    for profile in reversed(profiles):
        b = profile_breakdown(profile)
        data = b.phase("data") if b is not None else None
        if b is not None and data is not None:
            return b, data
    return None


@dataclass(frozen=True)
class ProfileRow:
    name: str
    seconds: float
    share: float | None  # 0..1 of `ProfileTop.total_s`, None when the table gives no 100%


@dataclass(frozen=True)
class ProfileTop:
    basis: str  # what the shares are of, in words
    total_s: float | None
    rows: tuple[ProfileRow, ...]  # largest total time first


def profile_top(profile: Profile, n: int = 5) -> ProfileTop | None:
    """The `n` rows with the most total time, each with its share of the same 100% the phase
    breakdown uses (the `Total` row, the profiled step, the table's percentages). Rows that *are*
    that 100% (`Total`, `ProfilerStep*`) are left out; rows nest, so shares do not add up."""
    rows = profile.rows
    time_key = _time_key(rows)
    if time_key is None:
        return None
    basis = _basis(profile, time_key, rows)
    timed: list[ProfileRow] = []
    for r in rows:
        name = str(r.get("name", ""))
        t = _num(r.get(time_key))
        if t is None or t <= 0 or name.strip().lower() == "total" or _STEP_ROW.match(name):
            continue
        timed.append(ProfileRow(name, t, t / basis[1] if basis else None))
    if not timed:
        return None
    timed.sort(key=lambda row: row.seconds, reverse=True)
    words, total = basis if basis else ("", None)
    return ProfileTop(words, total, tuple(timed[:n]))
