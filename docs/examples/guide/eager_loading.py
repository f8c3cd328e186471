"""Eager loading per resource and per call (docs/guide/eager-loading.md).

No ``from __future__ import annotations``: Litestar reads the annotations of the route handler.
"""

import tempfile
from pathlib import Path
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar, Request, get
from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import ListingPlugin, Resource, list_resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Company(Base):
    __tablename__ = "companies"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))


class Project(Base):
    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    company_id: Mapped[int] = mapped_column(ForeignKey("companies.id"))
    company: Mapped[Company] = relationship()
    tasks: Mapped[list["Task"]] = relationship(back_populates="project", order_by="Task.id")


class Task(Base):
    __tablename__ = "tasks"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(100))
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id"))
    project: Mapped[Project] = relationship(back_populates="tasks")


DATABASE = Path(tempfile.mkdtemp()) / "projects.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")

# start-example resources
tasks = Resource(
    "tasks",
    SQLAlchemyBackend(Task, config=config),
    default_order=("id",),
    load=("project", "project__company"),  # to-one: joined into the page statement
)
projects = Resource(
    "projects",
    SQLAlchemyBackend(Project, config=config),
    default_order=("id",),
    load=("tasks",),  # to-many: one more statement for the whole page (select-in)
)
# end-example resources


# start-example per-call
@get("/reports/projects")
async def project_report(request: Request[Any, Any, Any]) -> Any:
    """The projects list, same query parameters, but loading the company instead of the tasks."""
    result = await list_resource(projects, request, load=("company",))
    return result.response()


# end-example per-call


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        acme = Company(id=1, name="Acme")
        website = Project(id=1, name="Website", company=acme)
        app_project = Project(id=2, name="Mobile app", company=acme)
        session.add_all(
            [
                Task(id=1, title="Draft the home page", project=website),
                Task(id=2, title="Pick a font", project=website),
                Task(id=3, title="Login screen", project=app_project),
            ]
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    route_handlers=[project_report],
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([tasks, projects])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
