"""Faults between the app and PostgreSQL: a dropped connection or a slow statement is a clear 503.

A fault-injecting TCP proxy (``proxy.py``) sits between the application and the server. Dropping
every connection mid-query must give a 503 naming the failure; once the server is reachable again
the next requests succeed without restarting the app. A statement slower than the resource's
``timeout`` must be a 503 too, cancelled on the server, its connection back in the pool.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from httpx import Response
from litestar import Litestar
from litestar.testing import AsyncTestClient
from piccolo.columns import Text as PiccoloText
from piccolo.engine.postgres import PostgresEngine
from piccolo.querystring import QueryString
from sqlalchemy import Text, cast, func, select
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import QueuePool

from litestar_listing import ListingBackend, ListingPlugin, Resource
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from tests.conformance import piccolo_tables
from tests.conformance.models import Thing
from tests.conformance.targets import piccolo_engine, write_piccolo_rows, write_sqlalchemy_rows
from tests.conftest import async_url, postgres_database_url
from tests.hostile.proxy import FaultyProxy, faulty_proxy
from tests.matrix import Store, backends_of, selected

SELECTED = backends_of(selected(store=Store.SQL, database="postgresql"))
pytestmark = pytest.mark.skipif(not SELECTED, reason="needs PostgreSQL and a SQL backend")

SLEEP = 2.0
"""Seconds the slow resources spend per row: longer than any wait of these tests."""


@dataclass
class Served:
    client: AsyncTestClient[Litestar]
    proxy: FaultyProxy
    direct_url: str
    backend: str
    pool_status: Any = None


def _via(url: str, port: int, ssl: str) -> str:
    parts = urlsplit(url)
    netloc = f"{parts.username}@127.0.0.1:{port}" if parts.username else f"127.0.0.1:{port}"
    # Without TLS: asyncpg leaves the socket of a TLS negotiation the proxy cuts unclosed, and the
    # garbage collector reports it in whichever test runs next (MagicStack/asyncpg#825).
    return urlunsplit((parts.scheme, netloc, parts.path, ssl, parts.fragment))


def _resources(things: ListingBackend, slow: ListingBackend) -> list[Resource]:
    return [
        Resource("things", things, default_order=("id",)),
        Resource("slow", slow, default_order=("id",)),
        Resource("impatient", slow, default_order=("id",), timeout=0.3),
    ]


@pytest.fixture(params=SELECTED)
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    backend: str = request.param
    direct = postgres_database_url(f"litestar_listing_faults_{backend}")
    parts = urlsplit(direct)
    with faulty_proxy(parts.hostname or "127.0.0.1", parts.port or 5432) as proxy:
        proxied = _via(direct, proxy.port, "ssl=disable" if backend == "sqlalchemy" else "sslmode=disable")
        if backend == "sqlalchemy":
            writer = create_async_engine(async_url(direct))
            await write_sqlalchemy_rows(writer)
            await writer.dispose()
            config = SQLAlchemyAsyncConfig(connection_string=async_url(proxied), create_all=False)
            # An uncorrelated scalar subquery: PostgreSQL evaluates it once per statement.
            slow_column = select(cast(func.pg_sleep(SLEEP), Text)).scalar_subquery()
            app = Litestar(
                plugins=[
                    SQLAlchemyPlugin(config=config),
                    ListingPlugin(
                        _resources(
                            SQLAlchemyBackend(Thing, config=config),
                            SQLAlchemyBackend(Thing, config=config, computed={"slow": slow_column}),
                        )
                    ),
                ],
            )
            async with AsyncTestClient(app) as client:
                pool = config.get_engine().pool
                assert isinstance(pool, QueuePool)
                yield Served(client, proxy, direct, backend, pool_status=pool.checkedout)
            await config.get_engine().dispose()
        else:
            await write_piccolo_rows(piccolo_engine("postgresql", f"litestar_listing_faults_{backend}"))
            engine = PostgresEngine(config={"dsn": proxied}, extensions=())

            async def open_pool() -> None:
                await engine.start_connection_pool()

            async def close_pool() -> None:
                await engine.close_connection_pool()

            table = piccolo_tables.Thing
            slow_sql = (QueryString(f"(SELECT CAST(pg_sleep({SLEEP}) AS TEXT))"), PiccoloText())
            app = Litestar(
                plugins=[
                    ListingPlugin(
                        _resources(
                            PiccoloBackend(table, engine=engine),
                            PiccoloBackend(table, engine=engine, computed={"slow": slow_sql}),
                        )
                    )
                ],
                on_startup=[open_pool],
                on_shutdown=[close_pool],
            )
            async with AsyncTestClient(app) as client:
                yield Served(client, proxy, direct, backend)


def assert_unavailable(response: Response, fragment: str) -> None:
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["status_code"] == 503
    assert fragment in body["detail"], body["detail"]
    assert response.headers["retry-after"] == "1"


async def settled(direct_url: str) -> bool:
    """Whether no slow statement runs any more, waiting up to ``SLEEP`` + 1 s for one to end."""
    deadline = time.perf_counter() + SLEEP + 1
    while await sleeping_statements(direct_url):
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def sleeping_statements(direct_url: str) -> int:
    connection = await asyncpg.connect(direct_url)
    try:
        count: int = await connection.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query ILIKE '%pg_sleep%' "
            "AND pid <> pg_backend_pid() AND datname = current_database()"
        )
        return count
    finally:
        await connection.close()


async def test_dropped_connections_give_503_and_the_app_recovers(served: Served) -> None:
    client, proxy = served.client, served.proxy
    first = await client.get("/api/v1/things/")
    assert first.status_code == 200, first.text

    # Mid-query: the slow list is running on the server when every connection is cut. The cut
    # comes from another thread: the test client may block this loop while the app works.
    cut = threading.Timer(0.5, proxy.drop)
    cut.start()
    started = time.perf_counter()
    response = await client.get("/api/v1/slow/", params={"count": 1})
    cut.join()
    assert_unavailable(response, "connection failed")
    assert time.perf_counter() - started < SLEEP

    # While the server is unreachable, requests fail fast with the same clear 503.
    down = await client.get("/api/v1/things/")
    assert down.status_code == 503, down.text
    assert "listing things failed" in down.json()["detail"]

    proxy.restore()
    # The server notices the cut only when it next writes to the socket: after the sleep.
    assert await settled(served.direct_url)
    for _ in range(3):
        response = await client.get("/api/v1/things/", params={"count": 3})
        assert response.status_code == 200, response.text
        assert [item["id"] for item in response.json()["data"]] == [1, 2, 3]


async def test_slow_statement_is_cancelled_with_a_503(served: Served) -> None:
    started = time.perf_counter()
    response = await served.client.get("/api/v1/impatient/", params={"count": 1})
    elapsed = time.perf_counter() - started
    assert_unavailable(response, "took longer than 0.3 s")
    # Cancelled on the server, well before the sleep would have ended; the connection is back in the pool.
    for _ in range(20):
        if await sleeping_statements(served.direct_url) == 0:
            break
        await asyncio.sleep(0.05)
    assert await sleeping_statements(served.direct_url) == 0
    assert time.perf_counter() - started < SLEEP
    assert elapsed < SLEEP
    if served.pool_status is not None:
        assert served.pool_status() == 0
    ok = await served.client.get("/api/v1/things/", params={"count": 2})
    assert ok.status_code == 200
    assert [item["id"] for item in ok.json()["data"]] == [1, 2]
