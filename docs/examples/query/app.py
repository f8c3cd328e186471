"""The books every request of the query-language page runs against: SQLAlchemy on in-memory SQLite.

Run it with ``litestar --app docs.examples.query.app:app run`` from the repository root, then try
``http://127.0.0.1:8000/api/v1/books/?search=le``. ``tests/docs/test_query_examples.py`` sends the
page's requests through Litestar's test client and compares the answers with the page.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import JSON, Column, ForeignKey, Numeric, String, Table
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend

__all__ = ("Author", "Base", "Book", "Tag", "app", "books", "config", "seed")


class Base(DeclarativeBase):
    """The declarative base of the example's tables."""


book_tags = Table(
    "book_tags",
    Base.metadata,
    Column("book_id", ForeignKey("books.id"), primary_key=True),
    Column("tag_id", ForeignKey("tags.id"), primary_key=True),
)


class Author(Base):
    """A book's author (to-one from a book)."""

    __tablename__ = "authors"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    country: Mapped[str] = mapped_column(String(2))


class Tag(Base):
    """A label of books (to-many from a book)."""

    __tablename__ = "tags"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(50))


class Book(Base):
    """The listed model: text, integer, decimal, date, boolean, a NULLable float and a JSON document."""

    __tablename__ = "books"

    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    pages: Mapped[int]
    price: Mapped[Decimal] = mapped_column(Numeric(8, 2))
    published: Mapped[dt.date]
    in_print: Mapped[bool]
    rating: Mapped[float | None]
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id"))
    details: Mapped[dict[str, Any]] = mapped_column(JSON)

    author: Mapped[Author] = relationship(lazy="raise")
    tags: Mapped[list[Tag]] = relationship(secondary=book_tags, lazy="raise")


AUTHORS = [
    (1, "Ursula K. Le Guin", "US"),
    (2, "Stanisław Lem", "PL"),
    (3, "Octavia E. Butler", "US"),
    (4, "Italo Calvino", "IT"),
]
TAGS = [(1, "classic"), (2, "short stories"), (3, "space")]
DETAILS = {
    1: {
        "format": "paperback",
        "editions": 12,
        "awards": ["Hugo", "Nebula", "Locus"],
        "series": {"name": "Hainish Cycle"},
    },
    2: {"format": "hardcover", "editions": 9, "awards": ["Hugo", "Nebula"], "series": {"name": "Hainish Cycle"}},
    3: {"format": "paperback", "editions": 7, "translated": True},
    4: {"format": "paperback", "editions": 3, "translated": True},
    5: {"format": "hardcover", "editions": 5, "awards": []},
    6: {"format": "paperback", "editions": 2, "awards": ["Hugo", "Nebula", "Locus"]},
    7: {"format": "hardcover", "editions": 6, "translated": True},
    8: {"format": "paperback", "editions": 4, "translated": True, "awards": ["National Book Award"]},
}
"""Each book's ``details``, a JSON document whose keys the resource declares."""

BOOKS = [
    # id, title, pages, price, published, in_print, rating, author_id, tag ids
    (1, "The Dispossessed", 387, "14.50", "1974-05-01", True, 4.6, 1, [1, 3]),
    (2, "The Left Hand of Darkness", 304, "12.00", "1969-03-01", True, 4.5, 1, [1]),
    (3, "Solaris", 204, "13.99", "1961-06-01", True, 4.4, 2, [1, 3]),
    (4, "The Cyberiad", 295, "16.00", "1965-01-01", False, None, 2, [2]),
    (5, "Kindred", 264, "11.25", "1979-06-01", True, 4.7, 3, [1]),
    (6, "Bloodchild", 214, "15.00", "1995-01-01", True, None, 3, [2]),
    (7, "Invisible Cities", 165, "10.50", "1972-11-01", True, 4.3, 4, []),
    (8, "Cosmicomics", 153, "9.75", "1965-01-01", False, 4.2, 4, [2, 3]),
]

config = SQLAlchemyAsyncConfig(connection_string="sqlite+aiosqlite:///:memory:")


async def seed() -> None:
    """Create the tables and insert the rows above: an in-memory database starts empty each time."""
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.create_all)
    tags = {tag_id: Tag(id=tag_id, name=name) for tag_id, name in TAGS}
    async with config.get_session() as session:
        session.add_all(Author(id=author_id, name=name, country=country) for author_id, name, country in AUTHORS)
        session.add_all(tags.values())
        for book_id, title, pages, price, published, in_print, rating, author_id, tag_ids in BOOKS:
            session.add(
                Book(
                    id=book_id,
                    title=title,
                    pages=pages,
                    price=Decimal(price),
                    published=dt.date.fromisoformat(published),
                    in_print=in_print,
                    rating=rating,
                    author_id=author_id,
                    details=DETAILS[book_id],
                    tags=[tags[tag_id] for tag_id in tag_ids],
                )
            )
        await session.commit()


# start-resource
books = Resource(
    "books",  # GET /api/v1/books/
    SQLAlchemyBackend(Book, config=config),
    filter_fields=("*", "author__*", "tags__name"),  # own columns, the author's columns, tag names
    order_fields=("*", "author__name"),
    search_fields=("title", "author__name"),
    default_order=("title",),  # without order_by; the primary key always breaks ties
    json_keys={  # keys of the JSON document, with their types: filterable and orderable
        "details": {"format": str, "translated": bool, "editions": int, "awards": list[str], "series": {"name": str}}
    },
)
app = Litestar(plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([books])], on_startup=[seed])
# end-resource
