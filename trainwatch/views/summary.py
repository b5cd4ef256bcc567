"""`trainwatch summary`: the contract's JSON object, or a Rich report for people.

Keys of `last_step` / `latest` are rank numbers as strings. Records without a rank (a
single-process run, or a log that never says) are keyed `"-"`; when several sources have
rank-less records, each such source is keyed by its own name instead, so none overwrites another.
Likewise when the same rank number comes from two nodes the log names (`srun -l` wrapping
torchrun: local ranks 0 and 1 on each node), those ranks are keyed `"<host>:<rank>"`.

Extensions beyond the contract (never replacing its keys): `reason` (why the status), `eta_s`,
`sec_per_step`, `profiles` (each profiler report in the log: its top rows by total time and the
step breakdown it implies), `phases_share` (median share of the step per phase), `lines`, `not_understood`,
`failure` (the first failure even when the log does not name its rank), `rank_status` (one entry
per rank stream, with its `host` when known and `straggler`: what it is slow in), `hosts` (node ->
its rank numbers, when the log names nodes), `root_cause.host`, and each finding's `steps` and
`remedy` (the contract's `message` already ends with the remedy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from trainwatch.diagnosis.attempts import Attempt, attempts, history_line
from trainwatch.diagnosis.findings import Finding, findings
from trainwatch.diagnosis.overfit import eval_figures
from trainwatch.diagnosis.phases import phase_tree
from trainwatch.diagnosis.profile_phases import profile_breakdown, profile_top
from trainwatch.diagnosis.progress import progress_text
from trainwatch.diagnosis.ranks import root_cause, stragglers
from trainwatch.diagnosis.shares import phase_shares
from trainwatch.diagnosis.status import RunStatus, rank_name, run_status
from trainwatch.diagnosis.units import fmt_duration, fmt_value
from trainwatch.names import CONTRACT_METRIC_ORDER
from trainwatch.records import json_number
from trainwatch.store.store import RankKey, Store
from trainwatch.views.safe_console import printing_safely

NO_RANK = "-"
STATE_STYLE = {
    "running": "bold green",
    "finished": "bold blue",
    "stalled": "bold yellow",
    "crashed": "bold red",
    "unknown": "bold",
}
SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
PREFERRED_METRICS = tuple(m for m in CONTRACT_METRIC_ORDER if m not in ("max_mem_gib", "total_steps"))
MAX_METRIC_COLUMNS = 9
BAR_WIDTH = 30


def _repeated_across_hosts(keys: list[RankKey]) -> bool:
    """Some rank number comes from two nodes: local ranks, to be told apart by node."""
    hosts: dict[int, set[str]] = {}
    for k in keys:
        if k.rank is not None and k.host:
            hosts.setdefault(k.rank, set()).add(k.host)
    return any(len(h) > 1 for h in hosts.values())


def _labels(keys: list[RankKey]) -> dict[RankKey, str]:
    rankless = sorted({k.source for k in keys if k.rank is None})
    by_host = _repeated_across_hosts(keys)
    out: dict[RankKey, str] = {}
    for k in keys:
        if k.rank is not None:
            out[k] = f"{k.host}:{k.rank}" if by_host and k.host else str(k.rank)
        else:
            out[k] = NO_RANK if len(rankless) <= 1 else k.source
    return out


def _sort_label(label: str) -> tuple[int, str, int, str]:
    if label.isdigit():
        return (0, "", int(label), "")
    host, _, rank = label.rpartition(":")
    if host and rank.isdigit():
        return (0, host, int(rank), "")
    return (1, "", 0, label)


def _hosts(keys: list[RankKey]) -> dict[str, list[int]]:
    out: dict[str, set[int]] = {}
    for k in keys:
        if k.host and k.rank is not None:
            out.setdefault(k.host, set()).add(k.rank)
    return {h: sorted(out[h]) for h in sorted(out)}


def _all_ranks(store: Store) -> list[int]:
    ranks = set(store.ranks)
    for st in store.sources.values():
        ranks |= set(getattr(st, "ranks_seen", ()) or ())
    return sorted(ranks)


def _finding_json(f: Finding) -> dict[str, Any]:
    return {
        "kind": f.kind,
        "severity": f.severity,
        "ranks": list(f.ranks),
        "steps": list(f.steps),
        "message": f.text,
        "remedy": f.remedy,
    }


def _num(v: float) -> float | int | str | None:
    if isinstance(v, float) and math.isnan(v):
        return None
    return json_number(v)


def summary_json(store: Store, now: float | None = None) -> dict[str, Any]:
    """The contract's summary object (README "`summary --json`"), plus documented extensions."""
    return _judged(store, now).data


@dataclass(frozen=True)
class _Judged:
    """What the report prints, each computed once: the JSON object and what it was made from."""

    data: dict[str, Any]
    status: RunStatus
    found: list[Finding]
    attempts: list[Attempt]


def _judged(store: Store, now: float | None) -> _Judged:
    status = run_status(store, now)
    found = findings(store, now, status=status)
    tried = attempts(store, status.state, status.reason)
    slow = stragglers(store)
    root = root_cause(store) if status.state in ("crashed", "stalled") else None
    shares = phase_shares(store)
    slow_by = {(s.host, s.rank): s.what for s in slow}
    with store.lock:
        formats: list[str] = []
        for st in store.sources.values():
            for name in st.formats:
                if name not in formats:
                    formats.append(name)
        step_labels = _labels(list(store.latest_step))
        hosts = _hosts(list(set(store.latest) | set(store.latest_phases)))
        last_step: dict[str, int] = {}
        for key, step in store.latest_step.items():
            label = step_labels[key]
            last_step[label] = max(step, last_step.get(label, step))
        latest_labels = _labels(list(store.latest))
        latest: dict[str, dict[str, Any]] = {}
        for key, metrics in store.latest.items():
            latest.setdefault(latest_labels[key], {}).update({k: json_number(v) for k, v in metrics.items()})
        out: dict[str, Any] = {
            "sources": list(store.sources),
            "formats": formats,
            "ranks": _all_ranks(store),
            "status": status.state,
            "last_step": dict(sorted(last_step.items(), key=lambda kv: _sort_label(kv[0]))),
            "total_steps": store.total_steps,
            "latest": dict(sorted(latest.items(), key=lambda kv: _sort_label(kv[0]))),
            "events": dict(sorted(store.event_counts.items())),
            "root_cause": _root_json(root.rank, root.host, root.message) if root is not None else None,
            "stragglers": sorted({s.rank for s in slow}),
            "findings": [_finding_json(f) for f in found],
            # extensions
            "reason": status.reason,
            "eta_s": _num(status.eta_s),
            "sec_per_step": _num(status.sec_per_step),
            "phases_share": {k: round(v, 4) for k, v in shares.items()},
            "lines": sum(st.lines for st in store.sources.values()),
            "not_understood": sum(st.not_understood for st in store.sources.values()),
            "failure": _failure_json(status),
            "rank_status": [
                _rank_status_json(r.source, r.rank, r.host, r.state, r.last_step, slow_by) for r in status.ranks
            ],
            "attempts": [_attempt_json(a) for a in tried],
            "eval": _eval_json(store),
            "profiles": _profiles_json(store),
        }
        if hosts:
            out["hosts"] = hosts
    return _Judged(out, status, found, tried)


TOP_PROFILE_ROWS = 5


def _profiles_json(store: Store) -> list[dict[str, Any]]:
    """Each profiler report the log printed: what it is, its heaviest rows, and the phases they imply."""
    out: list[dict[str, Any]] = []
    for profile in list(store.profiles):
        top = profile_top(profile, TOP_PROFILE_ROWS)
        b = profile_breakdown(profile)
        out.append(
            {
                "title": profile.title,
                "kind": profile.kind,
                "source": profile.source,
                "rank": profile.rank,
                "step": profile.step,
                "basis": top.basis if top is not None else (b.basis if b is not None else None),
                "top": [
                    {
                        "name": r.name,
                        "total_s": _num(r.seconds),
                        "share": None if r.share is None else round(r.share, 4),
                    }
                    for r in (top.rows if top is not None else ())
                ],
                "phases": None
                if b is None
                else {
                    "basis": b.basis,
                    "total_s": _num(b.total_s),
                    "share": {p.name: round(p.share, 4) for p in b.phases},
                    "seconds": {p.name: _num(p.seconds) for p in b.phases},
                    "comm_share": None if b.comm is None else round(b.comm.share, 4),
                },
            }
        )
    return out


def _eval_json(store: Store) -> dict[str, Any] | None:
    """Validation loss against training: best, latest, training loss at each, and the verdict."""
    fig = eval_figures(store)
    if fig is None:
        return None
    return {
        "best_step": fig.best_step,
        "best_eval_loss": _num(fig.best),
        "last_step": fig.last_step,
        "last_eval_loss": _num(fig.last),
        "train_loss_at_best": _num(fig.train_at_best),
        "train_loss_now": _num(fig.train_now),
        "overfitting": fig.overfitting,
    }


def _attempt_json(a: Attempt) -> dict[str, Any]:
    """One launch: its status, the steps it ran, and for a failed earlier one its root cause."""
    cause = None
    if a.cause is not None:
        cause = _root_json(a.cause.rank, a.cause.host, a.cause.message)
        cause["evidence"] = a.cause.evidence
    return {
        "attempt": a.number,
        "status": a.state,
        "first_step": a.first_step,
        "last_step": a.last_step,
        "total_steps": a.total_steps,
        "root_cause": cause,
        "reason": a.reason,
    }


def _root_json(rank: int | None, host: str | None, message: str) -> dict[str, Any]:
    out: dict[str, Any] = {"rank": rank, "message": message}
    if host is not None:
        out["host"] = host
    return out


def _rank_status_json(
    source: str, rank: int | None, host: str | None, state: str, last_step: int | None, slow: dict[Any, str]
) -> dict[str, Any]:
    """One rank stream; `host` and `straggler` only when there is something to say."""
    out: dict[str, Any] = {"source": source, "rank": rank}
    if host is not None:
        out["host"] = host
    out.update(state=state, last_step=last_step)
    what = slow.get((host, rank))
    if what is not None:
        out["straggler"] = what
    return out


def _failure_json(status: RunStatus) -> dict[str, Any] | None:
    e = status.failure
    if e is None:
        return None
    return {"kind": e.kind, "rank": e.rank, "step": e.step, "message": e.message, "source": e.source, "line": e.line}


# ---------------------------------------------------------------------------- Rich report
def _metric_columns(latest: dict[str, dict[str, float]]) -> list[str]:
    seen: dict[str, int] = {}
    for metrics in latest.values():
        for name in metrics:
            if name != "total_steps":
                seen[name] = seen.get(name, 0) + 1
    preferred = [m for m in PREFERRED_METRICS if m in seen]
    rest = sorted((m for m in seen if m not in preferred), key=lambda m: (-seen[m], m))
    return (preferred + rest)[:MAX_METRIC_COLUMNS]


def _bar(share: float) -> str:
    filled = max(0.0, min(1.0, share)) * BAR_WIDTH
    full = int(filled)
    return "█" * full + ("▌" if filled - full >= 0.5 else "")


def print_summary(store: Store, console: Console | None = None, now: float | None = None) -> None:
    """A report a person reads once: status and why, progress, metrics, time split, problems."""
    if console is None:
        console = Console(highlight=False)
        # Piped (grep, cron mail): one finding per line, never hard-wrapped at 80 columns.
        console.soft_wrap = not console.is_terminal
    with printing_safely(console):
        _print_report(store, console, now)


def _print_report(store: Store, console: Console, now: float | None) -> None:
    judged = _judged(store, now)
    data, status, found = judged.data, judged.status, judged.found

    head = Text()
    head.append(f"{data['status'].upper()}", style=STATE_STYLE.get(data["status"], "bold"))
    head.append("  ")
    head.append(data["reason"])
    console.print(head)

    if len(data["attempts"]) > 1:
        console.print(Text(history_line(judged.attempts)))

    if status.last_step is not None:
        console.print(Text(progress_text(status.progress_parts(percent=True))))

    with store.lock:
        src_rows = [
            (st.source, ", ".join(st.formats) or "?", st.lines, st.not_understood) for st in store.sources.values()
        ]
    for name, fmts, lines, nu in src_rows:
        console.print(Text(f"source {name}: {fmts}; {lines} lines, {nu} not understood", style="dim"))
    ranks = data["ranks"]
    hosts: dict[str, list[int]] = data.get("hosts", {})
    if len(hosts) > 1:
        per_node = "; ".join(f"{h}: " + ", ".join(str(r) for r in rs) for h, rs in hosts.items())
        console.print(Text("ranks: " + per_node, style="dim"))
    elif ranks:
        console.print(Text("ranks: " + ", ".join(str(r) for r in ranks), style="dim"))

    latest: dict[str, dict[str, Any]] = data["latest"]
    if latest:
        console.print(Text("\nlatest", style="bold"))
        columns = _metric_columns(latest)
        room = console.width - 12  # rank and step columns
        fitted: list[str] = []
        for c in columns:
            room -= max(len(c), 7) + 2
            if room < 0:
                break
            fitted.append(c)
        columns = fitted
        table = Table(box=None, highlight=False, pad_edge=False)
        table.add_column(Text("rank"))
        table.add_column(Text("step"), justify="right")
        for c in columns:
            table.add_column(Text(c), justify="right", no_wrap=True, min_width=len(c))
        for label, metrics in latest.items():
            step = data["last_step"].get(label)
            cells = [Text(label), Text("" if step is None else str(step))]
            for c in columns:
                v = metrics.get(c)
                cells.append(Text("" if v is None else (v if isinstance(v, str) else fmt_value(float(v)))))
            table.add_row(*cells)
        console.print(table)

    shares: dict[str, float] = data["phases_share"]
    if shares:
        console.print(Text("\nwhere a step's time goes (median share of the step)", style="bold"))
        width = max(len(n) for n in shares) + 2
        for name, share, depth in phase_tree(shares):
            label = ("  " * depth + name) if depth == 0 else ("  " * depth + "└ " + name)
            row = Text(f"  {label:<{width + 2}} ")
            row.append(_bar(share).ljust(BAR_WIDTH), style="cyan")
            row.append(f" {share * 100:5.1f}%")
            console.print(row)

    _print_profiles(console, data["profiles"])

    events: dict[str, int] = data["events"]
    if events:
        console.print(Text("\nevents: " + ", ".join(f"{k} {n}" for k, n in events.items()), style="bold"))

    if data["root_cause"] is not None:
        rc = data["root_cause"]
        text = Text("root cause: ", style="bold red")
        text.append(f"{rank_name(rc['rank'], rc.get('host'))}: " if rc["rank"] is not None else "")
        text.append(rc["message"])
        console.print(text)
    # Per (host, rank) where the status names it; ranks with phases but no steps by number.
    slow = [rank_name(r["rank"], r.get("host")) for r in data["rank_status"] if r.get("straggler")]
    named = {r["rank"] for r in data["rank_status"] if r.get("straggler")}
    slow += [rank_name(r) for r in data["stragglers"] if r not in named]
    if slow:
        console.print(Text("stragglers: " + ", ".join(slow), style="bold yellow"))

    if found:
        console.print(Text("\nfindings", style="bold"))
        for f in found:
            row = Text("  ")
            row.append(f"{f.severity:<7}", style=SEVERITY_STYLE.get(f.severity, ""))
            row.append(f" {f.kind}: ", style="bold")
            row.append(f.message)
            console.print(row)
            if f.remedy:
                console.print(Text(f"           → {f.remedy}", style="dim"))
    else:
        console.print(Text("\nno problems found", style="green"))


def _pct(share: float) -> str:
    return f"{share * 100:.1f}%"


def _print_profiles(console: Console, profiles: list[dict[str, Any]]) -> None:
    """Each profiler report: its heaviest rows (they nest, so shares overlap) and the phase split."""
    for p in profiles:
        head = Text(f"\nprofiler report: {p['title']}", style="bold")
        head.append(f" ({p['kind']}" + (f", step {p['step']}" if p["step"] is not None else "") + ")", style="dim")
        console.print(head)
        if p["top"]:
            basis = f", share {p['basis']}" if p["basis"] else ""
            console.print(Text(f"  top rows by total time{basis} (rows nest: shares overlap)", style="dim"))
            width = max(len(r["name"]) for r in p["top"]) + 2
            for r in p["top"]:
                row = Text(f"    {r['name']:<{width}} {fmt_duration(float(r['total_s'])):>9}")
                if r["share"] is not None:
                    row.append(f"  {_pct(r['share']):>6}")
                console.print(row)
        phases = p["phases"]
        if phases:
            console.print(Text(f"  phases, share {phases['basis']}", style="dim"))
            width = max(len(n) for n in phases["share"]) + 2
            for name, share in phases["share"].items():
                row = Text(f"    {name:<{width}} ")
                row.append(_bar(share).ljust(BAR_WIDTH), style="cyan")
                row.append(f" {_pct(share):>6}")
                console.print(row)
            if phases["comm_share"] is not None:
                console.print(
                    Text(f"    collectives {_pct(phases['comm_share'])} inside the phases above", style="dim")
                )
