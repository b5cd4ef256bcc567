"""Wake the pipeline when a followed file changes; say which sources must be polled instead.

inotify (through watchfiles) sees local writes within milliseconds but never sees writes
made by other clients of a network filesystem, so sources on NFS/Lustre/GPFS/CIFS/FUSE...
(found in /proc/mounts) are polled. Parent directories are watched, not the files:
a watch on a file dies when the file is renamed or replaced (watchfiles#235). The
pipeline stat-polls every source anyway as a safety net; the watcher only makes it fast.

watchfiles' loop wakes every `step` ms to look for changes and its stop event, taking the GIL
each time: its thread takes 0.24-0.28 % of a core at 25 ms on the 2-core dev machine, 0.20 % at
37 ms, 0.16 % at 50 ms (idle dashboard, /proc per thread). A batch is handed over one to two
steps after the write: `latency_ms=50` (debounce 50 ms, step 25 ms) gives append-to-record p95
46 ms on one file and 67-74 ms across 256 files written in one burst. A 37 ms step took 0.1 %
off an idle dashboard but put those at 72 ms and 89-95 ms (50 ms: 96 ms on one file), too near
their 100 ms target: not taken.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache

# Filesystems where inotify does not see (all) writes: other nodes write them.
NETWORK_FS = frozenset(
    {
        "nfs", "nfs4", "lustre", "gpfs", "cifs", "smb3", "smbfs", "ceph", "beegfs", "glusterfs",
        "9p", "afs", "ncpfs", "davfs", "panfs", "orangefs", "pvfs2", "wekafs", "ocfs2", "gfs2",
        "fuse", "fuseblk", "virtiofs", "quobyte", "cvfs", "vboxsf", "vmhgfs",
    }
)  # fmt: skip


def _unescape(field: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal (\\040)."""
    if "\\" not in field:
        return field
    out: list[str] = []
    i = 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mounts(text: str) -> list[tuple[str, str]]:
    """(mount point, fstype) pairs, in /proc/mounts order (later mounts shadow earlier ones)."""
    mounts: list[tuple[str, str]] = []
    for row in text.splitlines():
        parts = row.split()
        if len(parts) >= 3:
            mounts.append((_unescape(parts[1]), parts[2]))
    return mounts


@lru_cache(maxsize=1)
def _mounts() -> tuple[tuple[str, str], ...]:
    try:
        with open("/proc/mounts", encoding="utf-8", errors="replace") as f:
            return tuple(parse_mounts(f.read()))
    except OSError:
        return ()


def _existing_ancestor(path: str) -> str:
    path = os.path.abspath(path)
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return os.path.realpath(path)


def fstype_of(path: str) -> str:
    """The filesystem type holding `path` (or the directory it will appear in); "" if unknown."""
    return mount_fstype(_existing_ancestor(path), _mounts())


def mount_fstype(real_path: str, mounts: Iterable[tuple[str, str]]) -> str:
    """The type of the innermost mount containing `real_path` (an absolute, resolved path)."""
    best, best_len = "", -1
    for point, fstype in mounts:
        inside = real_path == point or real_path.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= best_len:
            best, best_len = fstype, len(point)
    return best


def is_network_fs(fstype: str) -> bool:
    return fstype in NETWORK_FS or fstype.startswith("fuse.")


class DirWatcher:
    """Background inotify watch over directories; calls `on_change(paths)` on every batch, and
    first `on_path_event(paths)` with those that were created, moved or deleted (not only
    written): a file followed at such a path may have been replaced (`FileTail.path_changed`).

    `set_dirs` may be called at any time (new sources, directories that appeared): the
    watch is restarted over the new set. If inotify cannot be used (limits, no support),
    `error` says why and the caller keeps polling.
    """

    def __init__(
        self,
        on_change: Callable[[set[str]], None],
        latency_ms: int = 50,
        on_path_event: Callable[[set[str]], None] | None = None,
    ) -> None:
        self._on_change = on_change
        self._on_path_event = on_path_event
        self._latency_ms = latency_ms
        self._dirs: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._restart = threading.Event()
        self._thread: threading.Thread | None = None
        self.error = ""
        self.active = False

    def set_dirs(self, flat: Iterable[str], recursive: Iterable[str] = ()) -> bool:
        """Watch these directories from now on. True if the set changed (files created while the
        new watch starts are not reported: the caller should look for them once more)."""
        rec = frozenset(d for d in recursive if os.path.isdir(d))
        flat_set = frozenset(d for d in flat if os.path.isdir(d) and not any(_under(d, r) for r in rec))
        with self._lock:
            if (flat_set, rec) == self._dirs:
                return False
            self._dirs = (flat_set, rec)
        self._restart.set()
        return True

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="trainwatch-watch", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        self._restart.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        try:
            import watchfiles
        except ImportError:
            self.error = "watchfiles is not installed"
            return
        while not self._stop.is_set():
            self._restart.clear()
            with self._lock:
                flat, rec = self._dirs
            if not flat and not rec:
                self._restart.wait()
                continue
            groups = [(sorted(flat), False), (sorted(rec), True)]
            threads = [
                threading.Thread(target=self._watch, args=(watchfiles, dirs, recursive), daemon=True)
                for dirs, recursive in groups
                if dirs
            ]
            for t in threads:
                t.start()
            self.active = True
            self._restart.wait()
            for t in threads:
                t.join(2.0)
        self.active = False

    def _watch(self, watchfiles: object, dirs: list[str], recursive: bool) -> None:
        watch = watchfiles.watch  # type: ignore[attr-defined]
        watched = set(dirs)
        deleted = watchfiles.Change.deleted  # type: ignore[attr-defined]
        modified = watchfiles.Change.modified  # type: ignore[attr-defined]
        try:
            for changes in watch(
                *dirs,
                watch_filter=None,
                debounce=self._latency_ms,
                step=max(1, self._latency_ms // 2),  # (see the module docstring)
                stop_event=self._restart,
                rust_timeout=1000,
                yield_on_timeout=False,
                raise_interrupt=False,
                force_polling=False,
                recursive=recursive,
                ignore_permission_denied=True,
            ):
                paths = {path for _change, path in changes}
                if any(change == deleted and path in watched for change, path in changes):
                    # A watched directory itself went (a relaunch that wipes its log dir): its
                    # watch is dead even if the directory is made again at once. Forget the set,
                    # so the caller's next set_dirs (it looks again: the path is new to it)
                    # starts a watch on the new one.
                    with self._lock:
                        self._dirs = (frozenset(), frozenset())
                if self._on_path_event is not None:
                    moved = {path for change, path in changes if change != modified}
                    if moved:
                        self._on_path_event(moved)
                self._on_change(paths)
        except FileNotFoundError:
            # A watched directory vanished before the watch began: set_dirs will be called again.
            self._on_change(set())
        except Exception as exc:  # inotify limits etc.: the caller falls back to polling
            self.error = f"{exc.__class__.__name__}: {exc}"
            self.active = False


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
