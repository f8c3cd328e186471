"""Engines for the SQLAlchemy backend tests: a SQLite file with its tables and rows; what a pool's connections run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from sqlalchemy import MetaData, event, insert
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from litestar_listing.backends.sqlalchemy import prepare_engine, read_engine
from tests.conftest import scratch_folder


@asynccontextmanager
async def sqlite_engine(
    name: str, metadata: MetaData, rows: Sequence[tuple[Any, Sequence[Mapping[str, Any]]]] = ()
) -> AsyncIterator[AsyncEngine]:
    """A prepared aiosqlite engine over a new file ``<name>.sqlite`` holding ``metadata``'s tables.

    ``rows``: ``(mapped class or table, rows)`` pairs, inserted in order. The engine, and the read
    engine the backend made over its file, are disposed on exit.
    """
    engine = create_async_engine(f"sqlite+aiosqlite:///{scratch_folder(f'listing-{name}') / f'{name}.sqlite'}")
    prepare_engine(engine)
    async with engine.begin() as connection:
        await connection.run_sync(metadata.create_all)
        for target, values in rows:
            await connection.execute(insert(target), list(values))
    try:
        yield engine
    finally:
        await engine.dispose()
        reads = read_engine(engine.sync_engine)
        if reads is not None:
            reads.dispose()


@contextmanager
def connections(engine: AsyncEngine, table: str) -> Iterator[list[tuple[int, str]]]:
    """The (DBAPI connection, statement kind) of each statement ``engine`` runs while the block runs.

    The kind is ``count`` for a statement with ``count(``, ``page`` for another over ``table``, else
    ``other`` (transaction and settings statements).
    """
    seen: list[tuple[int, str]] = []

    def record(connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        kind = "count" if "count(" in statement.lower() else "page" if f"FROM {table}" in statement else "other"
        seen.append((id(connection.connection.dbapi_connection), kind))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


async def idle(engine: AsyncEngine, count: int) -> None:
    """Leave ``count`` connections idle in ``engine``'s pool (so that a count may run beside the page)."""
    held = [await engine.connect().start() for _ in range(count)]
    for connection in held:
        await connection.close()
