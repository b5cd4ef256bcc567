"""Which sources inotify can follow, and the watcher waking the pipeline."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from trainwatch.sources.watch import DirWatcher, fstype_of, is_network_fs, mount_fstype, parse_mounts

# Shapes of /proc/mounts rows on HPC nodes (Lustre, GPFS, NFSv4 autofs home, sshfs).
MOUNTS = """\
/dev/vda / ext4 rw,relatime 0 0
10.0.0.5@o2ib:/scratch /lustre/scratch lustre rw,flock 0 0
gpfs0 /gpfs/projects gpfs rw,relatime 0 0
nas:/export/home /home nfs4 rw,relatime,vers=4.2 0 0
user@host:/data /mnt/my\\040data fuse.sshfs rw,nosuid,nodev 0 0
tmpfs /home/alice/tmp tmpfs rw 0 0
"""


def test_fstype_is_the_longest_mount_prefix() -> None:
    mounts = parse_mounts(MOUNTS)
    assert mount_fstype("/lustre/scratch/run1/nohup.out", mounts) == "lustre"
    assert mount_fstype("/gpfs/projects/x/out.log", mounts) == "gpfs"
    assert mount_fstype("/home/bob/out.log", mounts) == "nfs4"
    assert mount_fstype("/home/alice/tmp/out.log", mounts) == "tmpfs"  # a local mount inside NFS
    assert mount_fstype("/mnt/my data/log.txt", mounts) == "fuse.sshfs"  # \040 is a space
    assert mount_fstype("/lustre/scratchpad/out.log", mounts) == "ext4"  # a prefix of the name is not a parent


def test_fstype_of_a_file_not_created_yet_is_its_directory_s(tmp_path: Path) -> None:
    assert fstype_of(str(tmp_path / "not" / "yet" / "out.log")) == fstype_of(str(tmp_path))


def test_network_filesystems_are_polled() -> None:
    for fs in ("nfs", "nfs4", "lustre", "gpfs", "cifs", "smb3", "ceph", "beegfs", "fuse.sshfs", "fuse.gcsfuse"):
        assert is_network_fs(fs), fs
    for fs in ("ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs"):
        assert not is_network_fs(fs), fs


def test_watcher_wakes_on_a_write_in_a_watched_directory_and_follows_replacement(tmp_path: Path) -> None:
    woke = threading.Event()
    seen: list[str] = []

    def on_change(paths: set[str]) -> None:
        seen.extend(paths)
        woke.set()

    watcher = DirWatcher(on_change)
    watcher.set_dirs([str(tmp_path)])
    watcher.start()
    try:
        log = tmp_path / "out.log"
        deadline = time.monotonic() + 10
        # the watch starts asynchronously: write until it reports
        while not woke.wait(0.05) and time.monotonic() < deadline:
            log.write_bytes(b"x\n")
        assert woke.is_set() and str(log) in seen and watcher.error == ""
        log.rename(tmp_path / "out.log.1")  # the file is replaced: the directory watch goes on
        woke.clear()
        (tmp_path / "out.log").write_bytes(b"y\n")
        assert woke.wait(5)
    finally:
        watcher.stop()


def test_watcher_tells_which_paths_had_a_file_created_moved_or_deleted(tmp_path: Path) -> None:
    """A write is a change; a rename or a new file at a path is also a path event, which makes a
    followed file there ask its path again (`FileTail.path_changed`) instead of waiting."""
    changed: list[str] = []
    events: list[str] = []
    woke = threading.Event()

    def on_change(paths: set[str]) -> None:
        changed.extend(paths)
        woke.set()

    watcher = DirWatcher(on_change, on_path_event=events.extend)
    log = tmp_path / "out.log"
    log.write_bytes(b"x\n")
    watcher.set_dirs([str(tmp_path)])
    watcher.start()
    try:
        deadline = time.monotonic() + 10
        with log.open("ab") as f:
            while not woke.wait(0.05) and time.monotonic() < deadline:
                f.write(b"x\n")
                f.flush()
        assert str(log) in changed and str(log) not in events  # writes only
        woke.clear()
        log.rename(tmp_path / "out.log.1")
        log.write_bytes(b"y\n")
        deadline = time.monotonic() + 10
        while str(log) not in events and time.monotonic() < deadline:
            time.sleep(0.05)
        assert str(log) in events
    finally:
        watcher.stop()
