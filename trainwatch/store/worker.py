"""The store's records built in a second process while the first reads (a big log's catch-up).

A catch-up of a big file is CPU-bound in one interpreter: reading, scanning and converting its
lines is about three quarters of the work, appending to the series (and compacting them) the
rest. On a machine with two cores the reading process sends each batch down a pipe, in order, to
a process that keeps a `Store`, and takes its records back at the end (`Store.take_records`):
every record in order, the store the one a single process builds (`tests/store/test_worker.py`).
The pipeline starts it at a read's first column block (`Pipeline._start_worker`), the store as it
is then. A column block crosses as arrays of doubles and packed texts (`ColumnGroup.__getstate__`),
converted here; each batch carries the time the reader delivered it, so steps read before the end
of the file are not taken for steps that arrived live (`Store.add_many`'s `seen`).

A read to the end forks it: only on Linux (the child starts with every module loaded, in
milliseconds) and while no other thread runs (a fork copies one thread and whatever locks the
others held); else the pipeline keeps its store in process. The dashboard, which runs threads,
starts one afresh for the history of a big file (`Pipeline._spawn_backfill_worker`): a new
interpreter (`python -m trainwatch.store.worker FD CAPACITY`) over a socket pair, detached from
the terminal, given the staging store's records so far as its first message.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.process
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

from trainwatch.store.store import Store

if TYPE_CHECKING:
    from trainwatch.columns import ColumnBlock
    from trainwatch.records import Record


_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # (the directory holding `trainwatch/`)


class StoreWorkerError(RuntimeError):
    """The store's process failed: the error it met (its traceback in `details`), or how it ended."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.details = details


class StoreWorker:
    """`store` kept in a child process from now on: `add_many` sends, `finish` returns its records.

    Forked (`fork=True`), the child starts with `store` as it is. Started afresh (`fork=False`,
    for a process where other threads run: the dashboard's backfill), it is a new interpreter
    (`python -m trainwatch.store.worker FD CAPACITY`, no terminal: stdin, stdout and stderr are
    /dev/null) that takes `store`'s records as its first message."""

    def __init__(self, store: Store, fork: bool = True) -> None:
        self._process: multiprocessing.process.BaseProcess | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        if fork:
            self._fork(store)
        else:
            self._start_afresh(store)

    def _fork(self, store: Store) -> None:
        ctx = multiprocessing.get_context("fork")
        self._conn, child = ctx.Pipe()
        # Output still buffered would be written again by the child when it exits.
        sys.stdout.flush()
        sys.stderr.flush()
        self._process = ctx.Process(
            target=_serve, args=(child, self._conn, store), name="trainwatch-store", daemon=True
        )
        try:
            self._process.start()  # (OSError if the system refuses a fork)
        except BaseException:
            self._conn.close()
            raise
        finally:
            child.close()

    def _start_afresh(self, store: Store) -> None:
        mine, theirs = socket.socketpair()
        self._conn = Connection(mine.detach())
        try:
            self._popen = subprocess.Popen(
                [sys.executable, "-m", "trainwatch.store.worker", str(theirs.fileno()), str(store.capacity)],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # (the terminal's signals are the dashboard's)
                # `-m` puts the working directory first on the child's path: the one holding this
                # trainwatch instead (a `signal.py` where the dashboard was started is not imported).
                cwd=_PACKAGE_ROOT,
            )
            _send(self._conn, (True, store.records()))
        except BaseException:
            self.close()
            raise
        finally:
            theirs.close()

    @staticmethod
    def available() -> bool:
        """Whether a worker can start here: Linux (macOS's system libraries are not safe across a
        fork: Python's own default there is `spawn`), and no other thread runs."""
        return sys.platform.startswith("linux") and threading.active_count() == 1

    def add_many(self, records: Iterable[Record | ColumnBlock]) -> None:
        try:
            if self._conn.poll():  # (the worker says something before the end only if it failed)
                raise self._outcome_error()
            self._conn.send((time.monotonic(), list(records)))
        except StoreWorkerError:
            raise
        except Exception as exc:  # (cut pipe, or closed by `close` from another thread meanwhile)
            raise self._failed() from exc

    def finish(self) -> dict[str, object]:
        """The records the worker's store holds (`Store.records`); the worker ends."""
        try:
            self._conn.send(None)
            ok, result = pickle.load(_Pieces(self._conn))
        except Exception as exc:  # (as in `add_many`)
            raise self._failed() from exc
        finally:
            self.close()
        if not ok:
            raise _error_of(result)
        return result  # type: ignore[no-any-return]

    def close(self, wait_s: float = 5.0) -> None:
        """End the worker (its records are lost if `finish` did not take them): it ends on its
        own at the end of its input, or is killed after `wait_s` (0: at once, on quitting)."""
        self._conn.close()
        if self._process is not None:
            self._process.join(timeout=wait_s)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
        if self._popen is not None:
            try:
                self._popen.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                self._popen.wait()

    def _outcome_error(self) -> StoreWorkerError:
        _ok, error = pickle.load(_Pieces(self._conn))
        return _error_of(error)

    def _failed(self) -> StoreWorkerError:
        code: int | None = None
        if self._process is not None:
            self._process.join(timeout=1)
            code = self._process.exitcode
        if self._popen is not None:
            try:
                code = self._popen.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        return StoreWorkerError(f"the store's process ended unexpectedly (exit code {code})")


def _error_of(details: str) -> StoreWorkerError:
    last = details.strip().splitlines()[-1] if details.strip() else "no detail"
    return StoreWorkerError(f"the store's process failed: {last}", details)


def _serve(conn: Connection, parent_end: Connection | None, store: Store | int) -> None:
    """The child: batches into the store until told to finish, then its records; an error is
    sent at once (the reader stops at its next batch), and what still comes is read and
    dropped, so the reader never blocks on a full pipe. Never a traceback on the terminal: the
    reading process says what happened (Ctrl-C cuts the pipe mid-message: nothing to say)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (Ctrl-C is the reading process's to handle)
    if parent_end is not None:
        parent_end.close()  # (the parent's end, inherited: closed, a dead parent is an end of input)
    try:
        if isinstance(store, int):  # (started afresh: a capacity, then the records so far)
            store = Store(store)
            _ok, records = pickle.load(_Pieces(conn))
            store.take_records(records)
        failed = False
        while True:
            message = conn.recv()
            if message is None:
                break
            if failed:
                continue
            seen, batch = message
            try:
                store.add_many(batch, seen=seen)
            except Exception:  # (sent to the reading process, which raises it)
                failed = True
                _send(conn, (False, traceback.format_exc()))
        if not failed:
            _send(conn, (True, store.records()))
    except (EOFError, OSError):
        pass  # the reading process is gone or gave up (Ctrl-C): nobody to tell
    finally:
        conn.close()


def _send(conn: Connection, outcome: tuple[bool, object]) -> None:
    out = _Pieces(conn)
    pickle.dump(outcome, out, pickle.HIGHEST_PROTOCOL)
    out.flush()


class _Pieces:
    """A pickle's bytes through a connection in pieces (file-like both ways): the store's records
    (tens of MB of series) cross without a whole copy of them in either process at the end."""

    SIZE = 1 << 20

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._out = bytearray()
        self._in = memoryview(b"")

    def write(self, data: bytes) -> int:
        self._out += data
        if len(self._out) >= self.SIZE:
            self.flush()
        return len(data)

    def flush(self) -> None:
        if self._out:
            self._conn.send_bytes(self._out)
            self._out = bytearray()

    def read(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            if not self._in:
                self._in = memoryview(self._conn.recv_bytes())
            take = self._in[: n - len(out)]
            out += take
            self._in = self._in[len(take) :]
        return bytes(out)

    def readline(self) -> bytes:
        out = bytearray()
        while not out.endswith(b"\n"):
            out += self.read(1)
        return bytes(out)


if __name__ == "__main__":  # started afresh (`StoreWorker(store, fork=False)`): FD CAPACITY
    _serve(Connection(int(sys.argv[1])), None, int(sys.argv[2]))
