"""`trainwatch serve` (CLI layer): the dashboard in a browser via textual-serve (optional extra [web]).

textual-serve has no authentication: anyone who can reach the port sees the logs, so it
binds 127.0.0.1 unless told otherwise, and says so loudly when it is not. Two browser-side
holes are closed here because a loopback bind alone does not stop them: any web page the
user visits may open a websocket to 127.0.0.1 (so /ws checks that Origin is this server), and
a DNS-rebinding page reaches 127.0.0.1 under its own name (so a loopback server only answers
to loopback host names).

It works with no network (an air-gapped cluster): textual-serve's page loads its font from Google
Fonts; the page is served with that stylesheet link replaced by `@font-face` rules on the Roboto
Mono files textual-serve ships in its own static folder (its script and CSS are local already).
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import click

from trainwatch.sources.discover import expand
from trainwatch.stderr import warn

if TYPE_CHECKING:
    from aiohttp import web

EXIT_USAGE = 2
LOCAL_NAMES = ("localhost",)
# A Host header we echo into the page's URLs: a name or IPv4 address, or a bracketed IPv6 one.
HOST_HEADER = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
# A stylesheet the page would fetch from another site (textual-serve's: Google Fonts).
REMOTE_STYLESHEET = re.compile(r"<link\b[^>]*\bhref=\"https?://[^\"]*\"[^>]*/?>", re.S)
# The font the page and its terminal ask for, from the files in textual-serve's static/fonts.
LOCAL_FONTS = """<style>
      @font-face {
        font-family: "Roboto Mono";
        font-style: normal;
        font-weight: 100 700;
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
      }
      @font-face {
        font-family: "Roboto Mono";
        font-style: italic;
        font-weight: 100 700;
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype");
      }
    </style>"""


def is_loopback(host: str) -> bool:
    """True for names that only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    name = host.strip("[]").lower()
    if name in LOCAL_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(host_header: str) -> str:
    """`127.0.0.1:8000` -> `127.0.0.1`, `[::1]:8000` -> `::1`."""
    if host_header.startswith("["):
        return host_header[1 : host_header.find("]")]
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def dashboard_command(paths: list[str]) -> str:
    """The command textual-serve runs per browser session (paths quoted for the shell)."""
    return shlex.join([sys.executable, "-m", "trainwatch.ui.app", *paths])


def exposure_warning(host: str, port: int) -> str:
    return (
        f"trainwatch: WARNING: serving on {host}:{port} with NO authentication — anyone who can reach "
        "this address can read these logs. Prefer the default 127.0.0.1 with an SSH tunnel "
        f"(ssh -L {port}:127.0.0.1:{port} this-host)."
    )


def offline_page(template: str) -> str:
    """textual-serve's page template with its remote stylesheets replaced by the local fonts."""
    return REMOTE_STYLESHEET.sub(lambda _m: LOCAL_FONTS, template)


def make_server(command: str, host: str, port: int) -> Any:
    """A textual-serve Server that builds its URLs from the request and refuses foreign pages.

    textual-serve writes `http://HOST:PORT/...` into the page, so a server bound to 0.0.0.0, or
    reached through an SSH tunnel on another port, hands the browser URLs it cannot open; the
    browser's own Host header is the address that works.
    """
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from textual_serve.server import Server

    loopback_only = is_loopback(host)

    class OfflineTemplates(jinja2.FileSystemLoader):
        def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
            source, filename, uptodate = super().get_source(environment, template)
            return offline_page(source), filename, uptodate

    class DashboardServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            aiohttp_jinja2.get_env(app).loader = OfflineTemplates(self.templates_path)
            return app

        def _check(self, request: web.Request) -> str:
            requested = request.host
            if not HOST_HEADER.fullmatch(requested):
                raise web.HTTPBadRequest(text="trainwatch: bad Host header\n")
            if loopback_only and not is_loopback(host_name(requested)):
                raise web.HTTPForbidden(text="trainwatch: this server only answers to localhost\n")
            return requested

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            requested = self._check(request)
            # No await between this and the template's use of it: safe on the one event loop.
            self.public_url = f"{request.scheme}://{requested}"
            return await super().handle_index(request)

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            requested = self._check(request)
            origin = request.headers.get("Origin")
            if origin is not None and urlsplit(origin).netloc.lower() != requested.lower():
                raise web.HTTPForbidden(text="trainwatch: websocket from another site refused\n")
            return await super().handle_websocket(request)

    return DashboardServer(command, host=host, port=port, title="trainwatch")


def run_server(paths: list[str], host: str = "127.0.0.1", port: int = 8000) -> None:
    try:
        import textual_serve.server  # noqa: F401
    except ImportError:
        click.echo("trainwatch: `serve` needs textual-serve: pip install 'trainwatch-tui[web]'", err=True)
        sys.exit(EXIT_USAGE)
    if "-" in paths:
        click.echo("trainwatch: `serve` cannot read stdin (-): give files, directories or globs", err=True)
        sys.exit(EXIT_USAGE)
    _specs, problems = expand(paths)
    for problem in problems:
        warn(problem.message)
    if not is_loopback(host):
        click.echo(exposure_warning(host, port), err=True)
    server = make_server(dashboard_command(paths), host, port)
    try:
        server.serve()
    except OSError as exc:
        click.echo(f"trainwatch: cannot serve on {host}:{port}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
