"""SQLite's DateTime storage trap and its fix: bind the text format the file stores (docs/guide/backends.md)."""

import sqlite3
import tempfile
from datetime import datetime
from pathlib import Path

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import DateTime
from sqlalchemy.dialects.sqlite import DATETIME
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend

DATABASE = Path(tempfile.mkdtemp()) / "invoices.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")


# start-example trap
class Base(DeclarativeBase):
    pass


class Invoice(Base):
    __tablename__ = "invoices"
    id: Mapped[int] = mapped_column(primary_key=True)
    # SQLAlchemy's SQLite DateTime binds '2024-01-01 00:00:00.000000', and SQLite compares text.
    invoice_date: Mapped[datetime] = mapped_column(DateTime)


# end-example trap


# start-example fix
class FixedBase(DeclarativeBase):
    pass


SECONDS = "%(year)04d-%(month)02d-%(day)02d %(hour)02d:%(minute)02d:%(second)02d"
# Bind values the way the file stores them: '2024-01-01 00:00:00', no microseconds.
StoredDateTime = DATETIME(storage_format=SECONDS)  # type: ignore[no-untyped-call]


class FixedInvoice(FixedBase):
    __tablename__ = "invoices"
    id: Mapped[int] = mapped_column(primary_key=True)
    invoice_date: Mapped[datetime] = mapped_column(StoredDateTime)


# end-example fix

invoices = Resource("invoices", SQLAlchemyBackend(Invoice, config=config), default_order=("id",))
fixed = Resource("invoices-fixed", SQLAlchemyBackend(FixedInvoice, config=config), default_order=("id",))


def seed() -> None:
    """An existing SQLite file, written by another program: dates stored as text without microseconds."""
    with sqlite3.connect(DATABASE) as connection:
        connection.execute("DROP TABLE IF EXISTS invoices")
        connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, invoice_date DATETIME)")
        connection.executemany(
            "INSERT INTO invoices VALUES (?, ?)",
            [
                (1, "2023-12-31 23:59:59"),
                (2, "2024-01-01 00:00:00"),
                (3, "2024-01-01 09:30:00"),
                (4, "2024-02-01 00:00:00"),
            ],
        )
    connection.close()


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([invoices, fixed])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
