"""SQLAlchemy: where a list runs when its session holds nothing, and where when it holds writes.

SQLite: a list whose session holds nothing runs on ``read_engine``'s own connections; PostgreSQL: it
counts on a second pooled connection beside the page. One whose session holds a transaction or
pending writes must see them, so it runs on the session alone. Statements are counted per engine or
connection, and the totals checked against rows counted by hand.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, String, event, insert, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.pool import StaticPool

from litestar_listing import ListContext, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, prepare_engine, read_engine
from litestar_listing.plugin.prepared import prepare
from tests.backends.engines import connections, idle, sqlite_engine
from tests.conftest import async_url, postgres_database_url
from tests.matrix import selected

pytestmark = pytest.mark.skipif(not selected(backend="sqlalchemy"), reason="SQLAlchemy is not selected")


class Base(DeclarativeBase):
    pass


class Note(Base):
    __tablename__ = "notes"
    id: Mapped[int] = mapped_column(primary_key=True)
    text: Mapped[str] = mapped_column(String(50))


NOTES = 12  # written by the fixture; a page of 5 needs the count


@pytest.fixture
async def engine() -> AsyncIterator[AsyncEngine]:
    if not selected(backend="sqlalchemy", database="sqlite"):
        pytest.skip("SQLAlchemy on SQLite is not selected")
    async with sqlite_engine("reads", Base.metadata, [(Note, [{"text": f"note {n}"} for n in range(NOTES)])]) as engine:
        yield engine


@contextmanager
def statements(engine: Engine | None) -> Iterator[list[str]]:
    seen: list[str] = []
    if engine is None:
        yield seen
        return

    def record(*args: Any) -> None:
        seen.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


async def _list(session: AsyncSession, *, local_reads: bool = True) -> tuple[list[int], int | None]:
    resource = Resource("notes", SQLAlchemyBackend(Note, local_reads=local_reads))
    page = await resource.backend.fetch(
        prepare(resource).parser.parse([("count", "5")], []), ListContext(session=session)
    )
    return [item["id"] for item in page.items], page.total


async def test_a_session_holding_nothing_lists_on_the_read_engine(engine: AsyncEngine) -> None:
    reads = read_engine(engine.sync_engine)
    assert reads is not None
    with statements(engine.sync_engine) as on_session, statements(reads) as on_reads:
        async with AsyncSession(engine) as session:
            assert await _list(session) == ([1, 2, 3, 4, 5], NOTES)
    assert on_session == []
    assert len(on_reads) == 2  # the page and the count


@pytest.mark.parametrize("flushed", [True, False], ids=["in-transaction", "pending"])
async def test_a_session_with_writes_lists_on_itself_and_sees_them(engine: AsyncEngine, *, flushed: bool) -> None:
    reads = read_engine(engine.sync_engine)
    with statements(reads) as on_reads:
        async with AsyncSession(engine) as session:
            session.add(Note(id=100, text="uncommitted"))
            if flushed:
                await session.flush()
            assert await _list(session) == ([1, 2, 3, 4, 5], NOTES + 1)
            await session.rollback()
            # The write is gone, and this session now holds nothing: the read engine counts again.
            assert await _list(session) == ([1, 2, 3, 4, 5], NOTES)
    assert len(on_reads) == 2


async def test_an_engine_whose_listeners_lists_need_keeps_them_on_the_session(engine: AsyncEngine) -> None:
    # SQLAlchemy cannot tell an engine's listeners publicly: the backend is told to list on the session.
    other = create_async_engine(engine.url)

    @event.listens_for(other.sync_engine, "connect")
    def decade(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.create_function("decade", 1, lambda year: year // 10 * 10)

    prepare_engine(other)
    with statements(other.sync_engine) as on_session, statements(read_engine(other.sync_engine)) as on_reads:
        async with AsyncSession(other) as session:
            assert await _list(session, local_reads=False) == ([1, 2, 3, 4, 5], NOTES)
            assert (await session.execute(text("SELECT decade(2024)"))).scalar_one() == 2020
    assert len(on_session) == 3
    assert on_reads == []
    await other.dispose()


def test_an_in_memory_database_has_no_read_engine() -> None:
    assert read_engine(create_async_engine("sqlite+aiosqlite://").sync_engine) is None
    assert read_engine(create_async_engine("sqlite+aiosqlite:///:memory:").sync_engine) is None
    shared_url = "sqlite+aiosqlite:///file:notes?mode=memory&cache=shared&uri=true"
    shared = create_async_engine(shared_url, poolclass=StaticPool)
    assert read_engine(shared.sync_engine) is None


# PostgreSQL: a session that held nothing counts on a second pooled connection, at the same time as
# the page, when the pool can hand over both at once; a session with writes counts on itself.


@pytest.fixture
async def postgresql() -> AsyncIterator[AsyncEngine]:
    if not selected(backend="sqlalchemy", database="postgresql"):
        pytest.skip("SQLAlchemy on PostgreSQL is not selected")
    engine = create_async_engine(async_url(postgres_database_url("listing_count_apart")))
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
        await connection.execute(insert(Note), [{"text": f"note {n}"} for n in range(NOTES)])
    yield engine
    await engine.dispose()


async def test_the_count_runs_on_an_idle_connection_beside_the_page(postgresql: AsyncEngine) -> None:
    await idle(postgresql, 2)
    with connections(postgresql, "notes") as seen:
        async with AsyncSession(postgresql) as session:
            assert await _list(session) == ([1, 2, 3, 4, 5], NOTES)
    used = {kind: connection for connection, kind in seen if kind != "other"}
    assert set(used) == {"page", "count"}
    assert used["page"] != used["count"]


async def test_a_pool_with_room_opens_the_second_connection(postgresql: AsyncEngine) -> None:
    # No idle connection besides the session's, but fewer than pool_size checked out: a new one.
    await idle(postgresql, 1)
    with connections(postgresql, "notes") as seen:
        async with AsyncSession(postgresql) as session:
            assert await _list(session) == ([1, 2, 3, 4, 5], NOTES)
    assert len({connection for connection, kind in seen if kind != "other"}) == 2


async def test_a_full_pool_counts_after_the_page_on_the_same_connection(postgresql: AsyncEngine) -> None:
    engine = create_async_engine(postgresql.url, pool_size=1, max_overflow=0)
    try:
        with connections(engine, "notes") as seen:
            async with AsyncSession(engine) as session:
                assert await _list(session) == ([1, 2, 3, 4, 5], NOTES)
        assert len({connection for connection, kind in seen if kind != "other"}) == 1
    finally:
        await engine.dispose()


async def test_a_pool_with_room_for_one_connection_counts_after_the_page(postgresql: AsyncEngine) -> None:
    # The count would take the last connection the pool can hand over, and the page would wait for
    # one: both run on the session's.
    engine = create_async_engine(postgresql.url, pool_size=2, max_overflow=0, pool_timeout=5)
    elsewhere = await engine.connect().start()
    try:
        with connections(engine, "notes") as seen:
            async with AsyncSession(engine) as session:
                assert await _list(session) == ([1, 2, 3, 4, 5], NOTES)
        assert [kind for _, kind in seen if kind != "other"] == ["page", "count"]
        assert len({connection for connection, kind in seen if kind != "other"}) == 1
    finally:
        await elsewhere.close()
        await engine.dispose()


@pytest.mark.parametrize(("lent", "apart"), [(3, True), (4, False)])
async def test_a_busy_pool_counts_after_the_page(postgresql: AsyncEngine, lent: int, apart: bool) -> None:
    # With the list's two connections taken, at most half of pool_size may be lent: 3 + 2 of 10, not
    # 4 + 2. Beyond, a second connection per list would push other requests into overflow connections.
    engine = create_async_engine(postgresql.url, pool_size=10)
    elsewhere = [await engine.connect().start() for _ in range(lent)]
    try:
        with connections(engine, "notes") as seen:
            async with AsyncSession(engine) as session:
                assert await _list(session) == ([1, 2, 3, 4, 5], NOTES)
        assert len({connection for connection, kind in seen if kind != "other"}) == (2 if apart else 1)
    finally:
        for connection in elsewhere:
            await connection.close()
        await engine.dispose()


async def test_a_session_with_writes_counts_them_on_its_own_connection(postgresql: AsyncEngine) -> None:
    await idle(postgresql, 2)
    with connections(postgresql, "notes") as seen:
        async with AsyncSession(postgresql) as session:
            session.add(Note(id=100, text="uncommitted"))
            await session.flush()
            assert await _list(session) == ([1, 2, 3, 4, 5], NOTES + 1)
            await session.rollback()
    assert len({connection for connection, _ in seen}) == 1
