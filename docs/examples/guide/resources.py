"""Declaring resources: exposure, search, default order, OR endpoints, limits (docs/guide/resources.md)."""

import tempfile
from pathlib import Path

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import Limits, ListingPlugin, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "authors"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    # Private: never filtered, searched, ordered on nor listed, through any path.
    email: Mapped[str] = mapped_column(String(200), info={"private": True})


class Book(Base):
    __tablename__ = "books"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    year: Mapped[int]
    pages: Mapped[int | None]
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id"))
    author: Mapped[Author] = relationship()


# A throwaway SQLite file for the example; use your own database URL.
DATABASE = Path(tempfile.mkdtemp()) / "books.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")

# start-example books
books = Resource(
    "books",  # GET /api/v1/books/
    SQLAlchemyBackend(Book, config=config),
    filter_fields=("*", "author__*"),  # own columns, and the author's public columns
    order_fields=("*", "author__name"),
    search_fields=("title", "author__name"),
    default_order=("-year",),  # then the primary key, always
    limits=Limits(default_count=5, max_count=50),
    timeout=2.0,
    message="Listed books.",
    description="Books; search covers the title and the author's name.",
)
# end-example books

# start-example books-any
books_any = Resource(
    "books-any",
    SQLAlchemyBackend(Book, config=config),
    filter_fields=("year", "title", "author__name"),  # nothing else is a filter here
    order_fields=("year", "title"),
    combine="or",  # ?year=1969&title=Dune lists the books of 1969 and Dune
    ignore_unknown_filters=True,  # unknown names are dropped instead of a 400
    max_depth=1,
)
# end-example books-any


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        le_guin = Author(id=1, name="Ursula K. Le Guin", email="ursula@example.org")
        herbert = Author(id=2, name="Frank Herbert", email="frank@example.org")
        butler = Author(id=3, name="Octavia E. Butler", email="octavia@example.org")
        session.add_all(
            [
                Book(id=1, title="The Left Hand of Darkness", year=1969, pages=286, author=le_guin),
                Book(id=2, title="The Dispossessed", year=1974, pages=387, author=le_guin),
                Book(id=3, title="Dune", year=1965, pages=412, author=herbert),
                Book(id=4, title="Kindred", year=1979, pages=264, author=butler),
                Book(id=5, title="Parable of the Sower", year=1993, pages=None, author=butler),
                Book(id=6, title="A Wizard of Earthsea", year=1968, pages=183, author=le_guin),
            ]
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


# start-example app
app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([books, books_any], path_prefix="/api/v1")],
    on_startup=[seed],
    on_shutdown=[dispose],
)
# end-example app
