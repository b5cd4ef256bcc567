"""The user's `--on-change` command: run through the shell for each notice, with the notice in its
environment, so `curl`, a Slack webhook or `mail` need no integration code of ours.

It runs on a thread of its own, one command at a time in the order the notices came, so a command
that hangs never holds up the watch's own lines. Each run is bounded: past the timeout its whole
process group (the shell and whatever it started) gets SIGTERM, then SIGKILL. A command that
fails, hangs or cannot start is reported on stderr in one line; the watch goes on.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping
from typing import IO

TIMEOUT_S = 30.0
KILL_GRACE_S = 1.0  # between SIGTERM and SIGKILL of a command past its timeout
OUTPUT_TAIL_BYTES = 4096  # a failed command's last line of output is quoted from this much

Report = Callable[[str], None]


def _last_line(out: IO[bytes]) -> str:
    out.seek(0, os.SEEK_END)
    size = out.tell()
    out.seek(max(0, size - OUTPUT_TAIL_BYTES))
    lines = [line.strip() for line in out.read().decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line]
    return lines[-1] if lines else ""


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


class HookRunner:
    """Runs `command` once per `submit(env)`, in order, on a background thread."""

    def __init__(self, command: str, timeout_s: float = TIMEOUT_S, report: Report | None = None) -> None:
        self.command = command
        self.timeout_s = timeout_s
        self._report = report or (lambda _message: None)
        self._queue: queue.Queue[tuple[str, Mapping[str, str]] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._current: subprocess.Popen[bytes] | None = None
        self._aborted = threading.Event()
        self.ran = 0
        self.failed = 0
        self._thread = threading.Thread(target=self._work, name="trainwatch-on-change", daemon=True)
        self._thread.start()

    def submit(self, what: str, env: Mapping[str, str]) -> None:
        """Queue one run; `what` names the notice in a report (`crashed`, `warning straggler`)."""
        self._queue.put((what, env))

    def close(self) -> None:
        """Run what is queued (each still bounded by the timeout), then stop."""
        self._queue.put(None)
        self._thread.join()

    def abort(self) -> None:
        """Interrupted: drop what is queued, end the command running now, stop."""
        self._aborted.set()
        with self._lock:
            if self._current is not None:
                _kill_group(self._current, grace_s=0.0)
        self._queue.put(None)
        self._thread.join(KILL_GRACE_S + 1.0)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None or self._aborted.is_set():
                return
            what, env = item
            problem = self.run_once(env)
            self.ran += 1
            if problem is not None and not self._aborted.is_set():
                self.failed += 1
                self._report(f"on-change command for {what} {problem}")

    def run_once(self, env: Mapping[str, str]) -> str | None:
        """Run the command once; None if it succeeded, else what went wrong (`timed out after 30 s...`)."""
        with tempfile.TemporaryFile() as out:  # a file, not a pipe: a stray grandchild cannot hold us
            try:
                proc = subprocess.Popen(
                    self.command,
                    shell=True,
                    env={**os.environ, **env},
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: a timeout ends all of it
                )
            except OSError as exc:
                return f"could not start: {exc}"
            with self._lock:
                self._current = proc
            try:
                code = proc.wait(self.timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc, KILL_GRACE_S)
                return f"timed out after {self.timeout_s:g} s and was killed"
            finally:
                with self._lock:
                    self._current = None
            if code == 0:
                return None
            said = _last_line(out)
            return _exit_text(code) + (f": {said}" if said else "")


def _kill_group(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM to the command's process group, then SIGKILL after `grace_s` to whatever in it
    ignored that (the shell may be gone while its `curl` lives on); reaps the shell."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            pass
