"""One app, three backends over the same rows, the same answers; plus ``to_item`` (docs/guide/backends.md)."""

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from piccolo.columns import Varchar
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.table import Table
from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, MemoryBackend, Resource
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.core.schema import EntityInfo, FieldInfo, ModelGraph, ValueType

FOLDER = Path(tempfile.mkdtemp())
CONTACTS = [(1, "Ángela", "Madrid"), (2, "bob", None), (3, "álvaro", "Sevilla"), (4, "Åsa", "Malmö"), (5, "Ana", None)]


# start-example sqlalchemy
class Base(DeclarativeBase):
    pass


class Contact(Base):
    __tablename__ = "contacts"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    city: Mapped[str | None] = mapped_column(String(100))


config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{FOLDER / 'contacts.sqlite'}")
sql_backend = SQLAlchemyBackend(Contact, config=config)
# end-example sqlalchemy


# start-example piccolo
engine = SQLiteEngine(path=str(FOLDER / "piccolo-contacts.sqlite"))


class PiccoloContact(Table, db=engine, tablename="contacts"):
    name = Varchar(length=100)
    city = Varchar(length=100, null=True, default=None)


piccolo_backend = PiccoloBackend(PiccoloContact, engine=engine)
# end-example piccolo


# start-example memory
graph = ModelGraph(
    root="Contact",
    entities={
        "Contact": EntityInfo(
            name="Contact",
            fields={
                "id": FieldInfo("id", ValueType.INTEGER, nullable=False),
                "name": FieldInfo("name", ValueType.TEXT, nullable=False),
                "city": FieldInfo("city", ValueType.TEXT),
            },
            relations={},
            pk=("id",),
        )
    },
)
memory_backend = MemoryBackend(graph, [{"id": id_, "name": name, "city": city} for id_, name, city in CONTACTS])
# end-example memory

# start-example mixed
options: dict[str, Any] = {"search_fields": ("name", "city"), "default_order": ("name",)}
resources = [
    Resource("sql-contacts", sql_backend, **options),
    Resource("piccolo-contacts", piccolo_backend, **options),
    Resource("memory-contacts", memory_backend, **options),
]
# end-example mixed


# start-example to-item
@dataclass
class ContactCard:
    id: int
    label: str


def as_card(contact: Contact, extra: Any) -> dict[str, Any]:
    """``(instance, extra labelled columns) -> item``: the item shape, instead of every public column."""
    return {"id": contact.id, "label": f"{contact.name} ({contact.city or 'no city'})"}


cards = Resource(
    "contact-cards",
    SQLAlchemyBackend(Contact, config=config, to_item=as_card),
    item=ContactCard,  # the item type OpenAPI shows, since to_item changes the shape
    default_order=("id",),
)
# end-example to-item


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all([Contact(id=id_, name=name, city=city) for id_, name, city in CONTACTS])
        await session.commit()
    await PiccoloContact.alter().drop_table(if_exists=True)
    await PiccoloContact.create_table()
    await PiccoloContact.insert(*(PiccoloContact(id=id_, name=name, city=city) for id_, name, city in CONTACTS))


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([*resources, cards])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
