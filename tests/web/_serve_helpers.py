"""Start `trainwatch serve` as a real subprocess on a free loopback port, and look at its socket."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from conftest import seed


def seed_004_copy(directory: Path) -> Path:
    """A copy of seed 004 (DeepSpeed + Megatron GPT-2, last step 23000 of 1000000)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "gpt2_megatron.log"
    shutil.copyfile(seed("004"), target)
    return target


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_serve(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    """`trainwatch serve ARGS` in its own session (so its per-browser app processes end with it)."""
    out = open(cwd / "serve.stdout", "wb")
    err = open(cwd / "serve.stderr", "wb")
    with out, err:
        return subprocess.Popen(
            [sys.executable, "-m", "trainwatch", "serve", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )


def wait_for_port(port: int, proc: subprocess.Popen[bytes], cwd: Path, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited with {proc.returncode}: {server_stderr(cwd)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"serve did not listen on {port} within {timeout_s:.0f}s: {server_stderr(cwd)}")


def server_stderr(cwd: Path) -> str:
    path = cwd / "serve.stderr"
    return path.read_text(errors="replace") if path.exists() else ""


def listening_addresses(port: int) -> set[str]:
    """Addresses with a socket LISTENing on port, read from the kernel's tables (Linux)."""
    found: set[str] = set()
    for table, width in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            local, state = fields[1], fields[3]
            address_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            # The kernel prints each 32-bit word in host (little-endian) order.
            raw = b"".join(bytes.fromhex(address_hex[i : i + 8])[::-1] for i in range(0, len(address_hex), 8))
            assert len(raw) == width
            found.add(str(ipaddress.ip_address(raw)))
    return found
