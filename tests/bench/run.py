"""`make bench`: every performance figure of the issue, next to its target and the ratio.

    .venv/bin/python tests/bench/run.py            # 1 GB catch-up log (built once, cached)
    BENCH_MB=64 .venv/bin/python tests/bench/run.py   # a smaller log for a quick look
    BENCH_SKIP=catchup,scale ...             # skip sections: truth, catchup, formats, hostile, live, scale, render, viewer

Figures (all measured in this run, on this machine):
1. catch-up: `grep -c iteration` vs `trainwatch summary --json` on the seed-004 log repeated to
   BENCH_MB megabytes (tests/bench/make_big_log.py); wall time, CPU time and peak RSS (of the child
   and the store's process it forks, summed: references.timed); then, on the same file, lnav indexing it headless and toolong's line-break scan
   (tests/bench/references.py: installed on the way when possible, else skipped with a message).
1b. other formats: a custom loop's progress lines and the HF Trainer's dicts (read line by line: no
   bulk shape), Megatron-LM's own log with no rank named (read in bulk), BENCH_FORMAT_MB (default
   20) MB each (tests/bench/make_format_logs.py): `trainwatch summary --json` wall time, lines/s,
   CPU and peak RSS, next to `grep -c ''` of the same file.
1c. hostile lines: every real line of the hostile corpus with each number 3,000 digits long, then each
   run of whitespace 3,000x, then 3,000 spaces around a dot, then each run of dashes or dots 1,500x, then each
   word 3,000 letters long, through every parser: the mean and the worst cost per character (a
   regex backtracking through a long run costs its square).
2. live: append-to-record latency and CPU of the following process (tests/bench/latency.py), idle and
   with a file growing 1000 lines/s, with inotify and with polling; then the real dashboard in a
   160x45 pseudo-terminal (tests/bench/dashboard.py): append-to-screen latency, its CPU on an idle
   seed-004 copy (/proc/PID/stat over BENCH_UI_SECONDS, default 25) and while the file grows.
3. scale: 256 per-rank files followed at once: idle CPU (inotify and polling), CPU and
   append-to-record latency while every file grows; then the real dashboard on such a directory
   (tests/bench/dashboard.py many_files): idle CPU, CPU while every file grows, append-to-screen.
4. render: the dashboard chart's downsample + plotext render of 1M points
   (trainwatch.ui.widgets.chart.render_chart).
5. log viewer: on the BENCH_MB log, in one child process that reads it as the dashboard does (the
   pipeline builds the sparse line index while ingesting): the Log tab's window read at line 1 and
   at the last line (linereader.read_lines through the index, what Home and a jump near the end
   run), and a whole-file search (linereader.scan) next to `grep -c` of the same pattern; the
   child's peak RSS.
6. time to truth: on the BENCH_MB log, the time from start until the store the dashboard draws
   from holds the file's last step (the pipeline + store in a child process, as the dashboard
   runs them, polled every 10 ms), reading the tail window first, next to the same child reading
   from byte 0 (the reference); the real dashboard in a 160x45 pty (tests/bench/dashboard.py):
   start until its header shows `step N` for the file's last step; and `trainwatch check`'s wall
   time (the log's own timestamps end long ago: a stall short of the total), next to a check that
   reads the whole file, and on the same file with a traceback appended (then cut off again).
The build directory is BENCH_DIR (default: $TMPDIR/trainwatch-bench).
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import dashboard  # noqa: E402  (tests/bench/dashboard.py)
import latency  # noqa: E402  (tests/bench/latency.py)
import make_big_log  # noqa: E402
import make_format_logs  # noqa: E402  (tests/bench/make_format_logs.py)
import references  # noqa: E402  (tests/bench/references.py: lnav and toolong, measured here)


def row(what: str, value: float, unit: str, target: float | None, note: str = "") -> None:
    """One figure, its target and value/target (<= 1 meets a 'lower is better' target)."""
    if target is None:
        print(f"  {what:<46} {value:10.2f} {unit:<5} {note}")
        return
    ratio = value / target if target else float("inf")
    verdict = "ok" if ratio <= 1.0 else "MISSED"
    print(f"  {what:<46} {value:10.2f} {unit:<5} target <= {target:.3g} {unit:<5} ratio {ratio:6.2f}  {verdict} {note}")


def load() -> float:
    return os.getloadavg()[0]


def bench_dir() -> Path:
    base = Path(os.environ.get("BENCH_DIR") or Path(tempfile.gettempdir()) / "trainwatch-bench")
    base.mkdir(parents=True, exist_ok=True)
    return base


def build_log(size_mb: int) -> Path:
    base = bench_dir()
    path = base / f"ds_megatron_{size_mb}MB_v3.log"  # v3: every step counter continues, the total is never reached
    done = path.with_suffix(".done")
    if not (path.exists() and done.exists()):
        t0 = time.monotonic()
        n = make_big_log.build(path, size_mb)
        done.write_text(str(n))
        print(f"  built {path} ({n / 1e6:.0f} MB) in {time.monotonic() - t0:.1f} s")
    return path


def timed_child(cmd: list[str]) -> tuple[float, float, int, bytes, float]:
    """Wall seconds, peak RSS (MB) of exactly this child, exit code, stdout, CPU seconds."""
    return references.timed(cmd)


def catchup(size_mb: int) -> None:
    print(f"\n1. catch-up: {size_mb} MB DeepSpeed + Megatron log (seed 004 repeated)")
    path = build_log(size_mb)
    size = path.stat().st_size
    grep = shutil.which("grep")
    grep_s = float("nan")
    if grep:
        runs = [timed_child([grep, "-c", "iteration", str(path)])[0] for _ in range(3)]
        grep_s = min(runs)
        row("grep -c iteration (best of 3)", grep_s, "s", None)
    tw = str(Path(sys.executable).with_name("trainwatch"))
    wall, rss, code, out, cpu = timed_child([tw, "summary", "--json", str(path)])
    ok = code in (0, 1) and out.lstrip().startswith(b"{")
    row("trainwatch summary --json: wall", wall, "s", 3 * grep_s if grep_s == grep_s else None, "(3x grep)")
    row("  throughput", size / 1e6 / wall, "MB/s", None)
    # Issue 16: at least 2x faster than the 60 s a GB took before (scaled to this log's size).
    row("  vs before (60 s per GB, halved)", wall, "s", 30.0 * size / 2**30, f"(CPU {cpu:.1f} s; load {load():.2f})")
    row("trainwatch summary --json: peak RSS", rss, "MB", 200.0)
    # The references, on the same file in this run (tests/bench/references.py says how).
    lnav = references.lnav(path)
    if isinstance(lnav, str):
        print(f"  {lnav}")
    else:
        row("lnav -n, whole file indexed (lnav_file.lines)", lnav[0], "s", None, f"({lnav[2]:,} lines)")
        row("  lnav peak RSS", lnav[1], "MB", None)
        row("  trainwatch wall / lnav wall", wall / lnav[0], "x", None)
    tl = references.toolong(path, bench_dir())
    if isinstance(tl, str):
        print(f"  {tl}")
    else:
        row("toolong line-break scan (LogFile API)", tl[0], "s", None, f"({tl[2]:,} breaks; no UI)")
        row("  toolong peak RSS", tl[1], "MB", None)
        row("  trainwatch wall / toolong wall", wall / tl[0], "x", None)
    if not ok:
        print(f"  !! summary exited {code} without JSON output")
    # What any parser written in Python pays before it parses anything, on the same file: the
    # floor under the figure above (the 3x grep target is below it).
    floor = python_floor(path)
    row("  CPython floor: split into lines, no parsing", floor["lines_s"], "s", None, "(bytes.split + a loop)")
    row(
        "  CPython floor: one line shape, regex findall",
        floor["findall_s"],
        "s",
        None,
        "(the hot DeepSpeed timer line)",
    )


def formats(size_mb: int) -> None:
    """Other formats: a custom loop's progress lines (the field reader) and the HF Trainer's
    dicts, which no bulk shape reads (every line through the parsers), and Megatron-LM's own log
    (no rank named: read in bulk), next to `grep -c` of the same file."""
    print(f"\n1b. catch-up of other formats: {size_mb} MB each (tests/bench/make_format_logs.py)")
    tw = str(Path(sys.executable).with_name("trainwatch"))
    grep = shutil.which("grep")
    for name in make_format_logs.FORMATS:
        path = bench_dir() / f"{name}_{size_mb}MB_v2.log"  # v2: lines counted, not steps
        done = path.with_suffix(".done")
        if not (path.exists() and done.exists()):
            done.write_text(str(make_format_logs.build(path, name, size_mb)))
        lines = int(done.read_text())
        wall, rss, code, out, cpu = timed_child([tw, "summary", "--json", str(path)])
        ok = code in (0, 1) and out.lstrip().startswith(b"{")
        note = f"({lines / wall / 1e3:.0f}k lines/s, CPU {cpu:.1f} s, peak RSS {rss:.0f} MB)"
        row(f"{name}: trainwatch summary --json", wall, "s", None, note if ok else f"!! exit {code}")
        if grep:
            row(
                "  grep -c '' (best of 3)",
                min(timed_child([grep, "-c", "", str(path)])[0] for _ in range(3)),
                "s",
                None,
            )


FLOOR_SCRIPT = """
import re, sys, time
SHAPE = re.compile(
    rb"rank=(\\d+) time \\(ms\\) \\| optimizer_gradients: (\\d+\\.\\d+) \\| optimizer_step: (\\d+\\.\\d+)"
    rb" \\| optimizer_allgather: (\\d+\\.\\d+)\\n"
)
lines = findall = 0.0
with open(sys.argv[1], "rb") as f:
    while chunk := f.read(64 << 20):
        cut = chunk.rfind(b"\\n") + 1
        f.seek(cut - len(chunk), 1)
        chunk = chunk[:cut]
        t = time.perf_counter()
        for line in chunk.split(b"\\n"):
            pass
        lines += time.perf_counter() - t
        t = time.perf_counter(); rows = SHAPE.findall(chunk); findall += time.perf_counter() - t
        del rows
print(lines, findall)
"""


def python_floor(path: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", FLOOR_SCRIPT, str(path)], capture_output=True, text=True, check=True)
    lines_s, findall_s = map(float, out.stdout.split())
    return {"lines_s": lines_s, "findall_s": findall_s}


def hostile() -> None:
    """Damaged lines cost time in proportion to their length: every real line of the hostile
    corpus with the understanding corpus's excerpts (tests/hostile/_hostile_corpus.py) with each number made 3,000 digits long, then with
    each run of whitespace 3,000 times longer, then 3,000 spaces with a dot in the middle, then each run
    of dashes or dots 1,500 times, then each
    word 3,000 letters long, through every parser. A regex that backtracks
    through such a run from each of its characters costs the square of the run instead
    (`\\d+/\\d+ \\[` did, a second per 35 KB line; torchtitan's `\\]\\s+...\\s-\\sstep:` and the field
    reader's prefix, from each dash of a run, took seconds)."""
    sys.path.insert(0, str(ROOT / "hostile"))
    import re

    from _hostile_corpus import corpus, run_lines

    print(
        "\n1c. hostile lines: every corpus line, its numbers 3,000 digits long / its spaces 3,000x / 3,000 spaces"
        " around a dot / its dashes"
        " 1,500x / its words 3,000 letters long"
    )
    lines = corpus(excerpts=True)
    run_lines([lines[0]])  # (first use: patterns compiled)
    damages = (
        ("numbers", re.compile(r"\d+"), lambda m: (m.group() * 3000)[:3000]),
        ("spaces", re.compile(r"\s+"), lambda m: m.group() * 3000),
        # (two runs with a mark between: a pattern with `\s*` on both sides of an optional `.` or `:`, or
        # `\s+(.*X)`, split them from each character: detectron2's body, seconds a line)
        ("spaces around a mark", re.compile(r"\s+"), lambda m: " " * 1500 + "." + " " * 1500),
        ("dashes, dots", re.compile(r"[.\-=_*#/]+"), lambda m: m.group() * 1500),
        # (CNTK's `name = value` pairs were tried from each letter of a long word: seconds a line)
        ("words", re.compile(r"[A-Za-z]+"), lambda m: (m.group() * 1500)[:3000]),
    )
    for what, pattern, longer in damages:
        worst: tuple[float, float, str] = (0.0, 0.0, "")
        total = chars = 0.0
        for text in lines:
            damaged = pattern.sub(longer, text)
            if len(damaged) > 80_000 or damaged == text:
                continue
            t0 = time.perf_counter()
            run_lines([damaged])
            took = time.perf_counter() - t0
            total += took
            chars += len(damaged)
            if took / len(damaged) > worst[0]:
                worst = (took / len(damaged), took, text)
        row(f"{what}: mean cost per character", 1e6 * total / chars, "us", None)
        row(
            f"{what}: worst line, cost per character",
            1e6 * worst[0],
            "us",
            15.0,
            f"({1000 * worst[1]:.0f} ms: {worst[2][:50]!r})",
        )


def live(seconds: float) -> None:
    print("\n2. live following (tests/bench/latency.py)")
    for poll in (False, True):
        r = latency.latency(poll, 200)
        mode = r["mode"]
        row(f"append-to-record p95 [{mode}]", r["p95_ms"], "ms", 100.0, f"(p50 {r['p50_ms']:.1f}, steps {r['steps']})")
    for poll in (False, True):
        for rate in (0, 1000):
            r = latency.cpu(poll, seconds, rate)
            what = "idle file" if rate == 0 else f"{rate} lines/s"
            target = 1.0 if rate == 0 else 15.0
            row(f"CPU following, {what} [{r['mode']}]", r["cpu_pct"], "%", target, "(pipeline, no dashboard)")
    ui_seconds = float(os.environ.get("BENCH_UI_SECONDS", "25"))
    size = (160, 45)
    for poll in (False, True):
        r = dashboard.screen_latency(60, size, poll=poll)
        mode = "polling" if poll else "inotify"
        row(
            f"append-to-screen p95 [{mode}]",
            r["p95_ms"],
            "ms",
            250.0,
            f"(p50 {r['p50_ms']:.1f}, steps {r['steps']}; dashboard in a 160x45 pty)",
        )
    r = dashboard.idle_cpu(ui_seconds, size)
    row("dashboard idle CPU (seed 004 copy, 160x45)", r["cpu_pct"], "%", 1.0, f"(/proc/PID/stat over {ui_seconds:g} s)")
    r = dashboard.busy_cpu(ui_seconds, size)
    row("dashboard CPU, file growing 1000 lines/s", r["cpu_pct"], "%", 15.0, "(whole process: UI + pipeline)")


SCALE_WRITER = """
import os, sys, time, json
LINE = LINE_REPR
paths, seconds, rate = sys.argv[1].split(","), float(sys.argv[2]), float(sys.argv[3])
fds = [os.open(p, os.O_WRONLY | os.O_APPEND) for p in paths]
start = time.monotonic(); i = 0; done = {}
while time.monotonic() - start < seconds:
    i += 1
    for fd in fds:
        os.write(fd, (LINE % (i, 100000, 2 + i / 1e6)).encode())
    done[i] = time.monotonic()
    delay = start + i / rate - time.monotonic()
    if delay > 0: time.sleep(delay)
print(json.dumps(done))
""".replace("LINE_REPR", repr(latency.LINE))


def scale(seconds: float, files: int = 256) -> None:
    from trainwatch.pipeline import Pipeline
    from trainwatch.records import Record, Step

    print(f"\n3. scale: {files} per-rank files followed at once (one directory)")
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f"rank_{r}.log") for r in range(files)]
        for p in paths:
            open(p, "wb").close()
        arrived: dict[tuple[str, int], float] = {}

        def sink(batch: list[Record]) -> None:
            now = time.monotonic()
            for rec in batch:
                if isinstance(rec, Step) and rec.step is not None:
                    arrived.setdefault((rec.source, rec.step), now)

        t0 = time.monotonic()
        pipeline = Pipeline([tmp], sink=sink)
        row(f"setup (discover {files} files)", (time.monotonic() - t0) * 1000, "ms", None)
        pipeline.start()
        time.sleep(1.0)  # opens, reads and starts watching every file
        c0, w0 = time.process_time(), time.monotonic()
        time.sleep(seconds)
        idle = 100 * (time.process_time() - c0) / (time.monotonic() - w0)
        row(f"CPU, {files} idle files [inotify]", idle, "%", 1.0, "(pipeline, no dashboard)")
        rate = 4.0  # lines/s per file: 1024 lines/s in all
        c0, w0 = time.process_time(), time.monotonic()
        out = subprocess.run(
            [sys.executable, "-c", SCALE_WRITER, ",".join(paths), str(seconds), str(rate)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        busy = 100 * (time.process_time() - c0) / (time.monotonic() - w0)
        written = {int(k): v for k, v in __import__("json").loads(out).items()}
        deadline = time.monotonic() + 5
        want = len(written) * files
        while len(arrived) < want and time.monotonic() < deadline:
            time.sleep(0.05)
        pipeline.stop()
        polled = Pipeline([tmp], force_poll=True)
        polled.start()
        time.sleep(11.0)  # a polled file quiet for 10 s is read once a second (before: every 0.25 s)
        c0, w0 = time.process_time(), time.monotonic()
        time.sleep(seconds)
        idle = 100 * (time.process_time() - c0) / (time.monotonic() - w0)
        polled.stop()
        interval = polled.schedule.poll_interval
        row(
            f"CPU, {files} idle files [polling, {interval:g} s]",
            idle,
            "%",
            1.0,
            "(pipeline, no dashboard; files quiet for 11 s+)",
        )
    lat = [1000 * (arrived[(p, i)] - t) for i, t in written.items() for p in paths if (p, i) in arrived]
    row(f"CPU, {files} files x {rate:g} lines/s ({files * rate:g}/s)", busy, "%", 15.0, "(pipeline, no dashboard)")
    if lat:
        row("append-to-record p95 across all files", latency.pct(lat, 0.95), "ms", 100.0, f"({len(lat)}/{want} steps)")
    else:
        print("  !! no step arrived")
    ui_seconds = float(os.environ.get("BENCH_UI_SECONDS", "25"))
    r = dashboard.many_files((160, 45), files=files, seconds=ui_seconds)
    note = f"(whole process, 160x45 pty, /proc/PID/stat over {ui_seconds:g} s)"
    row(f"dashboard on {files} files: idle CPU", r["idle_pct"], "%", 1.0, note)
    row(f"dashboard on {files} files: CPU while all grow (1024 lines/s)", r["busy_pct"], "%", 15.0, note)
    row(
        f"dashboard on {files} files: append-to-screen p95",
        r["p95_ms"],
        "ms",
        250.0,
        f"(steps {r['steps']}; write of the first rank's line -> `step N` drawn)",
    )


def render() -> None:
    print("\n4. render: one chart of 1M points (downsample to the screen, then plotext)")
    try:
        from array import array

        from trainwatch.ui.data import Trace
        from trainwatch.ui.widgets.chart import ChartOptions, render_chart
    except Exception as exc:  # the UI is optional for this figure
        print(f"  chart code not importable: {exc!r}")
        return
    from trainwatch.store.series import Series

    n = 1_000_000
    xs = array("d", range(n))
    ys = array("d", (10.0 / (1 + i / 5e4) + (i % 97) * 1e-3 for i in range(n)))
    # What the dashboard draws for a 1M-step run: the store's series (bounded by min/max
    # compaction, spikes kept) downsampled to the screen. Raw 1M arrays never reach a chart.
    series = Series()
    for x, y in zip(xs, ys, strict=True):
        series.append(x, y)
    print(f"  1M steps kept by the store as {len(series):,} points (min/max compaction)")

    def live(k: int) -> None:
        """The run goes on between two redraws: a second of 1,024 new steps."""
        for i in range(n + 1024 * k, n + 1024 * (k + 1)):
            series.append(float(i), 10.0 / (1 + i / 5e4) + (i % 97) * 1e-3)

    def from_store(name: str) -> None:
        """A dashboard redraw: the copies `chart_traces` takes (the series' block summaries
        brought up to date, its arrays), then the chart."""
        trace = Trace("0", series.steps[:], series.values[:], blocks=series.blocks())
        render_chart([trace], 120, 30, name=name, options=ChartOptions())

    t0 = time.perf_counter()
    from_store("loss")
    print(f"  first redraw of the store series (every block summarized): {1000 * (time.perf_counter() - t0):.1f} ms")
    k = 0
    for name in ("step_time_s", "loss"):  # loss adds the smoothed line
        times = []
        for _ in range(5):
            live(k)
            k += 1
            t0 = time.perf_counter()
            from_store(name)
            times.append(1000 * (time.perf_counter() - t0))
        label = "redraw 1M-step run (store series, 1,024 steps more each time)"
        row(f"{label}, 120x30 ({name}), median of 5", statistics.median(times), "ms", 20.0)
    for name in ("step_time_s", "loss"):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            render_chart([Trace("0", xs, ys)], 120, 30, name=name, options=ChartOptions())
            times.append(1000 * (time.perf_counter() - t0))
        print(
            f"  redraw raw 1M-point arrays (reference), 120x30 ({name}), median of 5: {statistics.median(times):.1f} ms"
        )


VIEWER_SCRIPT = """
import json, sys, time
from trainwatch.pipeline import Pipeline
from trainwatch.ui.linereader import Needle, read_lines, scan
from trainwatch.ui.widgets.rawlog import WINDOW
import trainwatch.pipeline
trainwatch.pipeline.WORKER_MIN_BYTES = 1 << 62  # (the dashboard reads in its follow thread: it never forks a worker)
path, needle = sys.argv[1], sys.argv[2]
pipeline = Pipeline([path])
t = time.perf_counter(); pipeline.read_to_end(); ingest = time.perf_counter() - t
state = next(iter(pipeline.store.sources.values()))
index = state.line_index
t = time.perf_counter(); first = read_lines(path, index, 1, WINDOW); home = time.perf_counter() - t
last_no = index.lines
t = time.perf_counter(); tail = read_lines(path, index, last_no - WINDOW + 1, WINDOW); end = time.perf_counter() - t
t = time.perf_counter(); found = scan(path, Needle(needle)); search = time.perf_counter() - t
assert first[0][0] == 1 and tail[-1][0] == last_no, (first[0][0], tail[-1][0], last_no)
print(json.dumps({"ingest": ingest, "home": home, "end": end, "search": search, "count": found.count,
                  "lines": last_no, "entries": index.entries, "step": index.step}))
"""


def viewer(size_mb: int, needle: str = "validation loss at iteration") -> None:
    print(f"\n5. log viewer: {size_mb} MB log, sparse line index (tests/bench/run.py VIEWER_SCRIPT)")
    path = build_log(size_mb)
    grep = shutil.which("grep")
    grep_s, grep_n = float("nan"), -1
    if grep:
        runs = [timed_child([grep, "-c", "-F", needle, str(path)]) for _ in range(3)]
        grep_s, grep_n = min(r[0] for r in runs), int(runs[0][3] or b"-1")
        row(f"grep -c '{needle}' (best of 3)", grep_s, "s", None, f"({grep_n:,} lines)")
    _wall, rss, code, out, _cpu = timed_child([sys.executable, "-c", VIEWER_SCRIPT, str(path), needle])
    if code != 0:
        print(f"  !! the viewer script exited {code}")
        return
    got = json.loads(out)
    print(
        f"  ingest (index built while reading): {got['ingest']:.1f} s, {got['lines']:,} lines,"
        f" index {got['entries']:,} offsets (every {got['step']:,} lines)"
    )
    row("Log tab: line 1 (window read through the index)", got["home"] * 1000, "ms", 200.0)
    row("Log tab: last line (window read through the index)", got["end"] * 1000, "ms", 200.0)
    same = "same count as grep" if got["count"] == grep_n else f"count {got['count']:,} != grep {grep_n:,}"
    row("whole-file search (linereader.scan)", got["search"], "s", 15.0 * size_mb / 1024, f"({same}; 15 s per GB)")
    row("  vs grep -c", got["search"] / grep_s if grep_s == grep_s else float("nan"), "x", None)
    row("viewer child (pipeline + index + reads): peak RSS", rss, "MB", 200.0)


TRUTH_SCRIPT = """
import json, os, sys, time
t0 = time.monotonic()
from trainwatch.pipeline import Pipeline
from trainwatch.diagnosis.status import run_status
path, window, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pipeline = Pipeline([path], window_bytes=window)
pipeline.start()
while True:
    with pipeline.store.lock:
        if want in pipeline.store.latest_step.values():
            break
    time.sleep(0.01)
shown = time.monotonic() - t0
status = run_status(pipeline.store)
print(json.dumps({"shown_s": shown, "status": status.state, "backfilling": pipeline.backfilling}))
sys.stdout.flush()
os._exit(0)
"""

CRASH = b"""Traceback (most recent call last):
  File "pretrain_gpt2.py", line 159, in <module>
    pretrain(train_valid_test_datasets_provider, model_provider, forward_step)
  File "/workspace/megatron/training.py", line 98, in pretrain
    iteration = train(forward_step_func, model, optimizer, lr_scheduler)
RuntimeError: CUDA error: an illegal memory access was encountered
"""

CHECK_WHOLE = """
import sys
import trainwatch.pipeline
trainwatch.pipeline.WINDOW_BYTES = 0  # the whole file, as before the tail window
from trainwatch.cli import main
sys.argv = ["trainwatch", "check", sys.argv[1]]
main()
"""


def last_step(path: Path) -> int:
    """The file's last Megatron iteration number (read from its end)."""
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - (1 << 20)))
        tail = f.read()
    return max(int(m.group(2)) for m in make_big_log.ITER.finditer(tail))


def truth(size_mb: int) -> None:
    print(f"\n6. time to truth: {size_mb} MB DeepSpeed + Megatron log, start to the file's last step in the store")
    from trainwatch.sources.window import WINDOW_BYTES

    path = build_log(size_mb)
    want = last_step(path)
    py = sys.executable
    shown: dict[int, float] = {}
    for window in (WINDOW_BYTES, 0):
        wall, _rss, code, out, _cpu = timed_child([py, "-c", TRUTH_SCRIPT, str(path), str(window), str(want)])
        got = json.loads(out) if code == 0 and out.strip() else {}
        shown[window] = wall
        what = f"tail first ({WINDOW_BYTES >> 20} MB window)" if window else "reference: plain read from byte 0"
        note = f"(status {got.get('status', '?')}, history still reading: {got.get('backfilling', '?')})"
        row(f"step {want:,} in the store: {what}", wall, "s", 2.0 if window else None, note)
    got = dashboard.time_to_step(str(path), want, (160, 45))
    note = f"(the real dashboard in a 160x45 pty; 'history N%' on screen: {got['history_on_screen']})"
    row(f"step {want:,} on the dashboard's screen", got["shown_s"], "s", 2.0, note)
    tw = str(Path(sys.executable).with_name("trainwatch"))
    wall, _rss, code, out, _cpu = timed_child([tw, "check", str(path)])
    row("trainwatch check (tail window first)", wall, "s", 2.0, f"exit {code}: {out.decode()[:60].strip()}")
    wall, _rss, code, out, _cpu = timed_child([py, "-c", CHECK_WHOLE, str(path)])
    row("  reference: check reading the whole file", wall, "s", None, f"exit {code}: {out.decode()[:60].strip()}")
    # The same run, killed: a traceback at the end (appended, then cut off again: the file is cached).
    size, stat = path.stat().st_size, path.stat()
    try:
        with path.open("ab") as f:
            f.write(CRASH)
        wall, _rss, code, out, _cpu = timed_child([tw, "check", str(path)])
        row("trainwatch check, a traceback at the end", wall, "s", 2.0, f"exit {code}: {out.decode()[:60].strip()}")
    finally:
        os.truncate(path, size)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def main() -> None:
    size_mb = int(os.environ.get("BENCH_MB", "1024"))
    seconds = float(os.environ.get("BENCH_SECONDS", "5"))
    skip = set(filter(None, os.environ.get("BENCH_SKIP", "").split(",")))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print("ratio = measured / target; <= 1 meets the target")
    # Every start below runs trainwatch as an installed copy has it: byte-compiled (pip compiles a
    # wheel's modules; an editable install's first run writes them). Under PYTHONDONTWRITEBYTECODE,
    # nothing would ever write them and each timed start would compile every module again.
    fresh = compileall.compile_dir(str(ROOT.parent / "trainwatch"), quiet=1)
    print(
        f"bytecode: trainwatch/ byte-compiled before timing ({'ok' if fresh else 'errors'}; PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})"
    )
    sections: list[tuple[str, Any]] = [
        ("truth", lambda: truth(size_mb)),
        ("catchup", lambda: catchup(size_mb)),
        ("formats", lambda: formats(int(os.environ.get("BENCH_FORMAT_MB", "20")))),
        ("hostile", hostile),
        ("live", lambda: live(seconds)),
        ("scale", lambda: scale(seconds)),
        ("render", render),
        ("viewer", lambda: viewer(size_mb)),
    ]
    for name, run in sections:
        if name not in skip:
            run()


if __name__ == "__main__":
    main()
