"""`trainwatch serve` safety and errors: where it listens, what it warns, whom it answers.

The real server runs as a subprocess on a free loopback port. Nothing here binds a
non-loopback address: the --host 0.0.0.0 warning is checked in-process with the server
stubbed, and a 0.0.0.0-configured server's pages are checked through aiohttp's test server,
which itself listens on 127.0.0.1.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from _browser_cdp import end_process_group
from _serve_helpers import free_port, listening_addresses, seed_004_copy, server_stderr, start_serve, wait_for_port
from aiohttp.test_utils import TestClient, TestServer

from trainwatch import serve


@pytest.fixture(scope="module")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """`trainwatch serve LOG --port P`, with no --host: the default."""
    cwd = tmp_path_factory.mktemp("serve")
    log = seed_004_copy(cwd / "logs")
    port = free_port()
    proc = start_serve([str(log), "--port", str(port)], cwd)
    try:
        wait_for_port(port, proc, cwd)
        yield port, cwd
    finally:
        end_process_group(proc)


def _get(port: int, host_header: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/")
    if host_header is not None:
        request.add_header("Host", host_header)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_default_listens_on_loopback_only_and_warns_nothing(local_server: tuple[int, Path]) -> None:
    port, cwd = local_server
    assert listening_addresses(port) == {"127.0.0.1"}
    assert "WARNING" not in server_stderr(cwd)


def test_page_points_the_browser_back_at_the_address_it_used(local_server: tuple[int, Path]) -> None:
    port, _ = local_server
    status, page = _get(port)
    assert status == 200
    assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
    # Through `ssh -L 9000:127.0.0.1:PORT` the browser says Host: localhost:9000; textual-serve
    # alone would send it to 127.0.0.1:PORT, which does not exist on the user's laptop.
    status, page = _get(port, "localhost:9000")
    assert status == 200
    assert 'data-session-websocket-url="ws://localhost:9000/ws"' in page
    assert 'src="http://localhost:9000/static/js/textual.js"' in page


def test_loopback_server_refuses_other_host_names(local_server: tuple[int, Path]) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name; it gets nothing."""
    port, _ = local_server
    status, body = _get(port, f"rebind.attacker.example:{port}")
    assert status == 403
    assert "gpt2_megatron" not in body
    status, _ = _get(port, 'x"><script>')
    assert status == 400


async def test_websocket_from_another_site_is_refused(local_server: tuple[int, Path]) -> None:
    """Browsers let any page open ws://127.0.0.1:PORT; they do send its Origin."""
    port, _ = local_server
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(f"http://127.0.0.1:{port}/ws", headers={"Origin": "https://attacker.example"})
    assert refused.value.status == 403


class StubServer:
    """Stands in for textual-serve: records where it was asked to listen, binds nothing."""

    started: list[tuple[str, int]]

    def __init__(self, _command: str, host: str, port: int) -> None:
        self.address = (host, port)

    def serve(self) -> None:
        StubServer.started.append(self.address)


def test_non_loopback_host_warns_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    StubServer.started = []
    monkeypatch.setattr(serve, "make_server", StubServer)
    serve.run_server([str(seed_004_copy(tmp_path))], host="0.0.0.0", port=8123)
    captured = capsys.readouterr()
    assert StubServer.started == [("0.0.0.0", 8123)]
    warning = [line for line in captured.err.splitlines() if "WARNING" in line]
    assert len(warning) == 1
    assert "0.0.0.0:8123" in warning[0]
    assert "NO authentication" in warning[0]
    assert "ssh -L 8123:127.0.0.1:8123" in warning[0]
    assert captured.out == ""


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.1.1"])
def test_loopback_hosts_do_not_warn(
    host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    StubServer.started = []
    monkeypatch.setattr(serve, "make_server", StubServer)
    serve.run_server([str(seed_004_copy(tmp_path))], host=host, port=8123)
    assert StubServer.started == [(host, 8123)]
    assert "WARNING" not in capsys.readouterr().err


async def test_server_bound_to_all_interfaces_gives_usable_urls() -> None:
    """textual-serve alone writes ws://0.0.0.0:PORT/ws into the page: no remote browser can open that."""
    server = serve.make_server("true", "0.0.0.0", 8123)
    client = TestClient(TestServer(await server._make_app(), host="127.0.0.1"))
    await client.start_server()
    try:
        response = await client.get("/", headers={"Host": "gpu-node-7.cluster:8123"})
        page = await response.text()
    finally:
        await client.close()
    assert response.status == 200
    assert 'data-session-websocket-url="ws://gpu-node-7.cluster:8123/ws"' in page
    assert "0.0.0.0" not in page


def _run_serve(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainwatch", "serve", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_missing_textual_serve_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # An empty `textual_serve` package ahead on the path: `textual_serve.server` is not there,
    # exactly as when the [web] extra is not installed.
    shadow = tmp_path / "shadow"
    (shadow / "textual_serve").mkdir(parents=True)
    (shadow / "textual_serve" / "__init__.py").write_text("")
    env = {**os.environ, "PYTHONPATH": str(shadow)}
    result = _run_serve([str(seed_004_copy(tmp_path)), "--port", str(free_port())], tmp_path, env)
    assert result.returncode == 2
    assert result.stderr.strip() == "trainwatch: `serve` needs textual-serve: pip install 'trainwatch-tui[web]'"
    assert "Traceback" not in result.stderr


def test_port_in_use_is_one_line_and_exit_2(local_server: tuple[int, Path], tmp_path: Path) -> None:
    port, _ = local_server
    result = _run_serve([str(seed_004_copy(tmp_path)), "--port", str(port)], tmp_path)
    assert result.returncode == 2
    assert re.fullmatch(rf"trainwatch: cannot serve on 127\.0\.0\.1:{port}: .*address already in use\n", result.stderr)


def test_stdin_cannot_be_served(tmp_path: Path) -> None:
    """Each browser session runs its own dashboard process, whose stdin is textual-serve's pipe."""
    result = _run_serve(["-", "--port", str(free_port())], tmp_path)
    assert result.returncode == 2
    assert "cannot read stdin" in result.stderr
    assert "Traceback" not in result.stderr


URL = re.compile(r"""(?:https?|wss?)://[^\s"'<>()]+""")
CSS_FETCH = re.compile(r"""@import|url\(\s*["']?(?:[a-z]+:)?//""")
XML_NAMESPACE = re.compile(r"""xmlns(?::\w+)?="[^"]*\"""")  # a name, never fetched


def test_page_loads_nothing_from_outside_the_server(local_server: tuple[int, Path]) -> None:
    """An air-gapped cluster reaches no CDN: the page, its stylesheets and fonts all come from us."""
    port, _ = local_server
    status, page = _get(port)
    assert status == 200
    own = f"127.0.0.1:{port}/"
    urls = URL.findall(XML_NAMESPACE.sub("", page))
    assert urls and all(u.split("://", 1)[1].startswith(own) for u in urls), urls
    assert "googleapis" not in page
    assert 'font-family: "Roboto Mono"' in page  # the font the page and terminal ask for, declared
    fonts = [u for u in urls if u.endswith(".ttf")]
    stylesheets = [u for u in urls if u.endswith(".css")]
    assert len(fonts) == 2 and stylesheets
    for url in fonts + stylesheets:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
        assert response.status == 200 and len(body) > 1000
        if url.endswith(".css"):
            assert not CSS_FETCH.search(body.decode()), url  # no @import, no font or image from elsewhere


def test_offline_page_keeps_the_template_but_the_remote_stylesheet() -> None:
    template = (
        '<head><link rel="stylesheet" href="{{ config.static.url }}css/xterm.css" />\n'
        '<link\n  rel="stylesheet"\n  href="https://fonts.googleapis.com/css?family=Roboto%20Mono"\n/>\n'
        '<script src="{{ config.static.url }}js/textual.js"></script></head>'
    )
    page = serve.offline_page(template)
    assert "https://" not in page
    assert page.startswith('<head><link rel="stylesheet" href="{{ config.static.url }}css/xterm.css" />')
    assert page.endswith('<script src="{{ config.static.url }}js/textual.js"></script></head>')
    assert "{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf" in page
