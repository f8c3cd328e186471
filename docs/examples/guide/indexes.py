"""The index advisor: a resource's declaration and the indexes it needs (docs/guide/indexes.md)."""

import tempfile
from datetime import date
from pathlib import Path

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import ListingPlugin, Resource, tenant_scope
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "authors"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))


class Article(Base):
    __tablename__ = "articles"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    published_on: Mapped[date]
    views: Mapped[int | None]
    company_id: Mapped[int]
    author_id: Mapped[int] = mapped_column(ForeignKey(Author.id))
    author: Mapped[Author] = relationship(lazy="raise")


DATABASE = Path(tempfile.mkdtemp()) / "articles.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add(Author(id=1, name="Ada"))
        session.add_all(
            [
                Article(id=1, title="Indexes", published_on=date(2026, 1, 5), views=40, company_id=1, author_id=1),
                Article(id=2, title="Trigrams", published_on=date(2026, 2, 9), views=None, company_id=1, author_id=1),
                Article(id=3, title="Keysets", published_on=date(2026, 3, 2), views=75, company_id=2, author_id=1),
            ]
        )
        await session.commit()


# start-example resource
articles = Resource(
    "articles",
    SQLAlchemyBackend(Article, config=config),
    filter_fields=("*", "author__name"),
    search_fields=("title", "author__name"),
    default_order=("-published_on",),
    indexed_orders=(("-views",),),  # clients often ask for the most read first
    scopes=(tenant_scope("company_id", anonymous="unscoped"),),
)

app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([articles], check_indexes=True)],
    on_startup=[seed],  # the tables and three articles, before the check reads the indexes
)
# end-example resource
