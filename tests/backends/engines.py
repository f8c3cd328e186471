"""SQLite files for the SQLAlchemy backend tests: an engine over a new file with its tables and rows."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import MetaData, insert
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
