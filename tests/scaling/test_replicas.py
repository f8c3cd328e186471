"""Which node serves a list when a backend has a read replica (the tests' own standby, ``tests/nodes.py``).

The answering server is seen by the statement itself: the resource lists ``pg_is_in_recovery()`` as a
computed value, true on the standby and false on the primary.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import msgspec
import pytest
from piccolo.columns import Boolean as PiccoloBoolean
from piccolo.querystring import QueryString
from sqlalchemy import Boolean, func, select
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

from litestar_listing import ListContext, ListingBackend, Resource, list_resource
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.plugin.prepared import prepare
from tests.apps import serving
from tests.conformance import piccolo_tables
from tests.conformance.models import Thing
from tests.conformance.targets import Target, target_fixture
from tests.conftest import async_url, started_nodes
from tests.matrix import Store, selected
from tests.nodes import caught_up, pause

TARGETS = [target for target in selected(store=Store.NODE) if target.database == "standby"]
NEW_ID = 9001


target = target_fixture(TARGETS, "litestar_listing_replicas")


@pytest.fixture
async def standby(target: Target) -> AsyncIterator[AsyncEngine]:
    """SQLAlchemy's engine on the standby (the Piccolo target's is ``extra_nodes["standby"]``)."""
    assert target.standby_url is not None
    engine = create_async_engine(async_url(target.standby_url))
    yield engine
    await engine.dispose()


def resource(target: Target, replica: AsyncEngine, **options: Any) -> Resource:
    """Things with the answering server's ``pg_is_in_recovery()`` as a computed value."""
    backend: ListingBackend
    if target.engine is None:
        on_standby = func.pg_is_in_recovery(type_=Boolean())
        backend = SQLAlchemyBackend(Thing, computed={"on_standby": on_standby}, replicas=[replica], **options)
    else:
        in_recovery = (QueryString("pg_is_in_recovery()"), PiccoloBoolean())
        backend = PiccoloBackend(
            piccolo_tables.Thing,
            engine=target.engine,
            computed={"on_standby": in_recovery},
            replicas=("standby",),
            **options,
        )
    return Resource("things", backend, filter_fields=("id",))


async def served_by_standby(target: Target, listed: Resource, *, primary: bool = False, **filters: str) -> list[bool]:
    query = prepare(listed).parser.parse(list(filters.items()))
    async with target.context() as context:
        page = await listed.backend.fetch(query, ListContext(session=context.session, primary=primary))
    return [item["on_standby"] for item in page.items]


async def test_a_list_of_a_session_that_did_not_write_is_served_by_the_standby(
    target: Target, standby: AsyncEngine
) -> None:
    assert set(await served_by_standby(target, resource(target, standby))) == {True}


async def test_a_request_that_wrote_lists_on_the_primary_and_sees_its_row(target: Target, standby: AsyncEngine) -> None:
    """SQLAlchemy: the session flushed a row; Piccolo: the list runs inside the transaction that wrote it."""
    listed = resource(target, standby)
    query = prepare(listed).parser.parse([("id", str(NEW_ID))])
    created = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    if target.engine is None:
        async with target.context() as context:
            session = context.session
            session.add(Thing(id=NEW_ID, name="fresh", company_id=1, created_at=created))
            await session.flush()
            page = await listed.backend.fetch(query, ListContext(session=session))
            await session.rollback()
    else:
        engine = target.engine
        with piccolo_tables.bound(engine):
            async with engine.transaction() as transaction:
                thing = piccolo_tables.Thing(id=NEW_ID, name="fresh", company_id=1, created_at=created)
                await piccolo_tables.Thing.insert(thing)
                page = await listed.backend.fetch(query, ListContext(session=engine))
                await transaction.rollback()
    assert [(item["id"], item["on_standby"]) for item in page.items] == [(NEW_ID, False)]


async def test_the_call_may_ask_for_the_primary(target: Target, standby: AsyncEngine) -> None:
    assert set(await served_by_standby(target, resource(target, standby), primary=True)) == {False}


async def listed_by_standby(target: Target, listed: Resource, *, primary: bool | None = None) -> set[bool]:
    """Through the resource's list action (``Resource.list``), as a handler would call it."""
    async with target.context() as context:
        envelope = (
            await list_resource(listed, None, [], app=serving(listed), session=context.session, primary=primary)
        ).envelope
    return {item["on_standby"] for item in msgspec.to_builtins(envelope)["data"]}


async def test_a_resource_may_ask_for_the_primary_and_a_call_may_override_it(
    target: Target, standby: AsyncEngine
) -> None:
    listed = resource(target, standby)
    assert await listed_by_standby(target, listed) == {True}
    assert await listed_by_standby(target, listed, primary=True) == {False}
    on_primary = dataclasses.replace(listed, primary=True)
    assert await listed_by_standby(target, on_primary) == {False}
    assert await listed_by_standby(target, on_primary, primary=False) == {True}


async def test_a_stopped_standby_falls_back_to_the_primary_without_an_error(
    target: Target, standby: AsyncEngine
) -> None:
    listed = resource(target, standby)
    assert set(await served_by_standby(target, listed)) == {True}
    nodes = started_nodes()
    await asyncio.to_thread(pause, nodes, "standby", stopped=True)
    try:
        assert set(await served_by_standby(target, listed)) == {False}
        assert set(await served_by_standby(target, listed)) == {False}  # skipped while down
    finally:
        await asyncio.to_thread(pause, nodes, "standby", stopped=False)
    assert target.postgres_url is not None
    assert target.standby_url is not None
    await caught_up(target.postgres_url, target.standby_url)
    fresh = resource(target, standby)
    assert set(await served_by_standby(target, fresh)) == {True}


async def test_a_standby_lagging_beyond_the_bound_is_skipped(target: Target, standby: AsyncEngine) -> None:
    assert target.postgres_url is not None
    assert target.standby_url is not None
    listed = resource(target, standby, max_replica_lag=1.0)
    await caught_up(target.postgres_url, target.standby_url)
    assert set(await served_by_standby(target, listed)) == {True}
    replica = await asyncpg.connect(target.standby_url, statement_cache_size=0)
    primary = await asyncpg.connect(target.postgres_url, statement_cache_size=0)
    try:
        await replica.execute("SELECT pg_wal_replay_pause()")
        await primary.execute("UPDATE things SET quantity = quantity WHERE id = 1")
        await asyncio.sleep(2.2)  # past the bound, and past the probe interval of 1 s
        assert set(await served_by_standby(target, listed)) == {False}
        await replica.execute("SELECT pg_wal_replay_resume()")
        await caught_up(target.postgres_url, target.standby_url)
        await asyncio.sleep(1.1)  # the next probe sees it caught up
        assert set(await served_by_standby(target, listed)) == {True}
    finally:
        await replica.execute("SELECT pg_wal_replay_resume()")
        await replica.close()
        await primary.close()


async def test_the_standby_really_is_read_only(standby: AsyncEngine) -> None:
    """The premise of the tests above: the standby answers ``pg_is_in_recovery()`` true."""
    async with async_sessionmaker(standby)() as session:
        assert (await session.execute(select(func.pg_is_in_recovery()))).scalar_one() is True
