"""The demo's command line: the address checked before any loading, and the same command under ``litestar``.

The check is held to uvicorn itself: for each way a port can be taken, uvicorn's own start-up
(``uvicorn.Server.startup``) must fail exactly when the check refuses.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from litestar_listing.demo import cli, data, mongo_data
from tests.demo.test_demo_api import DEMO_BACKENDS

pytestmark = pytest.mark.skipif(not DEMO_BACKENDS, reason="the demo runs on the SQLAlchemy and Piccolo backends")

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


# ------------------------------------------------------------------------------------------ the address check


@pytest.fixture
def nothing_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Loaders and uvicorn that record a call instead of running: the list must stay empty."""
    called: list[str] = []

    def loader(name: str) -> Callable[..., Awaitable[None]]:
        async def load(*_arguments: Any, **_options: Any) -> None:
            called.append(name)

        return load

    def run(*_arguments: Any, **_options: Any) -> None:
        called.append("uvicorn.run")

    monkeypatch.setattr(data, "load", loader("load"))
    monkeypatch.setattr(mongo_data, "load_documents", loader("load_documents"))
    monkeypatch.setattr(uvicorn, "run", run)
    return called


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port another socket listens on, as a running server would."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind((HOST, 0))
        server.listen()
        yield server.getsockname()[1]


@pytest.mark.parametrize(
    "arguments",
    [
        [],
        ["--workers", "2"],
        ["--backend", "piccolo", "--database", "sqlite:///never-opened.sqlite"],
        ["--backend", "beanie", "--database", "mongodb://mongo.invalid:27017/flights"],
    ],
    ids=["default", "workers", "piccolo", "beanie"],
)
def test_a_busy_port_stops_the_demo_before_anything_is_loaded(
    arguments: list[str], busy_port: int, nothing_loads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["demo", *arguments, "--port", str(busy_port)]) == 1
    assert nothing_loads == []
    captured = capsys.readouterr()
    assert captured.out == ""
    message = " ".join(captured.err.split())
    assert message.startswith(
        f"Error: cannot listen on {HOST}:{busy_port} (Address already in use); nothing was loaded."
    )
    # A port above it that is free now is suggested, and it is free.
    suggested = re.search(r"--port (\d+) is free now, or --port 0 takes any free port\.$", message)
    assert suggested is not None, message
    port = int(suggested.group(1))
    assert busy_port < port <= busy_port + 10
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, port))


def test_the_quick_start_quotes_the_message(
    busy_port: int, nothing_loads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["demo", "--port", str(busy_port)]) == 1
    printed = " ".join(capsys.readouterr().err.split())
    suggested = re.search(r"--port (\d+) is free", printed)
    assert suggested is not None
    # The page shows the default port and the one above it; the test's ports are the kernel's choice.
    quoted = printed.replace(f"--port {suggested.group(1)} ", "--port 8001 ").replace(f":{busy_port} ", ":8000 ")
    page = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    assert f"$ litestar-listing demo --port 8000\n{quoted}\n" in page


def test_a_host_of_another_machine_is_named(nothing_loads: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of this machine.
    assert cli.main(["demo", "--host", "192.0.2.1", "--port", "8000"]) == 1
    assert nothing_loads == []
    message = " ".join(capsys.readouterr().err.split())
    assert message.startswith("Error: cannot listen on 192.0.2.1:8000 (Cannot assign requested address)")
    assert message.endswith("--host must be a name or an address of this machine.")


def test_load_only_checks_no_port(busy_port: int, nothing_loads: list[str], tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    assert cli.main(["demo", "--database", database, "--load-only", "--port", str(busy_port)]) == 0
    assert nothing_loads == ["load"]


def test_port_0_serves_on_the_port_the_system_chose(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served: list[dict[str, Any]] = []

    async def load(url: str, *, progress: bool = False) -> None:
        assert progress

    def run(_app: Any, **options: Any) -> None:
        served.append(options)

    monkeypatch.setattr(data, "load", load)
    monkeypatch.setattr(uvicorn, "run", run)
    assert cli.main(["demo", "--database", f"sqlite:///{tmp_path / 'demo.sqlite'}", "--port", "0"]) == 0
    [options] = served
    port = options["port"]
    assert (options["host"], port > 0) == (HOST, True)
    assert f"http://{HOST}:{port}/schema/swagger" in capsys.readouterr().out


async def _uvicorn_listens(port: int, workers: int) -> bool:
    """Whether uvicorn starts listening on ``HOST:port`` as ``uvicorn.run`` would, then shut it down."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise NotImplementedError

    config = uvicorn.Config(app, host=HOST, port=port, workers=workers, lifespan="off", log_config=None)
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)  # as Server.serve sets it before its start-up
    shared: socket.socket | None = None
    try:
        if workers > 1:  # uvicorn.run: one socket of its own, which the worker processes listen on
            shared = config.bind_socket()
        await server.startup(sockets=None if shared is None else [shared])
    except (SystemExit, OSError):  # uvicorn's start-up failure exits with status 3
        return False
    else:
        await server.shutdown()
        return True
    finally:
        if shared is not None:
            shared.close()


def _occupied(how: str) -> socket.socket:
    """A loopback socket holding a port: listening, or only bound (with or without ``SO_REUSEADDR``)."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if how == "bound, reusable":
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind((HOST, 0))
    if how == "listening":
        holder.listen()
    return holder


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(("how", "usable"), [("listening", False), ("bound", False), ("bound, reusable", True)])
def test_the_check_agrees_with_uvicorn(how: str, usable: bool, workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # uvicorn logs its failure; not to the handlers an application of another test left on the root logger.
    monkeypatch.setattr(logging.getLogger("uvicorn.error"), "propagate", False)
    with _occupied(how) as holder:
        port = holder.getsockname()[1]
        try:
            cli.check_listen(HOST, port, workers=workers)
        except OSError:
            checked = False
        else:
            checked = True
        assert (checked, asyncio.run(_uvicorn_listens(port, workers))) == (usable, usable)
