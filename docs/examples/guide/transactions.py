"""A list inside the handler's own transaction: its timeout leaves the transaction usable (docs/guide/security.md).

A handler writes, lists a report that runs out of time, writes again and commits: both writes are
kept. ``create_app(url)`` serves it through SQLAlchemy (advanced-alchemy's request session) and
``create_piccolo_app(engine)`` through Piccolo (``engine.transaction()``), on SQLite or PostgreSQL
(and SQLAlchemy on MariaDB).
"""

from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar, Request, post
from piccolo.columns import Integer as PiccoloInteger
from piccolo.columns import Varchar
from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.querystring import QueryString
from piccolo.table import Table, create_db_tables
from sqlalchemy import Integer, String, literal_column, text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource, UnavailableError, list_resource
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.piccolo import prepare_engine as prepare_piccolo_engine
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, prepare_engine

TIMEOUT = 0.5
"""Seconds a list may take: the report below needs seconds, so it always runs out of time."""

SLOW_SQL = {
    # A deliberately slow column, the stand-in for a heavy report: two seconds on PostgreSQL and
    # MariaDB, a recursive count on SQLite (stopped by the guard of ``prepare_engine``).
    "postgresql": "(SELECT 1 FROM pg_sleep(2))",
    "mariadb": "(SELECT SLEEP(2))",
    "sqlite": (
        "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000000) SELECT count(*) FROM c)"
    ),
}


class Base(DeclarativeBase):
    pass


class Note(Base):
    __tablename__ = "journal"
    id: Mapped[int] = mapped_column(primary_key=True)
    text: Mapped[str] = mapped_column(String(100))


# The server's time limit of the session, which the list's must not outlive.
TIMEOUT_SQL = {"postgresql": "SHOW statement_timeout", "mariadb": "SELECT @@SESSION.max_statement_time"}


def create_app(url: str) -> Litestar:
    """The SQLAlchemy app on ``url`` (``sqlite+aiosqlite://...``, ``postgresql+asyncpg://...``, ``mysql+asyncmy://...``)."""
    dialect = url.split(":", maxsplit=1)[0].split("+", maxsplit=1)[0].replace("mysql", "mariadb")
    engine = create_async_engine(url)
    # SQLite has no statement timeout of its own: the guard stops this engine's statements in time.
    prepare_engine(engine, statement_timeout=TIMEOUT)
    config = SQLAlchemyAsyncConfig(engine_instance=engine)
    slow = literal_column(SLOW_SQL[dialect], Integer)
    # start-example sqlalchemy
    reports = Resource("reports", SQLAlchemyBackend(Note, config=config, computed={"slow": slow}), timeout=TIMEOUT)

    @post("/journal", status_code=200)
    async def report(request: Request[Any, Any, Any]) -> dict[str, object]:
        """Write, list (which times out), write again, commit: the caller's transaction survives."""
        db_session = config.provide_session(request.app.state, request.scope)  # the request's session
        db_session.add(Note(text="report requested"))
        await db_session.flush()  # the session's transaction is open: the list runs in a SAVEPOINT
        try:
            await list_resource(reports, request, [], session=db_session)
            outcome = "report listed"
        except UnavailableError:  # the plugin would have answered 503
            outcome = "report timed out"
        db_session.add(Note(text=outcome))
        timeout = (await db_session.execute(text(TIMEOUT_SQL[dialect]))).scalar() if dialect != "sqlite" else None
        await db_session.commit()
        return {"outcome": outcome, "statement_timeout": timeout}

    # end-example sqlalchemy

    async def create_tables() -> None:
        async with engine.begin() as connection:
            await connection.run_sync(Base.metadata.drop_all)
            await connection.run_sync(Base.metadata.create_all)

    async def dispose() -> None:
        await engine.dispose()

    return Litestar(
        route_handlers=[report],
        plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([reports])],
        on_startup=[create_tables],
        on_shutdown=[dispose],
    )


def create_piccolo_app(engine: Engine[Any]) -> Litestar:
    """The Piccolo app on ``engine`` (a ``SQLiteEngine`` or a ``PostgresEngine``)."""
    prepare_piccolo_engine(engine, statement_timeout=TIMEOUT)
    dialect = "postgresql" if engine.engine_type == "postgres" else "sqlite"

    class Journal(Table, tablename="journal", db=engine):
        text = Varchar(length=100)

    slow = (QueryString(SLOW_SQL[dialect]), PiccoloInteger())
    # start-example piccolo
    reports = Resource("reports", PiccoloBackend(Journal, computed={"slow": slow}), timeout=TIMEOUT)

    @post("/journal", status_code=200)
    async def report(request: Request[Any, Any, Any]) -> dict[str, object]:
        """The same in Piccolo's transaction, committed when the block ends."""
        timeout = None
        async with engine.transaction() as transaction:
            await Journal.insert(Journal(text="report requested"))
            try:
                await list_resource(reports, request, [])
                outcome = "report listed"
            except UnavailableError:
                outcome = "report timed out"
            await Journal.insert(Journal(text=outcome))
            if dialect != "sqlite":
                timeout = await transaction.connection.fetchval("SHOW statement_timeout")
        return {"outcome": outcome, "statement_timeout": timeout}

    # end-example piccolo

    async def create_tables() -> None:
        await Journal.alter().drop_table(if_exists=True)
        await create_db_tables(Journal)

    async def open_pool() -> None:
        if isinstance(engine, PostgresEngine):  # a SQLite engine has no pool
            await engine.start_connection_pool()

    async def close_pool() -> None:
        if isinstance(engine, PostgresEngine):
            await engine.close_connection_pool()

    return Litestar(
        route_handlers=[report],
        plugins=[ListingPlugin([reports])],
        on_startup=[open_pool, create_tables],
        on_shutdown=[close_pool],
    )
