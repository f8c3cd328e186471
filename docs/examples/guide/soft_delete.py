"""Soft delete through the base list query, on SQLAlchemy and on Piccolo (docs/guide/soft-delete.md)."""

import datetime as dt
import tempfile
from pathlib import Path

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from piccolo.columns import Timestamptz, Varchar
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.table import Table
from sqlalchemy import DateTime, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend

FOLDER = Path(tempfile.mkdtemp())
DELETED = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
ROWS = [(1, "Budget 2024", None), (2, "Old budget", DELETED), (3, "Roadmap", None), (4, "Draft", DELETED)]


# ---------------------------------------------------------------- SQLAlchemy
class Base(DeclarativeBase):
    pass


class Note(Base):
    __tablename__ = "notes"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    deleted_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))


config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{FOLDER / 'notes.sqlite'}")

# start-example sqlalchemy
notes = Resource(
    "notes",
    SQLAlchemyBackend(
        Note,
        config=config,
        # The base list query: select(Note) refined. Forced filters, client filters, search,
        # order and the page all apply to what it yields, and so does the total.
        statement=lambda statement: statement.where(Note.deleted_at.is_(None)),
    ),
    default_order=("id",),
)
# end-example sqlalchemy


# ---------------------------------------------------------------- Piccolo
engine = SQLiteEngine(path=str(FOLDER / "piccolo-notes.sqlite"))


class PiccoloNote(Table, db=engine, tablename="piccolo_notes"):
    title = Varchar(length=200)
    deleted_at = Timestamptz(null=True, default=None)


# start-example piccolo
piccolo_notes = Resource(
    "piccolo-notes",
    PiccoloBackend(PiccoloNote, engine=engine, where=PiccoloNote.deleted_at.is_null()),
    default_order=("id",),
)
# end-example piccolo


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all([Note(id=id_, title=title, deleted_at=deleted) for id_, title, deleted in ROWS])
        await session.commit()
    await PiccoloNote.alter().drop_table(if_exists=True)
    await PiccoloNote.create_table()
    await PiccoloNote.insert(*(PiccoloNote(id=id_, title=title, deleted_at=deleted) for id_, title, deleted in ROWS))


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([notes, piccolo_notes])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
