"""`trainwatch serve`: the dashboard in a browser via textual-serve (optional extra [web]).

textual-serve has no authentication: anyone who can reach the port sees the logs, so it
binds 127.0.0.1 unless told otherwise, and says so loudly when it is not.
"""

from __future__ import annotations

import shlex
import sys

import click

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def dashboard_command(paths: list[str]) -> str:
    """The command textual-serve runs per browser session (paths quoted for the shell)."""
    return shlex.join([sys.executable, "-m", "trainwatch.ui.app", *paths])


def run_server(paths: list[str], host: str = "127.0.0.1", port: int = 8000) -> None:
    try:
        from textual_serve.server import Server
    except ImportError:
        click.echo(
            "trainwatch: `serve` needs textual-serve: pip install 'trainwatch-tui[web]'",
            err=True,
        )
        sys.exit(2)
    if host not in LOCAL_HOSTS:
        click.echo(
            f"trainwatch: WARNING: serving on {host}:{port} with NO authentication — anyone who can reach "
            "this address can read these logs. Prefer the default 127.0.0.1 with an SSH tunnel "
            f"(ssh -L {port}:127.0.0.1:{port} this-host).",
            err=True,
        )
    Server(dashboard_command(paths), host=host, port=port, title="trainwatch").serve()
