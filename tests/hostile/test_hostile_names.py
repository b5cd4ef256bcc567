"""File names, directory names and log lines that try to act on the terminal, on every output path.

A shared log directory (a cluster's scratch space, a colleague's run) may hold names made to
attack whoever looks at it. The directory here is named with an OSC 2 title change (ST-ended),
a bidi override and Rich markup; it holds:

- a log named with an OSC 0 title change and `[bold red]`,
- a log named with a clear screen, two cursor moves, an 8-bit CSI (U+009B) and a bidi override,
- a log whose name is not UTF-8: raw 0x9d ... 0x9c (an 8-bit OSC), 0xff and a DCS request,
- a log in a subdirectory named with an APC, a PM and `[link=...]`,
- a FIFO named with an OSC 52 clipboard write (the "not a regular file" message);

each log is sample_logs/hostile__megatron_osc52_title_markup.log (seed 004's Megatron lines with
OSC 52, OSC 0/2, 8-bit CSI/OSC, DCS, screen and cursor sequences, a bidi override and markup in
them), and the dashboard is sent more such lines while it runs.

Every output path runs as the real program, from pipes (stdout and stderr apart): summary
(Rich and --json), check, export (JSONL and CSV), formats, `trainwatch DIR` with stdout not a
terminal, serve's messages, usage errors; and from a pty (TERM=xterm-256color): summary, check,
CSV export, and the dashboard walked through its six tabs, the next-source and next-rank keys,
an event's jump to the log, help, the command palette, the metric picker and a notification.

What a user would check: the output is UTF-8 without one ESC, C1 or BEL byte and without a bidi
override, except the program's own styling on a terminal (CSI sequences and Textual's OSC 22
pointer shape); none of the injected sequences appears raw; and the names are still there to
read, each removed byte shown (`␛]0;T0␇[bold red]a.log`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pty_app import quit_and_reap, read_available, reap, run_to_exit, spawn

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "hostile__megatron_osc52_title_markup.log"
NOT_READ = "not a regular file (FIFOs and devices are not read)"

# The names as created, and as a user must see them (written out by hand: ESC is ␛, BEL ␇,
# other C1 and bidi characters and undecodable bytes their escape, ST's backslash stays).
DIR = "run\x1b]2;T2\x1b\\\u202e[bold]"
DIR_SHOWN = "run␛]2;T2␛\\\\u202e[bold]"
A = "\x1b]0;T0\x07[bold red]a.log"
A_SHOWN = "␛]0;T0␇[bold red]a.log"
B = "\x1b[2Jclr\x1b[4242;4242H\x9b1337m\u202eb.log"
B_SHOWN = "␛[2Jclr␛[4242;4242H\\x9b1337m\\u202eb.log"
C = b"\x9d0;c1\x9c\xff\x1bP+q544e\x1b\\c.log"
C_SHOWN = "\\x9d0;c1\\x9c\\xff␛P+q544e␛\\c.log"
SUB = "\x1b_apc\x1b\\\x1b^pm\x1b\\[link=evil.example]sub"
SUB_SHOWN = "␛_apc␛\\␛^pm␛\\[link=evil.example]sub"
FIFO = "\x1b]52;c;cHduZWQ=\x07x.log"  # would set the clipboard to "pwned"
FIFO_SHOWN = "␛]52;c;cHduZWQ=␇x.log"

# The injected sequences: in no output, anywhere, raw (names' and log lines' alike).
INJECTED = (
    b"\x1b]52;",
    b"\x1b]0;",
    b"\x1b]2;",
    b"\x1b[2Jclr",
    b"\x1b[4242;4242H",
    b"\x1b[1337A",
    b"\x1bP",
    b"\x1b_",
    b"\x1b^",
    b"\x1bX",
    b"\x9b1337m",
    b"\x9d0;c1",
    "\u202e".encode(),
    b"aGVsbG8=",  # the sample's own OSC 52 payload: removed with its sequence at ingest
    b"pwned",
)
# What a terminal would act on: every C0 control but tab, newline and carriage return; DEL;
# every C1 control; the bidi embeddings, overrides and isolates.
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# The program's own output on a terminal: CSI (colours, cursor, modes) and Textual's pointer shape.
OWN_SEQUENCES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\]22;[a-z-]*\x07")

# More hostile lines (seed 004's iteration 45 and its timers), written while the dashboard runs.
LIVE = (
    b"\x1b]0;pwned\x07 iteration       45/ 1000000 | elapsed time per iteration (ms): 914.4 |"
    b" learning rate 3.000E-07 | lm loss 1.097034E+01 | loss scale 4096.0 |\x1b]52;c;aGVsbG8=\x07\n"
    b"time (ms) | forward: 305.92 | backward: 519.07 | allreduce: 0.00 | optimizer: 83.02 |"
    b" batch generator: 1.55 | data loader: 0.20\xc2\x9d52;c;aGVsbG8=\xc2\x9c\x1b[1337A\n"
    b"[bold red]live[/] \x1b]2;pwned\x1b\\\xe2\x80\xae\x1bP+q544e\x1b\\\n"
)


def inert(out: bytes, terminal: bool) -> str:
    """The text a user reads in `out`, after checking that nothing in it acts on a terminal."""
    for raw in INJECTED:
        assert raw not in out, (raw, out[max(0, out.find(raw) - 80) : out.find(raw) + 80])
    text = out.decode("utf-8")  # strict: a raw 8-bit byte (0x9b alone is a CSI) is an error here
    if terminal:
        text = OWN_SEQUENCES.sub("", text)
    bad = FORBIDDEN.search(text)  # ESC and BEL included
    assert bad is None, (bad.group(), text[max(0, bad.start() - 80) : bad.start() + 80])
    return text


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile directory (its path: a short, plain temporary one)."""
    root = tmp_path_factory.mktemp("names") / DIR
    (root / SUB).mkdir(parents=True)
    for path in (root / A, root / B, os.path.join(os.fsencode(root), C), root / SUB / "d.log"):
        shutil.copyfile(SAMPLE, path)
    os.mkfifo(root / FIFO)
    return root


def shown(hostile: Path, *parts: str) -> str:
    """A path under the hostile directory as it must be shown."""
    return "/".join([str(hostile.parent), DIR_SHOWN, *parts])


def _trainwatch(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "trainwatch", *args],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
        **kwargs,  # type: ignore[call-overload]
    )


def _logs_shown(hostile: Path) -> set[str]:
    return {shown(hostile, n) for n in (A_SHOWN, B_SHOWN, C_SHOWN)} | {shown(hostile, SUB_SHOWN, "d.log")}


@pytest.mark.slow  # the real command in a pty
@pytest.mark.parametrize(
    "args",
    [
        ["summary"],
        ["summary", "--json"],
        ["check"],
        ["export"],
        ["export", "--format", "csv"],
        ["open"],  # stdout is not a terminal: the summary instead of the dashboard
    ],
    ids=["summary", "summary-json", "check", "export-jsonl", "export-csv", "dashboard-piped"],
)
def test_piped_output_and_stderr_hold_no_control_and_show_the_names(hostile: Path, args: list[str]) -> None:
    done = _trainwatch([*args, str(hostile)])
    assert done.returncode in (0, 1), done.stderr
    out, err = inert(done.stdout, terminal=False), inert(done.stderr, terminal=False)
    assert f"trainwatch: {shown(hostile, FIFO_SHOWN)}: {NOT_READ}" in err.splitlines()
    assert "Traceback" not in err
    if args[0] == "check":
        assert out.startswith(("running:", "stalled:", "finished:", "crashed:", "nan:", "unknown:"))
    elif args == ["summary", "--json"]:
        assert set(json.loads(out)["sources"]) == _logs_shown(hostile)
    elif args[0] == "export" and "csv" in args:
        assert {row.split(",")[0] for row in out.splitlines()[1:]} == _logs_shown(hostile)
    elif args[0] == "export":
        assert {json.loads(line)["source"] for line in out.splitlines()} == _logs_shown(hostile)
    else:  # the Rich report, plain
        for name in _logs_shown(hostile):
            assert f"source {name}: " in out


def test_formats_output_holds_no_control() -> None:
    done = _trainwatch(["formats"])
    assert done.returncode == 0
    text = inert(done.stdout, terminal=False)
    assert "megatron" in text
    assert "[step=100/739328]" in text  # an example is log text, shown as written (not markup)


def test_usage_errors_show_the_names_they_quote(hostile: Path, tmp_path: Path) -> None:
    # `-o` naming a directory: Click's own error
    done = _trainwatch(["export", "-o", str(hostile / SUB), str(hostile / A)])
    assert done.returncode == 2
    assert "is a directory" in inert(done.stderr, terminal=False)
    # a missing file (its `[bold red]` makes it a glob that matches nothing), and the FIFO by name
    done = _trainwatch(["summary", str(hostile / ("missing" + A))])
    assert done.returncode == 2
    assert inert(done.stderr, terminal=False).splitlines() == [
        f"trainwatch: {shown(hostile, 'missing' + A_SHOWN)}: no file matches this pattern yet",
        "trainwatch: nothing to read",
    ]
    done = _trainwatch(["summary", str(tmp_path / "missing\x1b]0;T0\x07.log")])
    assert done.returncode == 2
    missing = f"{tmp_path}/missing␛]0;T0␇.log"
    assert inert(done.stderr, terminal=False).startswith(f"trainwatch: {missing}: no such file (looked for {missing})")
    # the FIFO by name is a stream, shown by its position, never by its name
    writer = subprocess.Popen([sys.executable, "-c", f"open({str(hostile / FIFO)!r}, 'w').write('step 1 loss 2.5\\n')"])
    done = _trainwatch(["summary", "--json", str(hostile / FIFO)])
    assert writer.wait(timeout=60) == 0
    assert done.returncode == 0 and done.stderr == b""
    assert json.loads(done.stdout)["sources"] == ["stream 1"]
    # a directory walk that stops at its depth bound says so, under the hostile name
    deep = tmp_path / DIR
    (deep / "/".join(f"d{i}" for i in range(14))).mkdir(parents=True)
    shutil.copyfile(SAMPLE, deep / "top.log")
    done = _trainwatch(["check", str(deep)])
    assert (
        f"trainwatch: stopped at depth 12 under {tmp_path}/{DIR_SHOWN}: deeper files are not followed"
        in inert(done.stderr, terminal=False).splitlines()
    )


def test_serve_messages_show_the_names(hostile: Path) -> None:
    pytest.importorskip("textual_serve")
    with socket.socket() as busy:  # a port in use: serve says what it found, then why it cannot serve
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _trainwatch(["serve", str(hostile), "--port", str(port)])
    assert done.returncode == 2
    err = inert(done.stderr, terminal=False).splitlines()
    assert f"trainwatch: {shown(hostile, FIFO_SHOWN)}: {NOT_READ}" in err
    assert err[-1].startswith(f"trainwatch: cannot serve on 127.0.0.1:{port}")


# ------------------------------------------------------------------------------------ a real pty
TERMINAL = {"TERM": "xterm-256color"}
DROP = ("NO_COLOR", "TEXTUAL")
ROWS, COLS = 40, 200


@pytest.mark.parametrize(
    "args", [["summary"], ["check"], ["export", "--format", "csv"]], ids=["summary", "check", "export-csv"]
)
def test_terminal_output_holds_no_control_but_its_own_styling(hostile: Path, args: list[str]) -> None:
    out, status = run_to_exit([*args, str(hostile)], ROWS, COLS, TERMINAL, DROP)
    assert status in (0, 1), out[-800:]
    text = inert(out, terminal=True)  # stdout and stderr alike: both are the terminal
    assert f"trainwatch: {shown(hostile, FIFO_SHOWN)}: {NOT_READ}" in text
    if args[0] != "check":
        assert shown(hostile, B_SHOWN) in text


def _wait_shown(fd: int, out: bytearray, text: str, seconds: float) -> bool:
    """Read until `text` is on the screen (the terminal's output with its styling taken out)."""
    start = len(out)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in OWN_SEQUENCES.sub("", out[start:].decode("utf-8", "replace")):
            return True
        if not read_available(fd, out, 0.2):
            return False
    return False


def _walk_dashboard(
    args: list[str], keys: list[bytes], first: str, live: Path | None = None
) -> tuple[bytes, int | None]:
    """`trainwatch ARGS` in a pty: waits for `first` on screen, appends LIVE to `live` (and waits
    for its step in the header), presses `keys` one by one, then `q`. All it wrote, and its exit
    status."""
    pid, fd = spawn(args, ROWS, COLS, TERMINAL, drop=DROP)
    out = bytearray()
    alive = False
    try:
        alive = _wait_shown(fd, out, first, 30)
        if live is not None:
            with live.open("ab") as f:
                f.write(LIVE)
            alive = _wait_shown(fd, out, "step 45 of", 30)
        for key in keys:
            os.write(fd, key)
            alive = alive and read_available(fd, out, 0.8)
    except BaseException:
        reap(pid, fd)
        raise
    status = quit_and_reap(pid, fd, out, alive, 10)  # first: it collects the last frames into `out`
    return bytes(out), status


# Every tab; the log's next source (each name in its status line, the live lines at the end of
# one) and the phases' next rank; an event opened in the log; help; the command palette
# searching; the metric picker; a notification.
WALK = [b"2", b"4", b"]", b"]", b"]", b"]", b"3", b"\r", b"5", b"6", b"]", b"1"]
WALK += [b"?", b"\x1b", b"\x10", b"log", b"\x1b", b"m", b"\x1b", b"l"]


@pytest.fixture(scope="module")
def dashboard(hostile: Path) -> Iterator[tuple[bytes, int | None]]:
    # the header's note on the FIFO: the first draw is in
    yield _walk_dashboard([str(hostile)], WALK, "⚠ not read: ", live=hostile / A)


@pytest.mark.slow  # the real command in a pty
def test_dashboard_writes_no_control_but_its_own(dashboard: tuple[bytes, int | None]) -> None:
    out, _status = dashboard
    assert len(out) > 20_000  # it drew the tabs
    inert(out, terminal=True)


@pytest.mark.slow  # the real command in a pty
def test_dashboard_shows_every_name(hostile: Path, dashboard: tuple[bytes, int | None]) -> None:
    out, _status = dashboard
    text = inert(out, terminal=True)
    assert "Traceback" not in text  # (a crash would print one, with its locals)
    for name in _logs_shown(hostile):  # the log tab's status line names each source in turn
        assert name in text, name
    assert "step 45 of" in text  # the live lines were read (their payloads: nowhere, above)


@pytest.mark.slow  # the real command in a pty
def test_dashboard_quits_cleanly(dashboard: tuple[bytes, int | None]) -> None:
    out, status = dashboard
    assert status == 0, out[-800:]


@pytest.mark.slow  # the real command in a pty
def test_dashboard_header_shows_a_single_file_name_on_its_first_draw(hostile: Path) -> None:
    """One source: the header names it (before anything is read, and after)."""
    out, status = _walk_dashboard([str(hostile / A)], [], A_SHOWN)
    assert A_SHOWN in inert(out, terminal=True)
    assert status == 0


def test_two_names_that_would_show_alike_stay_two_sources(tmp_path: Path) -> None:
    """`a<ESC>.log` and `a␛.log` (a real picture character) show alike: the second one read (in
    name order) is named by its escaped form, and neither's lines land in the other's source."""
    from trainwatch.pipeline import Pipeline

    shutil.copyfile(SAMPLE, tmp_path / "a\x1b.log")
    shutil.copyfile(SAMPLE, tmp_path / "a␛.log")
    pipeline = Pipeline([str(tmp_path)])
    pipeline.read_to_end()
    names = set(pipeline.store.sources)
    assert names == {f"{tmp_path}/a␛.log", f"'{tmp_path}/a\\u241b.log'"}
    assert all(FORBIDDEN.search(n) is None for n in names)
    assert {s.lines for s in pipeline.store.sources.values()} == {74}
