"""Score trainwatch on the understanding corpus: the facts a person reads off real logs.

    python tests/corpus/score.py            # per-framework table (`make corpus`)
    python tests/corpus/score.py -v         # and every fact that failed
    python tests/corpus/score.py -k verl    # only excerpts whose path contains `verl`
    python tests/corpus/score.py --root DIR # another corpus in the same layout (a set being gathered)

Each excerpt is `<framework>/<slug>.log` with its facts in `<slug>.toml` (FORMAT.md). The log is
read through the whole pipeline, exactly as `trainwatch summary` reads a file.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from trainwatch.names import CONTRACT_METRIC_ORDER  # noqa: E402
from trainwatch.pipeline import Pipeline  # noqa: E402
from trainwatch.records import Event, Record, Step  # noqa: E402

TOLERANCE = 0.005
# Facts name the contract metrics a person reads off a line (memory is left out: GB vs GiB is ambiguous).
METRIC_KEYS = frozenset(CONTRACT_METRIC_ORDER) - {"mem_gib", "max_mem_gib"}


@dataclass
class Result:
    path: Path
    framework: str
    passed: int = 0
    total: int = 0
    failures: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        self.total += 1
        if ok:
            self.passed += 1
        else:
            self.failures.append(what)


def excerpts(select: str = "", root: Path = HERE) -> list[Path]:
    return sorted(p for p in root.glob("*/*.toml") if select in str(p.relative_to(root)))


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b)) or abs(a - b) < 1e-12


def read_records(log: Path) -> list[Record]:
    records: list[Record] = []
    pipeline = Pipeline([str(log)], sink=records.extend)
    pipeline.read_to_end()
    return records


# The contract names a per-accelerator figure `<rate>_per_gpu` (records.md): it is the throughput as printed.
_ALSO = {"tokens_per_s": ("tokens_per_s_per_gpu",), "samples_per_s": ("samples_per_s_per_gpu",)}


def _values(record: Step, key: str) -> list[float]:
    return [record.metrics[k] for k in (key, *_ALSO.get(key, ())) if k in record.metrics]


def _matches(record: Step, fact: dict[str, float]) -> int:
    return sum(1 for k, v in fact.items() if any(close(g, float(v)) for g in _values(record, k)))


def score_step(result: Result, steps: Sequence[Step], fact: dict) -> None:
    fact = dict(fact)
    step = fact.pop("step", None)
    rank = fact.pop("rank", None)
    unknown = set(fact) - METRIC_KEYS
    if unknown:
        raise ValueError(f"{result.path}: unknown fact keys {sorted(unknown)}")
    pool = [s for s in steps if rank is None or s.rank == rank]
    where = f"step {step}" if step is not None else "a step"
    candidates = [s for s in pool if s.step == step] if step is not None else []
    if step is not None:
        result.check(bool(candidates), f"{where}: no step record")
    if not candidates:
        # No record of that step (or none named): the record that says most of what the fact says.
        best = max(pool, key=lambda s: _matches(s, fact), default=None)
        candidates = [best] if best is not None and _matches(best, fact) else []
    for key, value in fact.items():
        got = [g for s in candidates for g in _values(s, key)]
        ok = any(close(g, float(value)) for g in got)
        result.check(ok, f"{where}: {key}={value} (read {got[:3] if got else 'nothing'})")


def score_event(result: Result, events: Sequence[Event], fact: dict) -> None:
    kind, step = fact["kind"], fact.get("step")
    ok = any(e.kind == kind and (step is None or e.step == step) for e in events)
    result.check(ok, f"event {kind}" + (f" at step {step}" if step is not None else ""))


def score(path: Path) -> Result:
    spec = tomllib.loads(path.read_text(encoding="utf-8"))
    log = path.with_suffix(".log")
    result = Result(path, spec.get("framework") or path.parent.name)
    records = read_records(log)
    steps = [r for r in records if isinstance(r, Step)]
    events = [r for r in records if isinstance(r, Event)]
    if spec.get("no_steps"):
        result.check(not steps, f"no step records expected, read {len(steps)}: {[s.metrics for s in steps[:2]]}")
    for fact in spec.get("step", []):
        score_step(result, steps, fact)
    for fact in spec.get("event", []):
        score_event(result, events, fact)
    return result


def score_all(paths: Iterable[Path]) -> list[Result]:
    return [score(p) for p in paths]


def table(results: Sequence[Result]) -> str:
    by: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by[r.framework].append(r)
    rows = [f"{'framework':<24} {'excerpts':>8} {'facts':>11} {'passed':>7}"]
    for name in sorted(by):
        rs = by[name]
        p, t = sum(r.passed for r in rs), sum(r.total for r in rs)
        rows.append(f"{name:<24} {len(rs):>8} {f'{p}/{t}':>11} {100 * p / max(t, 1):>6.1f}%")
    p, t = sum(r.passed for r in results), sum(r.total for r in results)
    rows.append(
        f"{'total (' + str(len(by)) + ' frameworks)':<24} {len(results):>8} {f'{p}/{t}':>11} {100 * p / max(t, 1):>6.1f}%"
    )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-v", "--verbose", action="store_true", help="list every failed fact")
    ap.add_argument("-k", default="", help="only excerpts whose path contains this")
    ap.add_argument("--root", type=Path, default=HERE, help="the corpus directory (default: this one)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    results = score_all(excerpts(args.k, root))
    if args.verbose:
        for r in results:
            for f in r.failures:
                print(f"{r.path.relative_to(root).with_suffix('.log')}: {f}")
        print()
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
