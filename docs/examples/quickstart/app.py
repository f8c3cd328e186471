"""The quick start: one SQLAlchemy model listed at ``/api/v1/tasks/``, on SQLite.

Run it with ``litestar --app docs.examples.quickstart.app:app run`` from the repository root. The
database is in memory, so the start-up hook creates the table and a few tasks each time the app starts.
"""

from __future__ import annotations

import datetime as dt

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend

__all__ = ("Base", "Task", "app", "config", "seed", "tasks")


class Base(DeclarativeBase):
    """The declarative base of the example."""


class Task(Base):
    """A to-do item."""

    __tablename__ = "tasks"

    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    done: Mapped[bool] = mapped_column(default=False)
    due: Mapped[dt.date | None]


config = SQLAlchemyAsyncConfig(connection_string="sqlite+aiosqlite:///:memory:")

tasks = Resource(
    "tasks",  # GET /api/v1/tasks/
    SQLAlchemyBackend(Task, config=config),
    search_fields=("title",),  # ?search=... looks here; nothing else is searchable
    default_order=("due",),  # soonest first; NULLs last, then the primary key
)


async def seed() -> None:
    """Create the table and a few rows to list: an in-memory database starts empty each time."""
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            [
                Task(id=1, title="Write the quick start", done=True, due=dt.date(2026, 3, 1)),
                Task(id=2, title="Review the quick start", due=dt.date(2026, 3, 3)),
                Task(id=3, title="Publish the docs", due=dt.date(2026, 3, 10)),
                Task(id=4, title="Plan the next release", due=None),
            ]
        )
        await session.commit()


app = Litestar(plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([tasks])], on_startup=[seed])
