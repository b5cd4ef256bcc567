"""The Log tab's merged view (`M`): every file of a run interleaved by the timestamps its lines
start with, each line labelled with its file, read in windows through the line index. Checked
against an independent sort of all lines, and on the per-rank log directory of a restarted run."""

from __future__ import annotations

import random
from pathlib import Path

from _ui_helpers import frozen, read, wait_for
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

from trainwatch.sources.line_index import LineIndex
from trainwatch.ui import merged
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.logview import LogView, label_style
from trainwatch.ui.widgets.rawlog import LogPane

RESTART = Path(__file__).resolve().parents[2] / "sample_logs" / "ranks_logdir_restart"


def test_each_timestamp_family_is_read_in_order() -> None:
    assert merged.line_stamp("2023-05-01 12:00:01,123 INFO x") == "05-01 12:00:01.123000"
    assert merged.line_stamp("[2023-05-01 12:00:01] iteration 5") == "05-01 12:00:01.000000"
    assert merged.line_stamp("2024-01-01T00:00:00.5Z step 1") == "01-01 00:00:00.500000"
    assert merged.line_stamp("[2024-01-01 00:00:00,000] [INFO] loss") == "01-01 00:00:00.000000"
    assert merged.line_stamp("I0501 12:00:01.123456 1234 run.py:8] x") == "05-01 12:00:01.123456"
    assert merged.line_stamp(" [2026-11-22 04:32:05] iteration 1/12") == "11-22 04:32:05.000000"
    assert merged.line_stamp("[rank1]: 2024-01-01 00:00:02 warn") == "01-01 00:00:02.000000"
    assert merged.line_stamp("11/22 05:36:29 - mmengine - INFO - Epoch") == "11-22 05:36:29.000000"
    assert merged.line_stamp('  File "train.py", line 3, in <module>') is None
    assert merged.line_stamp("iteration 2023-05-01 12:00:01") is None  # not at the line start
    # 0.10 s before 0.9 s: fractions of any length compare as numbers
    assert str(merged.line_stamp("2023-05-01 12:00:01.10 x")) < str(merged.line_stamp("2023-05-01 12:00:01.9 x"))


def rank_files(tmp_path: Path, ranks: int = 4, lines: int = 3000) -> list[merged.File]:
    """Per-rank logs with jittered clocks and untimed continuation lines, indexed every 7 lines."""
    rng = random.Random(21)
    files = []
    for rank in range(ranks):
        path = tmp_path / f"rank{rank}.log"
        t, out = 0.0, []
        for i in range(lines):
            if i and rng.random() < 0.2:
                out.append(f"    continuation of rank {rank} line {i}\n")
                continue
            t += rng.uniform(0.0, 2.0)
            s = int(t)
            out.append(f"2024-03-01 {s // 3600:02}:{s // 60 % 60:02}:{s % 60:02},{int(t % 1 * 1000):03} r{rank} i{i}\n")
        data = "".join(out).encode()
        path.write_bytes(data)
        index = LineIndex(step=7)
        index.feed(data)
        files.append(merged.open_file(str(path), index, f"rank{rank}"))
    return files


def expected_order(files: list[merged.File]) -> list[tuple[int, int]]:
    """All lines sorted by (inherited stamp, file, line): what the merge must produce."""
    rows = []
    for k, f in enumerate(files):
        stamp = ""
        for no, text in enumerate(Path(f.path).read_text().splitlines(), start=1):
            stamp = merged.line_stamp(text) or stamp
            rows.append((stamp, k, no))
    return [(k, no) for _, k, no in sorted(rows)]


def test_windows_forward_and_backward_cover_the_merge_in_order(tmp_path: Path) -> None:
    files = rank_files(tmp_path)
    want = expected_order(files)
    got: list[tuple[int, int]] = []
    window = merged.home(files, 500)
    while window.lines:
        got += [(ln.file, ln.no) for ln in window.lines]
        window = merged.forward(files, window.end, 500)
    assert got == want
    back: list[tuple[int, int]] = []
    window = merged.tail(files, 700)
    while window.lines:
        back = [(ln.file, ln.no) for ln in window.lines] + back
        window = merged.backward(files, window.start, 700)
    assert back == want
    # A window read from the middle of another starts where that one's middle is.
    first = merged.home(files, 1000)
    again = merged.forward(files, first.cursor_at(400), 10)
    assert [(ln.file, ln.no) for ln in again.lines] == want[400:410]


def test_a_file_without_timestamps_sits_at_its_modification_time(tmp_path: Path) -> None:
    timed = tmp_path / "stdout.log"
    timed.write_text("2024-03-01 10:00:00 step 1\n2024-03-01 10:00:05 step 2\n")
    untimed = tmp_path / "stderr.log"
    untimed.write_text("Traceback (most recent call last):\nRuntimeError: boom\n")
    import os
    import time

    when = time.mktime((2024, 3, 1, 10, 0, 3, 0, 0, -1))
    os.utime(untimed, (when, when))
    files = [merged.open_file(str(p), index_of(p), p.stem) for p in (timed, untimed)]
    order = [(files[ln.file].label, ln.no) for ln in merged.home(files, 10).lines]
    assert order == [("stdout", 1), ("stderr", 1), ("stderr", 2), ("stdout", 2)]


def index_of(path: Path) -> LineIndex:
    index = LineIndex()
    index.feed(path.read_bytes())
    return index


def test_labels_tell_per_rank_files_apart() -> None:
    names = [
        "logs/job42_x/attempt_0/0/stdout.log",
        "logs/job42_x/attempt_0/0/stderr.log",
        "logs/job42_x/attempt_1/3/stdout.log",
        "logs/launcher.log",
    ]
    assert merged.short_labels(names) == ["a0/0/out", "a0/0/err", "a1/3/out", "launcher"]
    assert merged.short_labels(["run/rank0.log", "run/rank1.log"]) == ["rank0", "rank1"]


def status(app: TrainwatchApp) -> str:
    return str(app.query_one("#log-status", Static).render())


def visible(app: TrainwatchApp) -> list[str]:
    log = app.query_one(LogView)
    top = int(log.scroll_offset.y)
    return list(log.lines[top : top + log.scrollable_content_region.height])


def label_and_text(line: str) -> tuple[str, str]:
    head, text = line.split(" │ ", 1)
    return head.split()[0], text


async def open_merged(app: TrainwatchApp, pilot: Pilot[None]) -> LogPane:
    app.dashboard.fast_tick()
    await pilot.press("4")
    pane = app.query_one(LogPane)
    app.query_one(LogView).focus()
    await pilot.press("M")
    assert await wait_for(pilot, lambda: pane.window is not None and not pane._loading)
    await pilot.pause()
    return pane


async def test_merged_view_of_a_restarted_runs_rank_logs() -> None:
    app = frozen(read(RESTART))
    async with app.run_test(size=(160, 45)) as pilot:
        pane = await open_merged(app, pilot)
        total = sum(len(p.read_text().splitlines()) for p in RESTART.rglob("*.log"))
        assert "merged: 17 files by time" in status(app) and f"{total} lines read, the whole merge" in status(app)
        assert await wait_for(pilot, lambda: app.query_one(LogView).is_vertical_scroll_end)  # opens at the end
        await pilot.press("home")
        assert await wait_for(pilot, lambda: app.query_one(LogView).scroll_offset.y == 0)
        lines = visible(app)
        label, text = label_and_text(lines[0])
        first_launcher = (RESTART / "launcher.log").read_text().splitlines()[0].rstrip()
        assert (label, text.rstrip()) == ("launcher", first_launcher)  # the earliest line of the run
        # Every line read is labelled; the stamped ones are in time order, ranks interleaved.
        whole = [label_and_text(line) for line in app.query_one(LogView).lines]
        stamps = [s for _, text in whole if (s := merged.line_stamp(text))]
        assert stamps == sorted(stamps) and len(stamps) > 50
        labels = [label for label, _ in whole]
        assert {"launcher", "a0/0/out", "a0/3/out", "a1/0/out", "a1/3/out", "a0/2/err"} <= set(labels)
        iteration_1 = [label for label, text in whole if "iteration        1/" in text]
        assert iteration_1[:4] == ["a0/0/out", "a0/1/out", "a0/2/out", "a0/3/out"]
        # A traceback stays in one piece after the line before it in its file.
        err = [i for i, (label, _) in enumerate(whole) if label == "a0/2/err"]
        assert err == list(range(err[0], err[0] + 13))
        # The label is styled on the plain text (bold, a colour per file).
        shown = Text(lines[0])
        pane.log_widget.matcher.highlight(shown)
        assert any(span.style == label_style("launcher") and span.start == 1 for span in shown.spans)
        # M again: one source, following its end.
        await pilot.press("M")
        await pilot.pause()
        assert pane.merge is None and "source 1/17" in status(app) and "following" in status(app)


async def test_search_in_the_merged_view_marks_the_lines_read() -> None:
    app = frozen(read(RESTART))
    async with app.run_test(size=(160, 45)) as pilot:
        pane = await open_merged(app, pilot)
        await pilot.press("slash")
        await pilot.press(*"RuntimeError")
        await pilot.press("enter")
        await pilot.pause()
        want = sum(t.count("RuntimeError") > 0 for _, t in pane.shown)
        assert want >= 3 and len(pane.matches) == want
        assert f"1/{want} in the lines read" in status(app)


async def test_paging_through_a_merge_bigger_than_a_window(tmp_path: Path) -> None:
    files = rank_files(tmp_path)  # 12,000 lines: six windows
    want = expected_order(files)
    labels = {f"rank{k}": k for k in range(4)}
    app = frozen(read(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        pane = await open_merged(app, pilot)
        assert "to the last line" in status(app)

        def top() -> tuple[int, int]:
            label, rest = visible(app)[0].split()[:2]
            return labels[label], int(rest)

        assert await wait_for(pilot, lambda: app.query_one(LogView).is_vertical_scroll_end)
        last_label, last_no = visible(app)[-1].split()[:2]
        assert (labels[last_label], int(last_no)) == want[-1]
        await pilot.press("home")
        assert await wait_for(pilot, lambda: "from the first line" in status(app) and top() == want[0])
        seen = [top()]
        for _ in range(5):  # to the window's bottom (as many PageDowns would), then one more
            pane.log_widget.scroll_to(y=pane.log_widget.max_scroll_y - 1, animate=False)
            await pilot.pause()
            before = top()
            await pilot.press("pagedown")
            assert await wait_for(pilot, lambda: not pane._loading)
            await pilot.pause()
            assert want.index(top()) >= want.index(before)  # the line at the top stays in place
            seen.append(top())
        positions = [want.index(t) for t in seen]
        assert positions == sorted(positions) and positions[-1] > 2 * 2000  # read on past two windows
        text = [line.split(" │ ", 1)[1] for line in pane.log_widget.lines]
        stamps = [s for t in text if (s := merged.line_stamp(t))]
        assert stamps == sorted(stamps)
        for _ in range(3):  # to the top, then PageUp: the lines before are read
            pane.log_widget.scroll_to(y=1, animate=False)
            await pilot.pause()
            await pilot.press("pageup")
            assert await wait_for(pilot, lambda: not pane._loading)
            await pilot.pause()
        assert want.index(top()) < positions[-1] - 2000  # paging up read earlier windows back
