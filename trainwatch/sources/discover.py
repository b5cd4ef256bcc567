"""Expand the user's PATH arguments into concrete sources.

A PATH is a file, a directory (every log-like file under it, recursively), a glob, `-`, or a
stream: a FIFO named as such (`mkfifo`, or process substitution's `/dev/fd/63`), read as a pipe
under a label (`--label node1`, else `stream 1`: `/dev/fd/63` means nothing to a reader).
Discovery never opens anything: FIFOs found in a directory or glob, sockets and devices are
skipped by `stat` (and each one is reported: a `mkfifo logs/pipe` someone expected to be read
is not silently ignored; a FIFO in a shared directory could block a reader forever),
symlink loops are cut by tracking real paths, and depth and count are bounded (a walk that
meets a bound says so).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from dataclasses import dataclass

from trainwatch.sources.problems import Problem, ProblemKind, missing_hint
from trainwatch.sources.records import is_mlflow_metrics, is_record_file

LOG_SUFFIXES = (".log", ".out", ".err", ".txt", ".stdout", ".stderr")
MAX_DEPTH = 12
MAX_FILES = 4096
NOT_REGULAR = "not a regular file (FIFOs and devices are not read)"
DEEPER_NOT_FOLLOWED = "deeper files are not followed"
MORE_NOT_READ = "more files are not read"


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One thing to read. `name` is the path as the user gave it (or as found)."""

    name: str
    path: str | None  # None for stdin
    pattern: str | None = None  # the glob/dir it came from, for picking up new files
    stream: bool = False  # a FIFO named on the command line (`<(ssh node1 tail -F out.log)`): read as a pipe


def is_log_like(name: str) -> bool:
    base = os.path.basename(name).lower()
    if base.startswith("."):
        return False
    if base.endswith(LOG_SUFFIXES) or base in {"nohup.out", "stdout", "stderr"}:
        return True
    # rotated logs: out.log.1
    parts = base.split(".")
    return len(parts) >= 3 and parts[-1].isdigit() and ("." + parts[-2]) in LOG_SUFFIXES


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _fifo(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def stream_labels(paths: list[str], labels: list[str]) -> dict[str, str]:
    """The name each stream PATH is shown under: the `--label`s in the order of the stream
    paths, then its position among them (`stream 2`). ValueError when labels are left over or
    name two streams alike (their ranks would merge)."""
    streams = list(dict.fromkeys(raw for raw in paths if raw != "-" and _fifo(raw)))
    if len(labels) > len(streams):
        raise ValueError(f"{len(labels)} --label given for {len(streams)} stream{'s' if len(streams) != 1 else ''}")
    names = [*labels, *(f"stream {i + 1}" for i in range(len(labels), len(streams)))]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"--label {twice[0]!r} names two streams")
    return dict(zip(streams, names, strict=True))


def _special(path: str) -> bool:
    """A FIFO, socket or device (by `stat`, never opened)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def walk_logs(
    root: str, limit: int = MAX_FILES, skipped: list[str] | None = None, stopped: list[Problem] | None = None
) -> list[str]:
    """Log-like regular files and record files (`sources/records`: an MLflow run's `metrics`
    directory is one) under root, sorted, symlink loops cut; FIFOs, sockets and
    devices (whatever their name) are not read, and listed in `skipped` when given. A walk
    that meets its depth or count bound says so once in `stopped`: files it leaves out are
    not missing in silence."""
    found: list[str] = []
    seen_dirs: set[str] = set()
    bounds: dict[str, str] = {}  # which bound was met -> what to say

    def visit(directory: str, depth: int) -> None:
        real = os.path.realpath(directory)
        if real in seen_dirs:
            return
        seen_dirs.add(real)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if "count" in bounds:
                return
            try:
                if entry.is_dir(follow_symlinks=True):
                    if entry.name.startswith("."):
                        continue
                    if is_mlflow_metrics(entry.path):
                        found.append(entry.path)
                    elif depth < MAX_DEPTH:
                        visit(entry.path, depth + 1)
                    elif os.path.realpath(entry.path) not in seen_dirs:
                        bounds.setdefault("depth", f"stopped at depth {MAX_DEPTH} under {root}: {DEEPER_NOT_FOLLOWED}")
                elif entry.is_file(follow_symlinks=True):
                    if not (is_log_like(entry.name) or is_record_file(entry.name)):
                        continue
                    if len(found) >= limit:
                        bounds["count"] = f"stopped after {limit} files under {root}: {MORE_NOT_READ}"
                        return
                    found.append(entry.path)
                elif skipped is not None and _special(entry.path):
                    skipped.append(entry.path)
            except OSError:
                continue

    visit(root, 0)
    if stopped is not None:
        stopped += [Problem(ProblemKind.WALK_STOPPED, root, said) for said in bounds.values()]
    return found


def has_magic(path: str) -> bool:
    return glob.has_magic(path)


def expand(paths: list[str], labels: list[str] | None = None) -> tuple[list[SourceSpec], list[Problem]]:
    """Sources for the given PATHs, and a `Problem` for each PATH that matched nothing now or
    found something that is not read.

    A missing plain file is still returned (followers wait for it to appear); callers that
    read once report it as an error. `labels` name the stream PATHs (see `stream_labels`).
    """
    specs: list[SourceSpec] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    streams = stream_labels(paths, labels or [])

    def add(spec: SourceSpec) -> None:
        if spec.name not in seen:
            seen.add(spec.name)
            specs.append(spec)

    for raw in paths:
        if raw == "-":
            add(SourceSpec("-", None))
        elif raw in streams:
            add(SourceSpec(streams[raw], raw, stream=True))
        elif os.path.isdir(raw):
            skipped: list[str] = []
            stopped: list[Problem] = []
            files = walk_logs(raw, skipped=skipped, stopped=stopped)
            problems += [_not_regular(path) for path in skipped]
            problems += stopped
            if not files:
                problems.append(Problem(ProblemKind.EMPTY, raw, f"{raw}: no log files in this directory yet"))
            for f in files:
                add(SourceSpec(f, f, pattern=raw))
        elif has_magic(raw) and not os.path.lexists(raw):
            # `[bold]x.log` that exists is a file name, not a pattern
            found = sorted(glob.glob(raw, recursive=True))
            problems += [_not_regular(m) for m in found if _special(m)]
            matches = [m for m in found if _regular_file(m)]
            if not matches:
                problems.append(Problem(ProblemKind.EMPTY, raw, f"{raw}: no file matches this pattern yet"))
            for m in matches:
                add(SourceSpec(m, m, pattern=raw))
        else:
            if os.path.exists(raw) and not _regular_file(raw):
                problems.append(_not_regular(raw))
                continue
            if not os.path.exists(raw):
                problems.append(Problem(ProblemKind.MISSING, raw, f"{raw}: {missing_hint(raw)}"))
            add(SourceSpec(raw, raw))
    return specs, problems


def glob_root(pattern: str) -> tuple[str, bool]:
    """The directory a glob's matches appear under, and whether they may be deeper."""
    parts = pattern.split(os.sep)
    fixed: list[str] = []
    for part in parts:
        if has_magic(part):
            break
        fixed.append(part)
    root = os.sep.join(fixed) or ("." if not pattern.startswith(os.sep) else os.sep)
    magic_dirs = len(fixed) < len(parts) - 1
    return root, magic_dirs or "**" in pattern


def found_under(path: str, pattern: str) -> bool:
    """`path` is found by this directory or glob PATH."""
    if os.path.isdir(pattern):
        return os.path.normpath(path).startswith(os.path.normpath(pattern) + os.sep)
    return fnmatch.fnmatch(path, pattern) or path.startswith(glob_root(pattern)[0])


def _not_regular(path: str) -> Problem:
    return Problem(ProblemKind.NOT_REGULAR, path, f"{path}: {NOT_REGULAR}")


def rediscover(pattern: str) -> list[str]:
    """Files a directory or glob holds now (for picking up new ranks/attempts live)."""
    if os.path.isdir(pattern):
        return walk_logs(pattern)
    return sorted(m for m in glob.glob(pattern, recursive=True) if _regular_file(m))


STDERR_NAMES = (".err", ".stderr", "stderr")


def run_log(record_file: str, logs: list[str], root: str | None) -> str | None:
    """The text log a record file belongs to: one run directory holds both. The log in the
    record file's own directory, else in the nearest directory above it (HF writes
    `runs/<date>/events.out.tfevents.*` and `checkpoint-N/trainer_state.json` under the directory
    its `nohup.out` is in), not above `root` (the directory PATH it was found under). That
    directory must hold one text log besides stderr files: several (a log per rank) are not
    guessed between, the record file stays its own source."""
    directory = os.path.dirname(os.path.abspath(record_file))
    top = os.path.abspath(root) if root is not None and os.path.isdir(root) else directory
    by_dir: dict[str, list[str]] = {}
    for log in logs:
        if not os.path.basename(log).lower().endswith(STDERR_NAMES):
            by_dir.setdefault(os.path.dirname(os.path.abspath(log)), []).append(log)
    while True:
        here = by_dir.get(directory)
        if here:
            return here[0] if len(here) == 1 else None
        if directory == top or not directory.startswith(top + os.sep):
            return None
        directory = os.path.dirname(directory)
