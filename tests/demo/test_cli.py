"""The demo's command line: the address checked before any loading, and the same command under ``litestar``.

The check is held to uvicorn itself: for each way a port can be taken, uvicorn's own start-up
(``uvicorn.Server.startup``) must fail exactly when the check refuses.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from importlib.metadata import EntryPoint, distribution
from pathlib import Path
from typing import Any

import click
import pytest
import uvicorn
from click.testing import CliRunner
from litestar.cli import _utils as litestar_cli_utils
from litestar.cli.main import litestar_group

from litestar_listing.demo import cli, data, mongo_data
from tests.conftest import demo_sqlite_copy
from tests.demo.test_demo_api import DEMO_BACKENDS

pytestmark = pytest.mark.skipif(not DEMO_BACKENDS, reason="the demo runs on the SQLAlchemy and Piccolo backends")

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
ENTRY_POINT = EntryPoint("listing", "litestar_listing.demo.cli:listing", "litestar.commands")
"""What ``pyproject.toml`` declares; ``test_pyproject_declares_the_litestar_entry_point`` holds them equal."""
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


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
    # The reason in brackets is asyncio's, which differs between Python versions.
    assert message.startswith("Error: cannot listen on 192.0.2.1:8000 (")
    assert message.endswith("--host must be a name or an address of this machine.")


@pytest.mark.parametrize(
    "database",
    [
        "mysql://root@127.0.0.1:3306/test",
        "mysql+asyncmy://root@127.0.0.1:3306/test",
        "mariadb://root@127.0.0.1:3306/test",
        "MariaDB+asyncmy://root@127.0.0.1:3306/test",
    ],
)
def test_piccolo_refuses_mariadb_before_anything_is_loaded(
    database: str, busy_port: int, nothing_loads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Refused before the address is checked: the busy port is not what the message names.
    assert cli.main(["demo", "--backend", "piccolo", "--database", database, "--port", str(busy_port)]) == 2
    assert nothing_loads == []
    message = " ".join(capsys.readouterr().err.split())
    assert message.endswith(
        "Error: --backend piccolo cannot serve a MySQL/MariaDB --database: Piccolo has no MySQL engine; "
        "use --backend sqlalchemy"
    )


@pytest.mark.parametrize(
    ("database", "loaded"),
    [
        ("mysql://root@db.invalid:3306/flights", "mysql+asyncmy://root@db.invalid:3306/flights"),
        ("mariadb://demo:p%40ss@db.invalid/flights", "mariadb+asyncmy://demo:p%40ss@db.invalid/flights"),
    ],
)
def test_a_mariadb_database_is_loaded_through_asyncmy(
    database: str, loaded: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    urls: list[str] = []

    async def load(url: str, *, progress: bool = False) -> None:
        urls.append(url)

    monkeypatch.setattr(data, "load", load)
    assert cli.main(["demo", "--database", database, "--load-only"]) == 0
    assert urls == [loaded]


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


# ------------------------------------------------------------------------------------------ litestar listing


def _option_lines(help_text: str) -> list[str]:
    """The help after its usage line, with whitespace made uniform (the wrapping follows the terminal)."""
    _usage, _, rest = help_text.partition("\n\n")
    return " ".join(rest.split()).split(" --")


@pytest.fixture
def litestar_cli(monkeypatch: pytest.MonkeyPatch) -> click.Group:
    """Litestar's root command group, made as ``litestar`` makes it, with this project's entry point installed."""
    monkeypatch.chdir(ROOT / "tests")  # no app.py to discover: the demo needs none of the user's
    # Litestar wraps the commands of an entry point in place; the test leaves the module as it found it.
    monkeypatch.setattr(cli.demo, "callback", cli.demo.callback)
    monkeypatch.setattr(
        litestar_cli_utils, "entry_points", lambda group: [ENTRY_POINT] if group == "litestar.commands" else []
    )
    return litestar_cli_utils.LitestarExtensionGroup(
        name="litestar",
        params=litestar_group.params,
        callback=litestar_group.callback,
        context_settings=litestar_group.context_settings,
    )


def test_pyproject_declares_the_litestar_entry_point() -> None:
    if sys.version_info >= (3, 11):
        import tomllib

        declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        assert declared["entry-points"]["litestar.commands"] == {ENTRY_POINT.name: ENTRY_POINT.value}
        assert declared["scripts"] == {"litestar-listing": "litestar_listing.demo.cli:main"}
    else:
        pytest.skip("pyproject.toml is read with tomllib, from Python 3.11 (the full matrix runs there)")


def test_litestar_listing_demo_has_the_same_options(
    litestar_cli: click.Group, capsys: pytest.CaptureFixture[str]
) -> None:
    assert litestar_cli.get_command(click.Context(litestar_cli), "listing") is cli.listing
    result = CliRunner().invoke(litestar_cli, ["listing", "demo", "--help"], prog_name="litestar")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: litestar listing demo [OPTIONS]\n")
    assert cli.main(["demo", "--help"]) == 0
    own = capsys.readouterr().out
    assert own.startswith("Usage: litestar-listing demo [OPTIONS]\n")
    assert _option_lines(result.output) == _option_lines(own)
    for option in ("--backend", "--database", "--replica", "--workers", "--host", "--port", "--load-only"):
        assert f" {option} " in own


def test_litestar_listing_demo_refuses_as_the_script(
    litestar_cli: click.Group, nothing_loads: list[str], busy_port: int
) -> None:
    runner = CliRunner()
    busy = runner.invoke(litestar_cli, ["listing", "demo", "--port", str(busy_port)], prog_name="litestar")
    assert busy.exit_code == 1
    assert f"cannot listen on {HOST}:{busy_port} (Address already in use)" in " ".join(busy.output.split())
    wrong = runner.invoke(litestar_cli, ["listing", "demo", "--backend", "beanie"], prog_name="litestar")
    assert wrong.exit_code == 2
    assert "--backend beanie needs --database mongodb://" in " ".join(wrong.output.split())
    assert nothing_loads == []


def test_litestar_listing_demo_load_only(litestar_cli: click.Group, tmp_path_factory: pytest.TempPathFactory) -> None:
    path = demo_sqlite_copy(tmp_path_factory.mktemp("litestar-cli"))  # the loader finds it loaded: seconds
    arguments = ["listing", "demo", "--database", f"sqlite:///{path}", "--load-only"]
    result = CliRunner().invoke(litestar_cli, arguments, prog_name="litestar")
    assert result.exit_code == 0, result.output
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT count(*) FROM flights").fetchone() == (336_776,)
    connection.close()


def test_the_installed_litestar_command_offers_listing_demo() -> None:
    installed = {(point.group, point.name, point.value) for point in distribution("litestar-listing").entry_points}
    if (ENTRY_POINT.group, ENTRY_POINT.name, ENTRY_POINT.value) not in installed:
        message = "the installed litestar-listing predates its litestar.commands entry point: reinstall it"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    command = [str(Path(sys.executable).parent / "litestar"), "listing", "demo", "--help"]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    result = subprocess.run(  # noqa: S603 - fixed arguments
        command, capture_output=True, text=True, check=False, cwd=ROOT / "tests", env=environment
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: litestar listing demo [OPTIONS]")
    assert " --port " in result.stdout
