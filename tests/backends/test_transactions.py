"""The caller's transaction survives a list that times out, on every relational backend x database.

``docs/examples/guide/transactions.py``: a handler writes, lists a report that runs out of time,
writes again and commits. Both writes must be in the database, read back by a connection of the
test's own (plain SQL through ``sqlite3``, asyncpg or PyMySQL), and the list's time limit must not
outlive it (``SHOW statement_timeout``, MariaDB's ``@@SESSION.max_statement_time``, in the handler's
transaction equals the server's default).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

import asyncpg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine

from docs.examples.guide import transactions
from tests.conftest import async_url, mariadb_database_url, postgres_database_url, scratch_folder
from tests.harness import mariadb_connection
from tests.matrix import Store, TestTarget, selected

TARGETS = selected(store=Store.SQL)
pytestmark = pytest.mark.skipif(not TARGETS, reason="no relational target is selected")


async def journal(target: TestTarget, location: str) -> list[str]:
    """The journal's texts in id order, read without the app (``location``: a file or a URL)."""
    if target.database == "sqlite":
        with sqlite3.connect(location) as connection:
            return [text for (text,) in connection.execute("SELECT text FROM journal ORDER BY id")]
    if target.database == "mariadb":
        with contextlib.closing(mariadb_connection(location)) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT text FROM journal ORDER BY id")
            return [text for (text,) in cursor.fetchall()]
    connection = await asyncpg.connect(location)
    try:
        return [row["text"] for row in await connection.fetch("SELECT text FROM journal ORDER BY id")]
    finally:
        await connection.close()


async def server_default_timeout(target: TestTarget, url: str) -> object:
    """The server's default time limit of a statement, as the handler reads its session's."""
    if target.database == "mariadb":
        with contextlib.closing(mariadb_connection(url)) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT @@GLOBAL.max_statement_time")
            return cursor.fetchone()[0]
    connection = await asyncpg.connect(url)
    try:
        return str(await connection.fetchval("SHOW statement_timeout"))
    finally:
        await connection.close()


def make_app(target: TestTarget) -> tuple[Litestar, str]:
    """The example's app for ``target`` and where its database is."""
    if target.database == "sqlite":
        location = str(Path(scratch_folder("listing-transactions")) / f"{target.backend}.sqlite")
        if target.backend == "sqlalchemy":
            return transactions.create_app(f"sqlite+aiosqlite:///{location}"), location
        return transactions.create_piccolo_app(SQLiteEngine(path=location)), location
    if target.database == "mariadb":
        location = mariadb_database_url("listing_transactions_sqlalchemy")
        return transactions.create_app(async_url(location)), location
    location = postgres_database_url(f"listing_transactions_{target.backend}")
    if target.backend == "sqlalchemy":
        return transactions.create_app(async_url(location)), location
    return transactions.create_piccolo_app(PostgresEngine(config={"dsn": location})), location


@pytest.mark.parametrize("target", TARGETS, ids=str)
async def test_a_list_that_times_out_leaves_the_callers_transaction_usable(target: TestTarget) -> None:
    app, location = make_app(target)
    async with AsyncTestClient(app) as client:
        for attempt in (1, 2):
            started = time.perf_counter()
            response = await client.post("/journal")
            assert response.status_code == 200, response.text
            assert time.perf_counter() - started < 10  # a hang check, not a speed target
            expected_timeout = None if target.database == "sqlite" else await server_default_timeout(target, location)
            assert response.json() == {"outcome": "report timed out", "statement_timeout": expected_timeout}
            assert await journal(target, location) == ["report requested", "report timed out"] * attempt
        # The same list as a route of its own: the 503 the handler caught.
        listed = await client.get("/api/v1/reports/")
        assert listed.status_code == 503
        assert listed.headers["retry-after"] == "1"
