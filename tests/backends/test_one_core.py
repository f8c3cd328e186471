"""A list held to one core of PostgreSQL (``ListContext.parallel`` false), on both relational backends.

The plugin holds the lists of its expensive lane to one core (docs: admission, "One core per
expensive list"): their statements run with ``max_parallel_workers_per_gather`` at 0, for their
transaction only, and their count after the page on the page's connection; so do the statements of
a facet request (docs: facets, "Cost and admission"). Each item here carries a
computed value that reads the setting as its statement runs, so what the server applied is read
back from the answer; the server's own value comes from a connection of the test's own (asyncpg).
Nothing may outlive the list: a caller's transaction reads the server's value again after it, and
so does the next list on the same pooled connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import asyncpg
import pytest
from piccolo.columns import Integer as PiccoloInteger
from piccolo.columns import Varchar
from piccolo.engine.postgres import PostgresEngine
from piccolo.querystring import QueryString
from piccolo.table import Table
from sqlalchemy import Integer, String, cast, func, insert, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListContext, Resource
from litestar_listing.backends.base import FacetBackend, IndexedSearch, ListingBackend
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.plugin.prepared import prepare
from tests.backends.engines import connections, idle
from tests.conftest import async_url, postgres_database_url
from tests.matrix import selected

TARGETS = [target for target in selected(database="postgresql") if target.backend in {"sqlalchemy", "piccolo"}]
pytestmark = pytest.mark.skipif(not TARGETS, reason="no relational backend on PostgreSQL is selected")

SETTING = "max_parallel_workers_per_gather"
NOTES = 12


class Base(DeclarativeBase):
    pass


class Note(Base):
    __tablename__ = "one_core_notes"
    id: Mapped[int] = mapped_column(primary_key=True)
    text: Mapped[str] = mapped_column(String(50))


class PiccoloNote(Table, tablename="one_core_notes"):
    text = Varchar(length=50)


def sqlalchemy_backend() -> SQLAlchemyBackend:
    return SQLAlchemyBackend(
        Note,
        computed={
            "workers": cast(func.current_setting(SETTING), Integer),
            "jit": cast(func.current_setting("jit"), String),
        },
    )


def piccolo_backend() -> PiccoloBackend:
    workers = QueryString(f"CAST(current_setting('{SETTING}') AS INTEGER)")
    jit = QueryString("current_setting('jit')")
    return PiccoloBackend(PiccoloNote, computed={"workers": (workers, PiccoloInteger()), "jit": (jit, Varchar())})


@pytest.fixture(scope="module")
async def url() -> str:
    location = postgres_database_url("listing_one_core")
    connection = await asyncpg.connect(location)
    try:
        await connection.execute("DROP TABLE IF EXISTS one_core_notes")
        await connection.execute("CREATE TABLE one_core_notes (id serial PRIMARY KEY, text varchar(50) NOT NULL)")
        await connection.executemany(
            "INSERT INTO one_core_notes (text) VALUES ($1)", [(f"note {n}",) for n in range(NOTES)]
        )
    finally:
        await connection.close()
    return location


async def server_setting(url: str) -> int:
    """The setting as the server gives it to a new connection (the test's own, not the backend's)."""
    connection = await asyncpg.connect(url)
    try:
        return int(await connection.fetchval(f"SHOW {SETTING}"))
    finally:
        await connection.close()


async def listed(backend: ListingBackend, context: ListContext) -> tuple[list[int], set[int], int]:
    """The page's ids, the setting each item's statement ran under, and the total."""
    resource = Resource("notes", backend)
    query = prepare(resource).parser.parse([("count", "5"), ("order_by", "id")], [])
    page = await backend.fetch(query, context)
    return [item["id"] for item in page.items], {item["workers"] for item in page.items}, page.total


@pytest.fixture
async def sqlalchemy_engine(url: str) -> AsyncIterator[AsyncEngine]:
    if not selected(backend="sqlalchemy", database="postgresql"):
        pytest.skip("SQLAlchemy on PostgreSQL is not selected")
    engine = create_async_engine(async_url(url), pool_size=4)
    yield engine
    await engine.dispose()


@pytest.fixture
async def piccolo_engine(url: str) -> AsyncIterator[PostgresEngine]:
    if not selected(backend="piccolo", database="postgresql"):
        pytest.skip("Piccolo on PostgreSQL is not selected")
    engine = PostgresEngine(config={"dsn": url})
    await engine.start_connection_pool(min_size=4, max_size=4)
    previous = PiccoloNote._meta._db
    PiccoloNote._meta._db = engine
    yield engine
    PiccoloNote._meta._db = previous
    await engine.close_connection_pool()


FIRST_PAGE = [1, 2, 3, 4, 5]


async def searched(backend: ListingBackend, context: ListContext) -> tuple[list[int], set[tuple[int, str]]]:
    """The ids of a search's page, and the (workers, jit) its statement ran under."""
    resource = Resource("notes", backend, search_fields=("text",))
    query = prepare(resource).parser.parse([("search", "note 1"), ("order_by", "id")], [])
    page = await backend.fetch(query, context)
    return [item["id"] for item in page.items], {(item["workers"], item["jit"]) for item in page.items}


@pytest.mark.parametrize("backend", ["sqlalchemy", "piccolo"])
async def test_a_search_read_by_key_runs_without_workers_or_jit(url: str, backend: str) -> None:
    # Its candidates read from the indexes (docs: indexes, "Search from indexes"): Database.key_settings
    # and no parallel workers, for the list's transaction only; the same search read by a scan runs
    # under the server's values.
    if not selected(backend=backend, database="postgresql"):
        pytest.skip(f"{backend} on PostgreSQL is not selected")
    default = await server_setting(url)
    indexed = IndexedSearch(frozenset({"text"}), NOTES)
    notes_1 = [2, 11, 12]  # "note 1", "note 10", "note 11"
    async with AsyncExitStack() as stack:
        if backend == "sqlalchemy":
            engine = create_async_engine(async_url(url))
            stack.push_async_callback(engine.dispose)
            session: object = await stack.enter_async_context(AsyncSession(engine))
            made: ListingBackend = sqlalchemy_backend()
        else:
            piccolo = PostgresEngine(config={"dsn": url})
            await piccolo.start_connection_pool(min_size=1, max_size=2)
            stack.push_async_callback(piccolo.close_connection_pool)
            previous = PiccoloNote._meta._db
            PiccoloNote._meta._db = piccolo
            stack.callback(setattr, PiccoloNote._meta, "_db", previous)
            session, made = piccolo, piccolo_backend()
        assert await searched(made, ListContext(session=session, indexed_search=indexed)) == (notes_1, {(0, "off")})
        server_jit = "on"  # PostgreSQL's default since 12
        assert await searched(made, ListContext(session=session)) == (notes_1, {(default, server_jit)})


# ---------------------------------------------------------------- SQLAlchemy
@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "one core"])
async def test_sqlalchemy_holds_a_list_to_one_core_for_its_transaction(
    sqlalchemy_engine: AsyncEngine, url: str, parallel: bool
) -> None:
    default = await server_setting(url)
    assert default > 0  # otherwise the test could not tell the two apart
    await idle(sqlalchemy_engine, 2)
    with connections(sqlalchemy_engine, "one_core_notes") as seen:
        async with AsyncSession(sqlalchemy_engine) as session:
            ids, workers, total = await listed(sqlalchemy_backend(), ListContext(session=session, parallel=parallel))
    assert (ids, total) == (FIRST_PAGE, NOTES)
    assert workers == ({default} if parallel else {0})
    used = {connection for connection, kind in seen if kind in {"page", "count"}}
    assert len(used) == (2 if parallel else 1)  # one core: the count after the page, on its connection
    # The next list on the pool's connections runs under the server's value again.
    async with AsyncSession(sqlalchemy_engine) as session:
        assert (await listed(sqlalchemy_backend(), ListContext(session=session)))[1] == {default}


async def test_sqlalchemy_leaves_the_callers_transaction_as_it_was(sqlalchemy_engine: AsyncEngine, url: str) -> None:
    default = await server_setting(url)
    async with AsyncSession(sqlalchemy_engine) as session, session.begin():
        await session.execute(insert(Note).values(id=100, text="uncommitted"))
        ids, workers, total = await listed(sqlalchemy_backend(), ListContext(session=session, parallel=False))
        assert (ids, workers, total) == (FIRST_PAGE, {0}, NOTES + 1)
        assert int((await session.execute(text(f"SHOW {SETTING}"))).scalar_one()) == default
        await session.rollback()


# ---------------------------------------------------------------- Piccolo
@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "one core"])
async def test_piccolo_holds_a_list_to_one_core_for_its_transaction(
    piccolo_engine: PostgresEngine, url: str, parallel: bool
) -> None:
    default = await server_setting(url)
    ids, workers, total = await listed(piccolo_backend(), ListContext(session=piccolo_engine, parallel=parallel))
    assert (ids, workers, total) == (FIRST_PAGE, {default} if parallel else {0}, NOTES)
    for _ in range(4):  # every connection of the pool: none kept the list's setting
        assert (await listed(piccolo_backend(), ListContext(session=piccolo_engine)))[1] == {default}


async def test_piccolo_leaves_the_callers_transaction_as_it_was(piccolo_engine: PostgresEngine, url: str) -> None:
    default = await server_setting(url)
    async with piccolo_engine.transaction() as transaction:
        await PiccoloNote.insert(PiccoloNote(id=100, text="uncommitted"))
        ids, workers, total = await listed(piccolo_backend(), ListContext(session=piccolo_engine, parallel=False))
        assert (ids, workers, total) == (FIRST_PAGE, {0}, NOTES + 1)  # the list saw the transaction's row
        connection = transaction.connection
        assert connection is not None
        assert int(str(await connection.fetchval(f"SHOW {SETTING}"))) == default
        await PiccoloNote.delete().where(PiccoloNote._meta.primary_key == 100)


# ---------------------------------------------------------------- facets
@pytest.mark.parametrize("backend", ["sqlalchemy", "piccolo"])
@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "one core"])
async def test_facets_are_held_to_one_core_as_a_list_is(url: str, backend: str, parallel: bool) -> None:
    # Every statement of a facet request runs under the list's setting (docs: facets, "Cost and
    # admission"): here the rows are there only where the setting is 0, for the facet's statement and
    # for the count (its own filter left out of the facet, the list's count runs).
    if not selected(backend=backend, database="postgresql"):
        pytest.skip(f"{backend} on PostgreSQL is not selected")
    default = await server_setting(url)
    assert default > 0
    held = f"current_setting('{SETTING}') = '0'"
    async with AsyncExitStack() as stack:
        made: ListingBackend
        if backend == "sqlalchemy":
            engine = create_async_engine(async_url(url), pool_size=4)
            stack.push_async_callback(engine.dispose)
            session: object = await stack.enter_async_context(AsyncSession(engine))
            made = SQLAlchemyBackend(Note, statement=lambda listed: listed.where(text(held)))
        else:
            piccolo = PostgresEngine(config={"dsn": url})
            await piccolo.start_connection_pool(min_size=1, max_size=4)
            stack.push_async_callback(piccolo.close_connection_pool)
            session, made = piccolo, PiccoloBackend(PiccoloNote, engine=piccolo, where=QueryString(held))
        assert isinstance(made, FacetBackend)
        resource = Resource("notes", made, facet_fields=("text",))
        asked = prepare(resource).parser.parse_facets([("facet", "text"), ("text__ne", "none")], [])
        answer = await made.facet_counts(asked, ListContext(session=session, parallel=parallel))
    assert (answer.total, answer.facets[0].distinct) == ((0, 0) if parallel else (NOTES, NOTES))
