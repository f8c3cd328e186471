"""Keyset continuation and estimated totals, the two opt-in extensions (docs/guide/extensions.md)."""

import datetime as dt
import tempfile
from pathlib import Path

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import DateTime, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend

FOLDER = Path(tempfile.mkdtemp())
START = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


class Base(DeclarativeBase):
    pass


class Event(Base):
    __tablename__ = "events"
    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    severity: Mapped[int | None] = mapped_column(Integer)
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{FOLDER / 'events.sqlite'}")

# start-example resource
events = Resource(
    "events",
    SQLAlchemyBackend(Event, config=config),
    default_order=("-at",),
    # X-Next-Cursor on every page that has a next one; ?cursor=... continues after its last item.
    keyset=True,
    # On PostgreSQL, totals the planner puts at 10,000 rows or more are its estimate (X-Total-Mode).
    total_mode="estimated",
    exact_total_below=10_000,
)
# end-example resource


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            Event(
                id=number,
                kind=("deploy", "alert", "backup")[number % 3],
                severity=None if number % 4 == 0 else number % 5,
                at=START + dt.timedelta(hours=number),
            )
            for number in range(1, 26)
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([events])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
