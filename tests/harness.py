"""The demo as a real server process on loopback: the one harness of ``scripts/``, ``benchmarks/`` and the tests.

``load_demo`` fills a database with the demo's own loader (``litestar-listing demo --load-only``);
``serve_demo`` starts ``litestar-listing demo`` (uvicorn) for a backend x database on a free port of
127.0.0.1, waits until it answers, and stops it as Ctrl+C would. ``start`` does the same for any
command given its port (the benchmarks' uvicorn apps); ``running`` stops a server when a block ends.

It lives outside the package (the wheel ships the demo, not the means to test it) and imports only
the standard library and httpx (a dependency of Litestar) when loaded: ``nox -s package`` runs it in a
virtualenv that has the build tools and httpx, not the package. ``python scripts/<name>.py`` and
``python benchmarks/<name>.py`` put the repository root first on ``sys.path`` to import it as
``tests.harness``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from tests.matrix import TARGETS

__all__ = (
    "HOST",
    "MARIADB_URL",
    "POSTGRES_URL",
    "SCHEMA_PATH",
    "SQL_BACKENDS",
    "SQL_DATABASES",
    "Combination",
    "Server",
    "ServerError",
    "Stopped",
    "asgi_get",
    "combinations",
    "demo_command",
    "ensure_postgres_database",
    "free_port",
    "http_client",
    "http_get",
    "load_demo",
    "mariadb_url",
    "postgres_url",
    "prepare_databases",
    "progress_line",
    "running",
    "say",
    "serve_demo",
    "server_errors",
    "start",
    "start_demo",
)

HOST = "127.0.0.1"
SQL_BACKENDS = ("sqlalchemy", "piccolo")
"""The backends the demo serves from a SQL database."""
SQL_DATABASES = ("sqlite", "postgresql", "mariadb")
"""The SQL databases the demo runs on (MariaDB on SQLAlchemy only: ``combinations``)."""
SCHEMA_PATH = "/schema/openapi.json"
POSTGRES_URL = os.environ.get("LISTING_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
"""The PostgreSQL server of the tests and scripts; its path names a database that exists."""
MARIADB_URL = os.environ.get("LISTING_MARIADB_URL", "mysql://root@127.0.0.1:3306/test")
"""The MariaDB server of the tests and scripts."""
_IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
_ATTEMPTS = 3
"""Starts tried when another process took the free port between the probe and uvicorn's bind."""


class ServerError(RuntimeError):
    """A server did not start, or the demo's loader failed; the message carries the end of its output."""


_STARTED = time.monotonic()
"""When this module was imported: about when the program that imports it started."""


def progress_line(message: str, *, label: str | None = None, since: float = _STARTED) -> str:
    """``[<label> <seconds>s] <message>``: the one shape of progress, of the scripts, benchmarks and tests.

    Args:
        message: What is happening.
        label: Whose progress; default: the running program's file name without ``.py`` (``bench`` for
            ``benchmarks/bench.py``, the modules it imports included).
        since: A ``time.monotonic()`` the seconds count from; default: when this module was imported.
    """
    who = label if label is not None else Path(sys.argv[0]).stem
    return f"[{who} {time.monotonic() - since:5.0f}s] {message}"


def say(message: str) -> None:
    """Write ``progress_line(message)`` to standard error at once.

    Flushed, because nox interleaves a session's output with its subprocesses'. Inside pytest, which
    captures standard error, tests use the ``progress`` fixture of ``tests/conftest.py`` instead.
    """
    sys.stderr.write(progress_line(message) + "\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class Combination:
    """One backend x database the demo is served on.

    Attributes:
        backend: ``sqlalchemy``, ``piccolo`` (or ``beanie``, on MongoDB).
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


def combinations(urls: Mapping[str, str], backends: Sequence[str], *, each_once: bool = False) -> list[Combination]:
    """Every backend x prepared database (``{database: url}``) that is a target of tests/matrix.py, backends first.

    In the order given; Piccolo, which has no MySQL engine, is left out on MariaDB. ``each_once``
    (the short profiles of CI): one combination per database, its backend the one used least so far,
    so that each database and each backend is served once (SQLAlchemy on SQLite, Piccolo on
    PostgreSQL, SQLAlchemy on MariaDB); the full profiles serve every combination.
    """
    served = {(target.backend, target.database) for target in TARGETS}
    every = [
        Combination(backend, database, url)
        for backend in backends
        for database, url in urls.items()
        if (backend, database) in served
    ]
    if not each_once:
        return every
    chosen: list[Combination] = []
    for database in dict.fromkeys(combination.database for combination in every):
        used = [combination.backend for combination in chosen]
        chosen.append(
            min((each for each in every if each.database == database), key=lambda each: used.count(each.backend))
        )
    return chosen


def demo_command(*arguments: str) -> list[str]:
    """``litestar-listing demo <arguments>`` run by this interpreter."""
    return [sys.executable, "-m", "litestar_listing.demo.cli", "demo", *arguments]


# ------------------------------------------------------------------------------------------ databases


def postgres_url(database: str, server: str = POSTGRES_URL) -> str:
    """The plain ``postgresql://`` URL of ``database`` on the server of the URL ``server``."""
    parts = urlsplit(server)
    scheme = "postgresql" if parts.scheme.startswith("postgres") else parts.scheme
    return urlunsplit((scheme, parts.netloc, f"/{database}", parts.query, ""))


def mariadb_url(database: str, server: str = MARIADB_URL) -> str:
    """The plain ``mysql://`` URL of ``database`` on the MariaDB server of the URL ``server``."""
    parts = urlsplit(server)
    return urlunsplit(("mysql", parts.netloc, f"/{database}", parts.query, ""))


TEST_TIME_ZONE = "Asia/Tokyo"
"""The session time zone of the test databases on PostgreSQL: nine hours from UTC, all year."""


def ensure_postgres_database(url: str, *, maintenance: str = "postgres") -> bool:
    """Create the database ``url`` names when it is missing; callable inside a running event loop.

    Created as the test databases are: code-point collation (``C``) and UTF-8 character classes, so
    text orders as on SQLite; and a session time zone of ``TEST_TIME_ZONE``, not UTC, so that SQL
    that reads a ``timestamptz`` in the session's zone instead of UTC (a date part) is caught.

    Args:
        url: ``postgresql://`` (or ``postgresql+asyncpg://``) URL of the database.
        maintenance: A database of the same server to connect to while creating it.

    Returns:
        Whether it was created (False: it existed).

    Raises:
        ServerError: The server is unreachable, refused, or ``url`` names no database.
    """
    import asyncpg

    name = urlsplit(url).path.lstrip("/")
    if not name:
        msg = f"{url!r} names no database"
        raise ServerError(msg)

    async def create() -> bool:
        connection: Any = await asyncpg.connect(postgres_url(maintenance, url), timeout=5)
        try:
            quoted = '"' + name.replace('"', '""') + '"'
            existed = await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name) is not None
            if not existed:
                await connection.execute(
                    f"CREATE DATABASE {quoted} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'"
                )
            await connection.execute(f"ALTER DATABASE {quoted} SET timezone TO '{TEST_TIME_ZONE}'")
            return not existed
        finally:
            await connection.close()

    try:
        # A thread of its own: callers may be inside a running event loop.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as executor:
            return executor.submit(asyncio.run, create()).result()
    except (OSError, asyncio.TimeoutError, asyncpg.PostgresError) as error:
        msg = f"PostgreSQL at {postgres_url(name, url)} is not usable: {error!r}"
        raise ServerError(msg) from error


def mariadb_connection(url: str, *, server: bool = False) -> Any:
    """A PyMySQL connection (autocommit) to the database ``url`` names, or to its server alone (``server``)."""
    import pymysql

    parts = urlsplit(url)
    return pymysql.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 3306,
        user=parts.username or "root",
        password=parts.password or "",
        database=None if server else parts.path.lstrip("/") or None,
        connect_timeout=5,
        autocommit=True,
    )


def ensure_mariadb_database(url: str) -> bool:
    """Create the MariaDB database ``url`` names when it is missing, in ``utf8mb4_nopad_bin``.

    Returns:
        Whether it was created (False: it existed).

    Raises:
        ServerError: The server is unreachable or refused, or ``url`` names no database.
    """
    import pymysql

    name = urlsplit(url).path.lstrip("/")
    if not name:
        msg = f"{url!r} names no database"
        raise ServerError(msg)
    try:
        with contextlib.closing(mariadb_connection(url, server=True)) as connection, connection.cursor() as cursor:
            existed = bool(cursor.execute("SHOW DATABASES LIKE %s", (name,)))
            if not existed:
                cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin")
            return not existed
    except pymysql.Error as error:
        msg = f"MariaDB at {url} is not usable: {error!r}"
        raise ServerError(msg) from error


def drop_mariadb_databases(url: str, names: Sequence[str]) -> None:
    """Drop the MariaDB databases ``names`` on the server of ``url``."""
    with contextlib.closing(mariadb_connection(url, server=True)) as connection, connection.cursor() as cursor:
        for name in names:
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")


def load_demo(url: str, *, backend: str | None = None) -> float:
    """Load the demo data into ``url`` with the demo's loader; returns at once when it is loaded.

    Args:
        url: What ``litestar-listing demo --database`` takes (``sqlite:///...``, ``postgresql://...``,
            ``mongodb://...``).
        backend: ``beanie`` for a MongoDB URL; None for the SQL databases.

    Returns:
        The seconds it took.

    Raises:
        ServerError: The loader failed; the message has its output.
    """
    started = time.monotonic()
    arguments = ("--backend", backend) if backend else ()
    command = demo_command(*arguments, "--database", url, "--load-only")
    result = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603 - fixed arguments
    if result.returncode != 0:
        msg = f"loading the demo data into {url} failed:\n{result.stdout}{result.stderr}"
        raise ServerError(msg)
    return time.monotonic() - started


def prepare_databases(
    databases: Sequence[str], server_database: str = "litestar_listing_hostile", *, chosen: bool = False
) -> tuple[dict[str, str], list[str]]:
    """Load the demo data into each of ``databases`` unless it is there already.

    Args:
        databases: Among ``sqlite`` (the demo's cached file), ``postgresql`` and ``mariadb`` (the
            database ``server_database`` on the server of ``LISTING_POSTGRES_URL`` or
            ``LISTING_MARIADB_URL``, created if missing).
        server_database: The server database's name.
        chosen: The caller named ``databases`` (a command line's ``--databases``), so each must run.

    Returns:
        ``{database: URL for --database}`` of the usable databases, and a note per skipped one
        (its server unreachable). Under ``CI=true``, or when ``chosen``, an unreachable server is an
        error instead.

    Raises:
        ServerError: Loading failed, or a server is unreachable under ``CI=true`` or ``chosen``.
    """
    from litestar_listing.demo.data import default_sqlite_path

    servers = {
        "postgresql": (postgres_url, ensure_postgres_database),
        "mariadb": (mariadb_url, ensure_mariadb_database),
    }
    urls: dict[str, str] = {}
    skipped: list[str] = []
    for database in databases:
        if database in servers:
            url_of, ensure = servers[database]
            url = url_of(server_database)
            try:
                ensure(url)
            except ServerError as error:
                if _IN_CI or chosen:
                    why = "CI=true" if _IN_CI else "--databases names it"
                    msg = f"{error} ({why}: a missing database is a failure)"
                    raise ServerError(msg) from error
                skipped.append(f"{database}: skipped, {error}")
                continue
        else:
            url = f"sqlite:///{default_sqlite_path()}"
        seconds = load_demo(url)
        say(f"  {database}: {url} ready ({seconds:.1f} s)")
        urls[database] = url
    return urls, skipped


# ------------------------------------------------------------------------------------------ servers


def free_port() -> int:
    """A loopback TCP port nobody listens on now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def http_client(timeout: float) -> httpx.Client:
    """An httpx client that opens a connection per request and closes it after (``Connection: close``).

    What the benchmarks time one request with: each pays for its own connection, as a new client's
    first request does, so a timing does not depend on whether an earlier request left one open.
    """
    return httpx.Client(timeout=timeout, headers={"Connection": "close"})


def http_get(client: httpx.Client, url: str) -> tuple[int, bytes]:
    """The status and body of one GET of ``url``; ``(0, b"")`` when nothing answered (refused, timed out)."""
    try:
        response = client.get(url)
    except httpx.TransportError:
        return 0, b""
    return response.status_code, response.content


@dataclass(frozen=True)
class Stopped:
    """How a server ended.

    Attributes:
        graceful: It stopped on Ctrl+C (SIGINT) within the grace period, or had already exited.
        exit_code: Its exit status; None when it never started.
    """

    graceful: bool
    exit_code: int | None


@dataclass
class Server:
    """A running server process.

    Attributes:
        base_url: ``http://127.0.0.1:<port>``.
        log: The file receiving its standard output and error (uvicorn's access log included).
        process: The process.
        label: Its name in messages, e.g. ``piccolo-postgresql``.
    """

    base_url: str
    log: Path
    process: subprocess.Popen[bytes]
    label: str

    @property
    def pid(self) -> int:
        """The process id."""
        return self.process.pid

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.process.poll() is None

    def log_text(self) -> str:
        """The whole log so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the log."""
        return "\n".join(self.log_text().splitlines()[-lines:])

    def stop(self, grace: float = 30.0) -> Stopped:
        """Stop as Ctrl+C would (uvicorn's graceful shutdown: the app's shutdown hooks run).

        Args:
            grace: Seconds to wait before killing it.
        """
        if self.process.poll() is not None:
            return Stopped(graceful=True, exit_code=self.process.returncode)
        self.process.send_signal(signal.SIGINT)
        try:
            return Stopped(graceful=True, exit_code=self.process.wait(timeout=grace))
        except subprocess.TimeoutExpired:
            self.process.kill()
            return Stopped(graceful=False, exit_code=self.process.wait())


def start(
    command: Callable[[int], Sequence[str]],
    log: Path,
    *,
    label: str,
    ready_path: str,
    any_status: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120.0,
) -> Server:
    """Start ``command(port)`` on a free loopback port and wait until ``ready_path`` answers.

    Args:
        command: The command line for a port (the server must listen on ``HOST`` and that port).
        log: Where its output goes (created, with its folder).
        label: Its name in messages.
        ready_path: The path that must answer 200 (any status with ``any_status``) before it counts
            as started, e.g. ``/schema/openapi.json``.
        any_status: Ready once ``ready_path`` answers at all.
        env: Variables added to this process's environment.
        cwd: Its working directory (default: this process's).
        timeout: Seconds it may take to answer.

    Returns:
        The running server; the caller stops it (``Server.stop``, or ``with running(server)``).

    Raises:
        ServerError: It exited, or did not answer within ``timeout``; the message has the end of its log.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    for _attempt in range(_ATTEMPTS):
        port = free_port()
        with log.open("wb") as sink:
            process = subprocess.Popen(  # noqa: S603 - the caller's fixed command
                list(command(port)), stdout=sink, stderr=subprocess.STDOUT, env=environment, cwd=cwd
            )
        server = Server(f"http://{HOST}:{port}", log, process, label)
        deadline = time.monotonic() + timeout
        with http_client(timeout=30) as client:
            while server.alive() and time.monotonic() < deadline:
                status, _ = http_get(client, server.base_url + ready_path)
                if status == 200 or (any_status and status):
                    return server
                time.sleep(0.25)
        server.stop(grace=15)
        if "address already in use" not in server.log_text().lower():
            msg = f"the server {label} did not start within {timeout:g} s; the end of {log}:\n{server.log_tail()}"
            raise ServerError(msg)
    msg = f"no free port for the server {label} after {_ATTEMPTS} attempts"
    raise ServerError(msg)


@contextlib.contextmanager
def running(server: Server) -> Iterator[Server]:
    """``server`` for the duration of a ``with`` block; stopped (``Server.stop``) when it ends."""
    try:
        yield server
    finally:
        server.stop()


def start_demo(
    combination: Combination, log: Path, *, ready_path: str = SCHEMA_PATH, budget: float | None = 0.0
) -> Server:
    """Start ``litestar-listing demo`` for ``combination`` (its database loaded); the caller stops it.

    Args:
        combination: The backend and the database URL.
        log: Where the server's output goes.
        ready_path: What must answer 200 first (default: the OpenAPI schema).
        budget: ``--budget``: cost units per minute per client; 0 (the default here): none, as the
            fuzzers, scanners and load tests send thousands of lists from one address; None: the
            command's own default.

    Raises:
        ServerError: As ``start``.
    """
    arguments = ["--backend", combination.backend, "--database", combination.url, "--host", HOST]
    if budget is not None:
        arguments += ["--budget", f"{budget:g}"]
    return start(
        lambda port: demo_command(*arguments, "--port", str(port)),
        log,
        label=f"demo {combination.label}",
        ready_path=ready_path,
    )


def serve_demo(
    combination: Combination, log: Path, *, ready_path: str = SCHEMA_PATH, budget: float | None = 0.0
) -> contextlib.AbstractContextManager[Server]:
    """``start_demo`` for the duration of a ``with`` block, stopped when it ends (``running``).

    Raises:
        ServerError: As ``start``.
    """
    return running(start_demo(combination, log, ready_path=ready_path, budget=budget))


async def asgi_get(app: Any, path: str, query: str) -> tuple[int, bytes]:
    """Call the ASGI ``app`` as a server would for ``GET path?query``, with any query string.

    For requests HTTP clients refuse to send and for timing an app in process: httpx, and Litestar's
    test clients built on it, refuse a URL component over 65,536 characters (``httpx.InvalidURL``), and
    the cost guards and ``benchmarks/bench_parse.py`` send megabyte query strings. Everything else uses
    httpx, or ``litestar.testing`` for an app in process.

    Returns:
        The status and the body's bytes.
    """
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": [(b"host", b"testserver")],
        "client": (HOST, 1),
        "server": ("testserver", 80),
        "root_path": "",
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = next(message["status"] for message in sent if message["type"] == "http.response.start")
    return status, b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")


def server_errors(log: Path) -> list[str]:
    """The lines of a server log that report an unhandled exception or a 5xx answer."""
    lines = log.read_text(errors="replace").splitlines()
    return [line.strip() for line in lines if line.startswith("Traceback") or 'HTTP/1.1" 5' in line]
