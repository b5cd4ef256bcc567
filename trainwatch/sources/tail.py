"""Follow one path like `tail -F`, with its own descriptor and a saved offset.

- waits for a path that does not exist yet;
- reads with `pread` from the saved offset (never mmap: a truncated mmap raises SIGBUS);
- size below the offset = truncated (copytruncate): start again at 0;
- another inode at the path = rotated or recreated: read the old descriptor to its end
  first, then switch to the new file;
- a deleted path keeps being read through the open descriptor (a job writing to an
  unlinked log) until a new file appears there.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

CHUNK = 8 * 1024 * 1024


@dataclass
class TailRead:
    """What one `read()` found. Apply in order: old_data, then reset, then data."""

    old_data: bytes = b""  # the end of the previous file (before a rotation)
    reset: str = ""  # "truncated" / "replaced" / "": start a new stream before `data`
    data: bytes = b""
    at_eof: bool = True
    notes: list[str] = field(default_factory=list)


class FileTail:
    def __init__(self, path: str, chunk: int = CHUNK) -> None:
        self.path = path
        self.chunk = chunk
        self.fd: int | None = None
        self.ident: tuple[int, int] | None = None
        self.offset = 0
        self.size = 0
        self.mtime: float | None = None
        self.missing_note = ""
        self.opened_once = False

    def close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None

    def _open(self) -> str:
        """Open the path if it is a regular file. Returns a note on failure."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return "waiting for the file to appear"
        except OSError as exc:
            return f"cannot stat: {exc.strerror}"
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file; not read"
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            return f"cannot open: {exc.strerror}"
        st = os.fstat(fd)
        self.fd = fd
        self.ident = (st.st_dev, st.st_ino)
        self.offset = 0
        self.size = st.st_size
        self.mtime = st.st_mtime
        self.opened_once = True
        return ""

    def _read_fd(self, limit: int) -> bytes:
        assert self.fd is not None
        out = bytearray()
        while len(out) < limit:
            try:
                piece = os.pread(self.fd, min(self.chunk, limit - len(out)), self.offset)
            except OSError:
                break
            if not piece:
                break
            out += piece
            self.offset += len(piece)
        return bytes(out)

    def read(self, limit: int = CHUNK) -> TailRead:
        result = TailRead()
        if self.fd is None:
            note = self._open()
            if note:
                if note != self.missing_note:
                    result.notes.append(note)
                self.missing_note = note
                return result
            self.missing_note = ""
        assert self.fd is not None
        try:
            st = os.fstat(self.fd)
        except OSError:
            self.close()
            return result
        self.mtime = st.st_mtime
        if st.st_size < self.offset:
            result.reset = "truncated"
            result.notes.append(f"file was truncated at {self.offset} bytes; reading it again from the start")
            self.offset = 0
        self.size = st.st_size
        data = self._read_fd(limit)
        if len(data) >= limit:
            result.data = data
            result.at_eof = False
            return result
        # At the end of this descriptor: has the path moved on to another file?
        try:
            pst = os.stat(self.path)
            now_ident: tuple[int, int] | None = (pst.st_dev, pst.st_ino) if stat.S_ISREG(pst.st_mode) else None
        except OSError:
            now_ident = None
        if now_ident is not None and now_ident != self.ident:
            data += self._read_fd(1 << 62)  # whatever the old file still had
            self.close()
            result.old_data = data
            note = self._open()
            result.reset = "replaced"
            result.notes.append("file was replaced (rotated or recreated); following the new file")
            if note:
                result.notes.append(note)
                return result
            result.data = self._read_fd(limit)
            result.at_eof = len(result.data) < limit
            return result
        result.data = data
        return result
