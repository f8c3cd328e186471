"""Enrichment: fields added to the page's items after paging, one query per page (docs/guide/enrichment.md)."""

import tempfile
from pathlib import Path
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import ForeignKey, String, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import EnrichContext, ListingPlugin, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Project(Base):
    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))


class Task(Base):
    __tablename__ = "tasks"
    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id"))


DATABASE = Path(tempfile.mkdtemp()) / "projects.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")


# start-example enrich
async def add_task_count(items: list[dict[str, Any]], context: EnrichContext) -> None:
    """Each project's number of tasks: one GROUP BY for the whole page, in the request's session."""
    backend = context.resource.backend
    if not isinstance(backend, SQLAlchemyBackend):
        raise TypeError("add_task_count needs a SQLAlchemy resource")
    session = backend.session(context.list_context)
    ids = [item["id"] for item in items]
    statement = select(Task.project_id, func.count()).where(Task.project_id.in_(ids)).group_by(Task.project_id)
    counts: dict[int, int] = dict((await session.execute(statement)).all())
    for item in items:
        item["task_count"] = counts.get(item["id"], 0)


projects = Resource(
    "projects",
    SQLAlchemyBackend(Project, config=config),
    default_order=("id",),
    enrich=add_task_count,
    enrich_fields={"task_count": int},  # for the item schema in OpenAPI
)
# end-example enrich


# start-example broken
def drop_first(items: list[dict[str, Any]], context: EnrichContext) -> None:
    """Wrong: enrichment may add fields, never add, remove or replace items (a 500)."""
    del items[0]


broken = Resource("broken-projects", SQLAlchemyBackend(Project, config=config), enrich=drop_first)
# end-example broken


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            [Project(id=1, name="Website"), Project(id=2, name="Mobile app"), Project(id=3, name="Billing")]
        )
        session.add_all([Task(id=i, project_id=project) for i, project in enumerate([1, 1, 2, 1, 2], start=1)])
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([projects, broken])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
