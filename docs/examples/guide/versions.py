"""Route options and versioned APIs: one resource under /api/v1 and /api/v2 (docs/guide/routes.md)."""

import tempfile
from pathlib import Path
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from litestar.connection import ASGIConnection
from litestar.exceptions import PermissionDeniedException
from litestar.handlers import BaseRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource, RouteOptions
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Book(Base):
    __tablename__ = "books"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    year: Mapped[int]


class Change(Base):
    __tablename__ = "changes"
    id: Mapped[int] = mapped_column(primary_key=True)
    book_id: Mapped[int]
    action: Mapped[str] = mapped_column(String(20))


DATABASE = Path(tempfile.mkdtemp()) / "books.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")

# start-example resources
books = Resource(
    "books",
    SQLAlchemyBackend(Book, config=config),
    search_fields=("title",),
    default_order=("id",),
)
changes = Resource("changes", SQLAlchemyBackend(Change, config=config), default_order=("-id",))
# end-example resources


# start-example guard
def staff_only(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """A Litestar guard: refuse (403) unless the request says it comes from staff."""
    if connection.headers.get("x-staff") != handler.opt["staff_marker"]:
        raise PermissionDeniedException("staff only")


# end-example guard

# start-example plugins
version_1 = ListingPlugin([books])  # GET /api/v1/books/, operationId list_books
version_2 = ListingPlugin(
    [books, changes],
    path_prefix="/api/v2",
    routes={
        # GET /api/v2/catalogue/, operationId list_books_api_v2 (list_books is version 1's)
        "books": RouteOptions(path="catalogue", tags=["catalogue"], security=[{"ApiKey": []}]),
        # GET /api/v2/changes/ for staff only, left out of OpenAPI
        "changes": RouteOptions(guards=[staff_only], opt={"staff_marker": "yes"}, include_in_schema=False),
    },
)
# end-example plugins


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            [
                Book(id=1, title="Dune", year=1965),
                Book(id=2, title="Solaris", year=1961),
                Book(id=3, title="Dune Messiah", year=1969),
                Change(id=1, book_id=1, action="created"),
                Change(id=2, book_id=3, action="created"),
                Change(id=3, book_id=1, action="renamed"),
            ]
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), version_1, version_2],
    openapi_config=OpenAPIConfig(
        title="Books",
        version="2.0.0",
        components=Components(
            security_schemes={"ApiKey": SecurityScheme(type="apiKey", name="X-Api-Key", security_scheme_in="header")}
        ),
    ),
    on_startup=[seed],
    on_shutdown=[dispose],
)
