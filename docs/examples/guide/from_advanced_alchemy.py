"""An endpoint moved from advanced-alchemy's filter dependencies to a resource (docs/guide/from-advanced-alchemy.md).

The application serves the endpoint both ways, so that the tests can send each the same question:
``/aa/books`` as advanced-alchemy's providers and service answer it, ``/api/v1/books/`` as the
``ListingPlugin`` mounts it, and ``/books`` with advanced-alchemy's ``OffsetPagination`` body kept.

No ``from __future__ import annotations``: Litestar reads the annotations of the route handlers.
"""

import datetime as dt
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from advanced_alchemy.extensions.litestar.providers import (
    FieldNameType,
    create_filter_dependencies,
    create_service_provider,
)
from advanced_alchemy.filters import FilterTypes
from advanced_alchemy.mixins import AuditColumns
from advanced_alchemy.repository import SQLAlchemyAsyncRepository
from advanced_alchemy.service import OffsetPagination, SQLAlchemyAsyncRepositoryService
from litestar import Litestar, get
from litestar.di import NamedDependency, Provide
from litestar.params import SkipValidation
from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import Limits, ListingPlugin, ListResult, Resource, provide_page
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "authors"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))


class Book(AuditColumns, Base):
    __tablename__ = "books"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    genre: Mapped[str | None] = mapped_column(String(20))
    published: Mapped[dt.date | None]
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id"))
    author: Mapped[Author] = relationship(lazy="raise")


DATABASE = Path(tempfile.mkdtemp()) / "from_advanced_alchemy.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")


# start-example before
class BookOut(msgspec.Struct):
    id: int
    title: str
    genre: str | None
    published: dt.date | None


class BookService(SQLAlchemyAsyncRepositoryService[Book]):
    class Repository(SQLAlchemyAsyncRepository[Book]):
        model_type = Book

    repository_type = Repository


@get(
    "/aa/books",
    dependencies={
        "books_service": Provide(create_service_provider(BookService)),
        **create_filter_dependencies(
            {
                "id_filter": int,
                "created_at": True,
                "pagination_type": "limit_offset",
                "pagination_size": 20,
                "search": "title",
                "search_ignore_case": True,
                "sort_field": "published",
                "sort_order": "desc",
                "in_fields": [FieldNameType("genre", str)],
                "not_in_fields": [FieldNameType("genre", str)],
            }
        ),
    },
)
async def list_books_aa(
    books_service: NamedDependency[BookService],
    filters: NamedDependency[SkipValidation[list[FilterTypes]]],
) -> OffsetPagination[BookOut]:
    results, total = await books_service.get_many_and_count(*filters)
    return books_service.to_schema(results, total, filters=filters, schema_type=BookOut)


# end-example before


# start-example after
books = Resource(
    "books",  # GET /api/v1/books/
    SQLAlchemyBackend(Book, config=config),
    filter_fields=("id", "genre", "published", "created_at", "author__name"),
    order_fields=("id", "title", "published", "created_at"),
    search_fields=("title", "author__name"),
    default_order=("-published",),
    limits=Limits(default_count=20),
)
# end-example after


# start-example offset-pagination
@get("/books", dependencies={"result": provide_page(books)})
async def list_books(result: NamedDependency[ListResult]) -> OffsetPagination[dict[str, Any]]:
    """The same list in advanced-alchemy's body, for clients that read ``items``, ``limit``, ``offset``."""
    page = result.pagination
    return OffsetPagination(items=result.items, limit=page.count, offset=(page.page - 1) * page.count, total=page.total)


# end-example offset-pagination


def _at(day: int) -> dt.datetime:
    return dt.datetime(2024, 5, day, 12, 0, tzinfo=dt.timezone.utc)


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    le_guin = Author(id=1, name="Ursula K. Le Guin")
    herbert = Author(id=2, name="Frank Herbert")
    lem = Author(id=3, name="Stanisław Lem")
    rows = [
        (1, "A Wizard of Earthsea", "fantasy", dt.date(1968, 11, 1), le_guin),
        (2, "The Left Hand of Darkness", "sf", dt.date(1969, 3, 1), le_guin),
        (3, "Dune", "sf", dt.date(1965, 8, 1), herbert),
        (4, "The Tombs of Atuan", "fantasy", dt.date(1970, 12, 1), le_guin),
        (5, "Solaris", "sf", dt.date(1961, 6, 1), lem),
        (6, "The Cyberiad", None, None, lem),
        (7, "100% Lem", "essays", dt.date(1984, 1, 1), lem),
    ]
    async with config.get_session() as session:
        session.add_all(
            Book(id=key, title=title, genre=genre, published=day, author=who, created_at=_at(key), updated_at=_at(key))
            for key, title, genre, day, who in rows
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


# start-example app
app = Litestar(
    route_handlers=[list_books_aa, list_books],
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([books])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
# end-example app
