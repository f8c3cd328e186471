"""Facets: the filter sidebar's counts from the list's own query (docs/guide/facets.md)."""

import datetime as dt
import tempfile
from pathlib import Path

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import Column, DateTime, ForeignKey, String, Table
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


product_tags = Table(
    "product_tags",
    Base.metadata,
    Column("product_id", ForeignKey("products.id"), primary_key=True),
    Column("tag_id", ForeignKey("tags.id"), primary_key=True),
)


class Brand(Base):
    __tablename__ = "brands"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(50))


class Tag(Base):
    __tablename__ = "tags"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(50))


class Product(Base):
    __tablename__ = "products"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    color: Mapped[str | None] = mapped_column(String(20))
    brand_id: Mapped[int | None] = mapped_column(ForeignKey("brands.id"))
    added_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    brand: Mapped[Brand | None] = relationship()
    tags: Mapped[list[Tag]] = relationship(secondary=product_tags)


DATABASE = Path(tempfile.mkdtemp()) / "products.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")

# start-example resource
products = Resource(
    "products",
    SQLAlchemyBackend(Product, config=config),
    filter_fields=("*", "brand__name", "tags__name"),
    search_fields=("name",),
    default_order=("id",),
    facet_fields=("color", "brand__name", "tags__name", "added_at__month"),
)
# end-example resource


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        acme, globex = Brand(id=1, name="Acme"), Brand(id=2, name="Globex")
        sale, new, eco = Tag(id=1, name="sale"), Tag(id=2, name="new"), Tag(id=3, name="eco")
        march, april = dt.datetime(2026, 3, 2, tzinfo=dt.timezone.utc), dt.datetime(2026, 4, 9, tzinfo=dt.timezone.utc)
        session.add_all(
            [
                Product(id=1, name="Red kettle", color="red", brand=acme, added_at=march, tags=[sale, new]),
                Product(id=2, name="Red mug", color="red", brand=globex, added_at=march, tags=[sale]),
                Product(id=3, name="Blue mug", color="blue", brand=acme, added_at=april, tags=[new, eco]),
                Product(id=4, name="Blue kettle", color="blue", brand=acme, added_at=april, tags=[]),
                Product(id=5, name="Green mug", color="green", brand=None, added_at=april, tags=[eco]),
                Product(id=6, name="Plain mug", color=None, brand=globex, added_at=march, tags=[sale, eco]),
            ]
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([products])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
