"""SQLAlchemy models of the nycflights13 demo: the five data tables plus demo users and their watch lists.

Column names are the CSVs' own; a column is nullable exactly where its CSV holds ``NA`` values.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    DDL,
    JSON,
    Boolean,
    DateTime,
    Dialect,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    event,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, foreign, mapped_column, relationship
from sqlalchemy.types import TypeDecorator, TypeEngine, UserDefinedType

from litestar_listing.backends.relational.databases import SQLITE
from litestar_listing.backends.relational.indexes import SQLITE_TRIGRAM_VERSION, TRIGRAM_EXTENSION, create_index
from litestar_listing.core.indexes import IndexKey, IndexKind, IndexNeed

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy import Connection, Table
    from sqlalchemy.sql.compiler import DDLCompiler
    from sqlalchemy.sql.ddl import BaseDDLElement
    from sqlalchemy.sql.schema import SchemaItem

__all__ = (
    "Airline",
    "Airport",
    "DemoBase",
    "DemoMeta",
    "DemoUser",
    "Flight",
    "Plane",
    "UTCDateTime",
    "WatchedFlight",
    "Weather",
)

_NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class _SQLiteTimestamptz(UserDefinedType[str]):
    """The column type Piccolo declares for ``Timestamptz`` on SQLite (its reader keys on the name)."""

    cache_ok = True

    def get_col_spec(self, **_kwargs: Any) -> str:
        return "TIMESTAMPTZ"


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime, stored on SQLite as the text Piccolo's ``Timestamptz`` stores.

    The demo serves one database through both backends. SQLite has no datetime type: values are
    compared as text, so both ORMs must write and bind the same text. This is Piccolo's,
    ``str(value.astimezone(UTC))`` (``2013-01-01 10:00:00+00:00``), declared ``TIMESTAMPTZ`` so that
    Piccolo reads it back as a datetime. PostgreSQL stores a native ``timestamptz``, MariaDB a
    ``DATETIME`` in UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        """``TIMESTAMPTZ`` text on SQLite, ``timestamptz`` elsewhere."""
        if dialect.name == "sqlite":
            return dialect.type_descriptor(_SQLiteTimestamptz())
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        """UTC; on SQLite as Piccolo's text, on MariaDB without its offset.

        Raises:
            TypeError: ``value`` is naive.
        """
        if value is None:
            return None
        if value.tzinfo is None:
            msg = "UTCDateTime takes aware datetimes only"
            raise TypeError(msg)
        value = value.astimezone(timezone.utc)
        if dialect.name == "sqlite":
            return str(value)
        # MariaDB's DATETIME holds no offset: the UTC wall time, read back as UTC.
        return value.replace(tzinfo=None) if dialect.name in {"mysql", "mariadb"} else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        """An aware UTC datetime."""
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        assert isinstance(value, datetime)  # noqa: S101 - the column holds nothing else
        return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def _trigram(table: str, column: str) -> Index:
    """The trigram index of a searched column on PostgreSQL, as the index advisor writes it (docs: indexes)."""
    return Index(f"ix_{table}_{column}_trgm", text(f"lower({column}) gin_trgm_ops"), postgresql_using="gin").ddl_if(
        dialect="postgresql"
    )


class DemoBase(DeclarativeBase):
    """Declarative base of the demo models, with a metadata of its own (never mixed with an app's).

    Text columns are ``VARCHAR(100)`` (MariaDB's ``VARCHAR`` needs a length) and decimals ``DOUBLE``
    (MariaDB's ``FLOAT`` has single precision), the same on every database.
    """

    metadata = MetaData(naming_convention=_NAMING_CONVENTION)


# The trigram indexes need PostgreSQL's pg_trgm extension (a trusted one: the database's owner may add it).
event.listen(
    DemoBase.metadata,
    "before_create",
    DDL(TRIGRAM_EXTENSION).execute_if(dialect="postgresql"),  # type: ignore[no-untyped-call]
)


class Airline(DemoBase):
    """An airline (``airlines.csv``, 16 rows)."""

    __tablename__ = "airlines"
    __table_args__ = (_trigram("airlines", "name"),)

    carrier: Mapped[str] = mapped_column(String(100), primary_key=True)
    """Two-letter carrier code, e.g. ``UA``."""
    name: Mapped[str] = mapped_column(String(100))
    """Full name, e.g. ``United Air Lines Inc.``."""


class Airport(DemoBase):
    """An airport (``airports.csv``); not every destination in ``flights`` has a row here."""

    __tablename__ = "airports"
    __table_args__ = (_trigram("airports", "name"),)

    faa: Mapped[str] = mapped_column(String(100), primary_key=True)
    """FAA code (three characters; one of them, ``369``, is all digits)."""
    name: Mapped[str] = mapped_column(String(100))
    """Usual name."""
    lat: Mapped[float] = mapped_column(Double)
    """Latitude in degrees."""
    lon: Mapped[float] = mapped_column(Double)
    """Longitude in degrees."""
    alt: Mapped[int] = mapped_column(Integer)
    """Altitude in feet."""
    tz: Mapped[int] = mapped_column(Integer)
    """Offset from GMT in whole hours (-10 to 8 in this data)."""
    dst: Mapped[str] = mapped_column(String(100))
    """Daylight saving time zone: ``A`` US standard, ``U`` unknown, ``N`` none."""
    tzone: Mapped[str | None] = mapped_column(String(100))
    """IANA time zone, e.g. ``America/New_York``; null for 3 airports."""


class Plane(DemoBase):
    """A plane (``planes.csv``); about 15 % of flights name a tail number that has no row here."""

    __tablename__ = "planes"
    __table_args__ = (_trigram("planes", "manufacturer"), _trigram("planes", "model"))

    tailnum: Mapped[str] = mapped_column(String(100), primary_key=True)
    """Tail number, e.g. ``N10156``."""
    year: Mapped[int | None] = mapped_column(Integer)
    """Year manufactured."""
    type: Mapped[str] = mapped_column(String(100))
    """Type of plane, e.g. ``Fixed wing multi engine``."""
    manufacturer: Mapped[str] = mapped_column(String(100))
    """Manufacturer, e.g. ``EMBRAER``."""
    model: Mapped[str] = mapped_column(String(100))
    """Model, e.g. ``EMB-145XR``."""
    engines: Mapped[int] = mapped_column(Integer)
    """Number of engines."""
    seats: Mapped[int] = mapped_column(Integer)
    """Number of seats."""
    speed: Mapped[int | None] = mapped_column(Integer)
    """Average cruising speed in mph; null for all but 23 planes."""
    engine: Mapped[str] = mapped_column(String(100))
    """Type of engine, e.g. ``Turbo-fan``."""
    specs: Mapped[dict[str, Any]] = mapped_column(JSON().with_variant(JSONB(), "postgresql"))
    """The plane's figures as a JSON document: ``engines``, ``seats``, ``engine_type`` and, for the
    planes whose cruising speed is known, ``speed`` (a key the resources declare; docs: query language,
    "Keys of JSON documents")."""


def _made_on(where: Callable[[Dialect], bool]) -> Callable[..., bool]:
    """A ``ddl_if``/``execute_if`` callable: the DDL is run on a database of ``dialect`` where ``where`` holds."""

    def made(  # the signature of SQLAlchemy's DDLIfCallable
        ddl: BaseDDLElement,
        target: SchemaItem | str,
        bind: Connection | None,
        tables: list[Table] | None = None,
        state: Any = None,
        *,
        dialect: Dialect,
        compiler: DDLCompiler | None = None,
        checkfirst: bool = False,
    ) -> bool:
        return where(dialect)

    return made


_not_postgresql = _made_on(lambda dialect: dialect.name != "postgresql")


def _has_trigrams(dialect: Dialect) -> bool:
    """Whether ``dialect``'s database is a SQLite with FTS5's trigram tokenizer (3.34 and later).

    An older SQLite (some Linux distributions' Python links one) makes no trigram table: its
    searches read every row, with the same answers.
    """
    version = getattr(dialect, "server_version_info", None) or ()
    return dialect.name == "sqlite" and tuple(version) >= SQLITE_TRIGRAM_VERSION


_sqlite_with_trigrams = _made_on(_has_trigrams)


class Flight(DemoBase):
    """A flight that departed NYC in 2013 (``flights.csv``, 336,776 rows).

    ``dest`` and ``tailnum`` carry no database foreign key: four destinations (SJU, BQN, STT, PSE)
    have no airport row and many tail numbers have no plane row, so those relations may be null.
    """

    __tablename__ = "flights"
    # The indexes ``litestar-listing indexes`` advises for the demo (tests/demo/test_indexes.py
    # checks that they are these), under the names it gives where this file did not name them first:
    # - the default order with its id tie-breaker, as the listing reads it: deep pages walk this
    #   index alone (see DEFERRED_OFFSET); and each tenant's own part of it (the carrier scope).
    # - the flights' ordering by delay, worst first, NULLs last (``indexed_orders``): NULLS LAST on
    #   PostgreSQL; a plain descending key elsewhere, where NULLs sort last in a descending order by
    #   themselves (SQLite and MariaDB have no NULLS LAST in an index).
    # - the key of each relation the filters cross. Two are widened by a second column for a computed
    #   value: the airports' ``departures`` count one tenant's flights per airport, which (origin,
    #   carrier) answers from the index alone; the airlines' ``fleet_size`` counts each carrier's
    #   distinct planes, which (carrier, tailnum) answers so (2 ms instead of 27 on SQLite).
    # - the trigram index of the searched tail number: PostgreSQL's pg_trgm, over the folded text; on
    #   SQLite an FTS5 trigram table beside flights (``_sqlite_trigram``, after the class).
    # Declared here so that the backends know which orders are an index walk (``FieldInfo.indexed``).
    __table_args__ = (
        Index("ix_flights_time_hour_id", text("time_hour DESC"), "id"),
        Index("ix_flights_carrier_time_hour_desc_id", "carrier", text("time_hour DESC"), "id"),
        Index("ix_flights_origin_carrier", "origin", "carrier"),
        Index("ix_flights_carrier_tailnum", "carrier", "tailnum"),
        Index("ix_flights_dep_delay_id", text("dep_delay DESC NULLS LAST"), "id").ddl_if(dialect="postgresql"),
        Index("ix_flights_dep_delay_desc_id", text("dep_delay DESC"), "id").ddl_if(callable_=_not_postgresql),
        _trigram("flights", "tailnum"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    """Surrogate key: 1 is the first CSV row, in file order."""
    year: Mapped[int] = mapped_column(Integer)
    """Year of departure (local time)."""
    month: Mapped[int] = mapped_column(Integer)
    """Month of departure (local time), 1 to 12."""
    day: Mapped[int] = mapped_column(Integer)
    """Day of departure (local time), 1 to 31."""
    dep_time: Mapped[int | None] = mapped_column(Integer)
    """Actual departure time as HHMM local (1 to 2400); null for cancelled flights."""
    sched_dep_time: Mapped[int] = mapped_column(Integer)
    """Scheduled departure time as HHMM local."""
    dep_delay: Mapped[int | None] = mapped_column(Integer)
    """Departure delay in minutes; negative for early departures."""
    arr_time: Mapped[int | None] = mapped_column(Integer)
    """Actual arrival time as HHMM local (1 to 2400)."""
    sched_arr_time: Mapped[int] = mapped_column(Integer)
    """Scheduled arrival time as HHMM local."""
    arr_delay: Mapped[int | None] = mapped_column(Integer)
    """Arrival delay in minutes; negative for early arrivals."""
    carrier: Mapped[str] = mapped_column(String(100), ForeignKey(Airline.carrier))
    """Carrier code (every one has an airline row)."""
    flight: Mapped[int] = mapped_column(Integer)
    """Flight number."""
    tailnum: Mapped[str | None] = mapped_column(String(100), index=True)
    """Plane tail number; no foreign key (see the class docstring)."""
    origin: Mapped[str] = mapped_column(String(100), ForeignKey(Airport.faa))
    """Origin airport: EWR, JFK or LGA."""
    dest: Mapped[str] = mapped_column(String(100), index=True)
    """Destination airport code; no foreign key (see the class docstring)."""
    air_time: Mapped[int | None] = mapped_column(Integer)
    """Time in the air in minutes."""
    distance: Mapped[int] = mapped_column(Integer)
    """Distance between the airports in miles."""
    hour: Mapped[int] = mapped_column(Integer)
    """Hour of the scheduled departure (local)."""
    minute: Mapped[int] = mapped_column(Integer)
    """Minute of the scheduled departure (local)."""
    time_hour: Mapped[datetime] = mapped_column(UTCDateTime)
    """Scheduled departure, truncated to the hour, as an aware UTC datetime."""

    airline: Mapped[Airline] = relationship(foreign_keys=[carrier], lazy="raise", viewonly=True)
    """The operating airline."""
    origin_airport: Mapped[Airport] = relationship(foreign_keys=[origin], lazy="raise", viewonly=True)
    """The NYC airport of departure."""
    dest_airport: Mapped[Airport | None] = relationship(
        primaryjoin=lambda: foreign(Flight.dest) == Airport.faa, lazy="raise", viewonly=True
    )
    """The destination airport; None when the code has no airport row."""
    plane: Mapped[Plane | None] = relationship(
        primaryjoin=lambda: foreign(Flight.tailnum) == Plane.tailnum, lazy="raise", viewonly=True
    )
    """The plane; None when the tail number is null or has no plane row."""


class Weather(DemoBase):
    """Hourly weather at the three NYC airports (``weather.csv``)."""

    __tablename__ = "weather"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    """Surrogate key: 1 is the first CSV row, in file order."""
    origin: Mapped[str] = mapped_column(String(100), ForeignKey(Airport.faa))
    """Weather station: EWR, JFK or LGA."""
    year: Mapped[int] = mapped_column(Integer)
    """Year (local time)."""
    month: Mapped[int] = mapped_column(Integer)
    """Month (local time)."""
    day: Mapped[int] = mapped_column(Integer)
    """Day (local time)."""
    hour: Mapped[int] = mapped_column(Integer)
    """Hour (local time)."""
    temp: Mapped[float | None] = mapped_column(Double)
    """Temperature in degrees Fahrenheit."""
    dewp: Mapped[float | None] = mapped_column(Double)
    """Dew point in degrees Fahrenheit."""
    humid: Mapped[float | None] = mapped_column(Double)
    """Relative humidity in percent."""
    wind_dir: Mapped[int | None] = mapped_column(Integer)
    """Wind direction in degrees (0 to 360)."""
    wind_speed: Mapped[float | None] = mapped_column(Double)
    """Wind speed in mph (one reading of 1048 mph is an error in the source data)."""
    wind_gust: Mapped[float | None] = mapped_column(Double)
    """Gust speed in mph; null for most hours."""
    precip: Mapped[float] = mapped_column(Double)
    """Precipitation in inches."""
    pressure: Mapped[float | None] = mapped_column(Double)
    """Sea level pressure in millibars."""
    visib: Mapped[float] = mapped_column(Double)
    """Visibility in miles."""
    time_hour: Mapped[datetime] = mapped_column(UTCDateTime)
    """The hour of the observation as an aware UTC datetime."""


class DemoUser(DemoBase):
    """A demo user; ``carrier`` is the airline (tenant) the user works for, None for the platform admin."""

    __tablename__ = "demo_users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    """User id."""
    name: Mapped[str] = mapped_column(String(100))
    """Display name."""
    carrier: Mapped[str | None] = mapped_column(String(100), ForeignKey(Airline.carrier))
    """The user's airline; None for the platform admin."""
    is_platform_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    """Whether the user sees every airline's data."""
    password_hash: Mapped[str] = mapped_column(String(100), info={"private": True})
    """A fixed fake hash; private, so it is never listed, filtered or ordered on."""


def _sqlite_trigram(table: Table, column: str, row_key: str) -> None:
    """The trigram table of a searched column on SQLite, with its triggers, as the index advisor writes it.

    Made after its table (and filled from the rows there), dropped before it (docs: indexes).
    """
    need = IndexNeed(table.name, (IndexKey(column, nullable=True),), IndexKind.TRIGRAM, row_key=row_key)
    for statement in create_index(need, SQLITE):
        made = DDL(statement).execute_if(callable_=_sqlite_with_trigrams)  # type: ignore[no-untyped-call]
        event.listen(table, "after_create", made)
    drop = DDL(f"DROP TABLE IF EXISTS {need.name}").execute_if(callable_=_sqlite_with_trigrams)  # type: ignore[no-untyped-call]
    event.listen(table, "before_drop", drop)


_sqlite_trigram(DemoBase.metadata.tables["flights"], "tailnum", "id")


class WatchedFlight(DemoBase):
    """A flight on a user's watch list; ``deleted_at`` marks a soft-deleted entry."""

    __tablename__ = "watched_flights"
    # The advisor's: the default order, each user's part of it (the owner scope), the flight key.
    __table_args__ = (
        Index("ix_watched_flights_created_at_desc_id", text("created_at DESC"), "id"),
        Index("ix_watched_flights_user_id_created_at_desc_id", "user_id", text("created_at DESC"), "id"),
        Index("ix_watched_flights_flight_id", "flight_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    """Entry id."""
    user_id: Mapped[int] = mapped_column(Integer, ForeignKey(DemoUser.id))
    """The watching user."""
    flight_id: Mapped[int] = mapped_column(Integer, ForeignKey(Flight.id))
    """The watched flight."""
    note: Mapped[str | None] = mapped_column(String(100))
    """Free text note of the user."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    """When the flight was put on the list (aware UTC)."""
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    """When the entry was soft-deleted (aware UTC); None while it is live."""

    user: Mapped[DemoUser] = relationship(lazy="raise")
    """The watching user."""
    flight: Mapped[Flight] = relationship(lazy="raise")
    """The watched flight."""


class DemoMeta(DemoBase):
    """Loader bookkeeping: written last by a complete load, so a missing version means "load again"."""

    __tablename__ = "demo_meta"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    """``version`` or ``rows:<table>``."""
    value: Mapped[str] = mapped_column(String(100))
    """The dataset version, or a row count in decimal."""
