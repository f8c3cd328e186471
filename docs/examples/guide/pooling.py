"""Engines for PostgreSQL behind pgbouncer in transaction pooling mode (docs/guide/backends.md).

The tests list through these engines on a pgbouncer of their own (``tests/scaling``, and the
conformance table on the ``pgbouncer`` targets).
"""

from piccolo.engine.postgres import PostgresEngine
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from litestar_listing.backends.pooling import piccolo_pool_options, sqlalchemy_connect_args


# start-example pooling
def sqlalchemy_engine(url: str) -> AsyncEngine:
    """``url``: ``postgresql+asyncpg://user@pgbouncer-host:6432/db``."""
    return create_async_engine(url, connect_args=sqlalchemy_connect_args())


def piccolo_engine(dsn: str) -> PostgresEngine:
    """``dsn``: ``postgresql://user@pgbouncer-host:6432/db``."""
    return PostgresEngine(config={"dsn": dsn, **piccolo_pool_options()})


# end-example pooling
