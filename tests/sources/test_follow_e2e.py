"""`trainwatch export --follow` against real writer processes: every step exactly once, exit 0 on a signal.

Lines: Megatron-LM iteration lines (see follow_helpers). tqdm frame text: the HF Trainer bar in
/work/shared/real_logs/hf_trainer__LMSYS_slice1_bar_then_buffered_dicts.log.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
from follow_helpers import Follower, assert_each_step_once, expected_loss, kill, megatron_line, start_writer

pytestmark = pytest.mark.slow  # real writer processes followed by the real command

TORN_WRITER = """
path, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
data = b"".join(line(i) for i in range(1, n + 1))
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
pos = 0
while pos < len(data):
    k = rng.randint(1, 97)  # block-buffered stdout flushes anywhere, mid-number included
    os.write(fd, data[pos:pos + k])
    pos += k
    if rng.random() < 0.1:
        time.sleep(0.002)
os.write(fd, line(n + 1)[:-40])  # still running, half a line in its buffer: `lm loss 2.000` of 2.000301
time.sleep(60)
"""


def restarts_in(follower: Follower) -> list[dict[str, object]]:
    """The restart events (none expected) and steps of a later attempt."""
    return [r for r in follower.records if (r["type"] == "event" and r["kind"] == "restart") or r.get("attempt")]


@pytest.mark.parametrize(
    ("options", "sig"),
    [([], signal.SIGINT), (["--poll", "--poll-interval", "0.05"], signal.SIGTERM)],
    ids=["inotify-sigint", "poll-sigterm"],
)
def test_torn_writes_each_step_once_and_torn_tail_never_parsed(tmp_path: Path, options: list[str], sig: int) -> None:
    log = tmp_path / "nohup.out"
    follower = Follower([*options, str(log)])  # started before the file exists: waits for it
    writer = start_writer(TORN_WRITER, str(log), "300")
    try:
        assert follower.wait_steps(300), follower.stderr
        assert follower.wait_for(lambda s: len(s) > 300, timeout=0.5) is False  # the torn line stays held
        assert follower.stop(sig) == 0
    finally:
        kill(writer)
        kill(follower.proc)
    assert_each_step_once(follower.loss_steps(), range(1, 301))
    assert "Traceback" not in follower.stderr


def test_copytruncate_twice(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_bytes(b"".join(megatron_line(i) for i in range(1, 51)))
    follower = Follower([str(log)])
    assert follower.wait_steps(50)
    writer = start_writer(
        """
path = sys.argv[1]
f = open(path, "ab", buffering=0)
i = 51
for rotation in range(2):
    for _ in range(100):
        f.write(line(i)); i += 1
        if i % 10 == 0: time.sleep(0.005)
    if os.path.exists(path + ".1"): os.rename(path + ".1", path + ".2")  # logrotate's shift, then copytruncate
    shutil.copyfile(path, path + ".1")
    os.truncate(path, 0)
for _ in range(100):
    f.write(line(i)); i += 1
""",
        str(log),
    )
    try:
        assert writer.wait(10) == 0
        assert follower.wait_steps(350), follower.stderr
        follower.wait_for(lambda s: len(s) > 350, timeout=0.3)
        assert follower.stop() == 0
    finally:
        kill(writer)
        kill(follower.proc)
    assert_each_step_once(follower.loss_steps(), range(1, 351))
    assert not restarts_in(follower), "copytruncate under a run that goes on is not a relaunch"


def test_rename_rotation_of_a_followed_directory(tmp_path: Path) -> None:
    """logrotate `create`: the job keeps writing the renamed file until it reopens; out.log.1 is not read twice."""
    log = tmp_path / "out.log"
    log.write_bytes(b"".join(megatron_line(i) for i in range(1, 51)))
    follower = Follower([str(tmp_path)])
    try:
        assert follower.wait_steps(50)
        writer = start_writer(
            """
path = sys.argv[1]
f = open(path, "ab", buffering=0)
for i in range(51, 101): f.write(line(i))
os.rename(path, path + ".1")
open(path, "ab").close()
for i in range(101, 151):
    f.write(line(i)); time.sleep(0.001)   # still the old descriptor
time.sleep(0.2)
f.close()
f = open(path, "ab", buffering=0)          # SIGHUP: the job reopens its log
for i in range(151, 301): f.write(line(i))
""",
            str(log),
        )
        assert writer.wait(10) == 0
        assert follower.wait_steps(300), follower.stderr
        follower.wait_for(lambda s: len(s) > 300, timeout=2.5)  # past a rediscovery round
        assert follower.stop() == 0
    finally:
        kill(follower.proc)
    assert_each_step_once(follower.loss_steps(), range(1, 301))
    assert not restarts_in(follower), "rename rotation under a run that goes on is not a relaunch"


def test_delete_and_recreate_by_a_relaunched_job(tmp_path: Path) -> None:
    log = tmp_path / "nohup.out"
    log.write_bytes(b"".join(megatron_line(i) for i in range(1, 51)))
    follower = Follower([str(log)])
    try:
        assert follower.wait_steps(50)
        first = start_writer(
            "f = open(sys.argv[1], 'ab', buffering=0)\nfor i in range(51, 101): f.write(line(i))\n", str(log)
        )
        assert first.wait(10) == 0
        log.unlink()
        second = start_writer(
            "f = open(sys.argv[1], 'ab', buffering=0)\nfor i in range(101, 201): f.write(line(i)); time.sleep(0.001)\n",
            str(log),
        )
        assert second.wait(10) == 0
        assert follower.wait_steps(200), follower.stderr
        assert follower.stop(signal.SIGTERM) == 0
    finally:
        kill(follower.proc)
    steps = follower.loss_steps()
    assert_each_step_once(steps, range(1, 201))
    assert [s["line"] for s in steps if s["step"] in (100, 101)] == [100, 1]  # the new file numbers from 1
    assert not restarts_in(follower), "the steps go on from 100: the same run (see test_relaunch_in_place)"


def test_directory_gains_new_ranks_and_attempts(tmp_path: Path) -> None:
    """torchrun --log-dir layout D/<run-id>/attempt_<k>/<rank>/stdout.log, created after we started."""
    follower = Follower([str(tmp_path)])
    writer = start_writer(
        """
root = sys.argv[1]
files = []
for attempt, rank in ((0, 0), (0, 1), (1, 0)):
    d = os.path.join(root, "run1", "attempt_%d" % attempt, str(rank))
    os.makedirs(d)
    files.append(open(os.path.join(d, "stdout.log"), "ab", buffering=0))
    time.sleep(0.05)
for i in range(1, 101):
    for f in files: f.write(line(i))
    if i % 20 == 0: time.sleep(0.01)
""",
        str(tmp_path),
    )
    try:
        assert writer.wait(10) == 0
        assert follower.wait_steps(300), follower.stderr
        assert follower.stop() == 0
    finally:
        kill(writer)
        kill(follower.proc)
    by_source: dict[str, list[dict]] = {}
    for s in follower.loss_steps():
        by_source.setdefault(s["source"], []).append(s)
    assert len(by_source) == 3
    for source, steps in by_source.items():
        assert_each_step_once(steps, range(1, 101))
        assert {s["rank"] for s in steps} == {int(Path(source).parent.name)}


def test_carriage_return_storm_with_records_glued_after_frames(tmp_path: Path) -> None:
    """tqdm frames by the hundred, then the HF Trainer dict glued right after the last frame (no newline
    between them), as in /work/shared/real_logs/hf_trainer__LMSYS_slice1_bar_then_buffered_dicts.log."""
    log = tmp_path / "train.log"
    follower = Follower([str(log)])
    writer = start_writer(
        """
f = open(sys.argv[1], "ab", buffering=0)
bar = "\\r  2%|\u2588\u2588\u2588\u2588\u2588\u2588\u258a{pad}| {k}/8264 [23:37<15:44:25,  7.03s/it]"
for i in range(1, 101):
    frames = "".join(bar.format(pad=" " * 40, k=k) for k in range(200)) + "\\r" + " " * 80 + "\\r"
    record = ("{'loss': %.6f, 'grad_norm': 35.838836669921875, 'learning_rate': 2.333333333333333e-05,"
              " 'epoch': 0.0}\\n" % (2 + i / 1e6))
    f.write((frames + bar.format(pad=" " * 40, k=200) + record).encode())
""",
        str(log),
    )
    try:
        assert writer.wait(10) == 0
        assert follower.wait_steps(100), follower.stderr
        follower.wait_for(lambda s: len(s) > 100, timeout=0.3)
        assert follower.stop() == 0
    finally:
        kill(follower.proc)
    losses = [s["metrics"]["loss"] for s in follower.loss_steps()]
    assert losses == [expected_loss(i) for i in range(1, 101)]


def test_invalid_utf8_nul_runs_and_colours_between_records(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    follower = Follower([str(log)])
    writer = start_writer(
        """
f = open(sys.argv[1], "ab", buffering=0)
for i in range(1, 101):
    f.write(b"\\xff\\xfe\\xc3( not utf-8 \\x00\\x00\\x00\\n")
    if i % 10 == 0: f.write(b"\\x00" * 5000)   # a sparse hole's worth of NULs
    f.write(b"\\x1b[32m" + line(i)[:-1] + b"\\x1b[0m\\n")
""",
        str(log),
    )
    try:
        assert writer.wait(10) == 0
        assert follower.wait_steps(100), follower.stderr
        assert follower.stop() == 0
    finally:
        kill(follower.proc)
    assert_each_step_once(follower.loss_steps(), range(1, 101))


def _peak_rss_kib(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1])
    raise AssertionError("no VmHWM")


def test_fifty_megabyte_line_does_not_hold_fifty_megabytes(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    follower = Follower([str(log)])
    writer = start_writer(
        """
f = open(sys.argv[1], "ab", buffering=0)
for i in range(1, 11): f.write(line(i))
block = b"x" * (1 << 20)
for _ in range(50): f.write(block)        # one 50 MB line (a tensor dump)
f.write(b"\\n")
for i in range(11, 21): f.write(line(i))
""",
        str(log),
    )
    try:
        assert writer.wait(20) == 0
        assert follower.wait_steps(20, timeout=30), follower.stderr
        peak = _peak_rss_kib(follower.proc.pid)
        assert follower.stop() == 0
    finally:
        kill(follower.proc)
    assert_each_step_once(follower.loss_steps(), range(1, 21))
    assert peak < 80 * 1024, f"peak RSS {peak} KiB while reading a 50 MB line"


STDIN_WRITER = """
rng = random.Random(3)
data = b"".join(line(i) for i in range(1, 201)) + line(201)[:-1]   # last line has no newline
out = sys.stdout.buffer
pos = 0
while pos < len(data):
    k = rng.randint(1, 300)
    out.write(data[pos:pos + k]); out.flush(); pos += k
"""


@pytest.mark.parametrize("follow", [True, False], ids=["export--follow-", "export-"])
def test_stdin_pipe_ends_with_its_input(follow: bool) -> None:
    writer = start_writer(STDIN_WRITER, stdout=subprocess.PIPE)
    assert writer.stdout is not None
    if follow:
        follower = Follower(["-"], stdin=writer.stdout)
        writer.stdout.close()
        try:
            assert follower.proc.wait(15) == 0  # ends by itself when the pipe closes
        finally:
            kill(follower.proc)
            kill(writer)
        follower.stop()
        steps = follower.loss_steps()
    else:
        import json
        import sys

        done = subprocess.run(
            [sys.executable, "-m", "trainwatch", "export", "-"], stdin=writer.stdout, capture_output=True, timeout=15
        )
        writer.stdout.close()
        kill(writer)
        assert done.returncode == 0
        steps = [r for r in map(json.loads, done.stdout.splitlines()) if r["type"] == "step"]
    # the pipe really ended, so its last line (no newline) is complete and parsed
    assert_each_step_once(steps, range(1, 202))


def test_stdin_follow_exits_zero_on_sigint_while_input_is_open() -> None:
    writer = start_writer(
        "for i in range(1, 11): sys.stdout.buffer.write(line(i))\nsys.stdout.flush()\ntime.sleep(60)\n",
        stdout=subprocess.PIPE,
    )
    assert writer.stdout is not None
    follower = Follower(["-"], stdin=writer.stdout)
    writer.stdout.close()
    try:
        assert follower.wait_steps(10)
        assert follower.stop(signal.SIGINT) == 0
    finally:
        kill(writer)
        kill(follower.proc)
    assert_each_step_once(follower.loss_steps(), range(1, 11))
