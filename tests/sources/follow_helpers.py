"""Real processes for the follow tests: a writer (`python -c`) and `trainwatch export --follow` reading.

The log line is Megatron-LM's iteration line, as in /work/shared/seeds/004 (DeepSpeed + Megatron GPT-2):
` iteration        5/ 1000000 | elapsed time per iteration (ms): 1196.2 | learning rate 7.500E-08 |
lm loss 1.098990E+01 | loss scale 4096.0 |`. The loss encodes the step so a torn or mixed-up line
shows as a wrong value, not only as a missing step.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import IO, Any

WRITER_PRELUDE = """
import os, random, shutil, sys, time
def line(i):
    return (" iteration %8d/ %8d | elapsed time per iteration (ms): 900.0 | learning rate 1.000E-04 |"
            " lm loss %.6E | loss scale 4096.0 |\\n" % (i, 100000, 2 + i / 1e6)).encode()
"""


def megatron_line(i: int) -> bytes:
    namespace: dict[str, Any] = {}
    exec(WRITER_PRELUDE, namespace)
    return namespace["line"](i)


def expected_loss(i: int) -> float:
    return float(f"{2 + i / 1e6:.6E}")


def start_writer(code: str, *args: str, stdout: int | IO[bytes] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WRITER_PRELUDE + code, *args], stdout=stdout)


class Follower:
    """`trainwatch export --follow ARGS` with its JSONL output collected as it arrives."""

    def __init__(self, args: Sequence[str], stdin: int | IO[bytes] | None = subprocess.DEVNULL) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trainwatch", "export", "--follow", *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "0"},
        )
        self.records: list[dict[str, Any]] = []
        self.stderr = ""
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._read_out, daemon=True),
            threading.Thread(target=self._read_err, daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self._lock:
                self.records.append(json.loads(raw))

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read().decode(errors="replace")

    def loss_steps(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.records if r["type"] == "step" and "loss" in r["metrics"]]

    def wait_for(self, done: Callable[[list[dict[str, Any]]], bool], timeout: float = 15.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done(self.loss_steps()):
                return True
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        return done(self.loss_steps())

    def wait_steps(self, n: int, timeout: float = 15.0) -> bool:
        return self.wait_for(lambda steps: len(steps) >= n, timeout)

    def stop(self, sig: int = signal.SIGINT, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout)
        for t in self._threads:
            t.join(5)
        return code


def assert_each_step_once(steps: list[dict[str, Any]], expected: range | list[int]) -> None:
    counts = Counter(s["step"] for s in steps)
    duplicated = sorted(k for k, n in counts.items() if n > 1)
    missing = sorted(set(expected) - set(counts))
    extra = sorted(set(counts) - set(expected))
    assert not duplicated and not missing and not extra, (
        f"duplicated {duplicated[:10]}, missing {missing[:10]}, unexpected {extra[:10]}"
    )
    wrong = [s["step"] for s in steps if s["metrics"]["loss"] != expected_loss(s["step"])]
    assert not wrong, f"wrong loss at steps {wrong[:10]}"


def kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(5)
