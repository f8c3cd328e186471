"""A resource's list behind the application's own handlers (docs/guide/in-your-app.md).

No ``from __future__ import annotations``: Litestar reads the annotations of the route handlers.
"""

import csv
import io
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Controller, Litestar, MediaType, Request, Router, get
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.exceptions import NotAuthorizedException
from litestar.handlers import BaseRouteHandler
from litestar.params import SkipValidation
from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import (
    ListingPlugin,
    ListQuery,
    ListResult,
    Resource,
    list_resource,
    listing_operation,
    listing_route,
    provide_page,
    provide_query,
)
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Project(Base):
    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(20))


DATABASE = Path(tempfile.mkdtemp()) / "own_handlers.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")

# start-example resources
projects = Resource(
    "projects",  # mounted by the plugin: GET /api/v1/projects/
    SQLAlchemyBackend(Project, config=config),
    search_fields=("name",),
    default_order=("id",),
)
archive = Resource(
    "archive",  # served only by the handlers below
    SQLAlchemyBackend(Project, config=config),
    search_fields=("name",),
    default_order=("-id",),
)
listing = ListingPlugin([projects], unmounted=[archive])
# end-example resources


# start-example controller
def staff_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """A guard: only requests with the staff header pass (use your authentication's user)."""
    if connection.headers.get("X-Staff") != "yes":
        raise NotAuthorizedException(detail="staff only")


class ArchiveController(Controller):
    path = "/staff/archive"
    guards = [staff_only]
    tags = ["staff"]

    list_archive = listing_route(archive, "/", operation_id="list_staff_archive", opt={"audit": True})


# end-example controller


# start-example router
v2 = Router(
    path="/api/v2",
    route_handlers=[listing_route(projects, "/projects/", operation_id="list_projects_v2", tags=["v2"])],
)
# end-example router


# start-example page
class ProjectCard(msgspec.Struct):
    id: int
    title: str


class ProjectCards(msgspec.Struct):
    cards: list[ProjectCard]
    shown: int
    total: int
    more: bool


@get("/project-cards", dependencies={"result": provide_page(projects)})
async def project_cards(result: NamedDependency[ListResult]) -> ProjectCards:
    """The projects as cards: the list's query parameters, validated and listed before this runs."""
    cards = [ProjectCard(id=item["id"], title=item["name"].upper()) for item in result.items]
    paging = result.pagination
    return ProjectCards(cards=cards, shown=len(cards), total=paging.total, more=paging.page < paging.total_pages)


# end-example page


# start-example query
@get("/archive/query", dependencies={"list_query": provide_query(archive)})
async def archive_query(list_query: SkipValidation[ListQuery]) -> dict[str, Any]:
    """What the request asks for, validated (a 400 otherwise), nothing listed."""
    return {
        "filters": [item.key for item in list_query.filters],
        "search": None if list_query.search is None else list_query.search.text,
        "page": list_query.window.page,
    }


# end-example query


# start-example operation
@get("/archive.csv", operation_class=listing_operation(archive), media_type=MediaType.TEXT)
async def archive_csv(request: Request[Any, Any, Any]) -> str:
    """The page as CSV; ``listing_operation`` documents the parameters this handler reads itself."""
    result = await list_resource(archive, request)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "name", "status"])
    writer.writerows([item["id"], item["name"], item["status"]] for item in result.items)
    return out.getvalue()


# end-example operation


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            [
                Project(id=1, name="Ábaco", status="open"),
                Project(id=2, name="Website", status="open"),
                Project(id=3, name="abacus port", status="closed"),
                Project(id=4, name="Mobile app", status="closed"),
                Project(id=5, name="ÁBACO 2", status="open"),
            ]
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


# start-example app
app = Litestar(
    route_handlers=[ArchiveController, v2, project_cards, archive_query, archive_csv],
    plugins=[SQLAlchemyPlugin(config=config), listing],
    on_startup=[seed],
    on_shutdown=[dispose],
)
# end-example app
